"""Integrity: request ids name one request, VerifyGame checks the stored bytes and the dealt
seed, imports and verification fold strictly, removals are atomic, faults and oversized
inputs are refused cleanly, and logs never carry long client strings."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import time
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
import redis
import structlog
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.replay.registry import find_game
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.errors import NotFound
from tablelog.service.limits import MAX_MESSAGE_BYTES
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import RedisEventStore
from tablelog.service.store.chain import GENESIS_HASH
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, game_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN, refused, rpc_refused, splendor_line

pytestmark = pytest.mark.slow


@pytest.fixture
def raw_redis(embedded_redis: EmbeddedRedis) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(embedded_redis.url)
    yield connection
    connection.close()


def stub_of(client: Client) -> service_pb2_grpc.TablelogServiceStub:
    return service_pb2_grpc.TablelogServiceStub(channel(client.address, OWNER_TOKEN))


def error_info(details: list[object]) -> error_details_pb2.ErrorInfo:
    return next(d for d in details if isinstance(d, error_details_pb2.ErrorInfo))


def bad_fields(details: list[object]) -> list[str]:
    found = [d for d in details if isinstance(d, error_details_pb2.BadRequest)]
    return [v.field for d in found for v in d.field_violations]


def table_game(client: Client, moves: int) -> tuple[str, list[str]]:
    game = client.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=11)
    version = game.version
    for notation in line[:moves]:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    return game.game_id, line


def stored(raw_redis: redis.Redis, game_id: str) -> list[bytes]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = raw_redis.xrange(  # type: ignore[assignment]
        f"tl:{{{game_id}}}:events"
    )
    return [fields[b"e"] for _id, fields in entries]


def rewrite(raw_redis: redis.Redis, game_id: str, entries: list[bytes], last_hash: bytes) -> None:
    """Replace a game's stream in Redis (what a tamperer with access to Redis could do)."""
    key = f"tl:{{{game_id}}}:events"
    pipe = raw_redis.pipeline(transaction=True)
    pipe.delete(key)
    for sequence, data in enumerate(entries, start=1):
        pipe.xadd(key, {"e": data}, id=f"{sequence}-0")
    pipe.hset(f"tl:{{{game_id}}}:head", "last_hash", last_hash)
    pipe.execute()


def unsealed(events: list[events_pb2.Event]) -> list[events_pb2.Event]:
    """Copies of exported events without their chain: an unverified history, for checking
    what the rules refuse in an import (an edited keyed export is refused by its chain
    first: see test_tampering)."""
    copies = [events_pb2.Event.FromString(e.SerializeToString()) for e in events]
    for event in copies:
        for sealing in ("prev_hash", "hash", "chain_key_id"):
            event.ClearField(sealing)
    return copies


def reseal(raw_redis: redis.Redis, game_id: str, events: list[events_pb2.Event]) -> None:
    """Store `events` with a correct chain, keyed with the service's own key (as only the
    service could): only the checks beyond the chain can tell."""
    sealed = CHAIN.seal(events, GENESIS_HASH)
    rewrite(raw_redis, game_id, [data for _, data in sealed], sealed[-1][0].hash)


# ------------------------------------------------------------------ 1. idempotency keys


def test_a_request_id_reused_for_another_move_is_refused(client: Client) -> None:
    game_id, line = table_game(client, 0)
    first = client.record(game_id, line[0], expected_version=1, request_id="move-1")
    again = client.record(game_id, line[0], expected_version=1, request_id="move-1")
    assert list(again.events) == list(first.events)
    # Another move under the same key: at the current version, and at a stale one.
    for version in (first.game.version, 1):
        request = service_pb2.RecordMoveRequest(
            game_id=game_id, notation=line[1], expected_version=version, request_id="move-1"
        )

        def send(request: service_pb2.RecordMoveRequest = request) -> object:
            return stub_of(client).RecordMove(request)

        code, details = rpc_refused(send)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert error_info(details).reason == "IDEMPOTENCY_KEY_REUSED"
        assert error_info(details).metadata["request_id"] == "move-1"
    assert client.get_game(game_id).version == first.game.version
    # The identical retry still answers the original, even after the game moved on.
    client.record(game_id, line[1], expected_version=first.game.version)
    late = client.record(game_id, line[0], expected_version=1, request_id="move-1")
    assert list(late.events) == list(first.events)


