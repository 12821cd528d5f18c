"""The service end to end over a real gRPC channel, on a real (embedded) Redis."""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import grpc
import pytest
import redis
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tablelog.replay import fold as folding
from tablelog.replay.core import SPECTATOR
from tablelog.service.api.server import BackgroundServer, background_server, channel
from tablelog.service.recording.heads import Head
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tests.service.helpers import (
    CHAIN,
    OWNER_NAME,
    OWNER_TOKEN,
    play_random,
    refused,
    rpc_refused,
    splendor_line,
)
from tests.support.play import new_position, play_all

pytestmark = pytest.mark.slow


def new_game(client: Client, mode: str = "table", players: int = 2) -> service_pb2.GameSummary:
    return client.create_game("splendor", ["Ann", "Bob", "Cid", "Dee"][:players], mode=mode)


def test_record_a_whole_splendor_game_by_notation(client: Client) -> None:
    line = splendor_line(seed=7)
    game = new_game(client)
    version = game.version
    for notation in line:
        response = client.record(game.game_id, notation, expected_version=version)
        assert response.events[0].move_recorded.notation == notation
        version = response.game.version
    final = client.get_game(game.game_id)
    assert final.status == service_pb2.GAME_STATUS_ENDED
    local = play_all(new_position("splendor", ["Ann", "Bob"]), line)
    assert final.result == local.game.result(local.state)
    last = client.audit(game.game_id)[-1].event
    assert last.WhichOneof("body") == "game_ended"
    assert final.move_count == len(line)
    assert final.version == len(line) + 2  # creation + moves + GameEnded
    assert client.verify(game.game_id).ok
    assert refused(lambda: client.record(game.game_id, line[-1])).reason == "GAME_OVER"


def test_an_illegal_move_is_refused_with_its_rule_and_nothing_is_stored(client: Client) -> None:
    line = splendor_line(seed=3)
    game = new_game(client)
    version = game.version
    for notation in line[:20]:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    before = len(client.audit(game.game_id))
    _to_move, legal = client.legal_moves(game.game_id)
    legal_texts = {m.notation for m in legal}
    illegal = next(
        text
        for text in ("buy 3.1", "buy 3.2", "buy 3.3", "buy 3.4", "buy 2.1", "buy 2.2")
        if text not in legal_texts
    )
    code, details = rpc_refused(
        lambda: service_pb2_grpc.TablelogServiceStub(
            channel(client.address, OWNER_TOKEN)
        ).RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game.game_id, notation=illegal, expected_version=version
            )
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    info = next(d for d in details if isinstance(d, error_details_pb2.ErrorInfo))
    assert (info.domain, info.reason) == ("tablelog.v1", "ILLEGAL_MOVE")
    assert info.metadata["rule"].isupper()
    error = refused(lambda: client.record(game.game_id, illegal, expected_version=version))
    assert error.message
    assert error.metadata["rule"] == info.metadata["rule"]
    assert len(client.audit(game.game_id)) == before
    assert client.get_game(game.game_id).version == version


def test_bad_notation_names_the_field(client: Client) -> None:
    game = new_game(client, mode="dealt")
    error = refused(lambda: client.record(game.game_id, "fly to the moon"))
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_NOTATION")
    assert error.violations
    assert error.violations[0][0] == "notation"


