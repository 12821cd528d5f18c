"""Checkpoints (`tablelog.service.recording.checkpoints`) on a real Redis: for random histories of
every game, with undos, redos, amendments and annotations, the state at every revision read through
checkpoints is the fresh fold's, each read folds no more than one interval of events, and a replay
or a watch's backlog is the one a fold from the start gives. A damaged, wrong or copied checkpoint
is found by VerifyGame and never used; a deleted one is made again; a cold head comes from the
latest checkpoint and is the fresh fold's."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Sequence

import pytest

from tablelog.replay import fold as folding
from tablelog.replay import snapshots
from tablelog.replay.core import FULL
from tablelog.replay.registry import all_games
from tablelog.service.recording.checkpoints import Checkpoint, seal
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.views import replay_item, viewer_of
from tablelog.service.recording.watching import WatchHub
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2
from tests.service.helpers import CHAIN, create_splendor_game, splendor_line
from tests.support.histories import random_history

GAMES = sorted(all_games())
INTERVAL = 7


class CountingStore(RedisEventStore):
    """Counts the stream entries read (what a fold from a checkpoint must keep small)."""

    entries_read = 0

    async def read_raw(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        raw = await super().read_raw(game_id, after_sequence, count)
        self.entries_read += len(raw)
        return raw


def counting_store(embedded_redis: EmbeddedRedis) -> CountingStore:
    plain = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
    return CountingStore(plain.redis, chain=CHAIN)


async def stored(store: RedisEventStore, events: Sequence[events_pb2.Event]) -> str:
    """`events` appended (and sealed) as a new game, a hundred at a time."""
    game_id = "ck" + uuid.uuid4().hex[:14]
    # The creation names the game it creates (a history verifies only under its own id):
    # set in the caller's events too, which the tests fold afresh to compare.
    events[0].game_created.game_id = game_id
    sequence, last_hash = 0, b""
    for start in range(0, len(events), 100):
        batch = events[start : start + 100]
        result = await store.append(
            game_id,
            batch,
            expected_sequence=sequence,
            prev_hash=last_hash,
            expected_revision=None,
        )
        sequence, last_hash = batch[-1].sequence, result.events[-1].hash
    return game_id


async def appended(
    store: RedisEventStore, game_id: str, events: Sequence[events_pb2.Event]
) -> None:
    """`events` appended (and sealed) after what `game_id` holds, as a recorder would."""
    last = (await store.read(game_id))[-1]
    await store.append(
        game_id,
        events,
        expected_sequence=last.sequence,
        prev_hash=last.hash,
        expected_revision=None,
    )


def fresh_by_revision(events: Sequence[events_pb2.Event]) -> dict[int, folding.Position]:
    """The position a fresh fold gives at every revision (`fold(until_revision=r)`)."""
    position = folding.start(events[0].game_created)
    by_revision = {1: position}
    for event in events[1:]:
        position = folding.advance(position, event)
        by_revision[event.revision] = position
    return by_revision


@pytest.mark.parametrize("name", GAMES)
def test_every_revision_through_checkpoints_is_the_fresh_fold(
    embedded_redis: EmbeddedRedis, name: str
) -> None:
    events = random_history(name, 150, seed=3)
    fresh = fresh_by_revision(events)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await stored(store, events)
            head = await recorder.load(game_id)
            assert head.sequence == len(events)
            assert await store.checkpoints.sequences(game_id) == []
            for revision in range(1, head.revision):
                got = await recorder.position_at(game_id, revision)
                assert snapshots.same_position(got, fresh[revision]), revision
            await recorder.settle()
            expected = list(range(INTERVAL, len(events) + 1, INTERVAL))
            assert await store.checkpoints.sequences(game_id) == expected
            # Now every read resumes from a checkpoint: the same positions, each from at
            # most one interval of the stream.
            for revision in range(1, head.revision):
                store.entries_read = 0
                got = await recorder.position_at(game_id, revision)
                assert snapshots.same_position(got, fresh[revision]), revision
                assert store.entries_read <= INTERVAL, revision
            verified = await recorder.verify(game_id)
            assert verified.ok
            assert verified.checkpoints_checked == len(expected)
            assert list(verified.bad_checkpoints) == []
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_replay_through_checkpoints_is_the_replay_of_a_fresh_fold(
    embedded_redis: EmbeddedRedis,
) -> None:
    events = random_history("splendor", 120, seed=8)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await stored(store, events)
            head = await recorder.load(game_id)
            as_stored = await store.read(game_id)
            seen = viewer_of(service_pb2.Viewer(spectator=True), head.position.table.players)
            expected: list[tuple[int, bytes]] = []
            position = folding.start(as_stored[0].game_created)
            for index, event in enumerate(as_stored):
                before = position
                if index:
                    position = folding.advance(position, event)
                item = replay_item(event, before, position, seen)
                expected.append((event.revision, item.SerializeToString()))
            for _round in range(2):  # without checkpoints, then with the ones it wrote
                for first, last in ((0, 0), (1, 30), (31, 31), (40, 0), (head.revision, 0)):
                    items = [
                        item.SerializeToString()
                        async for item in recorder.replay(
                            game_id, first, last, service_pb2.Viewer(spectator=True)
                        )
                    ]
                    top = last or head.revision
                    assert items == [b for r, b in expected if first <= r <= top], (first, last)
                await recorder.settle()
            assert await store.checkpoints.sequences(game_id)
        finally:
            await store.close()

    asyncio.run(scenario())


async def _with_checkpoints(
    store: RedisEventStore, recorder: Recorder, events: Sequence[events_pb2.Event]
) -> str:
    game_id = await stored(store, events)
    head = await recorder.load(game_id)
    await recorder.position_at(game_id, head.revision - 1)  # folds past every interval
    await recorder.settle()
    return game_id


def test_a_damaged_checkpoint_is_reported_and_never_used(embedded_redis: EmbeddedRedis) -> None:
    events = random_history("mercado-de-lisboa", 100, seed=4)
    fresh = fresh_by_revision(events)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            blobs = f"tl:{{{game_id}}}:checkpoints"
            kept = await store.redis.hget(blobs, "28")
            assert isinstance(kept, bytes)
            data = bytearray(kept)
            data[-5] ^= 0x01  # one bit of the snapshot
            await store.redis.hset(blobs, "28", bytes(data))
            verified = await recorder.verify(game_id)
            assert verified.ok  # the history is sound: only a copy of it is not
            assert list(verified.bad_checkpoints) == [28]
            assert 28 not in await store.checkpoints.sequences(game_id)  # dropped
        finally:
            await store.close()

    async def damaged_then_read() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            blobs = f"tl:{{{game_id}}}:checkpoints"
            await store.redis.hset(blobs, "28", b"TLCP1 not a checkpoint at all")
            at = events[27].revision  # the revision checkpoint 28 is at
            got = await recorder.position_at(game_id, at)
            assert snapshots.same_position(got, fresh[at])
            await recorder.settle()
            assert (await recorder.verify(game_id)).bad_checkpoints == []  # made again
        finally:
            await store.close()

    asyncio.run(scenario())
    asyncio.run(damaged_then_read())


def test_a_sealed_checkpoint_that_is_not_the_fold_is_found_by_verify_game(
    embedded_redis: EmbeddedRedis,
) -> None:
    """A checkpoint sealed with the key (so reads take it) that is not what the events fold
    to (a fault of the server's own): VerifyGame compares it with a fresh fold."""
    events = random_history("splendor", 60, seed=5)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            as_stored = await store.read(game_id)
            earlier = folding.fold(as_stored[:20])
            wrong = dataclasses.replace(
                earlier, sequence=21, revision=as_stored[20].revision, applied=None
            )
            checkpoint = Checkpoint(
                21, wrong.revision, as_stored[20].hash, True, snapshots.encode(wrong)
            )
            await store.checkpoints.put(
                game_id, 21, wrong.revision, seal(CHAIN, game_id, checkpoint)
            )
            verified = await recorder.verify(game_id)
            assert verified.ok
            assert list(verified.bad_checkpoints) == [21]
            assert verified.checkpoints_checked == len(events) // INTERVAL  # 21 replaced
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_deleted_checkpoint_is_made_again(embedded_redis: EmbeddedRedis) -> None:
    events = random_history("medici", 80, seed=6)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            before = await store.checkpoints.every(game_id)
            # One's bytes gone (still listed), another's listing gone (its bytes kept).
            await store.redis.hdel(f"tl:{{{game_id}}}:checkpoints", "35")
            await store.redis.zrem(f"tl:{{{game_id}}}:checkpoint-index", f"{42:020d}")
            assert not {35, 42} & set(await store.checkpoints.sequences(game_id))
            # The first read that folds past each makes it again.
            for event in (events[35], events[42]):
                await recorder.position_at(game_id, event.revision)
            await recorder.settle()
            after = await store.checkpoints.every(game_id)
            assert [s for s, _ in after] == [s for s, _ in before]
            verified = await recorder.verify(game_id)
            assert verified.ok
            assert list(verified.bad_checkpoints) == []
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_cold_head_comes_from_the_latest_checkpoint(embedded_redis: EmbeddedRedis) -> None:
    events = random_history("castello-methoni", 90, seed=2)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            recorder.forget(game_id)
            store.entries_read = 0
            cold = await recorder.load(game_id)
            # The creation, the event the checkpoint ends at, and those after it.
            assert store.entries_read <= 2 + INTERVAL
            rebuilt = await recorder.rebuild(game_id)
            assert snapshots.same_position(cold.position, rebuilt.position)
            assert (cold.last_hash, cold.keyed, cold.seed) == (
                rebuilt.last_hash,
                rebuilt.keyed,
                rebuilt.seed,
            )
            assert cold.created_time == rebuilt.created_time
            assert cold.updated_time == rebuilt.updated_time
        finally:
            await store.close()

    asyncio.run(scenario())


def test_recording_past_an_interval_checkpoints_the_head(embedded_redis: EmbeddedRedis) -> None:
    actor = events_pb2.Actor(user="tester")

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=5)
        try:
            created = await create_splendor_game(recorder, actor)
            game_id = created.game_id
            version = created.revision
            for notation in splendor_line(seed=2)[:12]:
                outcome = await recorder.record_move(
                    game_id, move=None, notation=notation, seat=None,
                    expected_version=version, request_id="", actor=actor,
                )  # fmt: skip
                version = outcome.head.revision
            await recorder.settle()
            assert await store.checkpoints.sequences(game_id) == [5, 10]
            verified = await recorder.verify(game_id)
            assert verified.ok
            assert verified.checkpoints_checked == 2
            assert list(verified.bad_checkpoints) == []
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_watch_from_far_back_catches_up_through_checkpoints(
    embedded_redis: EmbeddedRedis,
) -> None:
    """A watcher from an old revision gets its backlog folded from the checkpoint before
    it: the updates a replay of a fresh fold gives, each once, up to the head."""
    events = random_history("medici-card-game", 120, seed=9)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        hub = WatchHub(store, heads=recorder.heads)
        try:
            game_id = await _with_checkpoints(store, recorder, events)
            as_stored = await store.read(game_id)
            position = folding.start(as_stored[0].game_created)
            expected: list[tuple[int, bytes]] = []
            for index, event in enumerate(as_stored):
                before = position
                if index:
                    position = folding.advance(position, event)
                item = replay_item(event, before, position, FULL)
                update = service_pb2.WatchGameResponse(update=item)
                expected.append((event.revision, update.SerializeToString()))
            from_revision = as_stored[60].revision
            async with hub.watch(game_id, from_revision, None) as watcher:
                got = [watcher.rendered(update) for update in watcher.backlog()]
            assert got == [b for r, b in expected if r >= from_revision]
        finally:
            await hub.close()
            await store.close()

    asyncio.run(scenario())


def test_a_checkpoint_of_another_game_is_not_taken(embedded_redis: EmbeddedRedis) -> None:
    """The seal covers the game: a checkpoint copied from one game's keys to another's, at
    the same place of the same history, is refused there."""
    events = random_history("splendor", 40, seed=12)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store, checkpoint_interval=INTERVAL)
        try:
            first = await _with_checkpoints(store, recorder, events)
            second = await _with_checkpoints(store, recorder, events)
            copied = await store.redis.hget(f"tl:{{{first}}}:checkpoints", "14")
            assert isinstance(copied, bytes)
            await store.redis.hset(f"tl:{{{second}}}:checkpoints", "14", copied)
            verified = await recorder.verify(second)
            assert verified.ok
            assert list(verified.bad_checkpoints) == [14]
            assert list((await recorder.verify(first)).bad_checkpoints) == []
        finally:
            await store.close()

    asyncio.run(scenario())
