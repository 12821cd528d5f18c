"""Two clubs on one server (issue 23, "Clubs as tenants"), on Redis and on Redis Cluster.

The server's operator creates clubs A and B (OperatorService.CreateClub); each club's owner
adds a recorder, a player and a spectator and records a dealt game with a request id, and
shares it with a link token. Then every member of B (and B's link token) calls every RPC
that names a game on A's game, over gRPC and over the HTTP port (Connect), and must get
exactly what it gets for a game that does not exist: the same code, reason and words (the
id aside); and A's game, members and listing must be as they were; and the same of A's
callers on B's game. B replays A's request
ids (CreateGame, ImportGame, ImportRecord, RecordMove) and must get a new change of its own,
never A's game, never a word that the id was used. B's listing, export, audit and watches
hold nothing of A's. The operator's calls: create, list, suspend, resume and delete clubs,
and everyone else refused them.

`test_a_replayed_create_request_id_from_another_club_gets_its_own_game` is the defect of
issue 23: it failed on main at 8e34d96 (B got A's game, A then got NOT_FOUND)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.service.access.authorization import TABLE, Access
from tablelog.service.access.club_admin import GAME_PARTS
from tablelog.service.access.identity import Role, new_token
from tablelog.service.api.http_api import method_info
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import clubs_pb2, events_pb2, service_pb2, standings_pb2
from tablelog_client import Client
from tablelog_client.sdk import MODES
from tests.service.helpers import CHAIN, refused
from tests.service.test_authorization_matrix import BUILDERS, World
from tests.service.test_authorization_matrix import Club as MatrixClub

MEMBERS = ("owner", "recorder", "player", "spectator")
CALLERS = (*MEMBERS, "link")
SERVICES = (
    service_pb2.DESCRIPTOR.services_by_name["TablelogService"],
    clubs_pb2.DESCRIPTOR.services_by_name["ClubService"],
    standings_pb2.DESCRIPTOR.services_by_name["StandingsService"],
)
NAMING_A_GAME = {
    f"/{service.full_name}/{method.name}": method
    for service in SERVICES
    for method in service.methods
    if "game_id" in method.input_type.fields_by_name
}
"""Every gated RPC whose request names one game."""
PLAUSIBLE: dict[str, Any] = {
    "expected_version": 7,
    "notation": "take w u g",
    "revision": 2,
    "seat": 1,
    "comment": "mine now",
    "from_revision": 1,
    "heartbeat_seconds": 1,
    "annotation_id": "a_0123456789ab",
    "reason": "a check",
}
"""Values a request of each kind may carry, so that the probes reach past the empty
request's first refusal (a missing expected_version, an empty notation)."""


@dataclass
class Tenant:
    club_id: str
    tokens: dict[str, str]
    """member role (and "link") -> token"""
    member_ids: dict[str, str]
    game: str
    """A dealt Splendor game in progress, both seats bound to the club's player."""
    create_request: service_pb2.CreateGameRequest
    """The request (with its request id) that created `game`."""
    move_request_id: str
    """The request id of a move recorded on `game`."""


@dataclass
class Tenants:
    server: BackgroundServer
    operator: str
    a: Tenant
    b: Tenant
    backend: str
    timings: dict[str, list[float]] = field(default_factory=dict)


def _tenant(server: BackgroundServer, operator: Client, name: str) -> Tenant:
    created = operator.create_club(f"{name} {uuid.uuid4().hex[:6]}", owner_name=f"{name} owner")
    tokens = {"owner": created.owner_token}
    member_ids = {"owner": created.owner.member_id}
    with Client(server.target, token=created.owner_token, timeout=30) as owner:
        for role in MEMBERS[1:]:
            member = owner.add_member(f"{name} {role}", role)
            member_ids[role] = member.member_id
            tokens[role] = owner.create_token(member.member_id).token
        owner.update_club(players_may_record=True)
        request = service_pb2.CreateGameRequest(
            game="splendor",
            players=[
                events_pb2.Player(name="Ann", member_id=member_ids["player"]),
                events_pb2.Player(name="Bob", member_id=member_ids["player"]),
            ],
            mode=MODES["dealt"],
            title=f"{name}'s game",
            request_id=f"create-{uuid.uuid4().hex}",
        )
        game = owner.stub.CreateGame(request, timeout=30).game
        move_request_id = f"move-{uuid.uuid4().hex}"
        legal = owner.legal_moves(game.game_id)[1][0].notation
        owner.stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game.game_id,
                notation=legal,
                expected_version=game.version,
                request_id=move_request_id,
            ),
            timeout=30,
        )
        tokens["link"] = owner.create_link_token(game.game_id).token
    return Tenant(created.club.club_id, tokens, member_ids, game.game_id, request, move_request_id)


