"""ImportRecord's import path takes the moves its reader checked in this process as checked
(`HistoryCheck.add(event, checked)`): the same history results as from checking each move
again, and a `checked` move that is not that very move in that very position is never
trusted, so the event is checked in full."""

from __future__ import annotations

import pytest

from tablelog.replay import fold as folding
from tablelog.replay import record
from tablelog.replay.core import RulesError
from tablelog.replay.registry import all_games
from tablelog.service.recording.verification import HistoryCheck
from tablelog.v1 import events_pb2
from tests.support.records import annotated_game

GAMES = sorted(all_games())


def _checked(events: list[events_pb2.Event], moves: dict[int, folding.Applied]) -> HistoryCheck:
    check = HistoryCheck()
    for event in events:
        check.add(event, moves.get(event.revision))
    check.finish()
    return check


def _read(name: str, seed: int) -> record.GameRecord:
    position, notes = annotated_game(name, seed)
    (game,) = record.read(record.write([record.record_of(position, notes)]))
    return game


@pytest.mark.parametrize("name", GAMES)
def test_the_readers_moves_give_the_history_a_full_check_gives(name: str) -> None:
    game = _read(name, 5)
    events = record.events_of(game)
    moves = {m.applied.revision: m.applied for m in game.moves if m.applied is not None}
    assert len(moves) == len(game.moves)
    trusted = _checked(events, moves).position
    full = _checked(events, {}).position
    assert trusted is not None
    assert full is not None
    assert trusted.state == full.state
    assert (trusted.revision, trusted.sequence, trusted.status, trusted.result) == (
        full.revision,
        full.sequence,
        full.status,
        full.result,
    )
    assert [a.move for a in trusted.moves()] == [a.move for a in full.moves()]
    # The moves were taken as the reader applied them, not applied again.
    assert all(a is moves[a.revision] for a in trusted.moves()), (
        "the reader's moves were checked again"
    )


def test_a_checked_move_that_is_not_the_events_move_is_not_trusted() -> None:
    game = _read("splendor", 6)
    events = record.events_of(game)
    moves = {m.applied.revision: m.applied for m in game.moves if m.applied is not None}
    # An event changed to a move the rules refuse there, offered with the reader's move of
    # that revision: the event is checked in full, and refused.
    player_move = next(
        i for i, m in enumerate(game.moves) if m.applied is not None and not m.applied.chance
    )
    later = next(
        m
        for m in game.moves[player_move + 1 :]
        if m.applied is not None and not m.applied.chance and m.move != game.moves[player_move].move
    )
    tampered = events_pb2.Event()
    tampered.CopyFrom(events[player_move + 1])
    tampered.move_recorded.move.CopyFrom(later.move)
    tampered.move_recorded.notation = later.notation
    with pytest.raises(RulesError):
        _checked([*events[: player_move + 1], tampered, *events[player_move + 2 :]], moves)
    # Moves read from another game are taken only where they are this game's move from an
    # equal state: the history is still the one a full check gives.
    other = _read("splendor", 7)
    foreign = {m.applied.revision: m.applied for m in other.moves if m.applied is not None}
    position = _checked(events, foreign).position
    full = _checked(events, {}).position
    assert position is not None
    assert full is not None
    assert [(a.move, a.after) for a in position.moves()] == [
        (a.move, a.after) for a in full.moves()
    ]
