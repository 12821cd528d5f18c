"""Tampering with a game in Redis, as anyone who can write to it could (issue 11, build 5):
every change to a stored history is found at the revision it was made, by VerifyGame, by
an instance that loads the game afresh and, when it touches what the append path checks
(the head, the stream's length or its last entry), by the warm instance's next change;
a history cut off and its head fixed is found against the head a warm instance holds, or
against a receipt; an export edited after it was exported is refused with its line."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
import redis
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.service.api.server import BackgroundServer, background_server
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import RedisEventStore, TamperedHistory
from tablelog.service.store.chain import GENESIS_HASH, HASH_FIELD_TAG, Chain, ChainKey
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2
from tablelog_client import Client
from tests.service.helpers import (
    CHAIN,
    OWNER_NAME,
    OWNER_TOKEN,
    create_splendor_game,
    refused,
    rpc_refused,
    splendor_line,
)

pytestmark = pytest.mark.slow

MOVES = 6
"""Moves recorded per game: events 1-7, each at the revision of its sequence."""
EDITED = 4
"""The event the tampers change."""


@pytest.fixture
def raw_redis(embedded_redis: EmbeddedRedis) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(embedded_redis.url)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def cold_server(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """Another instance of the same deployment (same key): it has loaded none of a test's
    games before they are tampered with, so it loads them from the stream."""
    running = BackgroundServer(embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    yield running
    running.stop()


@pytest.fixture
def cold(cold_server: BackgroundServer) -> Iterator[Client]:
    with Client(cold_server.target, token=OWNER_TOKEN, timeout=30) as connected:
        yield connected


@dataclass
class Recorded:
    game_id: str
    line: list[str]
    receipts: dict[int, service_pb2.Receipt] = field(default_factory=dict)
    """The receipt of each revision's change."""
    heads: dict[int, dict[bytes, bytes]] = field(default_factory=dict)
    """The stored head hash at each revision (what a tamperer can copy back)."""


def head_key(game_id: str) -> str:
    return f"tl:{{{game_id}}}:head"


def stream_key(game_id: str) -> str:
    return f"tl:{{{game_id}}}:events"


def record_game(client: Client, raw_redis: redis.Redis) -> Recorded:
    """A table-mode Splendor game of MOVES moves, recorded through `client` (whose server
    then holds its head in its cache: the warm instance)."""
    game = client.create_game("splendor", ["Ann", "Bob"])
    recorded = Recorded(game.game_id, splendor_line(seed=11))
    recorded.heads[1] = raw_redis.hgetall(head_key(game.game_id))  # type: ignore[assignment]
    version = game.version
    for notation in recorded.line[:MOVES]:
        response = client.record(game.game_id, notation, expected_version=version)
        version = response.game.version
        recorded.receipts[version] = response.receipt
        recorded.heads[version] = raw_redis.hgetall(head_key(game.game_id))  # type: ignore[assignment]
    assert version == MOVES + 1
    return recorded


def entries(raw_redis: redis.Redis, game_id: str) -> list[bytes]:
    stored: list[tuple[bytes, dict[bytes, bytes]]] = raw_redis.xrange(stream_key(game_id))  # type: ignore[assignment]
    return [fields[b"e"] for _id, fields in stored]


def rewrite(
    raw_redis: redis.Redis,
    game_id: str,
    datas: list[bytes],
    head: dict[bytes, bytes] | None = None,
) -> None:
    """Replace a game's stream (entry ids 1-0, 2-0, ...) and, when given, its head hash."""
    pipe = raw_redis.pipeline(transaction=True)
    pipe.delete(stream_key(game_id))
    for sequence, data in enumerate(datas, start=1):
        pipe.xadd(stream_key(game_id), {"e": data}, id=f"{sequence}-0")
    if head is not None:
        pipe.hset(head_key(game_id), mapping=head)  # type: ignore[arg-type]
    pipe.execute()


def plain_seal(
    events: list[events_pb2.Event], prev_hash: bytes
) -> list[tuple[events_pb2.Event, bytes]]:
    """The chain as it was before keys: SHA-256 of each event without `hash` and without a
    key id (what anyone can recompute)."""
    sealed = []
    for event in events:
        copy = events_pb2.Event()
        copy.CopyFrom(event)
        copy.prev_hash = prev_hash
        for sealing in ("hash", "chain_key_id"):
            copy.ClearField(sealing)
        unhashed = copy.SerializeToString(deterministic=True)
        copy.hash = prev_hash = hashlib.sha256(unhashed).digest()
        sealed.append((copy, unhashed + HASH_FIELD_TAG + copy.hash))
    return sealed


