"""Faults found when the recorder was split into rooms: a head forgotten while it is loaded,
a stream whose entry ids are not its sequences, a bug in the rules during verification,
and an annotation removal that re-read the whole stream on every attempt."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import grpc
import pytest
import redis
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.replay import fold as folding
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import CorruptEvent, RedisEventStore, StoredHead
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client
from tests.service.helpers import CHAIN, rpc_refused, splendor_line

ACTOR = events_pb2.Actor(user="tester")
PLAYERS = [events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")]


@pytest.fixture
def raw_redis(embedded_redis: EmbeddedRedis) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(embedded_redis.url)
    yield connection
    connection.close()


async def new_game(recorder: Recorder, moves: int) -> str:
    """A Splendor game in table mode with the first `moves` moves of a seeded line."""
    created = await recorder.create_game(
        service_pb2.CreateGameRequest(game="splendor", players=PLAYERS), ACTOR
    )
    game_id = created.head.game_id
    version = created.head.revision
    for notation in splendor_line(seed=5)[:moves]:
        outcome = await recorder.record_move(
            game_id,
            move=None,
            notation=notation,
            seat=None,
            expected_version=version,
            request_id="",
            actor=ACTOR,
        )
        version = outcome.head.revision
    return game_id


class ForgettingStore(RedisEventStore):
    """Forgets the game from a recorder's head cache while its stored head is being read,
    as a concurrent change does when it finds the cache stale (ChainMismatch,
    StaleVersion)."""

    recorder: Recorder | None = None

    async def head(self, game_id: str) -> StoredHead:
        stored = await super().head(game_id)
        if self.recorder is not None:
            self.recorder.forget(game_id)
        return stored


def test_a_head_forgotten_while_it_is_loaded_still_loads(embedded_redis: EmbeddedRedis) -> None:
    """Was KeyError (INTERNAL): `load` marked the head as recently used after its await,
    when a `forget` in between had removed it."""

    async def scenario() -> None:
        store = ForgettingStore(
            RedisEventStore.from_url(embedded_redis.url, chain=CHAIN).redis, chain=CHAIN
        )
        recorder = Recorder(store)
        try:
            game_id = await new_game(recorder, moves=2)
            assert recorder.cached(game_id) is not None
            store.recorder = recorder
            head = await recorder.load(game_id)
            assert head.revision == 3
            assert recorder.cached(game_id) is None  # forgotten, and loaded all the same
            store.recorder = None
            assert (await recorder.load(game_id)).revision == 3
        finally:
            await store.close()

    asyncio.run(scenario())


def renumber(raw_redis: redis.Redis, game_id: str) -> None:
    """Store the same events again under entry ids that are not their sequences (ids
    chosen by Redis, as an XADD with `*` would)."""
    key = f"tl:{{{game_id}}}:events"
    entries: list[tuple[bytes, dict[bytes, bytes]]] = raw_redis.xrange(key)  # type: ignore[assignment]
    pipe = raw_redis.pipeline(transaction=True)
    pipe.delete(key)
    for _entry_id, fields in entries:
        pipe.xadd(key, {"e": fields[b"e"]}, id="*")
    pipe.execute()


def data_loss_at(call: Callable[[], object]) -> tuple[str, str]:
    """(sequence, revision) of the first bad event a DATA_LOSS refusal names."""
    code, details = rpc_refused(call)
    assert code == grpc.StatusCode.DATA_LOSS
    infos = [d for d in details if isinstance(d, error_details_pb2.ErrorInfo)]
    assert infos[0].reason == "CORRUPT_HISTORY"
    return str(infos[0].metadata["sequence"]), str(infos[0].metadata["revision"])


def test_a_stream_whose_entry_ids_are_not_its_sequences_is_data_loss(
    client: Client,
    stub: service_pb2_grpc.TablelogServiceStub,
    raw_redis: redis.Redis,
    embedded_redis: EmbeddedRedis,
) -> None:
    """Was INTERNAL (the append script's XADD refused the id) or silently served: every
    read of such a stream is DATA_LOSS naming the first bad event, and so is a change on
    it (the append script finds the stream not ending where the head says; the stream is
    then verified)."""
    game = client.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=11)
    version = game.version
    for notation in line[:3]:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    renumber(raw_redis, game.game_id)

    game_id = game.game_id
    audit = service_pb2.GetAuditLogRequest(game_id=game_id)
    assert data_loss_at(lambda: stub.GetAuditLog(audit)) == ("1", "1")
    replay = service_pb2.ReplayGameRequest(game_id=game_id)
    assert data_loss_at(lambda: list(stub.ReplayGame(replay))) == ("1", "1")
    record = service_pb2.RecordMoveRequest(
        game_id=game_id, notation=line[3], expected_version=version
    )
    # The server's cached head is caught out by the append itself.
    assert data_loss_at(lambda: stub.RecordMove(record)) == ("1", "1")
    assert raw_redis.xlen(f"tl:{{{game_id}}}:events") == 4  # nothing was appended

    async def cold_load() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        try:
            with pytest.raises(CorruptEvent) as info:
                await Recorder(store).load(game_id)
            assert info.value.revision == 1
        finally:
            await store.close()

    asyncio.run(cold_load())


def test_a_bug_in_the_rules_is_not_reported_as_damaged_data(
    embedded_redis: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was `ok=false, "event 2 does not apply (RuntimeError)"`: verification blamed the
    stored data for a fault of the server's own. It now propagates (INTERNAL, logged),
    while a history that breaks a rule is still reported as bad."""

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store)
        try:
            game_id = await new_game(recorder, moves=2)
            assert (await recorder.verify(game_id)).ok

            def broken(*_args: object, **_kwargs: object) -> folding.Position:
                raise RuntimeError("a bug in the rules")

            with monkeypatch.context() as patch:
                patch.setattr(folding, "record", broken)
                with pytest.raises(RuntimeError, match="a bug in the rules"):
                    await recorder.verify(game_id)
            assert (await recorder.verify(game_id)).ok
        finally:
            await store.close()

    asyncio.run(scenario())


