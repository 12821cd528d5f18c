"""The authorization matrix, generated from the one table
(`tablelog.service.access.authorization.TABLE`): every RPC of TablelogService and ClubService,
called over a real gRPC channel against the session's server and Redis, by each role (owner,
recorder, player, spectator, and a link token, and the server's operator) on its own club's
resources and on another club's, and with no token, an unknown one, an expired one and a revoked
one. OperatorService is the operator's alone: every role of every club, the owners included, is
refused it. Every cell is asserted: an allowed call is neither UNAUTHENTICATED nor
PERMISSION_DENIED; a refused one has the exact code and reason; a call on another club's game,
member or token is NOT_FOUND as if it did not exist; and a refused call changes nothing (the
streams, members, tokens, seats, game indexes and the server's clubs are compared before and after).
The number of cells is printed (`-s`) and checked against the table."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from google.protobuf import message_factory
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.service.access.authorization import (
    CLUBS,
    OPERATORS,
    STANDINGS,
    TABLE,
    TABLELOG,
    Access,
    render,
)
from tablelog.service.access.identity import Role, new_token
from tablelog.service.access.members import MemberStore
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import clubs_pb2, events_pb2, service_pb2, standings_pb2
from tablelog_client import Client
from tests.service.helpers import OWNER_TOKEN

ROLES = ("owner", "recorder", "player", "spectator")
CALLERS = (*ROLES, "link", "operator")
BAD_TOKENS = ("missing", "unknown", "expired", "revoked")
METHODS = {
    f"/{service.full_name}/{method.name}": method
    for service in (
        service_pb2.DESCRIPTOR.services_by_name["TablelogService"],
        clubs_pb2.DESCRIPTOR.services_by_name["ClubService"],
        clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"],
        standings_pb2.DESCRIPTOR.services_by_name["StandingsService"],
    )
    for method in service.methods
}


@dataclass
class Club:
    club_id: str
    tokens: dict[str, str]
    members: dict[str, str]
    game: str
    """A dealt Splendor game in progress; both seats bound to the club's player."""
    seat_game: str
    """The game BindSeat calls bind seats of (nobody records on it)."""


@dataclass
class World:
    own: Club
    other: Club
    link: str
    bad: dict[tuple[str, str], str] = field(default_factory=dict)
    """(role, expired/revoked) -> a token in that state."""
    counter: Iterator[int] = field(default_factory=itertools.count)

    def fresh(self) -> str:
        return f"m{next(self.counter)}-{uuid.uuid4().hex[:6]}"


