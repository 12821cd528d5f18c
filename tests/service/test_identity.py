"""Members, tokens and what the gate makes of them, over a real gRPC channel and Redis:
the actors in the audit are the authenticated members, only token hashes are stored, the
OWN cells of the authorization table (a player's seats, one's own annotations), link
tokens, revocation across instances, and listing scoped to the club."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, cast

import grpc
import pytest
import redis

from tablelog.service.access.authentication import CACHE_SECONDS
from tablelog.service.api.server import BackgroundServer, background_server
from tablelog.service.recording.appending import Outcome
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import clubs_pb2, events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tests.service.helpers import (
    CHAIN,
    OWNER_NAME,
    OWNER_TOKEN,
    refused,
    rpc_refused,
    splendor_line,
)


@pytest.fixture
def owner(server: BackgroundServer) -> Iterator[Client]:
    with Client(server.target, token=OWNER_TOKEN) as connected:
        connected.update_club(players_may_record=True)
        yield connected


def _member(owner: Client, role: str) -> tuple[str, str]:
    """A new member of `role` and a token of theirs."""
    member = owner.add_member(f"{role}-{uuid.uuid4().hex[:8]}", role)
    return member.member_id, owner.create_token(member.member_id).token


def test_every_event_names_the_member_who_appended_it(
    server: BackgroundServer, owner: Client
) -> None:
    recorder_id, recorder_token = _member(owner, "recorder")
    game = owner.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=3)
    with Client(server.target, token=recorder_token, client_name="made-up/9") as recorder:
        version = game.version
        for notation in line[:3]:
            version = recorder.record(game.game_id, notation, expected_version=version).game.version
        recorder.annotate(game.game_id, "nice")
        recorder_name = recorder.whoami().member.display_name
    owner.undo(game.game_id)
    owner_id = owner.whoami().member.member_id
    actors = [
        (e.event.actor.member_id, e.event.actor.user, e.event.actor.club, e.event.actor.client)
        for e in owner.audit(game.game_id)
    ]
    assert actors[0] == (owner_id, OWNER_NAME, "local", "tablelog-python/0.1")
    assert actors[1:5] == [(recorder_id, recorder_name, "local", "made-up/9")] * 4
    assert actors[5] == (owner_id, OWNER_NAME, "local", "tablelog-python/0.1")
    summaries = [e.summary for e in owner.audit(game.game_id)]
    assert summaries[1].endswith(f"(recorded by {recorder_name})")


def test_what_a_client_says_of_itself_is_not_the_actor(
    server: BackgroundServer, owner: Client
) -> None:
    game = owner.create_game("splendor", ["Ann", "Bob"])
    owner.stub.AddAnnotation(
        service_pb2.AddAnnotationRequest(game_id=game.game_id, comment="who am I?"),
        metadata=(("x-tablelog-user", "alice"), ("x-tablelog-club", "elsewhere")),
    )
    note = owner.annotations(game.game_id)[-1]
    assert (note.actor.user, note.actor.club) == (OWNER_NAME, "local")


def _raw(value: bytes | str | None) -> bytes:
    return value.encode() if isinstance(value, str) else value or b""


def test_only_token_hashes_are_stored(embedded_redis: EmbeddedRedis, owner: Client) -> None:
    member_id, token = _member(owner, "player")
    link = owner.create_link_token(owner.create_game("splendor", ["Ann", "Bob"]).game_id).token
    store: redis.Redis = redis.Redis.from_url(embedded_redis.url, decode_responses=False)
    secrets = [token, link, OWNER_TOKEN]
    found = []
    for key in store.scan_iter(count=1000):
        found.append(key)
        kind = store.type(key)
        values: list[bytes]
        if kind == b"string":
            values = [_raw(store.get(key))]
        elif kind == b"hash":
            values = [_raw(k) + b"=" + _raw(v) for k, v in store.hgetall(key).items()]
        else:
            continue
        for value in [key, *values]:
            for secret in secrets:
                assert secret.encode() not in value, key
                assert secret[4:].encode() not in value, key  # nor without its prefix
    assert any(b"{tok:" in key for key in found)
    listed = owner.tokens(member_id)
    assert [t.last_chars for t in listed] == [token[-4:]]
    assert token not in str(listed)


def test_a_player_records_only_for_their_own_seats(server: BackgroundServer, owner: Client) -> None:
    player_id, player_token = _member(owner, "player")
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt", seat_members=[player_id])
    with Client(server.target, token=player_token) as player:
        _to_move, legal = player.legal_moves(game.game_id)
        version = player.record(game.game_id, legal[0].notation).game.version  # seat 0: theirs
        _to_move, legal = player.legal_moves(game.game_id)
        error = refused(lambda: player.record(game.game_id, legal[0].notation))
        assert (error.code, error.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
        assert error.metadata["seat"] == "1"
        # Naming their own seat for another seat's turn is the rules' refusal, not a record.
        wrong = refused(lambda: player.record(game.game_id, legal[0].notation, seat=0))
        assert wrong.reason == "NOT_YOUR_TURN"
        assert owner.get_game(game.game_id).version == version
        owner.bind_seat(game.game_id, 1, player_id)
        player.record(game.game_id, legal[0].notation)
        owner.update_club(players_may_record=False)
        try:
            _to_move, legal = player.legal_moves(game.game_id)
            stopped = refused(lambda: player.record(game.game_id, legal[0].notation))
        finally:
            owner.update_club(players_may_record=True)
        assert stopped.reason == "PLAYERS_MAY_NOT_RECORD"
        for forbidden in (
            lambda: player.undo(game.game_id),
            lambda: player.abandon(game.game_id),
            lambda: player.create_game("splendor", ["Ann", "Bob"]),
        ):
            assert refused(forbidden).reason == "ROLE_FORBIDS"


def test_players_and_spectators_remove_only_their_own_annotations(
    server: BackgroundServer, owner: Client
) -> None:
    _player_id, player_token = _member(owner, "player")
    _spectator_id, spectator_token = _member(owner, "spectator")
    game = owner.create_game("splendor", ["Ann", "Bob"])
    theirs = owner.annotate(game.game_id, "the owner's")
    with (
        Client(server.target, token=player_token) as player,
        Client(server.target, token=spectator_token) as spectator,
    ):
        mine = player.annotate(game.game_id, "the player's")
        for who in (player, spectator):

            def remove(who: Client = who) -> None:
                who.remove_annotation(game.game_id, theirs.annotation_id)

            assert refused(remove).reason == "NOT_YOUR_ANNOTATION"
        assert refused(lambda: spectator.annotate(game.game_id, "no")).reason == "ROLE_FORBIDS"
        player.remove_annotation(game.game_id, mine.annotation_id)
    assert [n.annotation_id for n in owner.annotations(game.game_id)] == [theirs.annotation_id]


def test_a_link_token_reads_its_game_and_nothing_else(
    server: BackgroundServer, owner: Client
) -> None:
    shared = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    private = owner.create_game("splendor", ["Cid", "Dee"], mode="dealt")
    link = owner.create_link_token(shared.game_id)
    assert link.token.startswith("tll_")
    assert link.info.game_id == shared.game_id
    with Client(server.target, token=link.token) as guest:
        assert guest.get_game(shared.game_id).game_id == shared.game_id
        assert guest.whoami().game_id == shared.game_id
        assert refused(lambda: guest.get_game(private.game_id)).reason == "GAME_NOT_FOUND"
        assert refused(lambda: list(guest.list_games())).reason == "ROLE_FORBIDS"
        _to_move, legal = guest.legal_moves(shared.game_id)
        error = refused(lambda: guest.record(shared.game_id, legal[0].notation))
        assert (error.reason, error.metadata["role"]) == ("ROLE_FORBIDS", "link")


def test_games_are_listed_and_found_only_in_their_club(
    server: BackgroundServer, owner: Client
) -> None:
    assert server.built is not None
    members = server.built.members
    rival = "rival-" + uuid.uuid4().hex[:8]

    async def make() -> str:
        from tablelog.service.access.identity import Role

        await members.create_club(rival, "rival")
        boss = await members.add_member(rival, "boss", Role.OWNER)
        token, _record = await members.create_token(rival, boss.member_id, 0)
        return token

    rival_token = str(server.run(make()))
    ours = owner.create_game("splendor", ["Ann", "Bob"])
    with Client(server.target, token=rival_token) as other:
        theirs = other.create_game("splendor", ["Eve", "Fay"])
        assert [g.game_id for g in other.list_games()] == [theirs.game_id]
        hidden = refused(lambda: other.get_game(ours.game_id))
        missing = refused(lambda: other.get_game("nosuchgame"))
        assert (hidden.code, hidden.reason) == (missing.code, missing.reason)
        assert hidden.message == missing.message.replace("nosuchgame", ours.game_id)
        assert ours.game_id not in {m.member_id for m in other.members()}
    assert theirs.game_id not in {g.game_id for g in owner.list_games()}


def test_removing_a_member_revokes_their_tokens_and_an_owner_stays(
    server: BackgroundServer, owner: Client
) -> None:
    member_id, token = _member(owner, "recorder")
    with Client(server.target, token=token) as gone:
        assert gone.whoami().member.member_id == member_id
        assert owner.remove_member(member_id) == 1
        error = refused(gone.whoami)
        assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
    # The last owner stays: checked in a club of its own (the operator's CreateClub), where
    # no other test can have added a second owner (which would make the change allowed and
    # leave the session's owner demoted for every later test).
    alone = owner.create_club(f"alone-{uuid.uuid4().hex[:8]}")
    with Client(server.target, token=alone.owner_token) as only:
        me = only.whoami().member.member_id
        assert refused(lambda: only.set_role(me, "player")).reason == "INVALID_REQUEST"
        assert refused(lambda: only.remove_member(me)).reason == "INVALID_REQUEST"


def test_a_role_change_takes_effect_at_once_on_the_same_instance(
    server: BackgroundServer, owner: Client
) -> None:
    member_id, token = _member(owner, "recorder")
    with Client(server.target, token=token) as them:
        game = them.create_game("splendor", ["Ann", "Bob"])
        owner.set_role(member_id, "spectator")
        error = refused(lambda: them.abandon(game.game_id))
        assert (error.reason, error.metadata["role"]) == ("ROLE_FORBIDS", "spectator")


def test_revocation_reaches_another_instance_within_the_cache_time(
    server: BackgroundServer, embedded_redis: EmbeddedRedis, owner: Client
) -> None:
    """Revoked through one instance, a token another instance has just resolved (and
    cached) is refused there within CACHE_SECONDS; the time it took is printed (-s)."""
    _member_id, token = _member(owner, "spectator")
    with (
        background_server(embedded_redis.url, CHAIN, OWNER_TOKEN) as elsewhere,
        Client(elsewhere.target, token=token) as there,
    ):
        there.whoami()  # resolved and cached over there
        record = [t for t in owner.tokens() if t.last_chars == token[-4:]][-1]
        owner.revoke_token(record.token_id)
        revoked_at = time.monotonic()
        reason = ""
        while not reason:
            try:
                there.whoami()
            except TablelogError as error:
                reason = error.reason
            assert time.monotonic() - revoked_at < CACHE_SECONDS + 5
            time.sleep(0.05)
        assert reason == "TOKEN_REVOKED"
        took = time.monotonic() - revoked_at
    print(f"\nrevocation reached another instance after {took:.2f} s (bound {CACHE_SECONDS} s)")


def test_club_requests_are_bounded_and_named_in_refusals(
    server: BackgroundServer, owner: Client
) -> None:
    name = f"Dup-{uuid.uuid4().hex[:6]}"
    owner.add_member(name, "player")
    game_id = owner.create_game("splendor", ["Ann", "Bob"]).game_id
    refusals: dict[str, Callable[[], object]] = {
        "empty name": lambda: owner.add_member("   ", "player"),
        "huge name": lambda: owner.add_member("x" * 1_000_000, "player"),
        "same name": lambda: owner.add_member(name.lower(), "recorder"),
        "no role": lambda: owner._call(
            owner.clubs.AddMember, clubs_pb2.AddMemberRequest(display_name="Nobody")
        ),
        "too long a token": lambda: owner.create_token("", 11 * 365 * 24 * 3600),
        "a seat past the players": lambda: owner.bind_seat(game_id, 2, ""),
        "a bad game id": lambda: owner.create_link_token("NOT A GAME"),
    }
    for what, call in refusals.items():
        error = refused(call)
        assert (error.code, error.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        ), what
        assert len(error.message) < 200, what
    missing = refused(lambda: owner.create_link_token("nosuchgame"))
    assert (missing.code, missing.reason) == (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    unknown = refused(lambda: owner.set_role("m_nobody", "player"))
    assert (unknown.reason, unknown.metadata["member_id"]) == ("MEMBER_NOT_FOUND", "m_nobody")


def test_health_and_reflection_need_no_token(server: BackgroundServer) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    with grpc.insecure_channel(server.target) as opened:
        health: Any = health_pb2_grpc.HealthStub(opened)  # the stubs type it loosely
        answer = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        reflection: Any = reflection_pb2_grpc.ServerReflectionStub(opened)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        listed = next(iter(reflection.ServerReflectionInfo(iter([request]), timeout=10)))
        names = {s.name for s in listed.list_services_response.service}
        assert {"tablelog.v1.TablelogService", "tablelog.v1.ClubService"} <= names
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        error = refused_rpc(lambda: stub.ListGameTypes(service_pb2.ListGameTypesRequest()))
        assert error == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")


def refused_rpc(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    code, details = rpc_refused(call)
    reasons = [d.reason for d in details if hasattr(d, "reason")]
    return code, reasons[0] if reasons else ""


def test_games_recorded_before_clubs_are_the_local_clubs(
    server: BackgroundServer, owner: Client
) -> None:
    assert server.built is not None
    recorder = server.built.recorder
    store = recorder.store
    assert isinstance(store, RedisEventStore)
    request = service_pb2.CreateGameRequest(
        game="splendor", players=[events_pb2.Player(name="Old"), events_pb2.Player(name="Timer")]
    )
    before = events_pb2.Actor(user="someone, as a client said")  # no club: before clubs
    created = cast(Outcome, server.run(recorder.create_game(request, before)))
    game_id = created.head.game_id
    assert owner.get_game(game_id).game_id == game_id
    assert game_id in {g.game_id for g in owner.list_games()}
