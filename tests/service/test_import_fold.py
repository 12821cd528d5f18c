"""ImportRecord folds each game once: the history check takes the reader's moves as the
rules applied them and builds no position of its own for them (`HistoryCheck._take`, one
position per run of moves, `tablelog.replay.fold.recorded_run`). What it gives is what a full check
gives at every revision, and every event that would not fold is still refused, through the
service too, with nothing stored."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from tablelog.replay import fold as folding
from tablelog.replay import record, snapshots
from tablelog.replay.core import RulesError
from tablelog.replay.registry import all_games
from tablelog.service.errors import ImportRefused
from tablelog.service.recording import records
from tablelog.service.recording.appending import new_game_id
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.verification import HistoryCheck
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2
from tests.service.helpers import CHAIN
from tests.support.records import annotated_game

GAMES = sorted(all_games())


def _read(name: str, seed: int) -> record.GameRecord:
    position, notes = annotated_game(name, seed)
    (game,) = record.read(record.write([record.record_of(position, notes)]))
    return game


def _reader_moves(game: record.GameRecord) -> dict[int, folding.Applied]:
    return {m.applied.revision: m.applied for m in game.moves if m.applied is not None}


def _add_all(
    check: HistoryCheck,
    events: list[events_pb2.Event],
    moves: dict[int, folding.Applied] | None = None,
) -> HistoryCheck:
    for event in events:
        check.add(event, (moves or {}).get(event.revision))
    check.finish()
    return check


def _check(events: list[events_pb2.Event], moves: dict[int, folding.Applied]) -> HistoryCheck:
    return _add_all(HistoryCheck(), events, moves)


@pytest.mark.parametrize("name", GAMES)
def test_one_fold_gives_the_full_checks_position_at_every_revision(name: str) -> None:
    game = _read(name, 11)
    events = record.events_of(game)
    moves = _reader_moves(game)
    trusted = _check(events, moves)
    full = _check(events, {})
    # The main line was taken as one run: a single position built for all its moves.
    assert [first for first, _ in trusted.runs] == [2]
    for revision, position in full.history.items():
        at = trusted.at(revision)
        assert at is not None, revision
        assert snapshots.same_position(at, position), revision
        assert (at.sequence, at.move_count, at.chance_count) == (
            position.sequence,
            position.move_count,
            position.chance_count,
        ), revision
    assert trusted.at(max(full.history) + 1) is None
    end, full_end = trusted.position, full.position
    assert end is not None
    assert full_end is not None
    assert snapshots.same_position(end, full_end)
    assert all(a is moves[a.revision] for a in end.moves())


def _refused(events: list[events_pb2.Event], moves: dict[int, folding.Applied]) -> str:
    with pytest.raises(RulesError) as refused:
        _check(events, moves)
    return refused.value.code


def test_a_move_claimed_dealt_in_a_table_game_is_refused_in_a_run() -> None:
    game = _read("medici", 2)
    events = record.events_of(game)
    events[5].move_recorded.dealt = True
    assert _refused(events, _reader_moves(game)) == "DEALT_IN_TABLE_MODE"


def test_a_wrong_result_after_a_run_is_refused() -> None:
    game = _read("medici-card-game", 3)
    assert game.status is folding.Status.ENDED
    events = record.events_of(game)
    ended = next(e for e in events if e.WhichOneof("body") == "game_ended")
    ended.game_ended.result.scores[0].total += 1
    assert _refused(events, _reader_moves(game)) == "WRONG_RESULT"


def test_a_move_out_of_its_sequence_is_refused_in_a_run() -> None:
    game = _read("splendor", 4)
    events = record.events_of(game)
    events[7].sequence += 1
    assert _refused(events, _reader_moves(game)) == "SEQUENCE_GAP"


def test_a_read_move_after_an_abandonment_is_not_taken() -> None:
    """A move the rules applied to the very state the game was abandoned in, offered as
    checked for a move recorded after the abandonment, is not taken: the game is over, and
    the event is refused (the rules' GameOver), as a full check refuses it."""
    game = _read("splendor", 5)
    cut = len(game.moves) // 2
    kept = record.GameRecord(game.created, game.moves[:cut], folding.Status.ABANDONED, "rain")
    events = record.events_of(kept)
    abandoned = next(e for e in events if e.WhichOneof("body") == "game_abandoned")
    follow = record.events_of(game)[cut + 1]
    follow.sequence, follow.revision = len(events) + 1, abandoned.revision + 1
    next_move = game.moves[cut].applied
    assert next_move is not None
    offered = {follow.revision: dataclasses.replace(next_move, revision=follow.revision)}
    assert _refused([*events, follow], offered) == "GAME_OVER"
    assert _refused([*events, follow], {}) == "GAME_OVER"


def test_an_import_whose_events_would_not_fold_is_refused_and_stores_nothing(
    embedded_redis: EmbeddedRedis,
) -> None:
    """ImportRecord's path (`import_game` with the reader's moves) given events built from
    the read record, one of them then changed to a move the reader did not apply there:
    refused at the event a full check refuses, and no game is stored."""
    actor = events_pb2.Actor(user="tester", club="club-if")
    (game,) = records.read_record(
        record.write([record.record_of(*annotated_game("splendor", 8))]), "", ""
    )
    events = record.events_of(game)
    moves = [m.applied for m in game.moves if m.applied is not None]
    events[4].move_recorded.CopyFrom(events[6].move_recorded)
    full = HistoryCheck()
    with pytest.raises(RulesError):
        _add_all(full, events)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store)
        try:
            with pytest.raises(ImportRefused) as refused:
                await recorder.import_game(
                    events,
                    "import-fold-1",
                    actor,
                    accept_unverified=True,
                    checked_moves=moves,
                )
            assert refused.value.metadata["line"] == str(full.failed_at[0])
            assert await store.read_raw(new_game_id("import-fold-1", actor.club)) == []
            # The same events unchanged import, as one fold.
            outcome = await recorder.import_game(
                record.events_of(game),
                "import-fold-2",
                actor,
                accept_unverified=True,
                checked_moves=moves,
            )
            assert outcome.head.revision == len(game.moves) + 1 + (game.result is not None)
            assert (await recorder.verify(outcome.head.game_id)).ok
        finally:
            await store.close()

    asyncio.run(scenario())