@pytest.fixture(scope="module", params=["redis", "cluster"])
def tenants(request: pytest.FixtureRequest, embedded_redis: EmbeddedRedis) -> Iterator[Tenants]:
    """A server with both ports (on the session's Redis, or on the Redis Cluster) whose
    operator made clubs A and B."""
    configure_logging("warning", json=True)
    url = embedded_redis.url
    if request.param == "cluster":
        url = request.getfixturevalue("redis_cluster").url
    operator = new_token()
    server = BackgroundServer(
        url, chain=CHAIN, owner_token=operator, http_address="127.0.0.1:0"
    ).start()
    try:
        with Client(server.target, token=operator, timeout=30) as op:
            a = _tenant(server, op, "A")
            b = _tenant(server, op, "B")
        yield Tenants(server, operator, a, b, request.param)
    finally:
        server.stop()


# ------------------------------------------------------------------ calling, both ports


Outcome = tuple[str, str, str]
"""(code name, ErrorInfo reason, message): OK has empty reason and message."""


def _grpc_outcome(error: grpc.RpcError) -> Outcome:
    failed: Any = error
    status = rpc_status.from_call(failed)
    reason = ""
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
    return failed.code().name, reason, failed.details() or ""


def call_grpc(target: str, path: str, request: Message, token: str) -> tuple[Outcome, list[Any]]:
    """(outcome, the answers) of one call over gRPC."""
    method = _method(path)
    response = message_factory.GetMessageClass(method.output_type)
    metadata = (("authorization", f"Bearer {token}"),)
    answers: list[Any] = []
    with channel(target) as opened:
        try:
            if method.server_streaming:
                stream: Any = opened.unary_stream(
                    path,
                    request_serializer=type(request).SerializeToString,
                    response_deserializer=response.FromString,
                )(request, metadata=metadata, timeout=10)
                answers.append(next(iter(stream), None))
                stream.cancel()
            else:
                answers.append(
                    opened.unary_unary(
                        path,
                        request_serializer=type(request).SerializeToString,
                        response_deserializer=response.FromString,
                    )(request, metadata=metadata, timeout=10)
                )
        except grpc.RpcError as error:
            return _grpc_outcome(error), answers
    return ("OK", "", ""), answers


CODECS: dict[str, Codec] = {
    "connect-proto": google_protobuf_binary_codec(),
    "connect-json": google_protobuf_json_codec(),
}


def call_http(
    url: str, path: str, request: Message, token: str, codec: str = "connect-proto"
) -> tuple[Outcome, list[Any]]:
    """(outcome, the answers) of one call over the HTTP port (Connect)."""
    method = _method(path)
    headers = {"authorization": f"Bearer {token}"}
    answers: list[Any] = []
    with ConnectClientSync(url, protocol=ProtocolType.CONNECT, codec=CODECS[codec]) as client:
        try:
            if method.server_streaming:
                for item in client.execute_server_stream(
                    request=request, method=method_info(path), headers=headers, timeout_ms=3_000
                ):
                    answers.append(item)
                    break
            else:
                answers.append(
                    client.execute_unary(
                        request=request,
                        method=method_info(path),
                        headers=headers,
                        timeout_ms=10_000,
                    )
                )
        except ConnectError as error:
            reason = ""
            for detail in error.details:
                if detail.type_name == error_details_pb2.ErrorInfo.DESCRIPTOR.full_name:
                    reason = error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason
            return (error.code.name.upper(), reason, error.message), answers
    return ("OK", "", ""), answers


