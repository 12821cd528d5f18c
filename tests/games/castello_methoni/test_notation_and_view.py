"""Notation (docs/notation/castello-methoni.md): canonical forms, leniency, ambiguity,
garbage; views hide other seats' hands and missions."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay import fold
from tablelog.replay.core import DEALT, FULL, SPECTATOR, AmbiguousNotation, NotationError
from tablelog.replay.games.castello_methoni import GAME
from tests.games.castello_methoni.boards import moves, start
from tests.games.castello_methoni.test_seed_examples import CHAIN, CHAIN_SETUP, PAIR
from tests.support import play


def canonical(position: fold.Position, text: str) -> str:
    state = position.state
    return GAME.format(GAME.parse(text, state), state)


def test_lenient_input_reads_to_the_canonical_text() -> None:
    position = start(PAIR)
    assert canonical(position, "  BUILD Mountain  M | F  Own F  Left M ") == (
        "build mountain m|f own f left m"
    )
    assert canonical(position, "build mountain f|m own f other andrew") == (
        "build mountain m|f own f left m"
    )
    assert canonical(position, "build mountain m|f own f p2 m") == "build mountain m|f own f left m"
    assert canonical(position, "build market m|sea") == "build sea m|sea own m"
    assert canonical(position, "build sea sea|m") == "build sea m|sea own m"
    assert canonical(position, "end turn") == "end"
    assert canonical(position, "no merge") == "stop"
    assert canonical(position, "first Evan") == "first p3"
    assert canonical(position, "redraw sea hill Mountain hill forest") == (
        "redraw mountain forest hill hill sea"
    )


def test_merge_names_a_castle_by_any_of_its_cells() -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a")
    assert canonical(position, "merge e2") == "merge e1"
    assert canonical(position, "MERGE E1") == "merge e1"


def test_ambiguous_build_lists_the_candidates() -> None:
    position = start(PAIR)
    with pytest.raises(AmbiguousNotation) as ambiguous:
        GAME.parse("build mountain m|f own f", position.state)
    assert set(ambiguous.value.candidates) == {
        "build mountain m|f own f left m",
        "build mountain m|f own f right m",
    }
    with pytest.raises(AmbiguousNotation) as more:
        GAME.parse("build mountain m|f", position.state)
    assert len(more.value.candidates) == 4


def test_unknown_words_are_notation_errors() -> None:
    position = start(PAIR)
    for text in (
        "",
        "build",
        "build gold m|f",
        "build mountain m|zz",
        "merge",
        "trade",
        "first p9",
        "mission p1 m9",
        "fly",
        "build mountain m|f own",
    ):
        with pytest.raises(NotationError):
            GAME.parse(text, position.state)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_garbage_text_raises_only_notation_errors(text: str) -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a")
    with contextlib.suppress(NotationError):
        GAME.parse(text, position.state)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "build",
                "trade",
                "merge",
                "redraw",
                "mission",
                "first",
                "draw",
                "own",
                "left",
                "right",
                "other",
                "|",
                "sea",
                "j",
                "a",
                "e1",
                "x",
                "mountain",
                "p1",
                "m1",
                "evan",
            ]
        ),
        max_size=8,
    )
)
def test_near_miss_text_raises_only_notation_errors(words: list[str]) -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP)
    with contextlib.suppress(NotationError):
        GAME.parse(" ".join(words), position.state)


def test_views_hide_other_hands_and_missions_until_the_end() -> None:
    played = play.random_game("castello-methoni", 3, 5, mode=DEALT, keep_states=True)
    middle = played.states[len(played.states) // 2]
    mine = GAME.view(middle, 0)
    assert mine.seats[0].hand
    assert not mine.seats[0].hand_hidden
    assert mine.seats[0].mission
    assert not mine.seats[1].hand
    assert mine.seats[1].hand_hidden
    assert not mine.seats[1].mission
    assert mine.seats[1].mission_hidden
    spectator = GAME.view(middle, SPECTATOR)
    assert not any(s.hand or s.mission for s in spectator.seats)
    full = GAME.view(middle, FULL)
    assert all(s.hand_size == len(s.hand) and s.mission for s in full.seats)
    end = GAME.view(played.states[-1], SPECTATOR)
    assert end.game_over
    assert all(s.mission for s in end.seats)
    text = GAME.render(mine)
    assert "hidden" in text
    assert "APPROXIMATE BOARD" in text


def test_render_shows_walls_houses_villas_towers_and_castles() -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a", "merge j")
    text = GAME.render(GAME.view(position.state, SPECTATOR))
    assert "castles:" in text
    assert "tower [2A] Andrew" in text
    assert "1V1J" in text  # Jerry's villa in Andrew's castle
    assert "|a" in text
    assert "sea 4/4 walled" in text
    assert text.startswith("Board: board\n")  # a custom board without a name
    assert "APPROXIMATE" not in text


def test_table_mode_records_missions_only_at_the_end() -> None:
    played = play.random_game("castello-methoni", 3, 11)
    lines = played.notations
    first_mission = next(i for i, t in enumerate(lines) if t.startswith("mission"))
    assert all(t.startswith("mission") for t in lines[first_mission:])
    assert len(lines) - first_mission == 3


def test_the_documented_examples_on_the_shipped_board() -> None:
    table = play.new_position("castello-methoni", 3)
    position = moves(table, "first p1")
    assert canonical(position, "build sea a1|sea") == "build sea a1|sea own a1"
    assert canonical(position, "build sea A1 | SEA own a1") == "build sea a1|sea own a1"
    assert canonical(position, "build market Dm3_m1|sea") == "build sea d1|sea own d1"
    with pytest.raises(AmbiguousNotation) as ambiguous:
        GAME.parse("build mountain c3|c4 own c4", position.state)
    assert set(ambiguous.value.candidates) == {
        "build mountain c3|c4 own c4 left c3",
        "build mountain c3|c4 own c4 right c3",
    }
    neighbours = {
        position.state.board.names[o]
        for o, _ in position.state.board.neighbours[position.state.board.lookup["d6"]]
    }
    assert neighbours == {"d5", "d7", "e5"}
