"""Folding Splendor event lists: time travel, undo/redo (replay.fold)."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE
from tablelog.v1 import events_pb2
from tests.support.play import PlayedGame, created, events_of, random_game

SEEDS = 6


@cache
def game(seed: int) -> tuple[PlayedGame, list[events_pb2.Event]]:
    players = 2 + seed % 3
    mode = TABLE if seed % 2 else DEALT
    played = random_game("splendor", players, seed=900 + seed, mode=mode, keep_states=True)
    stored = [
        events_pb2.Event.FromString(e.SerializeToString())
        for e in events_of(created("splendor", players, mode=mode), played.moves, played.notations)
    ]
    return played, stored


def test_folding_all_events_gives_the_final_state() -> None:
    for seed in range(SEEDS):
        played, events = game(seed)
        assert folding.fold(events).state == played.position.state


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, SEEDS - 1), cut=st.floats(0, 1))
def test_state_at_revision_n_is_the_fold_of_the_first_n_events(seed: int, cut: float) -> None:
    played, events = game(seed)
    n = 1 + int(cut * (len(events) - 1))
    at = folding.fold(events, until_revision=n)
    assert at.revision == n
    assert at.state == played.states[n - 1]
    assert folding.fold(events[:n]).state == at.state


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, SEEDS - 1), cut=st.floats(0, 1), k=st.integers(1, 40))
def test_undoing_k_moves_equals_the_state_k_moves_earlier(seed: int, cut: float, k: int) -> None:
    played, events = game(seed)
    moves = len(played.moves)
    at = max(1, int(cut * moves))
    k = min(k, at)
    position = folding.fold(events, until_revision=at + 1)
    assert position.move_count == at
    undone = position
    for _ in range(k):
        undone = folding.undo(undone)
    assert undone.state == played.states[at - k]
    assert undone.move_count == at - k
    # Redoing everything comes back to the same state; undo then redo is the identity.
    redone = undone
    for _ in range(k):
        redone = folding.redo(redone)
    assert redone.state == position.state
    assert folding.redo(folding.undo(position)).state == position.state


def test_undo_and_redo_events_fold_like_the_moves_they_name() -> None:
    played, events = game(1)
    body = events[:20]
    more = [
        # Each names the revision of the move it takes back or re-applies.
        events_pb2.Event(
            sequence=21, revision=21, move_undone=events_pb2.MoveUndone(undone_revision=20)
        ),
        events_pb2.Event(
            sequence=22, revision=22, move_undone=events_pb2.MoveUndone(undone_revision=19)
        ),
        events_pb2.Event(
            sequence=23, revision=23, move_redone=events_pb2.MoveRedone(redone_revision=19)
        ),
    ]
    position = folding.fold(body + more)
    assert position.state == played.states[18]
    assert position.move_count == 18
