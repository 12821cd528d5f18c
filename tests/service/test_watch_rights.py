"""Rights re-checked while a WatchGame stream is open (`tablelog.service.access.watch_rights`), on
both ports: a revoked token or a removed member ends the stream UNAUTHENTICATED, a role that may no
longer see the view asked for ends it PERMISSION_DENIED, and a player whose seat is bound to someone
else watches on in the spectator's view: the new holder's hidden card never reaches it. On main the
stream went on delivering in every case."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, cast

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.service.api.http_api import method_info
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2, service_pb2_grpc
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN

WATCH = "/tablelog.v1.TablelogService/WatchGame"


@pytest.fixture(scope="module")
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    yield running
    running.stop()


@pytest.fixture
def owner(served: BackgroundServer) -> Iterator[Client]:
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as connected:
        yield connected


def member(owner: Client, role: str) -> tuple[str, str, str]:
    """A new member of `role`: its id, its token and the token's id."""
    added = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
    minted = owner.create_token(added.member_id)
    return added.member_id, minted.token, minted.info.token_id


def watch(
    served: BackgroundServer, token: str, game_id: str, **fields: Any
) -> tuple[Iterator[service_pb2.WatchGameResponse], Any]:
    opened = channel(served.target, token)
    stub = service_pb2_grpc.TablelogServiceStub(opened)
    request = service_pb2.WatchGameRequest(game_id=game_id, heartbeat_seconds=1, **fields)
    return stub.WatchGame(request, timeout=30), opened


def read_until_it_ends(stream: Iterator[Any], limit: int, updates: bool = True) -> None:
    """Read at most `limit` messages (none an update unless `updates`)."""
    for _ in range(limit):
        item = next(stream)
        assert updates or item.WhichOneof("item") != "update", "delivered after the change"


def ended_with(stream: Iterator[Any], limit: int = 10, updates: bool = True) -> grpc.StatusCode:
    """The code the stream ends with, reading at most `limit` more messages."""
    with pytest.raises(grpc.RpcError) as info:
        read_until_it_ends(stream, limit, updates)
    code: grpc.StatusCode = info.value.code()
    return code


def test_a_revoked_token_ends_the_watch_unauthenticated(
    served: BackgroundServer, owner: Client
) -> None:
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    _member, token, token_id = member(owner, "spectator")
    stream, opened = watch(served, token, game.game_id)
    with opened:
        assert next(stream).WhichOneof("item") == "heartbeat"
        owner.revoke_token(token_id)
        owner.record(game.game_id, "take w u g", expected_version=game.version)
        # The move is not delivered: the stream ends before it.
        assert ended_with(stream, 5, updates=False) is grpc.StatusCode.UNAUTHENTICATED


def test_a_removed_member_is_ended(served: BackgroundServer, owner: Client) -> None:
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    member_id, token, _token_id = member(owner, "recorder")
    stream, opened = watch(served, token, game.game_id)
    with opened:
        assert next(stream).WhichOneof("item") == "heartbeat"
        owner.remove_member(member_id)
        assert ended_with(stream) is grpc.StatusCode.UNAUTHENTICATED


def test_a_demoted_owner_asking_for_the_full_view_is_ended_permission_denied(
    served: BackgroundServer, owner: Client
) -> None:
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    member_id, token, _token_id = member(owner, "owner")
    stream, opened = watch(served, token, game.game_id, viewer=service_pb2.Viewer(full=True))
    with opened:
        assert next(stream).WhichOneof("item") == "heartbeat"
        owner.set_role(member_id, "recorder")
        assert ended_with(stream) is grpc.StatusCode.PERMISSION_DENIED


def test_an_unbound_player_watches_on_as_a_spectator_and_never_sees_the_new_hand(
    served: BackgroundServer, owner: Client
) -> None:
    """The issue's case: the unbound player saw the new holder's hidden card."""
    owner.update_club(players_may_record=True)
    old_id, old_token, _ = member(owner, "player")
    new_id, _new_token, _ = member(owner, "player")
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt", seat_members=[old_id, ""])
    stream, opened = watch(served, old_token, game.game_id)  # no viewer asked: seat 0's
    with opened:
        assert next(stream).WhichOneof("item") == "heartbeat"
        owner.bind_seat(game.game_id, 0, new_id)
        reserved = owner.record(game.game_id, "reserve 3.deck", expected_version=game.version)
        blind = owner.state(game.game_id, full=True).view.splendor.players[0].reserved[0].card
        assert blind.id
        seen = []
        for _ in range(6):
            item = next(stream)
            if item.WhichOneof("item") == "update":
                seen.append(item.update)
                if item.update.event.revision >= reserved.game.version:
                    break
        assert seen, "the watch goes on"
        for update in seen:
            assert blind.text not in str(update), "the new holder's card reached the old one"
            for player in update.state.view.splendor.players:
                for card in player.reserved:
                    assert not card.card.id