def _method(path: str) -> descriptor.MethodDescriptor:
    service, name = path.strip("/").split("/")
    for candidate in (*SERVICES, clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"]):
        if candidate.full_name == service:
            return candidate.methods_by_name[name]
    raise KeyError(path)


def probes(path: str, game_id: str) -> list[Message]:
    """Two requests of `path` naming `game_id`: with nothing else, and with plausible values
    in every field it has."""
    method = _method(path)
    # (Made at run time: its fields are not in the stubs' `Message`.)
    kind: Callable[..., Message] = message_factory.GetMessageClass(method.input_type)
    bare = kind(game_id=game_id)
    full = kind(game_id=game_id)
    for name, value in PLAUSIBLE.items():
        if name in method.input_type.fields_by_name:
            field_descriptor = method.input_type.fields_by_name[name]
            if field_descriptor.message_type is None:
                setattr(full, name, value)
    return [bare, full]


def missing_game_id(like: str) -> str:
    """An id of the same shape as `like` that names no game."""
    return uuid.uuid4().hex[: len(like)]


def _anonymised(outcome: Outcome, *ids: str) -> Outcome:
    code, reason, message = outcome
    for game_id in ids:
        message = message.replace(game_id, "<game>")
    return code, reason, message


def _snapshot(tenants: Tenants, tenant: Tenant) -> tuple[Any, ...]:
    """What another club must never change of `tenant`: its game's events (the whole audit),
    annotations, seats, members, tokens and listing."""
    with Client(tenants.server.target, token=tenant.tokens["owner"], timeout=30) as owner:
        audit = [e.SerializeToString() for e in owner.export(tenant.game)]
        notes = [n.annotation_id for n in owner.annotations(tenant.game)]
        members = sorted((m.member_id, m.role) for m in owner.members())
        tokens = sorted((t.token_id, t.revoked) for t in owner.tokens())
        games = sorted(g.game_id for g in owner.list_games())
    built: Any = tenants.server.built
    seats: Any = tenants.server.run(built.members.seat_bindings(tenant.game))
    return audit, notes, members, tokens, games, sorted(seats.items())


# ------------------------------------------------------------------ the tests


@pytest.mark.parametrize("port", ["grpc", "connect-proto", "connect-json"])
@pytest.mark.parametrize("direction", ["B on A", "A on B"])
def test_another_clubs_game_answers_exactly_as_no_game(
    tenants: Tenants, port: str, direction: str
) -> None:
    """Each of one club's callers (B's, then A's), on every RPC naming a game, on the other
    club's game and on no game: the same outcome, words included; and the other club is as
    it was."""
    server = tenants.server
    http = server.http_url
    a, b = (tenants.a, tenants.b) if direction == "B on A" else (tenants.b, tenants.a)
    before = _snapshot(tenants, a)
    cells = 0
    differences: list[str] = []
    for path in NAMING_A_GAME:
        for caller in CALLERS:
            token = b.tokens[caller]
            nowhere = missing_game_id(a.game)
            for theirs, none in zip(probes(path, a.game), probes(path, nowhere), strict=True):
                if port == "grpc":
                    got, answers = call_grpc(server.target, path, theirs, token)
                    expected, _ = call_grpc(server.target, path, none, token)
                else:
                    got, answers = call_http(http, path, theirs, token, port)
                    expected, _ = call_http(http, path, none, token, port)
                cells += 1
                if got[0] == "OK":
                    differences.append(f"{path}, {direction}, as {caller}: answered {answers}")
                if _anonymised(got, a.game) != _anonymised(expected, nowhere):
                    differences.append(
                        f"{path}, {direction}, as {caller}: {got} on the game, {expected} on none"
                    )
    # ExportRecord names its games in a list.
    path = "/tablelog.v1.TablelogService/ExportRecord"
    for caller in CALLERS:
        nowhere = missing_game_id(a.game)
        theirs = service_pb2.ExportRecordRequest(game_ids=[a.game])
        none = service_pb2.ExportRecordRequest(game_ids=[nowhere])
        call = call_grpc if port == "grpc" else call_http
        where = server.target if port == "grpc" else http
        got, _ = call(where, path, theirs, b.tokens[caller])
        expected, _ = call(where, path, none, b.tokens[caller])
        cells += 1
        if got[0] == "OK" or _anonymised(got, a.game) != _anonymised(expected, nowhere):
            differences.append(f"ExportRecord, {direction}, as {caller}: {got} / {expected}")
    told = len(differences)
    print(f"\n{tenants.backend} {port}: {cells} calls of {direction}'s game, {told} told")
    assert differences == []
    assert cells == len(NAMING_A_GAME) * len(CALLERS) * 2 + len(CALLERS)
    assert _snapshot(tenants, a) == before


@pytest.mark.parametrize("port", ["grpc", "connect-proto"])
def test_the_role_table_holds_in_each_club(tenants: Tenants, port: str) -> None:
    """The authorization table (`tablelog.service.access.authorization.TABLE`, as the authorization
    matrix test builds its requests) called by each caller of each club on its own club's resources,
    on this backend and port: a DENY cell is PERMISSION_DENIED ROLE_FORBIDS, an allowed one is
    neither refused by the table nor unauthenticated. OperatorService is the operator's alone: no
    caller of either club may call it."""
    server = tenants.server
    call = call_grpc if port == "grpc" else call_http
    where = server.target if port == "grpc" else server.http_url
    failures: list[str] = []
    cells = 0
    with Client(server.target, token=tenants.operator, timeout=30) as operator:
        for tenant, other in ((tenants.a, tenants.b), (tenants.b, tenants.a)):
            with Client(server.target, token=tenant.tokens["owner"], timeout=30) as owner:
                seat_game = owner.create_game("splendor", ["Cid", "Dee"], mode="dealt")
                own = MatrixClub(
                    tenant.club_id,
                    tenant.tokens,
                    tenant.member_ids,
                    tenant.game,
                    seat_game.game_id,
                )
                rival = MatrixClub(other.club_id, other.tokens, other.member_ids, other.game, "")
                world = World(own, rival, tenant.tokens["link"])
                for path, row in TABLE.items():
                    maker = operator if row.operator else owner
                    for caller in CALLERS:
                        if row.operator:
                            access = Access.DENY
                        elif caller == "link":
                            access = Access.ALLOW if row.link else Access.DENY
                        else:
                            access = row.access(Role(caller))
                        role = "spectator" if caller == "link" else caller
                        request = BUILDERS[path](world, own, maker, role)
                        got, _ = call(where, path, request, tenant.tokens[caller])
                        cells += 1
                        where_ = f"{path} {caller} of {tenant.club_id}: {got}"
                        if access is Access.DENY:
                            if got[:2] != ("PERMISSION_DENIED", "ROLE_FORBIDS"):
                                failures.append(f"{where_} (should be refused)")
                        elif got[0] == "UNAUTHENTICATED" or got[1] == "ROLE_FORBIDS":
                            failures.append(f"{where_} (should be allowed)")
    print(f"\n{tenants.backend} {port}: {cells} cells of the role table in two clubs")
    assert failures == []
    assert cells == 2 * len(TABLE) * len(CALLERS)


def test_a_replayed_create_request_id_from_another_club_gets_its_own_game(
    tenants: Tenants,
) -> None:
    """B sends A's very CreateGame request (its request id included, as the audit and a
    share link show it): B gets a new game of its own, nothing of A's; and A still reads,
    lists and exports its game (before the fix: B got A's game with its hidden cards, and
    A got NOT_FOUND)."""
    server, a, b = tenants.server, tenants.a, tenants.b
    # A's games made with request ids: one with no seat bound to a member (its very request
    # is one B may send), and one whose id B will reuse for another request.
    unbound = service_pb2.CreateGameRequest(
        game="splendor",
        players=[events_pb2.Player(name="Cy"), events_pb2.Player(name="Di")],
        mode=MODES["dealt"],
        request_id=f"create-{uuid.uuid4().hex}",
    )
    used = f"create-{uuid.uuid4().hex}"
    with Client(server.target, token=a.tokens["recorder"], timeout=30) as recorder_a:
        a_unbound = recorder_a.stub.CreateGame(unbound, timeout=30).game.game_id
        recorder_a.create_game("splendor", ["Eve", "Fay"], request_id=used)
    before = _snapshot(tenants, a)
    bound = service_pb2.CreateGameRequest()
    bound.CopyFrom(a.create_request)
    for player in bound.players:  # A's member ids in the seats are not B's members
        player.member_id = ""
    with Client(server.target, token=b.tokens["recorder"], timeout=30) as them:
        for replayed, theirs in ((unbound, a_unbound), (bound, a.game)):
            made = them.stub.CreateGame(replayed, timeout=30).game
            assert made.game_id != theirs
            assert made.title == replayed.title
            again = them.stub.CreateGame(replayed, timeout=30).game
            assert again.game_id == made.game_id  # B's own retry finds B's game
            missing = refused(partial(them.get_game, theirs))
            assert missing.reason == "GAME_NOT_FOUND"
            assert refused(partial(them.state, theirs)).reason == "GAME_NOT_FOUND"
    with Client(server.target, token=b.tokens["owner"], timeout=30) as them:
        # Another request under a request id A used (and B did not): a new request of B's,
        # never IDEMPOTENCY_KEY_REUSED, which would say the id was used somewhere.
        other = service_pb2.CreateGameRequest()
        other.CopyFrom(bound)
        other.title = "something else"
        other.request_id = used
        different = them.stub.CreateGame(other, timeout=30).game
        assert different.game_id not in (a.game, a_unbound)
    with Client(server.target, token=a.tokens["owner"], timeout=30) as owner:
        for game_id in (a.game, a_unbound):
            assert owner.get_game(game_id).game_id == game_id
            assert game_id in {g.game_id for g in owner.list_games()}
        assert "A's game" in owner.export_record()  # `export --all` (its title)
        # A's own retries still answer A's games.
        assert owner.stub.CreateGame(a.create_request, timeout=30).game.game_id == a.game
        assert owner.stub.CreateGame(unbound, timeout=30).game.game_id == a_unbound
    assert _snapshot(tenants, a) == before


def test_replayed_import_and_move_request_ids_from_another_club_are_new_requests(
    tenants: Tenants,
) -> None:
    server, a, b = tenants.server, tenants.a, tenants.b
    with (
        Client(server.target, token=a.tokens["owner"], timeout=30) as owner_a,
        Client(server.target, token=b.tokens["owner"], timeout=30) as owner_b,
    ):
        table = owner_a.create_game("splendor", ["Eli", "Fay"])  # (a dealt one is secret)
        owner_a.record(table.game_id, owner_a.legal_moves(table.game_id)[1][0].notation)
        events = owner_a.export(table.game_id)
        request_id = f"import-{uuid.uuid4().hex}"
        imported_a = owner_a.stub.ImportGame(
            service_pb2.ImportGameRequest(events=events, request_id=request_id), timeout=30
        ).game
        # B holds the same export (a share link reads it) and A's request id.
        imported_b = owner_b.stub.ImportGame(
            service_pb2.ImportGameRequest(events=events, request_id=request_id), timeout=30
        ).game
        assert imported_b.game_id != imported_a.game_id
        assert refused(lambda: owner_b.get_game(imported_a.game_id)).reason == "GAME_NOT_FOUND"
        assert owner_a.get_game(imported_a.game_id).game_id == imported_a.game_id
        text = owner_a.export_record([table.game_id])
        record_id = f"record-{uuid.uuid4().hex}"
        from_a = owner_a.import_record(text, record_id)
        from_b = owner_b.import_record(text, record_id)
        assert {g.game_id for g in from_a}.isdisjoint(g.game_id for g in from_b)
        for game in from_a:
            assert refused(partial(owner_b.get_game, game.game_id)).reason == "GAME_NOT_FOUND"
            assert owner_a.get_game(game.game_id).game_id == game.game_id
        # A move request id of A's, on B's own game: a new move of B's.
        game_b = owner_b.get_game(b.game)
        legal = owner_b.legal_moves(b.game)[1][0].notation
        moved = owner_b.stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=b.game,
                notation=legal,
                expected_version=game_b.version,
                request_id=a.move_request_id,
            ),
            timeout=30,
        )
        assert moved.game.version == game_b.version + 1