def test_a_request_id_reused_for_another_undo_or_annotation_is_refused(client: Client) -> None:
    game_id, _line = table_game(client, 2)
    first = client.undo(game_id, expected_version=3, reason="slip", request_id="undo-1")
    error = refused(
        lambda: client.undo(game_id, expected_version=3, reason="other", request_id="undo-1")
    )
    assert error.reason == "IDEMPOTENCY_KEY_REUSED"
    again = client.undo(game_id, expected_version=3, reason="slip", request_id="undo-1")
    assert list(again.events) == list(first.events)


def test_create_game_with_a_reused_request_id_for_another_game_is_refused(
    client: Client,
) -> None:
    first = client.create_game("splendor", ["Ann", "Bob"], request_id="create-reuse")
    same = client.create_game("splendor", ["Ann", "Bob"], request_id="create-reuse")
    assert same.game_id == first.game_id
    for other in (
        lambda: client.create_game("medici", ["Ann", "Bob", "Cid"], request_id="create-reuse"),
        lambda: client.create_game("splendor", ["Ann", "Cid"], request_id="create-reuse"),
    ):
        error = refused(other)
        assert (error.code, error.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "IDEMPOTENCY_KEY_REUSED",
        )
    assert client.get_game(first.game_id).game == "splendor"


def test_import_with_a_reused_request_id_for_other_events_is_refused(client: Client) -> None:
    game_id, _line = table_game(client, 4)
    events = client.export(game_id)
    imported = client.import_events(events, request_id="import-reuse")
    assert client.import_events(events, request_id="import-reuse").game_id == imported.game_id
    error = refused(lambda: client.import_events(events[:-1], request_id="import-reuse"))
    assert error.reason == "IDEMPOTENCY_KEY_REUSED"


# ------------------------------------------------------------------ 2. the stored bytes


def test_verify_reports_a_byte_rewritten_into_a_longer_equivalent_encoding(
    client: Client, raw_redis: redis.Redis
) -> None:
    game_id, _line = table_game(client, 5)
    entries = stored(raw_redis, game_id)
    assert entries[3][:2] == b"\x08\x04"  # field 1 (sequence) = 4, a one-byte varint
    longer = b"\x08\x84\x00" + entries[3][2:]  # 4 again, as a two-byte varint
    decoded = events_pb2.Event.FromString(longer)
    assert decoded == events_pb2.Event.FromString(entries[3])  # same message, other bytes
    head = raw_redis.hget(f"tl:{{{game_id}}}:head", "last_hash")
    assert isinstance(head, bytes)
    rewrite(raw_redis, game_id, [*entries[:3], longer, *entries[4:]], head)
    result = client.verify(game_id)
    assert not result.ok
    assert (result.first_bad_sequence, result.first_bad_revision) == (4, 4)
    assert "stored bytes" in result.problem


# ------------------------------------------------------------------ 3. the dealt seed


def dealt_abandoned(client: Client) -> tuple[str, list[events_pb2.Event]]:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    version = game.version
    for _ in range(3):
        _to_move, legal = client.legal_moves(game.game_id)
        response = client.record(game.game_id, legal[0].notation, expected_version=version)
        version = response.game.version
    client.abandon(game.game_id, expected_version=version)
    events = client.export(game.game_id)
    assert client.verify(game.game_id).ok
    return game.game_id, events


def test_verify_requires_the_revealed_seed_of_an_abandoned_dealt_game(
    client: Client, raw_redis: redis.Redis
) -> None:
    game_id, events = dealt_abandoned(client)
    for forged_seed in (b"", bytes(32)):
        events[-1].game_abandoned.seed = forged_seed
        reseal(raw_redis, game_id, events)
        result = client.verify(game_id)
        assert not result.ok
        assert result.first_bad_sequence == len(events)
        assert result.first_bad_revision == events[-1].revision
        assert "seed" in result.problem


