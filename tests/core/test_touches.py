"""The picture is the input (issue 25): in states sampled from random play of every game, in
both modes, every legal move has touches, every id it is tapped by is marked in that state's
picture, and no two moves share their touches (tapping a move's touches selects it alone)."""

from __future__ import annotations

import re
import statistics
from typing import Any

import pytest

from tablelog.replay.core import CHANCE, DEALT, FULL, TABLE, TERMINAL
from tablelog.replay.registry import all_games, find_game
from tablelog.replay.touch import MAX_TOUCHES, Touches, fits, legal_touches, selected, shortest
from tests.support.play import random_game

GAMES = sorted(all_games())
TOUCH_ID = re.compile(r'data-touch="([^"]+)"')
SAMPLES = 24
"""States checked per game and mode: spread evenly over one random game."""


def touch_ids(svg: str) -> list[str]:
    return TOUCH_ID.findall(svg)


def sampled_states(name: str, mode: Any, seed: int) -> list[Any]:
    game = find_game(name)
    states = random_game(name, game.min_players + 1, seed=seed, mode=mode, keep_states=True).states
    step = max(1, len(states) // SAMPLES)
    return [s for s in states[::step] if game.to_move(s) != TERMINAL]


def viewer_to_record(game: Any, state: Any) -> Any:
    """Who composes the move: the seat to move; the table (FULL) for a chance move."""
    who = game.to_move(state)
    return FULL if who == CHANCE else who


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_every_legal_move_is_a_distinct_tap_sequence_on_the_picture(name: str, mode: Any) -> None:
    game = find_game(name)
    if mode not in game.modes:
        pytest.skip(f"{name} has no {mode} mode")
    taps: list[int] = []
    for state in sampled_states(name, mode, seed=7):
        moves = game.legal_moves(state)
        all_touches = legal_touches(game, state, moves)
        ids = set(touch_ids(game.picture(game.view(state, viewer_to_record(game, state)))))
        seen: dict[tuple[str, ...], str] = {}
        for move, touches in zip(moves, all_touches, strict=True):
            words = game.format(move, state)
            assert touches.ids, f"{words!r} has no touches"
            assert len(touches.ids) <= MAX_TOUCHES
            missing = set(touches.ids) - ids
            assert not missing, f"{words!r} is tapped on {missing}, not in the picture"
            key = tuple(sorted(touches.ids)) if touches.any_order else touches.ids
            assert key not in seen, f"{words!r} and {seen[key]!r} share {touches.ids}"
            seen[key] = words
            chosen = selected(touches.ids, all_touches)
            assert [moves[i] for i in chosen] == [move], f"tapping {words!r} is ambiguous"
            taps.append(len(touches.ids))
    assert taps, "no state with a legal move was sampled"


def test_the_ids_of_a_picture_are_unique() -> None:
    for name in GAMES:
        game = find_game(name)
        for state in sampled_states(name, TABLE, seed=3):
            ids = touch_ids(game.picture(game.view(state, viewer_to_record(game, state))))
            assert len(ids) == len(set(ids)), f"{name}: an id marks two elements"


@pytest.mark.parametrize("name", GAMES)
def test_the_median_move_takes_at_most_three_taps(name: str) -> None:
    """Issue 25's target, over the moves actually played in random games (the recording
    tap that follows is not counted: it is the same one tap for every move)."""
    game = find_game(name)
    counts: list[int] = []
    for seed in (1, 2):
        played = random_game(name, game.min_players + 1, seed=seed, keep_states=True)
        for state, move in zip(played.states, played.moves, strict=False):
            inner = getattr(move, game.oneof_field)
            moves = game.legal_moves(state)
            all_touches = legal_touches(game, state, moves)
            counts.append(len(all_touches[list(moves).index(inner)].ids))
    assert statistics.median(counts) <= 3


def test_a_path_is_cut_where_it_becomes_unique() -> None:
    cut = shortest(
        [
            Touches(("edge-a", "cell-1", "castle-1")),
            Touches(("edge-a", "cell-1", "castle-2")),
            Touches(("edge-b", "cell-2", "castle-3")),
            Touches(("bank-w", "bank-u"), any_order=True),
            Touches(("bank-w", "bank-w")),
        ]
    )
    assert [t.ids for t in cut] == [
        ("edge-a", "cell-1", "castle-1"),
        ("edge-a", "cell-1", "castle-2"),
        ("edge-b",),
        ("bank-w", "bank-u"),
        ("bank-w", "bank-w"),
    ]
    assert fits(["bank-u"], cut[3])
    assert not fits(["bank-u"], cut[4])
    assert selected(["bank-u", "bank-w"], cut) == [3]
