"""Notation (lenient input, canonical output, ambiguity, garbage) and the view/render."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core import AmbiguousNotation, IllegalMove, NotationError
from replay.games.medici_card_game import GAME, rules
from tests.support.play import new_position, play_all


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