class CountingStore(RedisEventStore):
    """Counts reads of a whole stream; the first one lets another writer annotate the game
    right after it (the removal's check is then made on a head that has moved)."""

    interloper: Recorder | None = None
    whole_reads = 0

    async def read(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[events_pb2.Event]:
        events = await super().read(game_id, after_sequence, count)
        if after_sequence == 0 and count is None:
            self.whole_reads += 1
            interloper, self.interloper = self.interloper, None
            if interloper is not None:
                await interloper.annotate(
                    game_id, revision=1, comment="meanwhile", glyph="", request_id="", actor=ACTOR
                )
        return events


def test_removing_an_annotation_reads_the_stream_once_when_it_has_moved(
    embedded_redis: EmbeddedRedis,
) -> None:
    """Was a whole-stream read per attempt: when another writer comes first, the removal now
    reads only what was appended since its check."""

    async def scenario() -> None:
        store = CountingStore(
            RedisEventStore.from_url(embedded_redis.url, chain=CHAIN).redis, chain=CHAIN
        )
        other_store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store)
        try:
            game_id = await new_game(recorder, moves=2)
            added = await recorder.annotate(
                game_id, revision=2, comment="first", glyph="", request_id="", actor=ACTOR
            )
            note_id = added.events[-1].annotation_added.annotation_id
            store.whole_reads = 0
            store.interloper = Recorder(other_store)
            removed = await recorder.remove_annotation(
                game_id, annotation_id=note_id, request_id="remove-1", actor=ACTOR
            )
            assert store.whole_reads == 1
            assert store.interloper is None  # the other writer did come first
            assert removed.events[-1].sequence == added.events[-1].sequence + 2
            left = await recorder.annotations(game_id)
            assert [note.comment for note in left] == ["meanwhile"]
        finally:
            await store.close()
            await other_store.close()

    asyncio.run(scenario())


def test_the_head_cache_keeps_the_most_recently_used_heads(
    embedded_redis: EmbeddedRedis,
) -> None:
    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        recorder = Recorder(store)
        try:
            first = await new_game(recorder, moves=0)
            one = recorder.heads.cache.bytes  # what a new game's head holds: room for two
            recorder.heads.cache.max_bytes = 2 * one + one // 2
            second = await new_game(recorder, moves=0)
            await recorder.load(first)  # now the most recently used
            third = await new_game(recorder, moves=0)
            assert recorder.cached(first) is not None
            assert recorder.cached(second) is None
            assert recorder.cached(third) is not None
            assert (await recorder.load(second)).revision == 1  # rebuilt from its stream
            assert recorder.cached(first) is None
        finally:
            await store.close()

    asyncio.run(scenario())
