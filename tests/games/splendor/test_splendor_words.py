"""Splendor's words for the slips of issue 26: counts agree with their nouns ("1 cards",
"noble(s)"), and a card whose cost is cut short is named as such."""

from __future__ import annotations

import pytest

from tablelog.replay.core import NotationError
from tablelog.replay.games.splendor import GAME, views
from tablelog.replay.games.splendor.rules import replace
from tablelog.v1 import game_pb2


def test_one_noble_and_one_card_are_singular() -> None:
    files = {c.name: c for c in GAME.default_components()}
    state = GAME.setup(["Ann", "Bob"], None, game_pb2.MODE_TABLE, files)
    full = replace(state, market=((1, 2, 3, 4), (41, 42, 43, 44), (71, 72, 73, 74)), nobles_due=1)
    assert views.pending_reveal(full) == "reveal 1 more noble"
    assert views.pending_reveal(replace(full, nobles_due=2)) == "reveal 2 more nobles"
    shown = views.view(full, None)
    shown.players[0].purchased.add(id=1)
    text = views.render(shown)
    assert "; 1 card bought" in text
    assert "; 0 cards bought" in text
    drawn = GAME.picture(shown)
    assert "0 prestige · 1 card<" in drawn
    assert "0 prestige · 0 cards<" in drawn


def test_a_card_cost_cut_short_is_named() -> None:
    files = {c.name: c for c in GAME.default_components()}
    state = GAME.setup(["Ann", "Bob"], None, game_pb2.MODE_TABLE, files)
    for typed in ("1r0:u2g", "reveal 1.1 1r0:u2g", "buy 2g1:w2u"):
        with pytest.raises(NotationError, match="Card cost cut short in '"):
            GAME.parse(typed, state)
    assert GAME.format(GAME.parse("1r0:u2g1", state), state) == "reveal 1.1 1r0:u2g1"