def test_listing_export_audit_and_watches_hold_nothing_of_the_other_club(
    tenants: Tenants,
) -> None:
    server, a, b = tenants.server, tenants.a, tenants.b
    with Client(server.target, token=a.tokens["owner"], timeout=30) as owner_a:
        a_ids = {g.game_id for g in owner_a.list_games()}
        a_members = {m.member_id for m in owner_a.members()} | {a.club_id}
    for caller in MEMBERS:
        with Client(server.target, token=b.tokens[caller], timeout=30) as them:
            listed = {g.game_id for g in them.list_games()}
            assert listed.isdisjoint(a_ids), caller
            # B's own games: an import of A's export (another test's) names its origin,
            # and B's replay of A's CreateGame request carries the title B sent.
            own = [g for g in listed if not them.export(g)[0].HasField("imported")]
            text = them.export_record(own)
            audits = "".join(str(e) for g in own for e in them.audit(g))
            for word in (*a_ids, *a_members):
                assert word not in text, (caller, word)
                assert word not in audits, (caller, word)
            who = them.whoami()
            assert who.club.club_id == b.club_id
            assert not who.operator
    # A watcher of A's game sees nothing of B's moves, then its own club's next move.
    items: list[Any] = []
    with Client(server.target, token=a.tokens["spectator"], timeout=30) as watcher:
        head = watcher.get_game(a.game).version
        stop = threading.Event()

        def follow() -> None:
            for item in watcher.watch(a.game, head + 1):
                items.append(item)
                if stop.is_set() or len(items) >= 1:
                    return

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        with Client(server.target, token=b.tokens["recorder"], timeout=30) as recorder_b:
            legal = recorder_b.legal_moves(b.game)[1][0].notation
            recorder_b.record(b.game, legal)
        time.sleep(0.5)
        assert items == []
        with Client(server.target, token=a.tokens["recorder"], timeout=30) as recorder_a:
            legal = recorder_a.legal_moves(a.game)[1][0].notation
            recorder_a.record(a.game, legal)
        stop.set()
        thread.join(20)
    assert len(items) == 1