def _outcome(error: grpc.RpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    failed: Any = error
    status = rpc_status.from_call(failed)
    reason, metadata = "", {}
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
    code: grpc.StatusCode = failed.code()
    return code, reason, metadata


def invoke(
    opened: grpc.Channel, path: str, request: Message, token: str | None
) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """Call `path` with `token` (None: no authorization metadata); (code, reason, metadata)."""
    method = METHODS[path]
    response_class = message_factory.GetMessageClass(method.output_type)
    metadata: tuple[tuple[str, str | bytes], ...] = (
        (("authorization", f"Bearer {token}"),) if token is not None else ()
    )
    try:
        if method.server_streaming:
            stream: Any = opened.unary_stream(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=response_class.FromString,
            )(request, metadata=metadata, timeout=10)
            next(iter(stream), None)
            stream.cancel()
        else:
            opened.unary_unary(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=response_class.FromString,
            )(request, metadata=metadata, timeout=10)
    except grpc.RpcError as error:
        return _outcome(error)
    return grpc.StatusCode.OK, "", {}


# ---------------------------------------------------------------- the world the calls act on


def _club(server: BackgroundServer, owner: Client, club_id: str) -> Club:
    tokens = {"owner": owner.token.value if owner.token else ""}
    members = {"owner": owner.whoami().member.member_id}
    if owner.whoami().operator:
        # The operator is an owner of their club; the "owner" column is an owner who is not.
        tokens["operator"], members["operator"] = tokens["owner"], members["owner"]
        second = owner.add_member(f"owner-{uuid.uuid4().hex[:6]}", "owner")
        members["owner"] = second.member_id
        tokens["owner"] = owner.create_token(second.member_id).token
    for role in ROLES[1:]:
        member = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
        members[role] = member.member_id
        tokens[role] = owner.create_token(member.member_id).token
    owner.update_club(players_may_record=True)
    game = owner.create_game(
        "splendor", ["Ann", "Bob"], mode="dealt", seat_members=[members["player"]] * 2
    )
    seat_game = owner.create_game("splendor", ["Cid", "Dee"], mode="dealt")
    return Club(club_id, tokens, members, game.game_id, seat_game.game_id)


@pytest.fixture(scope="module")
def world(server: BackgroundServer) -> Iterator[World]:
    assert server.built is not None
    members: MemberStore = server.built.members
    # The rival club is made as every club is, by the server's operator (the local owner).
    with Client(server.target, token=OWNER_TOKEN) as operator:
        made = operator.create_club("rival club", owner_name="rival owner")
    rival, rival_token = made.club.club_id, made.owner_token
    with (
        Client(server.target, token=OWNER_TOKEN) as owner,
        Client(server.target, token=rival_token) as rival_owner,
    ):
        own = _club(server, owner, "local")
        other = _club(server, rival_owner, rival)
        link = owner.create_link_token(own.game).token
        built = World(own, other, link)
        for role in ROLES:
            member_id = own.members[role]

            async def expired(member_id: str = member_id) -> str:
                token, _record = await members.create_token("local", member_id, time.time() - 1)
                return token

            built.bad[(role, "expired")] = str(server.run(expired()))
            revoked = owner.create_token(member_id)
            owner.revoke_token(revoked.info.token_id)
            built.bad[(role, "revoked")] = revoked.token
        yield built


# ---------------------------------------------------------------- one request per RPC


def _version(owner: Client, game_id: str) -> int:
    return int(owner.get_game(game_id).version)


def _legal(owner: Client, game_id: str) -> str:
    _to_move, legal = owner.legal_moves(game_id)
    return legal[0].notation if legal else "take w u g"


Build = Callable[[World, Club, Client, str], Message]
"""A request for a caller of a role on a club's resources (made with that club's owner)."""


def _game(kind: Callable[..., Message]) -> Build:
    return lambda w, club, owner, role: kind(game_id=club.game)


def _record(w: World, club: Club, owner: Client, role: str) -> Message:
    return service_pb2.RecordMoveRequest(
        game_id=club.game,
        notation=_legal(owner, club.game),
        expected_version=_version(owner, club.game),
    )


def _amend(w: World, club: Club, owner: Client, role: str) -> Message:
    """A move just recorded, replaced by itself: allowed, it keeps the whole tail."""
    recorded = owner.record(club.game, _legal(owner, club.game))
    move = next(e for e in recorded.events if e.WhichOneof("body") == "move_recorded")
    return service_pb2.AmendMoveRequest(
        game_id=club.game,
        revision=move.revision,
        replace_move=service_pb2.NewMove(notation=move.move_recorded.notation),
        expected_version=recorded.game.version,
    )


def _abandon(w: World, club: Club, owner: Client, role: str) -> Message:
    game = owner.create_game("splendor", ["Eve", "Fay"])  # a game of its own to end
    return service_pb2.AbandonGameRequest(game_id=game.game_id, expected_version=game.version)


def _delete(w: World, club: Club, owner: Client, role: str) -> Message:
    game = owner.create_game("splendor", ["Ida", "Jan"])  # a game of its own to delete
    return service_pb2.DeleteGameRequest(game_id=game.game_id, reason=f"by a {role}")


def _remove_annotation(w: World, club: Club, owner: Client, role: str) -> Message:
    note = owner.annotate(club.game, "to be removed")
    return service_pb2.RemoveAnnotationRequest(game_id=club.game, annotation_id=note.annotation_id)


def _import(w: World, club: Club, owner: Client, role: str) -> Message:
    game = owner.create_game("splendor", ["Gil", "Hal"])
    return service_pb2.ImportGameRequest(events=owner.export(game.game_id))


def _import_record(w: World, club: Club, owner: Client, role: str) -> Message:
    game = owner.create_game("splendor", ["Kit", "Lou"])
    return service_pb2.ImportRecordRequest(text=owner.export_record([game.game_id]))


def _throwaway(owner: Client, w: World) -> str:
    return owner.add_member(w.fresh(), "spectator").member_id


BUILDERS: dict[str, Build] = {
    f"/{TABLELOG}/ListGameTypes": lambda w, c, o, r: service_pb2.ListGameTypesRequest(),
    f"/{TABLELOG}/CreateGame": lambda w, c, o, r: service_pb2.CreateGameRequest(
        game="splendor", players=[events_pb2.Player(name="Ivy"), events_pb2.Player(name="Jo")]
    ),
    f"/{TABLELOG}/GetGame": _game(service_pb2.GetGameRequest),
    f"/{TABLELOG}/ListGames": lambda w, c, o, r: service_pb2.ListGamesRequest(),
    f"/{TABLELOG}/RecordMove": _record,
    f"/{TABLELOG}/UndoMove": lambda w, c, o, r: service_pb2.UndoMoveRequest(
        game_id=c.game, expected_version=_version(o, c.game)
    ),
    f"/{TABLELOG}/RedoMove": lambda w, c, o, r: service_pb2.RedoMoveRequest(
        game_id=c.game, expected_version=_version(o, c.game)
    ),
    f"/{TABLELOG}/AmendMove": _amend,
    f"/{TABLELOG}/AbandonGame": _abandon,
    f"/{TABLELOG}/DeleteGame": _delete,
    f"/{TABLELOG}/GetState": _game(service_pb2.GetStateRequest),
    f"/{TABLELOG}/ListLegalMoves": _game(service_pb2.ListLegalMovesRequest),
    f"/{TABLELOG}/ReplayGame": _game(service_pb2.ReplayGameRequest),
    f"/{TABLELOG}/WatchGame": lambda w, c, o, r: service_pb2.WatchGameRequest(
        game_id=c.game, from_revision=1
    ),
    f"/{TABLELOG}/AddAnnotation": lambda w, c, o, r: service_pb2.AddAnnotationRequest(
        game_id=c.game, comment=f"by a {r}"
    ),
    f"/{TABLELOG}/RemoveAnnotation": _remove_annotation,
    f"/{TABLELOG}/ListAnnotations": _game(service_pb2.ListAnnotationsRequest),
    f"/{TABLELOG}/GetAuditLog": _game(service_pb2.GetAuditLogRequest),
    f"/{TABLELOG}/VerifyGame": _game(service_pb2.VerifyGameRequest),
    f"/{TABLELOG}/ImportGame": _import,
    f"/{TABLELOG}/ExportRecord": lambda w, c, o, r: service_pb2.ExportRecordRequest(
        game_ids=[c.game]
    ),
    f"/{TABLELOG}/ImportRecord": _import_record,
    f"/{CLUBS}/WhoAmI": lambda w, c, o, r: clubs_pb2.WhoAmIRequest(),
    f"/{CLUBS}/ListMembers": lambda w, c, o, r: clubs_pb2.ListMembersRequest(),
    f"/{CLUBS}/AddMember": lambda w, c, o, r: clubs_pb2.AddMemberRequest(
        display_name=w.fresh(), role=clubs_pb2.ROLE_SPECTATOR
    ),
    f"/{CLUBS}/RemoveMember": lambda w, c, o, r: clubs_pb2.RemoveMemberRequest(
        member_id=_throwaway(o, w)
    ),
    f"/{CLUBS}/SetRole": lambda w, c, o, r: clubs_pb2.SetRoleRequest(
        member_id=_throwaway(o, w), role=clubs_pb2.ROLE_RECORDER
    ),
    f"/{CLUBS}/CreateToken": lambda w, c, o, r: clubs_pb2.CreateTokenRequest(
        member_id=_throwaway(o, w)
    ),
    f"/{CLUBS}/ListTokens": lambda w, c, o, r: clubs_pb2.ListTokensRequest(),
    f"/{CLUBS}/RevokeToken": lambda w, c, o, r: clubs_pb2.RevokeTokenRequest(
        token_id=o.create_token(_throwaway(o, w)).info.token_id
    ),
    f"/{CLUBS}/CreateLinkToken": _game(clubs_pb2.CreateLinkTokenRequest),
    f"/{CLUBS}/BindSeat": lambda w, c, o, r: clubs_pb2.BindSeatRequest(
        game_id=c.seat_game, seat=1, member_id=c.members["spectator"]
    ),
    f"/{CLUBS}/UpdateClub": lambda w, c, o, r: clubs_pb2.UpdateClubRequest(players_may_record=True),
    # The operator's calls, each on a club of its own (`o` is the operator in the own club).
    f"/{OPERATORS}/CreateClub": lambda w, c, o, r: clubs_pb2.CreateClubRequest(name=w.fresh()),
    f"/{OPERATORS}/ListClubs": lambda w, c, o, r: clubs_pb2.ListClubsRequest(),
    f"/{OPERATORS}/SuspendClub": lambda w, c, o, r: clubs_pb2.SuspendClubRequest(
        club_id=o.create_club(w.fresh()).club.club_id
    ),
    f"/{OPERATORS}/ResumeClub": lambda w, c, o, r: clubs_pb2.ResumeClubRequest(
        club_id=o.create_club(w.fresh()).club.club_id
    ),
    f"/{OPERATORS}/DeleteClub": lambda w, c, o, r: clubs_pb2.DeleteClubRequest(
        club_id=o.create_club(w.fresh()).club.club_id
    ),
    f"/{CLUBS}/ListPlayers": lambda w, c, o, r: clubs_pb2.ListPlayersRequest(),
    f"/{CLUBS}/RenamePlayer": lambda w, c, o, r: clubs_pb2.RenamePlayerRequest(
        name=w.fresh(), new_name=w.fresh()
    ),
    f"/{CLUBS}/MergePlayers": lambda w, c, o, r: clubs_pb2.MergePlayersRequest(
        name=w.fresh(), merged_name=w.fresh()
    ),
    f"/{CLUBS}/BindPlayer": lambda w, c, o, r: clubs_pb2.BindPlayerRequest(name=w.fresh()),
    f"/{CLUBS}/ListRosterChanges": lambda w, c, o, r: clubs_pb2.ListRosterChangesRequest(),
    f"/{STANDINGS}/GetStandings": lambda w, c, o, r: standings_pb2.GetStandingsRequest(
        game="splendor"
    ),
    f"/{STANDINGS}/GetPlayerRecord": lambda w, c, o, r: standings_pb2.GetPlayerRecordRequest(
        name="Ivy"
    ),
    f"/{STANDINGS}/GetGameTypeStats": lambda w, c, o, r: standings_pb2.GetGameTypeStatsRequest(
        game="splendor"
    ),
    f"/{STANDINGS}/ListSeasons": lambda w, c, o, r: standings_pb2.ListSeasonsRequest(),
    f"/{STANDINGS}/SetSeason": lambda w, c, o, r: standings_pb2.SetSeasonRequest(
        name="spring", first_day="2026-03-01", last_day="2026-05-31"
    ),
    f"/{STANDINGS}/RebuildProjections": lambda w, c, o, r: (
        standings_pb2.RebuildProjectionsRequest()
    ),
}

NOT_FOUND_REASONS = {
    "RemoveMember": "MEMBER_NOT_FOUND",
    "SetRole": "MEMBER_NOT_FOUND",
    "CreateToken": "MEMBER_NOT_FOUND",
    "RevokeToken": "TOKEN_NOT_FOUND",
    "ExportRecord": "GAME_NOT_FOUND",  # the games it names are in a list, not `game_id`
}
"""What an allowed call on another club's member or token answers (games: GAME_NOT_FOUND)."""


def _targets(path: str) -> str | None:
    """What another club's resource a request names: GAME_NOT_FOUND, MEMBER_NOT_FOUND ...;
    None when it names none (its answer is about the caller's own club)."""
    name = path.rsplit("/", 1)[-1]
    if name in NOT_FOUND_REASONS:
        return NOT_FOUND_REASONS[name]
    if "game_id" in METHODS[path].input_type.fields_by_name:
        return "GAME_NOT_FOUND"
    return None


def state(client: redis.Redis, w: World) -> tuple[object, ...]:
    """What a refused call must leave as it was."""
    keys: list[object] = [sorted(client.smembers("tl:clubs"))]
    for club in (w.own, w.other):
        keys += [
            client.xlen(f"tl:{{{club.game}}}:events"),
            client.xlen(f"tl:{{{club.seat_game}}}:events"),
            sorted(client.hgetall(f"tl:{{{club.seat_game}}}:seats").items()),
            sorted(client.hgetall(f"tl:{{club:{club.club_id}}}:members").items()),
            sorted(client.hgetall(f"tl:{{club:{club.club_id}}}:tokens").items()),
            client.hgetall(f"tl:{{club:{club.club_id}}}:club"),
            client.zcard(f"tl:{{club:{club.club_id}}}:games"),
            client.xlen(f"tl:{{club:{club.club_id}}}:roster"),
            sorted(client.hgetall(f"tl:{{club:{club.club_id}}}:seasons").items()),
            client.get(f"tl:{{club:{club.club_id}}}:memory:version"),
        ]
    return tuple(keys)


@dataclass
class Tally:
    cells: int = 0
    allowed: int = 0
    refused: int = 0
    failures: list[str] = field(default_factory=list)


def test_every_rpc_is_in_the_table_and_the_matrix() -> None:
    assert set(TABLE) == set(METHODS)
    assert set(BUILDERS) == set(METHODS)


def test_the_documented_table_is_the_table() -> None:
    """docs/service.md, "Who may do what", shows the table as the code has it."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "service.md").read_text("utf-8")
    assert render() in doc


def test_the_authorization_matrix(
    world: World, server: BackgroundServer, embedded_redis: EmbeddedRedis
) -> None:
    tally = Tally()
    store = redis.Redis.from_url(embedded_redis.url)
    started = time.perf_counter()
    with (
        channel(server.target) as opened,
        Client(server.target, token=OWNER_TOKEN) as owner,
        Client(server.target, token=world.other.tokens["owner"]) as rival_owner,
    ):
        for path, row in TABLE.items():
            rpc = path.rsplit("/", 1)[-1]
            build = BUILDERS[path]

            def check(
                label: str,
                request: Message,
                token: str | None,
                expected: tuple[grpc.StatusCode, str] | None,
                metadata: dict[str, str] | None = None,
                rpc: str = rpc,
                path: str = path,
            ) -> None:
                """One cell: `expected` None means allowed."""
                tally.cells += 1
                before = state(store, world)
                code, reason, got = invoke(opened, path, request, token)
                where = f"{rpc} {label}: {code.name} {reason}"
                if expected is None:
                    tally.allowed += 1
                    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                        tally.failures.append(f"{where} (should be allowed)")
                    return
                tally.refused += 1
                if (code, reason) != expected:
                    tally.failures.append(f"{where} (expected {expected[0].name} {expected[1]})")
                elif metadata is not None and {k: got.get(k) for k in metadata} != metadata:
                    tally.failures.append(f"{where}: metadata {got} (expected {metadata})")
                if state(store, world) != before:
                    tally.failures.append(f"{where}: a refused call changed something")

            for caller in CALLERS:
                token = world.link if caller == "link" else world.own.tokens[caller]
                if caller == "link":
                    access = Access.ALLOW if row.link else Access.DENY
                elif row.operator:
                    access = Access.ALLOW if caller == "operator" else Access.DENY
                else:  # the operator has their role (owner) in their club, no more
                    access = row.access(Role.OWNER if caller == "operator" else Role(caller))
                role = {"link": "spectator", "operator": "owner"}.get(caller, caller)
                shown = "owner" if caller == "operator" else caller
                forbidden = (grpc.StatusCode.PERMISSION_DENIED, "ROLE_FORBIDS")
                # Own club: OWN cells are checked on the caller's own seat or annotation
                # here, and on someone else's in the tests below.
                request = build(world, world.own, owner, role)
                if access is Access.OWN and rpc == "RemoveAnnotation":
                    request = _own_annotation(world, server, caller, owner)
                check(
                    f"{caller} own club",
                    request,
                    token,
                    None if access is not Access.DENY else forbidden,
                    {"role": shown, "rpc": rpc} if access is Access.DENY else None,
                )
                # Another club: refused by the table first, else as if it did not exist.
                target = _targets(path)
                if target is None:
                    continue
                request = build(world, world.other, rival_owner, role)
                check(
                    f"{caller} other club",
                    request,
                    token,
                    forbidden if access is Access.DENY else (grpc.StatusCode.NOT_FOUND, target),
                )
            request = build(world, world.own, owner, "owner")
            unauthenticated = grpc.StatusCode.UNAUTHENTICATED
            check("no token", request, None, (unauthenticated, "TOKEN_MISSING"))
            check("unknown token", request, new_token(), (unauthenticated, "TOKEN_UNKNOWN"))
            for role in ROLES:
                for kind in ("expired", "revoked"):
                    check(
                        f"{role} {kind} token",
                        request,
                        world.bad[(role, kind)],
                        (unauthenticated, f"TOKEN_{kind.upper()}"),
                    )
    elapsed = time.perf_counter() - started
    print(
        f"\nauthorization matrix: {tally.cells} cells over {len(TABLE)} RPCs "
        f"({tally.allowed} allowed, {tally.refused} refused) in {elapsed:.1f} s"
    )
    assert tally.failures == []
    own_cells = len(TABLE) * len(CALLERS)
    other_cells = sum(1 for path in TABLE if _targets(path)) * len(CALLERS)
    token_cells = len(TABLE) * (2 + 2 * len(ROLES))
    assert tally.cells == own_cells + other_cells + token_cells


def _own_annotation(world: World, server: BackgroundServer, caller: str, owner: Client) -> Message:
    """A removal of an annotation the caller made (a spectator's: made while a player)."""
    member_id = world.own.members[caller]
    with Client(server.target, token=world.own.tokens[caller]) as them:
        if caller == "spectator":
            owner.set_role(member_id, "player")
            note = them.annotate(world.own.game, "mine")
            owner.set_role(member_id, "spectator")
        else:
            note = them.annotate(world.own.game, "mine")
    return service_pb2.RemoveAnnotationRequest(
        game_id=world.own.game, annotation_id=note.annotation_id
    )