def test_verify_redraws_every_dealt_outcome_from_the_seed(
    client: Client, raw_redis: redis.Redis
) -> None:
    game_id, events = dealt_abandoned(client)
    other_seed = b"another seed".ljust(32, b".")
    events[0].game_created.seed_commitment = hashlib.sha256(other_seed).digest()
    events[-1].game_abandoned.seed = other_seed
    reseal(raw_redis, game_id, events)
    result = client.verify(game_id)
    assert not result.ok
    # The first outcome the other seed draws differently (usually the first dealt move).
    dealt = {e.sequence: e.revision for e in events if e.move_recorded.dealt}
    assert dealt[result.first_bad_sequence] == result.first_bad_revision
    assert "seed dealt" in result.problem


def test_an_import_of_a_dealt_game_with_a_forged_seed_is_refused(client: Client) -> None:
    _game_id, events = dealt_abandoned(client)
    assert client.import_events(events).game_id
    events[-1].game_abandoned.seed = bytes(32)
    error = refused(lambda: client.import_events(unsealed(events), accept_unverified=True))
    assert (error.reason, error.metadata["rule"]) == ("INVALID_HISTORY", "SEED_MISMATCH")


# ------------------------------------------------------------------ 4. faults and sizes


def capture_log(monkeypatch: pytest.MonkeyPatch, target: str) -> io.StringIO:
    """The JSON lines the logger `target` (module.attribute) writes during a test."""
    captured = io.StringIO()
    monkeypatch.setattr(
        target,
        structlog.wrap_logger(
            structlog.PrintLogger(captured),
            processors=[structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
            wrapper_class=structlog.BoundLogger,  # whatever level the session configured
        ),
    )
    return captured


def test_an_unexpected_exception_is_internal_without_internals(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured = capture_log(monkeypatch, "tablelog.service.api.servicer.log")

    def broken(self: Recorder) -> list[game_pb2.GameInfo]:
        raise csv.Error("secret internals at line 3")

    monkeypatch.setattr(Recorder, "game_types", broken)
    code, details = rpc_refused(
        lambda: stub_of(client).ListGameTypes(service_pb2.ListGameTypesRequest())
    )
    assert code == grpc.StatusCode.INTERNAL
    info = error_info(details)
    assert (info.domain, info.reason) == ("tablelog.v1", "INTERNAL")
    with pytest.raises(grpc.RpcError) as raised:
        stub_of(client).ListGameTypes(service_pb2.ListGameTypesRequest())
    message = str(raised.value.details())
    assert "secret" not in message
    assert "csv" not in message.lower()
    logged = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert logged[0]["method"] == "ListGameTypes"
    assert "secret internals at line 3" in logged[0]["exception"]
    assert "Traceback" in logged[0]["exception"]


def test_an_unexpected_exception_in_a_stream_is_internal(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, _line = table_game(client, 1)
    captured = capture_log(monkeypatch, "tablelog.service.api.servicer.log")

    async def broken(self: Recorder, *args: object, **options: object) -> AsyncIterator[object]:
        raise KeyError("internal detail")
        yield  # an async generator, as the real method is

    monkeypatch.setattr(Recorder, "replay", broken)
    code, details = rpc_refused(
        lambda: list(stub_of(client).ReplayGame(service_pb2.ReplayGameRequest(game_id=game_id)))
    )
    assert code == grpc.StatusCode.INTERNAL
    assert error_info(details).reason == "INTERNAL"
    assert "internal detail" in captured.getvalue()


def component(name: str, size: int) -> game_pb2.ComponentFile:
    return game_pb2.ComponentFile(name=name, media_type="text/csv", content=b"x" * size)


def test_component_files_are_capped_per_file_and_in_total(client: Client) -> None:
    code, details = rpc_refused(
        lambda: stub_of(client).CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor",
                players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
                components=[component("splendor_cards.csv", (1 << 20) + 1)],
            )
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_fields(details) == ["components[0].content"]
    many = [component(f"file{i}.csv", 900_000) for i in range(5)]
    error = refused(lambda: client.create_game("splendor", ["Ann", "Bob"], components=many))
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert [field for field, _ in error.violations] == ["components"]
    game_id, _line = table_game(client, 1)
    events = client.export(game_id)
    events[0].game_created.components.append(component("extra.csv", (1 << 20) + 1))
    error = refused(lambda: client.import_events(events))
    assert error.violations[0][0] == "events[0].game_created.components[2].content"


def test_a_message_over_the_servers_limit_is_resource_exhausted(server: BackgroundServer) -> None:
    with grpc.insecure_channel(
        server.target, options=[("grpc.max_send_message_length", 4 * MAX_MESSAGE_BYTES)]
    ) as wide:
        request = service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            components=[component("splendor_cards.csv", MAX_MESSAGE_BYTES + 1024)],
        )
        with pytest.raises(grpc.RpcError) as raised:
            service_pb2_grpc.TablelogServiceStub(wide).CreateGame(request, timeout=30)
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


# ------------------------------------------------------------------ 5. stream ranges


def test_replay_refuses_an_empty_or_out_of_range_span(client: Client) -> None:
    game_id, _line = table_game(client, 3)  # head: revision 4
    replay = stub_of(client).ReplayGame
    code, details = rpc_refused(
        lambda: list(
            replay(
                service_pb2.ReplayGameRequest(game_id=game_id, from_revision=3, to_revision=2),
                timeout=20,
            )
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_fields(details) == ["from_revision"]
    code, details = rpc_refused(
        lambda: list(
            replay(service_pb2.ReplayGameRequest(game_id=game_id, from_revision=9), timeout=20)
        )
    )
    assert code == grpc.StatusCode.OUT_OF_RANGE
    assert bad_fields(details) == ["from_revision"]
    full = list(replay(service_pb2.ReplayGameRequest(game_id=game_id, from_revision=2)))
    assert [item.event.revision for item in full] == [2, 3, 4]


def test_watch_refuses_a_start_beyond_the_next_revision(client: Client) -> None:
    game_id, _line = table_game(client, 3)  # head: revision 4
    watch = stub_of(client).WatchGame
    code, details = rpc_refused(
        lambda: list(
            watch(service_pb2.WatchGameRequest(game_id=game_id, from_revision=6), timeout=20)
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_fields(details) == ["from_revision"]
    # The next revision is allowed: a client resumes after what it has seen.
    stream = watch(
        service_pb2.WatchGameRequest(game_id=game_id, from_revision=5, heartbeat_seconds=1),
        timeout=20,
    )
    first = next(iter(stream))
    stream.cancel()
    assert first.heartbeat.head_revision == 4


# ------------------------------------------------------------------ 6. atomic removal


def test_concurrent_removals_of_one_annotation_succeed_once(
    embedded_redis: EmbeddedRedis,
) -> None:
    async def scenario() -> list[list[str]]:
        stores = [RedisEventStore.from_url(embedded_redis.url, chain=CHAIN) for _ in range(2)]
        recorders = [Recorder(store) for store in stores]
        actor = events_pb2.Actor(user="tester")
        try:
            created = await recorders[0].create_game(
                service_pb2.CreateGameRequest(
                    game="splendor",
                    players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
                ),
                actor,
            )
            game_id = created.head.game_id
            rounds: list[list[str]] = []
            for round_number in range(5):
                added = await recorders[0].annotate(
                    game_id, revision=1, comment="c", glyph="", request_id="", actor=actor
                )
                note_id = added.events[-1].annotation_added.annotation_id

                async def remove(
                    recorder: Recorder,
                    index: int,
                    note: str = note_id,
                    round_number: int = round_number,
                ) -> str:
                    try:
                        await recorder.remove_annotation(
                            game_id,
                            annotation_id=note,
                            request_id=f"remove-{round_number}-{index}",
                            actor=actor,
                        )
                    except NotFound as error:
                        return error.reason
                    return "removed"

                rounds.append(
                    sorted(
                        await asyncio.gather(
                            remove(recorders[0], 0),
                            remove(recorders[1], 1),
                            remove(recorders[0], 2),
                        )
                    )
                )
            assert await recorders[1].annotations(game_id) == []
            return rounds
        finally:
            for store in stores:
                await store.close()

    for outcome in asyncio.run(scenario()):
        assert outcome == ["ANNOTATION_NOT_FOUND", "ANNOTATION_NOT_FOUND", "removed"]


# ------------------------------------------------------------------ 7. request ids and logs


def test_a_long_request_id_is_refused_and_long_strings_are_cut_in_the_log(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, line = table_game(client, 0)
    captured = capture_log(monkeypatch, "tablelog.service.api.interceptors.log")
    long_id = "r" * 129
    for call in (
        lambda: stub_of(client).RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game_id, notation=line[0], expected_version=1, request_id=long_id
            )
        ),
        lambda: stub_of(client).RemoveAnnotation(
            service_pb2.RemoveAnnotationRequest(
                game_id=game_id, annotation_id="nope", request_id=long_id
            )
        ),
    ):
        code, details = rpc_refused(call)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert bad_fields(details) == ["request_id"]
    rpc_refused(lambda: stub_of(client).GetGame(service_pb2.GetGameRequest(game_id="g" * 5000)))
    deadline = time.monotonic() + 5  # an aborted call's line is written after its status
    while captured.getvalue().count("\n") < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    logged = [json.loads(row) for row in captured.getvalue().splitlines()]
    assert len(logged) == 3
    assert all(len(row["request_id"]) <= 83 for row in logged[:2])
    assert len(logged[2]["game_id"]) <= 83
    assert client.get_game(game_id).version == 1


# ------------------------------------------------------------------ 8. strict histories


def test_a_created_game_records_its_rules_version(client: Client) -> None:
    game_id, _line = table_game(client, 0)
    created = client.export(game_id)[0].game_created
    assert created.rules_version == find_game("splendor").rules_version


def forged_histories(client: Client) -> Iterator[tuple[str, list[events_pb2.Event]]]:
    """Exported histories each with one forged event, and the rule that refuses it."""
    game_id, line = table_game(client, 4)
    client.undo(game_id, expected_version=5)
    client.record(game_id, line[3], expected_version=6)
    events = client.export(game_id)  # created, 4 moves, undo (revision 6), a move (7)
    assert events[5].move_undone.undone_revision == 5

    wrong_undo = [events_pb2.Event.FromString(e.SerializeToString()) for e in events]
    wrong_undo[5].move_undone.undone_revision = 4
    yield "WRONG_REVISION_NAMED", wrong_undo

    wrong_notation = [events_pb2.Event.FromString(e.SerializeToString()) for e in events]
    wrong_notation[2].move_recorded.notation = "forged " + line[1]
    yield "WRONG_NOTATION", wrong_notation

    forged_end = [events_pb2.Event.FromString(e.SerializeToString()) for e in events]
    ended = events_pb2.Event(
        sequence=8,
        revision=8,
        game_ended=events_pb2.GameEnded(result=game_pb2.GameResult(winners=[0])),
    )
    forged_end.append(ended)
    yield "PREMATURE_END", forged_end


def test_an_import_of_a_forged_history_is_refused(client: Client) -> None:
    for rule, events in forged_histories(client):
        # Edited after export, the events no longer match their keyed hashes (see
        # test_tampering); without hashes they are an unverified history, which the rules
        # check all the same.
        def attempt(events: list[events_pb2.Event] = events) -> object:
            return client.import_events(unsealed(events), accept_unverified=True)

        error = refused(attempt)
        assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_HISTORY")
        assert error.metadata["rule"] == rule
        forged = {"WRONG_REVISION_NAMED": 6, "WRONG_NOTATION": 3, "PREMATURE_END": 8}[rule]
        assert error.metadata["line"] == str(forged)


def test_verify_reports_a_forged_event_written_into_redis(
    client: Client, raw_redis: redis.Redis
) -> None:
    for rule, events in forged_histories(client):
        game_id = events[0].game_created.game_id
        reseal(raw_redis, game_id, events)
        raw_redis.hset(f"tl:{{{game_id}}}:head", "sequence", len(events))
        result = client.verify(game_id)
        forged = {"WRONG_REVISION_NAMED": 6, "WRONG_NOTATION": 3, "PREMATURE_END": 8}[rule]
        assert not result.ok, rule
        assert (result.first_bad_sequence, result.first_bad_revision) == (forged, forged), rule
