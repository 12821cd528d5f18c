"""The Python SDK spreads its calls over every address a name resolves to (a headless
Service answers with every ready pod), instead of gRPC's default of the first address."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from tablelog.service.store.embedded import free_port
from tablelog.v1 import service_pb2
from tablelog_client import Client

ADDRESSES = ("127.0.0.1", "127.0.0.2")


@pytest.fixture
def two_servers() -> Iterator[tuple[str, Counter[str]]]:
    """Two gRPC servers on one port of two loopback addresses, each counting the GetGame
    calls it answers (as two pods behind one name): the target naming both, the counts."""
    port = free_port()
    served: Counter[str] = Counter()
    servers = []
    for address in ADDRESSES:

        def get_game(_request: Any, _context: Any, address: str = address) -> Any:
            served[address] += 1
            return service_pb2.GetGameResponse()

        handler = grpc.method_handlers_generic_handler(
            "tablelog.v1.TablelogService",
            {
                "GetGame": grpc.unary_unary_rpc_method_handler(
                    get_game,
                    request_deserializer=service_pb2.GetGameRequest.FromString,
                    response_serializer=service_pb2.GetGameResponse.SerializeToString,
                )
            },
        )
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((handler,))
        assert server.add_insecure_port(f"{address}:{port}") == port
        server.start()
        servers.append(server)
    try:
        yield f"ipv4:{','.join(f'{a}:{port}' for a in ADDRESSES)}", served
    finally:
        for server in servers:
            server.stop(None)


def test_calls_are_spread_over_every_address_of_the_target(
    two_servers: tuple[str, Counter[str]],
) -> None:
    target, served = two_servers
    with Client(target, token="a-token") as client:
        for _ in range(40):
            client.get_game("g1")
    assert set(served) == set(ADDRESSES), served
    assert min(served.values()) >= 10, served