def resealed_from(
    datas: list[bytes],
    edit: Callable[[events_pb2.Event], None],
    seal: Callable[[list[events_pb2.Event], bytes], list[tuple[events_pb2.Event, bytes]]],
    first: int = EDITED,
) -> tuple[list[bytes], bytes]:
    """The stream with event `first` edited and it and every later event sealed again with
    `seal` (the chain made to link up again); and the new last hash."""
    events = [events_pb2.Event.FromString(data) for data in datas]
    edit(events[first - 1])
    prev_hash = events[first - 2].hash if first > 1 else GENESIS_HASH
    sealed = seal(events[first - 1 :], prev_hash)
    return [*datas[: first - 1], *(data for _, data in sealed)], sealed[-1][0].hash


def another_actor(event: events_pb2.Event) -> None:
    event.actor.user = "mallory"


def fixed_head(raw_redis: redis.Redis, game_id: str, last_hash: bytes) -> dict[bytes, bytes]:
    head: dict[bytes, bytes] = raw_redis.hgetall(head_key(game_id))  # type: ignore[assignment]
    return {**head, b"last_hash": last_hash}


# ---------------------------------------------------------------------- the tampers


def edit_bytes(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """One character of event 4's stored notation changed (no hash recomputed)."""
    datas = entries(raw_redis, recorded.game_id)
    notation = recorded.line[EDITED - 2].encode()
    assert notation in datas[EDITED - 1]
    forged = bytes([notation[0] ^ 0x01]) + notation[1:]
    datas[EDITED - 1] = datas[EDITED - 1].replace(notation, forged, 1)
    rewrite(raw_redis, recorded.game_id, datas)


def reseal_plain(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """Event 4's actor edited and the chain sealed again from it with plain SHA-256, the
    head's hash fixed to match."""
    datas, last_hash = resealed_from(
        entries(raw_redis, recorded.game_id), another_actor, plain_seal
    )
    rewrite(raw_redis, recorded.game_id, datas, fixed_head(raw_redis, recorded.game_id, last_hash))


def reseal_plain_keeping_the_head(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """As `reseal_plain`, the head left as it was."""
    datas, _ = resealed_from(entries(raw_redis, recorded.game_id), another_actor, plain_seal)
    rewrite(raw_redis, recorded.game_id, datas)


def reseal_wrong_key(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """Event 4's actor edited, the chain sealed again from it under a key of the tamperer's
    own (named by its own id), the head fixed."""
    theirs = Chain(ChainKey.of(secrets.token_bytes(32)))
    datas, last_hash = resealed_from(
        entries(raw_redis, recorded.game_id), another_actor, theirs.seal
    )
    rewrite(raw_redis, recorded.game_id, datas, fixed_head(raw_redis, recorded.game_id, last_hash))


def reseal_wrong_key_posing_as_ours(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """As `reseal_wrong_key`, the events naming the service's own key id."""
    posing = Chain(ChainKey(secrets.token_bytes(32), CHAIN.signing.key_id))
    datas, last_hash = resealed_from(
        entries(raw_redis, recorded.game_id), another_actor, posing.seal
    )
    rewrite(raw_redis, recorded.game_id, datas, fixed_head(raw_redis, recorded.game_id, last_hash))


def delete_middle(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """Entry 4 deleted (XDEL), nothing else touched."""
    assert raw_redis.xdel(stream_key(recorded.game_id), f"{EDITED}-0") == 1


def reorder_middle(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """Entries 4 and 5 swapped (their ids kept)."""
    datas = entries(raw_redis, recorded.game_id)
    datas[EDITED - 1], datas[EDITED] = datas[EDITED], datas[EDITED - 1]
    rewrite(raw_redis, recorded.game_id, datas)


def reorder_last(raw_redis: redis.Redis, recorded: Recorded) -> None:
    """The last two entries (6 and 7) swapped."""
    datas = entries(raw_redis, recorded.game_id)
    datas[-2], datas[-1] = datas[-1], datas[-2]
    rewrite(raw_redis, recorded.game_id, datas)


@dataclass(frozen=True)
class Tamper:
    change: Callable[[redis.Redis, Recorded], None]
    first_bad: int
    """The sequence (and revision) of the first event the change makes bad."""
    warm_append_sees_it: bool
    """Whether it changes what the append path checks in O(1): the head, the stream's
    length or its last entry. Otherwise (an edit or a reorder inside the stream, the
    head and the last entry untouched) it is found by verifying the stream: VerifyGame,
    an instance loading the game afresh."""


TAMPERS = {
    "edit an event's bytes": Tamper(edit_bytes, EDITED, False),
    "edit, reseal with plain SHA-256, fix the head": Tamper(reseal_plain, EDITED, True),
    "edit, reseal with plain SHA-256": Tamper(reseal_plain_keeping_the_head, EDITED, True),
    "edit, reseal with a wrong key, fix the head": Tamper(reseal_wrong_key, EDITED, True),
    "edit, reseal with a wrong key named as ours": Tamper(
        reseal_wrong_key_posing_as_ours, EDITED, True
    ),
    "delete a middle entry": Tamper(delete_middle, EDITED, True),
    "reorder two middle entries": Tamper(reorder_middle, EDITED, False),
    "reorder the last two entries": Tamper(reorder_last, MOVES, True),
}


def data_loss_at(call: Callable[[], object]) -> tuple[int, int]:
    """(sequence, revision) of the first bad event a DATA_LOSS refusal names."""
    code, details = rpc_refused(call)
    assert code == grpc.StatusCode.DATA_LOSS
    info = next(d for d in details if isinstance(d, error_details_pb2.ErrorInfo))
    assert info.reason == "CORRUPT_HISTORY"
    return int(info.metadata["sequence"]), int(info.metadata["revision"])


def next_move(client: Client, recorded: Recorded) -> Callable[[], object]:
    def record() -> object:
        request = service_pb2.RecordMoveRequest(
            game_id=recorded.game_id,
            notation=recorded.line[MOVES],
            expected_version=MOVES + 1,
            request_id=secrets.token_hex(8),
        )
        return client.stub.RecordMove(request)

    return record


@pytest.mark.parametrize("name", list(TAMPERS))
def test_every_tamper_is_found_at_its_revision(
    name: str, client: Client, cold: Client, raw_redis: redis.Redis
) -> None:
    tamper = TAMPERS[name]
    recorded = record_game(client, raw_redis)
    assert client.verify(recorded.game_id).ok
    tamper.change(raw_redis, recorded)
    expected = (tamper.first_bad, tamper.first_bad)
    length = raw_redis.xlen(stream_key(recorded.game_id))

    for instance in (client, cold):
        result = instance.verify(recorded.game_id)
        assert not result.ok, name
        assert (result.first_bad_sequence, result.first_bad_revision) == expected, name
    # Loaded afresh, the game is refused: no change appended, no state served.
    assert data_loss_at(next_move(cold, recorded)) == expected, name
    get_game = service_pb2.GetGameRequest(game_id=recorded.game_id)
    assert data_loss_at(lambda: cold.stub.GetGame(get_game)) == expected, name
    # Reads of the stream itself (audit, replay, a past state) verify it as they read it.
    audit = service_pb2.GetAuditLogRequest(game_id=recorded.game_id)
    assert data_loss_at(lambda: client.stub.GetAuditLog(audit)) == expected, name
    # A past state reads (from the nearest checkpoint) up to the revision asked for and the
    # event after it: one that reaches the damage finds it.
    reaching = min(tamper.first_bad, MOVES)
    past = service_pb2.GetStateRequest(game_id=recorded.game_id, revision=reaching)
    assert data_loss_at(lambda: client.stub.GetState(past)) == expected, name
    if tamper.warm_append_sees_it:
        assert data_loss_at(next_move(client, recorded)) == expected, name
        # The warm instance keeps the head it had: reads and changes stay refused.
        assert data_loss_at(lambda: client.stub.GetGame(get_game)) == expected, name
        assert data_loss_at(next_move(client, recorded)) == expected, name
    assert raw_redis.xlen(stream_key(recorded.game_id)) == length  # nothing appended


def truncate_and_fix_head(raw_redis: redis.Redis, recorded: Recorded, keep: int) -> None:
    """Every event after `keep` cut off, the head and its summary put back as they were at
    that revision: a valid, shorter keyed chain."""
    datas = entries(raw_redis, recorded.game_id)[:keep]
    pipe = raw_redis.pipeline(transaction=True)
    pipe.delete(head_key(recorded.game_id))
    pipe.hset(head_key(recorded.game_id), mapping=recorded.heads[keep])  # type: ignore[arg-type]
    pipe.execute()
    rewrite(raw_redis, recorded.game_id, datas)


def test_a_truncation_with_its_head_fixed_is_found_by_the_warm_instance_and_a_receipt(
    client: Client, cold: Client, raw_redis: redis.Redis
) -> None:
    recorded = record_game(client, raw_redis)
    kept_receipt = recorded.receipts[MOVES + 1]
    truncate_and_fix_head(raw_redis, recorded, keep=EDITED)
    missing = (EDITED + 1, EDITED + 1)

    # The warm instance's cached head is a receipt of its own.
    assert data_loss_at(next_move(client, recorded)) == missing
    get_state = service_pb2.GetStateRequest(game_id=recorded.game_id)
    assert data_loss_at(lambda: client.stub.GetState(get_state)) == missing
    # What is left is a valid keyed chain: only a receipt shows what was cut.
    assert cold.verify(recorded.game_id).ok
    for instance in (client, cold):
        result = instance.verify(recorded.game_id, [kept_receipt])
        assert not result.ok
        assert (result.first_bad_sequence, result.first_bad_revision) == missing
        assert "missing" in result.problem
    # A receipt from before the cut still holds.
    early = cold.verify(recorded.game_id, [recorded.receipts[EDITED - 1]])
    assert early.ok
    assert early.receipts_checked == 1


def test_a_receipt_names_the_head_and_only_this_service_can_issue_one(
    client: Client, raw_redis: redis.Redis
) -> None:
    recorded = record_game(client, raw_redis)
    receipt = recorded.receipts[MOVES + 1]
    head = raw_redis.hgetall(head_key(recorded.game_id))
    assert (receipt.game_id, receipt.sequence, receipt.revision) == (
        recorded.game_id,
        MOVES + 1,
        MOVES + 1,
    )
    assert receipt.chain_hash == head[b"last_hash"]
    assert receipt.key_id == CHAIN.signing.key_id
    result = client.verify(recorded.game_id, list(recorded.receipts.values()))
    assert result.ok
    assert result.receipts_checked == MOVES
    assert result.keyed
    assert result.unkeyed_events == 0
    assert list(result.key_ids) == [CHAIN.signing.key_id]

    forged = service_pb2.Receipt()
    forged.CopyFrom(receipt)
    forged.chain_hash = bytes(32)  # a receipt made up to accuse a sound history
    error = refused(lambda: client.verify(recorded.game_id, [forged]))
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert error.violations[0][0] == "receipts[0]"
    other = record_game(client, raw_redis)
    error = refused(lambda: client.verify(recorded.game_id, [other.receipts[2]]))
    assert error.violations[0][0] == "receipts[0].game_id"
    # Every change answers one: an undo, an annotation, the retry of a request.
    undone = client.undo(recorded.game_id, expected_version=MOVES + 1)
    assert undone.receipt.revision == MOVES + 2
    assert client.verify(recorded.game_id, [undone.receipt]).ok


def test_a_full_downgrade_to_plain_sha256_is_found_warm_and_against_a_receipt(
    client: Client, cold: Client, raw_redis: redis.Redis
) -> None:
    """The whole chain sealed again with plain SHA-256 from the first event (an actor
    edited): it reads as a game recorded before keys. The warm instance's cached head and
    any receipt show it; a cold VerifyGame reports the chain as unkeyed."""
    recorded = record_game(client, raw_redis)
    datas, last_hash = resealed_from(
        entries(raw_redis, recorded.game_id), another_actor, plain_seal, first=1
    )
    rewrite(raw_redis, recorded.game_id, datas, fixed_head(raw_redis, recorded.game_id, last_hash))
    head = (MOVES + 1, MOVES + 1)
    assert data_loss_at(next_move(client, recorded)) == head
    result = cold.verify(recorded.game_id)
    assert result.ok
    assert not result.keyed
    assert result.unkeyed_events == MOVES + 1
    against = cold.verify(recorded.game_id, [recorded.receipts[MOVES + 1]])
    assert not against.ok
    assert (against.first_bad_sequence, against.first_bad_revision) == head


def test_a_game_recorded_before_keys_still_verifies_and_continues_keyed(
    client: Client, cold: Client, cold_server: BackgroundServer, raw_redis: redis.Redis
) -> None:
    """Nothing recorded is lost: a plain SHA-256 chain (the format before keys) loads and
    verifies, reported unkeyed; what is appended to it is keyed, and its unkeyed part may
    then not be sealed again without the key."""
    source = record_game(client, raw_redis)
    events = [events_pb2.Event.FromString(data) for data in entries(raw_redis, source.game_id)]
    legacy_id = "legacy" + secrets.token_hex(5)
    events[0].game_created.game_id = legacy_id
    sealed = plain_seal(events, GENESIS_HASH)
    head = {**source.heads[MOVES + 1], b"last_hash": sealed[-1][0].hash}
    summary = service_pb2.GameSummary.FromString(head[b"summary"])
    summary.game_id = legacy_id
    head[b"summary"] = summary.SerializeToString()
    rewrite(raw_redis, legacy_id, [data for _, data in sealed], head)
    # Found where `tablelog serve` finds games recorded before it: in the listing index it
    # builds at start-up (a game no club's index holds is no club's: NOT_FOUND).
    from tablelog.service.recording.game_index import rebuild_game_index

    assert cold_server.built is not None
    cold_server.run(rebuild_game_index(cold_server.built.recorder.store, from_scratch=False))

    result = cold.verify(legacy_id)
    assert result.ok
    assert not result.keyed
    assert (result.unkeyed_events, list(result.key_ids)) == (MOVES + 1, [])
    receipts = []
    for version, notation in enumerate(source.line[MOVES : MOVES + 2], start=MOVES + 1):
        appended = cold.stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=legacy_id, notation=notation, expected_version=version
            )
        )
        assert appended.events[0].chain_key_id == CHAIN.signing.key_id
        receipts.append(appended.receipt)
    result = client.verify(legacy_id, receipts)
    assert result.ok
    assert not result.keyed
    assert result.unkeyed_events == MOVES + 1
    assert list(result.key_ids) == [CHAIN.signing.key_id]
    # Sealing the last keyed event again without the key: an unkeyed event after a keyed
    # one, found where it is with no receipt needed.
    last = MOVES + 3
    datas, last_hash = resealed_from(
        entries(raw_redis, legacy_id), another_actor, plain_seal, first=last
    )
    rewrite(raw_redis, legacy_id, datas, fixed_head(raw_redis, legacy_id, last_hash))
    result = client.verify(legacy_id)
    assert (result.ok, result.first_bad_sequence, result.first_bad_revision) == (False, last, last)
    get_game = service_pb2.GetGameRequest(game_id=legacy_id)
    assert data_loss_at(lambda: cold.stub.GetGame(get_game)) == (last, last)
    # Sealing every keyed event again (the whole chain then reads as recorded before
    # keys) is shown by a receipt.
    datas, last_hash = resealed_from(
        entries(raw_redis, legacy_id), another_actor, plain_seal, first=MOVES + 2
    )
    rewrite(raw_redis, legacy_id, datas, fixed_head(raw_redis, legacy_id, last_hash))
    assert client.verify(legacy_id).ok
    result = client.verify(legacy_id, receipts[:1])
    assert (result.ok, result.first_bad_sequence) == (False, MOVES + 2)


def test_an_export_with_edited_actors_is_refused_with_its_line(
    client: Client, raw_redis: redis.Redis
) -> None:
    recorded = record_game(client, raw_redis)
    exported = client.export(recorded.game_id)
    edited = [events_pb2.Event.FromString(e.SerializeToString()) for e in exported]
    edited[EDITED - 1].actor.user = "mallory"
    for accept in (False, True):

        def attempt(accept: bool = accept) -> object:
            return client.import_events(edited, accept_unverified=accept)

        error = refused(attempt)
        assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_HISTORY")
        assert (error.metadata["rule"], error.metadata["line"]) == ("BROKEN_CHAIN", str(EDITED))
    # Sealed again by the editor (plain SHA-256 from there on): an unkeyed event after
    # keyed ones, at the same line.
    resealed = [events_pb2.Event.FromString(e.SerializeToString()) for e in exported]
    for (copy, _data), index in zip(
        plain_seal(edited[EDITED - 1 :], exported[EDITED - 2].hash),
        range(EDITED - 1, len(exported)),
        strict=True,
    ):
        resealed[index] = copy
    error = refused(lambda: client.import_events(resealed, accept_unverified=True))
    assert (error.metadata["rule"], error.metadata["line"]) == ("BROKEN_CHAIN", str(EDITED))

    # The unedited export imports, verified, and every event says it was imported.
    imported = client.import_events(exported, source="game.jsonl")
    events = client.export(imported.game_id)
    assert [e.actor.user for e in events] == [e.actor.user for e in exported]
    for event, original in zip(events, exported, strict=True):
        assert event.imported.verified
        assert event.imported.by.user == OWNER_NAME
        assert event.imported.source == "game.jsonl"
        assert event.imported.original_game_id == recorded.game_id
        assert event.imported.original_hash == original.hash
        assert event.chain_key_id == CHAIN.signing.key_id
    result = client.verify(imported.game_id)
    assert result.ok
    assert result.keyed
    assert not result.imported_unverified


def test_an_export_from_an_unknown_key_needs_accepting_as_unverified(
    client: Client, embedded_redis: EmbeddedRedis, raw_redis: redis.Redis
) -> None:
    recorded = record_game(client, raw_redis)
    exported = client.export(recorded.game_id)
    elsewhere = Chain(ChainKey.of(secrets.token_bytes(32)))  # another club's server
    with (
        background_server(embedded_redis.url, elsewhere, OWNER_TOKEN) as other,
        Client(other.target, token=OWNER_TOKEN, timeout=30) as there,
    ):
        error = refused(lambda: there.import_events(exported))
        assert (error.code, error.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "UNVERIFIED_HISTORY",
        )
        assert error.metadata["line"] == "1"
        imported = there.import_events(exported, accept_unverified=True, source="club-a")
        events = there.export(imported.game_id)
        assert not any(event.imported.verified for event in events)
        assert [e.actor.user for e in events] == [e.actor.user for e in exported]
        result = there.verify(imported.game_id)
        assert result.ok
        assert result.keyed
        assert result.imported_unverified


class CountingStore(RedisEventStore):
    """Counts the stream reads a recorder makes (a verification reads the stream)."""

    stream_reads = 0

    async def read_raw(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        self.stream_reads += 1
        return await super().read_raw(game_id, after_sequence, count)


def test_an_unchanged_head_is_not_verified_again(embedded_redis: EmbeddedRedis) -> None:
    """The hot path: a warm recorder appends without reading the stream (the append script
    checks the head it builds on); the stream is verified once, when the game is loaded,
    and again only when the stored head is not the cached one."""
    actor = events_pb2.Actor(user="tester")

    async def scenario() -> None:
        plain = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        store = CountingStore(plain.redis, chain=CHAIN)
        other = Recorder(RedisEventStore.from_url(embedded_redis.url, chain=CHAIN))
        recorder = Recorder(store)
        try:
            created = await create_splendor_game(recorder, actor)
            game_id = created.game_id
            line = splendor_line(seed=11)
            version = created.revision
            for notation in line[:20]:
                outcome = await recorder.record_move(
                    game_id, move=None, notation=notation, seat=None,
                    expected_version=version, request_id="", actor=actor,
                )  # fmt: skip
                version = outcome.head.revision
                await recorder.load(game_id)  # a read at the head: one HMGET, no stream
            assert store.stream_reads == 0
            # Another instance appends: this one reads (and verifies) only the new event.
            await other.record_move(
                game_id, move=None, notation=line[20], seat=None,
                expected_version=version, request_id="", actor=actor,
            )  # fmt: skip
            await recorder.load(game_id)
            assert store.stream_reads == 1
            recorder.forget(game_id)
            await recorder.load(game_id)  # cold: the whole stream, verified
            assert store.stream_reads == 2
            await store.redis.xdel(f"tl:{{{game_id}}}:events", "3-0")
            with pytest.raises(TamperedHistory) as info:
                await recorder.record_move(
                    game_id, move=None, notation=line[21], seat=None,
                    expected_version=version + 1, request_id="", actor=actor,
                )  # fmt: skip
            assert (info.value.sequence, info.value.revision) == (3, 3)
        finally:
            await store.close()
            await other.store.close()

    asyncio.run(scenario())


def test_another_games_history_copied_under_a_games_id_is_found(
    client: Client, cold: Client, raw_redis: redis.Redis
) -> None:
    """Issue 23: a stream and head copied from another game under this game's id verified
    as ok and keyed on main, and a cold instance served the other game."""
    copied = record_game(client, raw_redis)
    target = record_game(client, raw_redis)
    for key in (stream_key, head_key):
        raw_redis.copy(key(copied.game_id), key(target.game_id), replace=True)
    for instance in (client, cold):
        result = instance.verify(target.game_id)
        assert not result.ok
        assert (result.first_bad_sequence, result.first_bad_revision) == (1, 1)
        assert "another game's history" in result.problem
    get_game = service_pb2.GetGameRequest(game_id=target.game_id)
    assert data_loss_at(lambda: cold.stub.GetGame(get_game)) == (1, 1)
    assert client.verify(copied.game_id).ok  # the original verifies where it belongs


def test_a_watch_delivers_nothing_the_chain_does_not_vouch_for(
    client: Client, raw_redis: redis.Redis
) -> None:
    """Issue 23: WatchGame's live tail delivered whatever the stream held; an entry forged
    after the watch opened (a move with its seal copied from another event) now ends the
    watch DATA_LOSS instead of reaching the watcher."""
    recorded = record_game(client, raw_redis)
    last = entries(raw_redis, recorded.game_id)[-1]
    forged = events_pb2.Event.FromString(last)
    forged.sequence += 1
    forged.revision += 1
    forged.prev_hash = forged.hash  # links, but its own seal is the copied one
    forged.move_recorded.notation = "take w u g"
    stream = client.stub.WatchGame(
        service_pb2.WatchGameRequest(game_id=recorded.game_id, heartbeat_seconds=1),
        timeout=30,
    )
    assert next(stream).WhichOneof("item") == "heartbeat"
    raw_redis.xadd(
        stream_key(recorded.game_id), {"e": forged.SerializeToString()}, id=f"{forged.sequence}-0"
    )
    with pytest.raises(grpc.RpcError) as info:
        read_all_heartbeats(stream)
    assert info.value.code() is grpc.StatusCode.DATA_LOSS


def read_all_heartbeats(stream: Any) -> None:
    for _ in range(10):
        item = next(stream)
        assert item.WhichOneof("item") == "heartbeat", "the forged event was delivered"


def test_a_warm_instance_finds_a_mid_stream_edit_at_its_periodic_check(
    embedded_redis: EmbeddedRedis, raw_redis: redis.Redis
) -> None:
    """Issue 23: an edit of one event in the middle of the stream, the head and the last
    entry kept, passed every load of a warm instance until a cold load or VerifyGame. The
    periodic check (`Heads.check_cached`, run by `serve` once per --cache-check-interval)
    finds it, and the game is refused from then on; an untouched game stays served."""
    actor = events_pb2.Actor(user="tester")

    async def scenario() -> None:
        recorder = Recorder(RedisEventStore.from_url(embedded_redis.url, chain=CHAIN))
        try:
            games = []
            for _ in range(2):
                created = await create_splendor_game(recorder, actor)
                version = created.revision
                for notation in splendor_line(seed=5)[:6]:
                    outcome = await recorder.record_move(
                        created.game_id, move=None, notation=notation, seat=None,
                        expected_version=version, request_id="", actor=actor,
                    )  # fmt: skip
                    version = outcome.head.revision
                games.append(created.game_id)
            edited, untouched = games
            datas = entries(raw_redis, edited)
            event = events_pb2.Event.FromString(datas[EDITED - 1])
            event.actor.user = "mallory"  # its stored hash no longer covers it
            datas[EDITED - 1] = event.SerializeToString()
            rewrite(raw_redis, edited, datas)
            await recorder.load(edited)  # warm: head and last entry unchanged, not seen
            assert await recorder.heads.check_cached() == [edited]
            with pytest.raises(TamperedHistory) as info:
                await recorder.load(edited)
            assert info.value.sequence == EDITED
            await recorder.load(untouched)
            assert await recorder.heads.check_cached() == []  # refused already; the other holds
        finally:
            await recorder.store.close()

    asyncio.run(scenario())