def test_over_http_a_revoked_token_ends_the_watch(served: BackgroundServer, owner: Client) -> None:
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    _member, token, token_id = member(owner, "spectator")
    request = service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1)
    with ConnectClientSync(
        served.http_url, protocol=ProtocolType.CONNECT, codec=google_protobuf_binary_codec()
    ) as client:
        stream = client.execute_server_stream(
            request=request,
            method=method_info(WATCH),
            headers={"authorization": f"Bearer {token}"},
            timeout_ms=30_000,
        )
        first = next(iter(stream))
        assert first.WhichOneof("item") == "heartbeat"
        owner.revoke_token(token_id)
        with pytest.raises(ConnectError) as info:
            read_until_it_ends(iter(stream), 5, updates=False)
        assert info.value.code is Code.UNAUTHENTICATED


def club_of_its_own(served: BackgroundServer, owner: Client) -> tuple[str, str, str]:
    """A club the operator (the owner the server registers) creates: its id, its owner's
    token, and a dealt game of it."""
    made = owner.create_club(f"club-{uuid.uuid4().hex[:6]}")
    with Client(served.target, token=made.owner_token, timeout=30) as its_owner:
        game = its_owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    return made.club.club_id, made.owner_token, game.game_id


def reason_of(error: Any) -> str:
    """The ErrorInfo reason of a refused gRPC call."""
    status = rpc_status.from_call(error)
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return str(info.reason)
    return ""


@pytest.mark.parametrize(
    ("change", "code", "reason"),
    [
        ("suspend", grpc.StatusCode.PERMISSION_DENIED, "CLUB_SUSPENDED"),
        ("delete", grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"),
    ],
)
def test_a_club_suspended_or_deleted_ends_its_watches(
    served: BackgroundServer, owner: Client, change: str, code: grpc.StatusCode, reason: str
) -> None:
    """With the code every other call of that club gets: CLUB_SUSPENDED for a suspended
    club; for a deleted one, NOT_FOUND (its game is gone), not a word about its token."""
    club_id, token, game_id = club_of_its_own(served, owner)
    stream, opened = watch(served, token, game_id)
    with opened:
        assert next(stream).WhichOneof("item") == "heartbeat"
        if change == "suspend":
            owner.suspend_club(club_id)
        else:
            owner.delete_club(club_id)
        with pytest.raises(grpc.RpcError) as info:
            read_until_it_ends(stream, 5)
        assert info.value.code() is code
        assert reason_of(info.value) == reason


@pytest.mark.parametrize("change", ["suspend", "delete"])
def test_over_http_a_club_suspended_or_deleted_ends_its_watches(
    served: BackgroundServer, owner: Client, change: str
) -> None:
    club_id, token, game_id = club_of_its_own(served, owner)
    request = service_pb2.WatchGameRequest(game_id=game_id, heartbeat_seconds=1)
    with ConnectClientSync(
        served.http_url, protocol=ProtocolType.CONNECT, codec=google_protobuf_binary_codec()
    ) as client:
        stream = client.execute_server_stream(
            request=request,
            method=method_info(WATCH),
            headers={"authorization": f"Bearer {token}"},
            timeout_ms=30_000,
        )
        assert next(iter(stream)).WhichOneof("item") == "heartbeat"
        if change == "suspend":
            owner.suspend_club(club_id)
        else:
            owner.delete_club(club_id)
        with pytest.raises(ConnectError) as info:
            read_until_it_ends(iter(stream), 5)
        expected = Code.PERMISSION_DENIED if change == "suspend" else Code.NOT_FOUND
        assert info.value.code is expected


def test_a_change_in_one_club_leaves_the_other_clubs_callers_and_watches_alone() -> None:
    """A role, member, token or club changed in club B drops B's resolved tokens and makes
    B's open watches check again, never A's (main dropped every club's and re-checked every
    watch of the process: three Redis calls each, for a change elsewhere)."""
    from tablelog.service.access.authentication import Gate
    from tablelog.service.access.identity import Club

    gate = Gate(cast(Any, None), cast(Any, None))
    for token, club in (("ta", "a"), ("tb", "b")):
        gate._resolved[token] = (0.0, cast(Any, None), cast(Any, None), Club(club, club))
    gate.forget("b")
    assert list(gate._resolved) == ["ta"]
    assert (gate.generation("a"), gate.generation("b")) == (0, 1)
    gate.rights_changed("a")
    assert (gate.generation("a"), gate.generation("b")) == (1, 1)
