"""Notation: canonical forms, lenient input, ambiguity, and garbage raising only NotationError."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay.core import AmbiguousNotation, NotationError
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tests.support.play import assert_round_trip, new_position, play_all

from .positions import build

STATE = build(
    2,
    stands={"a1": ("fish", 0), "b1": ("meat", 0), "c3": ("grape", 1)},
    offers=["1 fish+meat", "2 fish+meat", "1 fish+flower"],
    held=[["sushi", "pub"], []],
    hands=[["fish", "flower", "tomato"], ["meat"]],
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("stand fish b3 take grape", "stand fish b3 take grape"),
        ("  STAND Fish  B3   Take GRAPES ", "stand fish b3 take grape"),
        ("s fi b3 t gr", "stand fish b3 take grape"),
        ("stand fish b3 grape", "stand fish b3 take grape"),
        ("stand fish b3 refresh", "stand fish b3 refresh"),
        ("customer 2 meat+fish w1", "customer 2 fish+meat w1"),
        ("Customers 1 Fish + Meat W1", "customer 1 fish+meat w1"),
        ("customer 2 fish w1", "customer 2 fish+meat w1"),
        ("c fish meat n1", None),
        ("restaurant Sushi_Bar c4", "restaurant sushi c4"),
        ("restaurant tea house c4", "restaurant tea c4"),
        ("coin", "coin"),
        ("take 1 coin", "coin"),
        ("swap", "swap"),
        ("take grape", "take grape"),
        ("draw Meat", "draw meat"),
        ("flip pizzeria", "flip pizza"),
        ("reveal 3 meat+fish", "reveal 3 fish+meat"),
    ],
)
def test_lenient_input_reads_canonically(text: str, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(AmbiguousNotation) as error:
            GAME.parse(text, STATE)
        assert set(error.value.candidates) == {"customer 1 fish+meat n1", "customer 2 fish+meat n1"}
        return
    assert GAME.format(GAME.parse(text, STATE), STATE) == canonical


def test_stand_without_good_is_ambiguous_with_several_tiles() -> None:
    with pytest.raises(AmbiguousNotation) as error:
        GAME.parse("stand b3 take grape", STATE)
    assert "stand fish b3 take grape" in error.value.candidates
    single = build(2, hands=[["meat", "meat"], ["fish"]])
    assert (
        GAME.format(GAME.parse("stand b3 take grape", single), single) == "stand meat b3 take grape"
    )


def test_round_trip_of_every_legal_move() -> None:
    assert_round_trip(GAME, STATE)
    assert len(GAME.legal_moves(STATE)) > 20


def test_parse_of_format_equals_move() -> None:
    move = rl.customer_move(2, (0, 3), 10)
    assert GAME.parse(GAME.format(move, STATE), STATE) == move


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "stand",
        "stand fish",
        "stand fish z9",
        "stand fish b3 take",
        "customer",
        "customer 5 fish w1",
        "customer 2 fish meat tomato w1",
        "customer 2 fish x1",
        "restaurant",
        "restaurant bistro a1",
        "coin 3",
        "draw",
        "draw cheese",
        "flip",
        "reveal 3",
        "reveal fish",
        "jump a1",
        "stand fish b3 take grape now",
    ],
)
def test_bad_text_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        GAME.parse(text, STATE)


WORDS = [
    "stand",
    "customer",
    "restaurant",
    "coin",
    "swap",
    "take",
    "draw",
    "flip",
    "reveal",
    "fish",
    "flower",
    "meat",
    "grape",
    "tomato",
    "pub",
    "sushi",
    "b3",
    "w1",
    "e1",
    "n5",
    "1",
    "2",
    "3",
    "4",
    "+",
    "refresh",
    "x",
    "9",
]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_garbage_text_raises_only_notation_error(text: str) -> None:
    with contextlib.suppress(NotationError):
        GAME.parse(text, STATE)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join))
def test_word_salad_raises_only_notation_error(text: str) -> None:
    try:
        move = GAME.parse(text, STATE)
    except NotationError:
        return
    assert GAME.parse(GAME.format(move, STATE), STATE) == move


def test_documented_example_game_is_legal() -> None:
    doc = Path(__file__).resolve().parents[3] / "docs" / "notation" / "mercado-de-lisboa.md"
    text = doc.read_text(encoding="utf-8")
    block = text.split("## Example", 1)[1].split("```", 2)[1]
    position = play_all(new_position("mercado-de-lisboa", ["ana", "ben"]), block.splitlines())
    state = position.state
    assert position.move_count == 30
    assert (state.money(0), state.money(1)) == (2, 1)
    assert state.held[1] == ()