def test_a_stale_version_is_refused_with_the_current_version(client: Client) -> None:
    game = new_game(client, mode="dealt")
    version = play_random(client, game.game_id, 2)
    code, details = rpc_refused(
        lambda: service_pb2_grpc.TablelogServiceStub(channel(client.address, OWNER_TOKEN)).UndoMove(
            service_pb2.UndoMoveRequest(game_id=game.game_id, expected_version=version - 1)
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    info = next(d for d in details if isinstance(d, error_details_pb2.ErrorInfo))
    assert info.reason == "STALE_VERSION"
    assert info.metadata["current_version"] == str(version)
    failure = next(d for d in details if isinstance(d, error_details_pb2.PreconditionFailure))
    assert failure.violations[0].type == "VERSION"
    assert client.get_game(game.game_id).version == version


def test_the_same_request_id_twice_stores_once(client: Client) -> None:
    game = new_game(client, mode="dealt")
    _to_move, legal = client.legal_moves(game.game_id)
    first = client.record(
        game.game_id, legal[0].notation, expected_version=game.version, request_id="retry-1"
    )
    again = client.record(
        game.game_id, legal[0].notation, expected_version=game.version, request_id="retry-1"
    )
    assert list(again.events) == list(first.events)
    assert client.get_game(game.game_id).version == first.game.version
    recorded = [e for e in client.export(game.game_id) if e.request_id == "retry-1"]
    assert len(recorded) == len(first.events)
    # A created game, retried, is the same game.
    one = client.create_game("splendor", ["A", "B"], request_id="create-" + game.game_id)
    two = client.create_game("splendor", ["A", "B"], request_id="create-" + game.game_id)
    assert one.game_id == two.game_id


def test_undo_and_redo(client: Client) -> None:
    game = new_game(client)
    assert refused(lambda: client.undo(game.game_id)).reason == "NOTHING_TO_UNDO"
    line = splendor_line(seed=11)
    version = game.version
    for notation in line[:12]:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    before = client.state(game.game_id, version - 1)
    undone = client.undo(game.game_id, expected_version=version, reason="misread")
    assert undone.events[0].move_undone.undone_revision == version
    assert undone.events[0].move_undone.reason == "misread"
    assert client.state(game.game_id).view == before.view
    redone = client.redo(game.game_id)
    assert redone.events[0].move_redone.redone_revision == version
    assert client.state(game.game_id).view == client.state(game.game_id, version).view
    assert refused(lambda: client.redo(game.game_id)).reason == "NOTHING_TO_REDO"
    client.undo(game.game_id)
    client.record(game.game_id, line[11])  # a new move clears redo
    assert refused(lambda: client.redo(game.game_id)).reason == "NOTHING_TO_REDO"


def test_get_state_at_every_revision_equals_a_local_fold(client: Client) -> None:
    game = new_game(client)
    line = splendor_line(seed=5)
    version = game.version
    for index, notation in enumerate(line[:30]):
        version = client.record(game.game_id, notation, expected_version=version).game.version
        if index == 15:
            version = client.undo(game.game_id, expected_version=version).game.version
            version = client.redo(game.game_id, expected_version=version).game.version
    client.annotate(game.game_id, "a note", revision=4)
    events = client.export(game.game_id)
    for revision in range(1, version + 1):
        local = folding.fold(events, until_revision=revision)
        state = client.state(game.game_id, revision)
        expected = local.table.wrap_view(local.game.view(local.state, SPECTATOR))
        assert state.revision == revision
        assert state.view == expected
        assert list(state.moves) == [a.notation for a in local.moves()]
    assert refused(lambda: client.state(game.game_id, version + 1)).code == (
        grpc.StatusCode.OUT_OF_RANGE
    )


def test_replay_streams_every_revision(client: Client) -> None:
    game = new_game(client, mode="dealt")
    version = play_random(client, game.game_id, 10, seed=2)
    frames = list(client.replay(game.game_id))
    assert [f.state.revision for f in frames] == list(range(1, version + 1))
    assert [f.event.sequence for f in frames] == list(range(1, len(frames) + 1))
    part = list(client.replay(game.game_id, 3, 5))
    assert [f.state.revision for f in part] == [3, 4, 5]
    assert part[0].state == frames[2].state


def test_watch_receives_moves_recorded_by_another_client(
    client: Client, server: BackgroundServer, embedded_redis: EmbeddedRedis
) -> None:
    """The watcher is on this server; the moves are recorded through another instance."""
    game = new_game(client, mode="dealt")
    received: list[service_pb2.WatchGameResponse] = []
    with (
        background_server(embedded_redis.url, CHAIN, OWNER_TOKEN) as elsewhere,
        Client(elsewhere.target, token=OWNER_TOKEN) as recorder,
        Client(server.target, token=OWNER_TOKEN) as watcher,
    ):
        stream: Any = watcher.stub.WatchGame(
            service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1),
            timeout=30,
        )

        def consume() -> None:
            for item in stream:
                received.append(item)
                if item.WhichOneof("item") == "update" and item.update.event.HasField(
                    "annotation_added"
                ):
                    return

        reader = threading.Thread(target=consume)
        reader.start()
        time.sleep(1.5)  # at least one heartbeat while nothing happens
        version = play_random(recorder, game.game_id, 3, seed=4)
        recorder.annotate(game.game_id, "done")
        reader.join(20)
        stream.cancel()
    heartbeats = [i.heartbeat for i in received if i.WhichOneof("item") == "heartbeat"]
    assert heartbeats
    assert heartbeats[0].head_revision == game.version
    updates = [i.update for i in received if i.WhichOneof("item") == "update"]
    assert [u.event.revision for u in updates if u.event.HasField("move_recorded")] == list(
        range(game.version + 1, version + 1)
    )
    assert updates[-1].state.revision == version


def test_watch_replays_from_a_revision_then_honours_its_deadline(client: Client) -> None:
    game = new_game(client, mode="dealt")
    play_random(client, game.game_id, 2)
    seen: list[int] = []

    def watch() -> None:
        for item in client.watch(game.game_id, from_revision=2, heartbeat_seconds=5, timeout=1.5):
            if item.WhichOneof("item") == "update":
                seen.append(item.update.event.revision)

    with pytest.raises(TablelogError) as info:
        watch()
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert seen
    assert seen[0] == 2


def test_annotations_come_back_at_their_revisions(client: Client) -> None:
    game = new_game(client, mode="dealt")
    version = play_random(client, game.game_id, 4)
    first = client.annotate(game.game_id, "opening", revision=2, glyph="!")
    second = client.annotate(game.game_id, "now", glyph="?!")
    doomed = client.annotate(game.game_id, "oops", revision=3)
    assert client.get_game(game.game_id).version == version  # annotating bumps no version
    client.remove_annotation(game.game_id, doomed.annotation_id)
    notes = client.annotations(game.game_id)
    assert [(n.revision, n.comment, n.glyph) for n in notes] == [
        (2, "opening", "!"),
        (version, "now", "?!"),
    ]
    assert notes[0].annotation_id == first.annotation_id
    assert notes[1].actor.user == OWNER_NAME
    assert second.time.seconds > 0
    assert client.record(
        game.game_id, client.legal_moves(game.game_id)[1][0].notation, expected_version=version
    )
    error = refused(lambda: client.annotate(game.game_id, "x", revision=999))
    assert error.code == grpc.StatusCode.OUT_OF_RANGE
    assert refused(lambda: client.annotate(game.game_id, "x", glyph="!!!")).violations
    missing = refused(lambda: client.remove_annotation(game.game_id, "nope"))
    assert missing.code == grpc.StatusCode.NOT_FOUND


def test_the_audit_log_shows_undone_moves(client: Client) -> None:
    game = new_game(client)
    line = splendor_line(seed=9)
    for notation in line[:8]:
        client.record(game.game_id, notation)
    client.undo(game.game_id)
    client.undo(game.game_id)
    client.redo(game.game_id)
    entries = client.audit(game.game_id)
    recorded = [e for e in entries if e.event.HasField("move_recorded")]
    assert [e.undone for e in recorded] == [False] * 7 + [True]
    kinds = [e.event.WhichOneof("body") for e in entries]
    assert kinds[-3:] == ["move_undone", "move_undone", "move_redone"]
    owner = client.whoami().member  # the authenticated member, whatever a client says
    assert all(e.event.actor.user == owner.display_name for e in entries)
    assert all(e.event.actor.member_id == owner.member_id for e in entries)
    assert all(e.event.actor.client == "tablelog-python/0.1" for e in entries)
    assert all(len(e.event.hash) == 32 and e.summary for e in entries)
    # Undo and redo name the move they take back or re-apply (here the table's: the first
    # twelve moves of a Splendor game turn up the layout).
    assert entries[-3].summary == f"{OWNER_NAME} undid the table's {line[7]} (revision 9)"
    assert entries[-1].summary == f"{OWNER_NAME} redid the table's {line[6]} (revision 8)"
    page = client.stub.GetAuditLog(
        service_pb2.GetAuditLogRequest(game_id=game.game_id, page_size=4)
    )
    assert len(page.entries) == 4
    assert page.next_page_token


def test_verify_passes_then_reports_a_byte_changed_in_redis(
    client: Client, embedded_redis: EmbeddedRedis, server: BackgroundServer
) -> None:
    game = new_game(client)
    for notation in splendor_line(seed=13)[:10]:
        client.record(game.game_id, notation)
    result = client.verify(game.game_id)
    assert result.ok
    assert result.events_checked == 11
    # Rewrite the stream with one byte changed inside the notation of revision 6.
    raw = redis.Redis.from_url(embedded_redis.url)
    key = f"tl:{{{game.game_id}}}:events"
    entries: list[tuple[bytes, dict[bytes, bytes]]] = raw.xrange(key)  # type: ignore[assignment]
    target = next(
        i for i, (_id, f) in enumerate(entries)
        if events_pb2.Event.FromString(f[b"e"]).revision == 6
    )  # fmt: skip
    data = bytearray(entries[target][1][b"e"])
    text = events_pb2.Event.FromString(bytes(data)).move_recorded.notation.encode()
    at = bytes(data).index(text)
    data[at] ^= 0x01
    pipe = raw.pipeline(transaction=True)
    pipe.delete(key)
    for index, (entry_id, fields) in enumerate(entries):
        pipe.xadd(key, {b"e": bytes(data) if index == target else fields[b"e"]}, id=entry_id)
    pipe.execute()
    raw.close()
    damaged = client.verify(game.game_id)
    assert not damaged.ok
    assert (damaged.first_bad_revision, damaged.first_bad_sequence) == (6, target + 1)
    assert "hash" in damaged.problem


def test_dealt_mode_end_to_end(client: Client, server: BackgroundServer) -> None:
    game = new_game(client, mode="dealt")
    created = client.export(game.game_id)
    commitment = created[0].game_created.seed_commitment
    assert len(commitment) == 32
    assert created[-1].move_recorded.dealt  # the setup reveals were dealt at creation
    assert game.to_move.HasField("seat")
    assert refused(lambda: client.record(game.game_id, "reveal noble 1")).reason in (
        "ILLEGAL_MOVE",
        "INVALID_NOTATION",
    )
    # A move that empties a market slot is followed by its dealt reveal, in one append;
    # undo takes both back, redo re-applies both.
    version = game.version
    _to_move, legal = client.legal_moves(game.game_id)
    reserve = next(m for m in legal if m.notation.startswith("reserve 1."))
    recorded = client.record(game.game_id, reserve.notation, expected_version=version)
    kinds = [(e.WhichOneof("body"), e.move_recorded.dealt) for e in recorded.events]
    assert kinds[0] == ("move_recorded", False)
    assert ("move_recorded", True) in kinds[1:]
    undone = client.undo(game.game_id)
    assert len(undone.events) == len(recorded.events)
    assert client.state(game.game_id).view == client.state(game.game_id, version).view
    redone = client.redo(game.game_id)
    assert len(redone.events) == len(recorded.events)
    assert client.state(game.game_id).view == client.state(game.game_id, recorded.game.version).view
    # Cache and fresh fold agree.
    cached = server.built.recorder.cached(game.game_id) if server.built else None
    fresh: Any = server.run(server.built.recorder.rebuild(game.game_id)) if server.built else None
    assert isinstance(cached, Head)
    assert isinstance(fresh, Head)
    assert (cached.sequence, cached.revision, cached.last_hash) == (
        fresh.sequence, fresh.revision, fresh.last_hash,
    )  # fmt: skip
    assert cached.position.state == fresh.position.state
    assert client.verify(game.game_id).dealt_moves_checked == 0  # the seed is still secret
    play_random(client, game.game_id, 400, seed=1)
    final = client.get_game(game.game_id)
    assert final.status == service_pb2.GAME_STATUS_ENDED
    ended = client.export(game.game_id)[-1]
    assert ended.HasField("game_ended")
    assert hashlib.sha256(ended.game_ended.seed).digest() == commitment
    result = client.verify(game.game_id)
    assert result.ok
    assert result.dealt_moves_checked > 5


def test_abandon_reveals_the_seed(client: Client) -> None:
    game = new_game(client, mode="dealt")
    abandoned = client.abandon(game.game_id, reason="closing time")
    assert abandoned.status == service_pb2.GAME_STATUS_ABANDONED
    last = client.export(game.game_id)[-1]
    assert last.game_abandoned.reason == "closing time"
    assert len(last.game_abandoned.seed) == 32
    assert client.verify(game.game_id).ok
    assert refused(lambda: client.undo(game.game_id)).reason == "GAME_OVER"


def test_export_and_import_round_trip(client: Client) -> None:
    game = new_game(client)
    for notation in splendor_line(seed=21)[:15]:
        client.record(game.game_id, notation)
    client.undo(game.game_id)
    client.annotate(game.game_id, "imported too")
    events = client.export(game.game_id)
    imported = client.import_events(events)
    assert imported.game_id != game.game_id
    assert imported.version == client.get_game(game.game_id).version
    assert client.state(imported.game_id).view == client.state(game.game_id).view
    assert client.verify(imported.game_id).ok
    broken = list(events)
    broken.pop(5)
    assert refused(lambda: client.import_events(broken)).reason == "INVALID_HISTORY"


def test_games_are_listed_filtered_and_paginated(client: Client) -> None:
    made = [new_game(client).game_id for _ in range(3)]
    client.abandon(made[1])
    page = client.stub.ListGames(service_pb2.ListGamesRequest(page_size=2))
    assert [g.game_id for g in page.games] == made[::-1][:2]
    more = client.stub.ListGames(
        service_pb2.ListGamesRequest(page_size=1, page_token=page.next_page_token)
    )
    assert [g.game_id for g in more.games] == made[:1]
    abandoned = list(client.list_games(status="abandoned"))
    assert made[1] in {g.game_id for g in abandoned}
    assert all(g.status == service_pb2.GAME_STATUS_ABANDONED for g in abandoned)
    assert all(g.game == "splendor" for g in client.list_games(game="splendor", page_size=5))


def test_input_limits_and_unknown_things(client: Client) -> None:
    game = new_game(client, mode="dealt")
    too_long = refused(lambda: client.record(game.game_id, "take " + "w" * 500))
    assert (too_long.code, too_long.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert too_long.violations[0][0] == "notation"
    comment = refused(lambda: client.annotate(game.game_id, "x" * 5000))
    assert comment.violations[0][0] == "comment"
    page = refused(
        lambda: client._call(client.stub.ListGames, service_pb2.ListGamesRequest(page_size=100_000))
    )
    assert page.violations[0][0] == "page_size"
    missing = refused(lambda: client.get_game("nosuchgame"))
    assert (missing.code, missing.reason) == (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    assert refused(lambda: client.get_game("Bad{Id}")).violations[0][0] == "game_id"
    unknown = refused(lambda: client.create_game("chess", ["a", "b"]))
    assert unknown.reason == "UNKNOWN_GAME"
    players = refused(lambda: client.create_game("splendor", ["solo"]))
    assert (players.reason, players.metadata["rule"]) == ("INVALID_SETUP", "PLAYER_COUNT")
    no_version = refused(
        lambda: client._call(
            client.stub.RecordMove,
            service_pb2.RecordMoveRequest(game_id=game.game_id, notation="take w u g"),
        )
    )
    assert no_version.violations[0][0] == "expected_version"


def test_health_and_reflection_are_on(server: BackgroundServer) -> None:
    with channel(server.target, OWNER_TOKEN) as opened:
        health: Any = health_pb2_grpc.HealthStub(opened)  # the stubs type it loosely
        for name in ("", "tablelog.v1.TablelogService"):
            answer = health.Check(health_pb2.HealthCheckRequest(service=name))
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        reflection: Any = reflection_pb2_grpc.ServerReflectionStub(opened)
        replies = list(
            reflection.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            )
        )
        names = {s.name for s in replies[0].list_services_response.service}
        assert "tablelog.v1.TablelogService" in names
