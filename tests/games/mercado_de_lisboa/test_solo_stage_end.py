"""RULES.md §9: a solo stage with no legal placement left ends at once, without asking the
table for the display refills of its last turn (as a multiplayer game ends, §6). The change
came with rules version mercado-de-lisboa/2; a game recorded under /1, which recorded those
refills, keeps folding as it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL, GameOver, HistoryError
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import created, events_of, new_position, play, play_all

STAGE5 = Path(__file__).parent / "playthroughs" / "solo_stage5.txt"
LAST_REFILL = "draw meat"
"""What the table drew into the display after stage 5's last stand, under /1."""


def stage5() -> folding.Position:
    options = pb.MercadoDeLisboaOptions(stage=5)
    return play_all(new_position("mercado-de-lisboa", ["solo"], options), _lines())


def _lines() -> list[str]:
    return [line for line in STAGE5.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]


def test_the_stage_ends_after_its_last_stand_without_a_display_refill() -> None:
    position = stage5()
    assert position.moves()[-1].notation.startswith("stand ")
    assert position.to_move() == TERMINAL
    assert position.state.over
    assert not position.state.pending
    with pytest.raises(GameOver):
        play(position, LAST_REFILL)


def test_the_stage_waits_for_refills_while_a_placement_remains() -> None:
    """The same stand earlier in the stage: the game goes on, so the display is refilled."""
    options = pb.MercadoDeLisboaOptions(stage=5)
    position = new_position("mercado-de-lisboa", ["solo"], options)
    for line in _lines():
        position = play(position, line)
        if line.startswith("stand ") and not position.state.over:
            assert position.state.pending
            assert GAME.to_move(position.state) != TERMINAL
            return
    raise AssertionError("stage 5 has no stand before its last")


def test_a_game_recorded_under_version_1_keeps_its_last_refill() -> None:
    new = stage5()
    body = created("mercado-de-lisboa", ["solo"], pb.MercadoDeLisboaOptions(stage=5))
    body.rules_version = "mercado-de-lisboa/1"
    start = folding.start(body)
    assert start.table.game.rules_version == "mercado-de-lisboa/1"
    old = play_all(start, [*_lines(), LAST_REFILL])
    assert old.to_move() == TERMINAL
    assert old.moves()[-1].notation == LAST_REFILL
    events = events_of(body, [a.move for a in old.moves()], [a.notation for a in old.moves()])
    folded = folding.fold(events)
    assert folded.state == old.state
    assert GAME.result(folded.state) == GAME.result(new.state)
    # Without its last refill, that /1 history is still waiting for the table.
    short = folding.fold(events[:-1])
    assert short.to_move() != TERMINAL


def test_an_unknown_rules_version_is_still_refused() -> None:
    body = created("mercado-de-lisboa", ["solo"], pb.MercadoDeLisboaOptions(stage=5))
    body.rules_version = "mercado-de-lisboa/0"
    with pytest.raises(HistoryError) as refused:
        folding.start(body)
    assert refused.value.code == "RULES_VERSION"
