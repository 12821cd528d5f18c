"""Notation (lenient input, canonical output, ambiguity, garbage) and the view/render."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay.core import (
    DEALT,
    FULL,
    SPECTATOR,
    TABLE,
    AmbiguousNotation,
    IllegalMove,
    NotationError,
)
from tablelog.replay.games.medici_card_game import GAME, rules
from tablelog.replay.games.medici_common.rules import SHIP_REWARDS
from tablelog.v1.medici_card_game_pb2 import MediciCardGameOptions
from tests.support.play import new_position, play, play_all

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}


def _state(lines: list[str], players: int = 3) -> rules.State:
    state: rules.State = play_all(new_position("medici-card-game", players), lines).state
    return state


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("reveal fur3", "reveal fur3"),
        ("Fur 3", "reveal fur3"),
        ("FLIP furs3", "reveal fur3"),
        ("dye flag", "reveal dyeflag"),
        ("flag dye", "reveal dyeflag"),
        ("Green", "reveal green2"),
        ("black 7", "reveal black7"),
        ("r grain0", "reveal grain0"),
    ],
)
def test_reveals_are_read_leniently(text: str, canonical: str) -> None:
    state = _state([])
    assert GAME.format(GAME.parse(text, state), state) == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("take 1", "take 1"),
        ("TAKE 2 1", "take 1 2"),
        ("t 1,3", "take 1 3"),
        ("take 123", "take 1 2 3"),
        ("take spice4 fur3", "take 1 3"),
        ("flip", "flip"),
        ("Reveal", "flip"),
        ("start 2", "start 2"),
        ("start p3", "start 3"),
        ("start Bob", "start 2"),
    ],
)
def test_player_moves_are_read_leniently(text: str, canonical: str) -> None:
    state = play_all(
        new_position("medici-card-game", ["Ann", "Bob", "Cid"]),
        ["reveal fur3", "flip", "reveal grain2", "flip", "reveal spice4"],
    ).state
    assert GAME.format(GAME.parse(text, state), state) == canonical


def test_ambiguous_takes_list_their_candidates() -> None:
    state = _state(["reveal fur3", "flip", "reveal fur3", "flip", "reveal dye2"])
    with pytest.raises(AmbiguousNotation) as ambiguous:
        GAME.parse("take dye2 fur3", state)
    assert ambiguous.value.candidates == ("take 1 2", "take 1 3")
    with pytest.raises(AmbiguousNotation) as bare:
        GAME.parse("take", state)
    assert "take 1 2 3" in bare.value.candidates
    assert GAME.format(GAME.parse("take", _state(["reveal fur3"])), state) == "take 1"


@pytest.mark.parametrize(
    "text", ["", "   ", "take x", "take 100", "take 0", "fur9", "12", "start 9", "start", "zzz"]
)
def test_bad_text_is_a_notation_error(text: str) -> None:
    state = _state(["reveal fur3"])
    with pytest.raises(NotationError):
        GAME.parse(text, state)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=30) | st.from_regex(r"(take|reveal|start|flip) ?[0-9a-z ,]{0,12}"))
def test_garbage_raises_only_notation_errors(text: str) -> None:
    for state in (_state([]), _state(["reveal fur3", "flip", "reveal dye2"])):
        try:
            move = GAME.parse(text, state)
        except NotationError:
            continue
        with contextlib.suppress(IllegalMove):
            GAME.apply(state, move)


def test_render_shows_the_table() -> None:
    state = _state(["reveal fur3", "flip", "reveal dye2", "take 1 2", "reveal black7"])
    text = GAME.render(GAME.view(state, None))
    assert "round 1 of 3" in text
    assert "Market (first .. last = position 1): black7" in text
    assert "dye2 fur3" in text or "fur3 dye2" in text
    assert "UNVERIFIED" in text
    assert "p2 to flip or take" in text
    view = GAME.view(state, 0)
    assert view == GAME.view(state, None)  # nothing but the deck order is hidden
    assert view.seats[0].hold_used == 2
    assert view.seats[0].ship_value == 5


def test_every_move_is_visible_to_every_viewer() -> None:
    """§A3, §A5: cards are turned over face up and the start player is announced, so no
    move carries hidden information: every viewer, the spectator included, sees them all."""
    position = new_position("medici-card-game", 3, mode=DEALT)
    lines = ["reveal fur3", "flip", "reveal dye2", "take 1 2", "reveal black7", "take 1"]
    viewers = (FULL, SPECTATOR, 0, 1, 2)
    for text in lines:
        state = position.state
        move = GAME.parse(text, state)
        assert all(GAME.visible_to(move, state, viewer) for viewer in viewers), text
        position = play(position, text)
    tied = replace(position.state, phase=rules.START, tied=(0, 2), market=())
    start = GAME.parse("start 3", tied)
    assert GAME.is_chance(start)
    assert all(GAME.visible_to(start, tied, viewer) for viewer in viewers)


@pytest.mark.parametrize("players", [2, 3, 5, 6])
def test_an_unsourced_ship_reward_table_is_marked_approximate(players: int) -> None:
    """G-A2: only the 4-player ship rewards are sourced; the other default tables are the
    board game's and stay marked approximate in the view and the render."""
    state = _state([], players)
    view = GAME.view(state, SPECTATOR)
    assert view.ship_rewards_approximate
    assert "UNSOURCED" in view.ship_rewards_note
    assert f"for {players} players" in view.ship_rewards_note
    assert list(view.ship_rewards) == list(SHIP_REWARDS[players])
    table = "/".join(str(r) for r in SHIP_REWARDS[players])
    assert f"NOTE: ship rewards {table} are UNSOURCED for {players} players" in GAME.render(view)


@pytest.mark.parametrize(
    ("players", "options"),
    [(4, MediciCardGameOptions()), (3, MediciCardGameOptions(ship_rewards=[30, 10]))],
)
def test_a_sourced_or_chosen_ship_reward_table_is_not_marked(
    players: int, options: MediciCardGameOptions
) -> None:
    state = GAME.setup([f"p{i + 1}" for i in range(players)], options, TABLE, RECORDED)
    view = GAME.view(state, SPECTATOR)
    assert not view.ship_rewards_approximate
    assert not view.ship_rewards_note
    assert list(view.ship_rewards) == list(state.rules.ship_rewards)
    assert "UNSOURCED" not in GAME.render(view)