def test_the_operator_creates_lists_suspends_resumes_and_deletes_clubs(tenants: Tenants) -> None:
    server = tenants.server
    with Client(server.target, token=tenants.operator, timeout=30) as op:
        assert op.whoami().operator
        created = op.create_club("Thursday club")
        assert created.club.club_id.startswith("c_")
        assert not created.club.suspended
        listed = {c.club_id: c for c in op.list_clubs()}
        assert {created.club.club_id, tenants.a.club_id, tenants.b.club_id} <= set(listed)
        token = created.owner_token
        with Client(server.target, token=token, timeout=30) as owner:
            who = owner.whoami()
            assert who.club.club_id == created.club.club_id
            assert who.member.role == clubs_pb2.ROLE_OWNER
            assert not who.operator
            # Owners of every club, the operator's club's other owners included, are refused.
            for refused_owner in (owner, Client(server.target, token=tenants.a.tokens["owner"])):
                error = refused(refused_owner.list_clubs)
                forbidden = (grpc.StatusCode.PERMISSION_DENIED, "ROLE_FORBIDS")
                assert (error.code, error.reason) == forbidden
                error = refused(partial(refused_owner.delete_club, tenants.b.club_id))
                assert error.reason == "ROLE_FORBIDS"
            game = owner.create_game("splendor", ["Ann", "Bob"])
            owner.record(game.game_id, owner.legal_moves(game.game_id)[1][0].notation)
            suspended = op.suspend_club(created.club.club_id)
            assert suspended.suspended
            for call in (owner.whoami, lambda: owner.get_game(game.game_id)):
                error = refused(call)
                assert (error.code, error.reason) == (
                    grpc.StatusCode.PERMISSION_DENIED,
                    "CLUB_SUSPENDED",
                )
            with Client(server.target, token=tenants.a.tokens["owner"], timeout=30) as other:
                assert other.whoami().club.club_id == tenants.a.club_id  # others go on
            assert not op.resume_club(created.club.club_id).suspended
            assert owner.get_game(game.game_id).game_id == game.game_id
            # The operator's own club can be neither suspended nor deleted.
            own = op.whoami().club.club_id
            assert refused(lambda: op.suspend_club(own)).code == grpc.StatusCode.INVALID_ARGUMENT
            assert refused(lambda: op.delete_club(own)).code == grpc.StatusCode.INVALID_ARGUMENT
            assert refused(lambda: op.delete_club("c_nosuchclub")).reason == "CLUB_NOT_FOUND"
            assert op.delete_club(created.club.club_id) == 1
            error = refused(owner.whoami)
            assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_UNKNOWN")
        assert created.club.club_id not in {c.club_id for c in op.list_clubs()}
    # Gone from the store: the game's keys, the club's keys, its tokens' lookups.
    redis: Any = server.built.members.run  # type: ignore[union-attr]
    client: Any = server.built.recorder.store.redis  # type: ignore[union-attr]
    store: Any = server.built.recorder.store  # type: ignore[union-attr]
    for part in GAME_PARTS:
        assert server.run(redis(client.exists(store.key(game.game_id, part)))) == 0, part

    async def club_keys() -> list[Any]:
        pattern = server.built.members.club_key(created.club.club_id, "*")  # type: ignore[union-attr]
        return [key async for key in client.scan_iter(match=pattern)]

    assert server.run(club_keys()) == []
    from tablelog.service.access.identity import token_hash

    lookup = server.built.members.lookup_key(token_hash(token))  # type: ignore[union-attr]
    assert server.run(redis(client.exists(lookup))) == 0


