"""Helpers shared by the service and CLI tests: reading refusals, playing Splendor through
a client, folding exported events locally."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.service.access.identity import new_token
from tablelog.service.access.local_owner import owner_name, register_owner_token_at
from tablelog.service.recording.heads import Head
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store.chain import Chain, ChainKey
from tablelog.v1 import events_pb2, service_pb2
from tablelog_client import Client, TablelogError
from tests.support.play import random_game

T = TypeVar("T")

CHAIN = Chain(ChainKey.of(secrets.token_bytes(32)))
"""The chain key of the stores and servers of this test process (one deployment: every
instance shares it, as they share a key file)."""

OWNER_NAME = owner_name()
"""The local club owner's display name (the OS user's, as `tablelog serve` names it): the
actor of whatever the tests record with OWNER_TOKEN."""
OWNER_TOKEN = new_token()
"""The local club owner's token on every server of this test process (each registers it:
`BackgroundServer(owner_token=...)`); clients and stubs call as that owner by default."""


def register_owner(redis_url: str, token: str = OWNER_TOKEN) -> None:
    """Makes `token` a token of the local club's owner in the Redis at `redis_url` (for a
    `tablelog serve` subprocess, whose own owner token is in its data directory)."""
    register_owner_token_at(redis_url, token)


def refused(call: Callable[[], object]) -> TablelogError:
    """The TablelogError that `call` raises (it must raise one)."""
    with pytest.raises(TablelogError) as info:
        call()
    return info.value


UNPACKED_DETAILS = (
    error_details_pb2.ErrorInfo,
    error_details_pb2.BadRequest,
    error_details_pb2.PreconditionFailure,
)
"""The google.rpc details `rpc_refused` and the HTTP port's tests unpack from a refusal."""


def rpc_refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, list[object]]:
    """The raw gRPC code and unpacked google.rpc details of a refused call."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    failed: Any = info.value  # a grpc.Call as well as an RpcError
    status = rpc_status.from_call(failed)
    assert status is not None
    details: list[object] = []
    for any_detail in status.details:
        for kind in UNPACKED_DETAILS:
            if any_detail.Is(kind.DESCRIPTOR):
                unpacked = kind()
                any_detail.Unpack(unpacked)
                details.append(unpacked)
    code: grpc.StatusCode = failed.code()
    return code, details


def splendor_line(seed: int, players: int = 2) -> list[str]:
    """The notation of a whole seeded random Splendor game (table mode, reveals included)."""
    return random_game("splendor", players, seed).notations


def play_random(client: Client, game_id: str, moves: int, seed: int = 0) -> int:
    """Record `moves` random legal moves (chosen from ListLegalMoves); the last version."""
    rng = random.Random(seed)
    version = client.get_game(game_id).version
    for _ in range(moves):
        _to_move, legal = client.legal_moves(game_id)
        if not legal:
            break
        choice = legal[rng.randrange(len(legal))]
        version = client.record(game_id, choice.notation, expected_version=version).game.version
    return version


async def create_splendor_game(recorder: Recorder, actor: events_pb2.Actor) -> Head:
    """A new two-player Splendor game (players A and B) created through `recorder`: its head."""
    created = await recorder.create_game(
        service_pb2.CreateGameRequest(
            game="splendor", players=[events_pb2.Player(name=n) for n in ("A", "B")]
        ),
        actor,
    )
    return created.head