@pytest.mark.parametrize("codec", ["connect-proto", "connect-json"])
def test_the_operator_service_over_the_http_port(tenants: Tenants, codec: str) -> None:
    """The same gate on the HTTP port: the operator lists the clubs, every member of a club
    (its owner included) and a link token are refused."""
    path = "/tablelog.v1.OperatorService/ListClubs"
    request = clubs_pb2.ListClubsRequest()
    outcome, answers = call_http(tenants.server.http_url, path, request, tenants.operator, codec)
    assert outcome == ("OK", "", "")
    listed = {club.club_id for club in answers[0].clubs}
    assert {tenants.a.club_id, tenants.b.club_id} <= listed
    for caller in CALLERS:
        token = tenants.b.tokens[caller]
        outcome, _ = call_http(tenants.server.http_url, path, request, token, codec)
        assert outcome[:2] == ("PERMISSION_DENIED", "ROLE_FORBIDS"), caller


def test_the_cli_creates_a_club_and_prints_its_first_owner_token(tenants: Tenants) -> None:
    import json
    import subprocess
    import sys

    server = tenants.server
    import os

    env = {**os.environ, "TABLELOG_TOKEN": tenants.operator}
    base = [sys.executable, "-m", "tablelog_client.cli"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args, "--address", server.target],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    made = run("clubs", "create", "Friday club")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("tlm_")
    assert "\n" not in token
    with Client(server.target, token=token, timeout=30) as owner:
        club_id = owner.whoami().club.club_id
    as_json = run("clubs", "create", "Saturday club", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["ownerToken"].startswith("tlm_")
    listed = run("clubs", "list")
    assert club_id in listed.stdout
    assert "Friday club" in listed.stdout
    assert run("clubs", "suspend", club_id).stdout.split()[-1] == "suspended"
    assert run("clubs", "resume", club_id).stdout.split()[-1] == "active"
    assert run("clubs", "delete", club_id).returncode != 0  # needs --yes
    deleted = run("clubs", "delete", club_id, "--yes")
    assert deleted.returncode == 0
    assert "and its 0 games" in deleted.stdout
