"""How long a NOT_FOUND takes for another club's game and for no game at all (issue 23: the
two must not be told apart by their time). A server with both ports on an embedded Redis;
the operator makes clubs A and B; A records a game; then B's recorder calls GetGame (and
GetState) alternately on A's game and on a missing id (a new one each call, as a prober
would), over gRPC and over the HTTP port (Connect, binary), and the latencies of the two
kinds are compared: medians, 10th and 90th percentiles, and the median difference with a
bootstrap interval. Speed is never asserted in tests; this script measures it.

    .venv/bin/python benchmarks/two_clubs.py [--calls 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def median_difference_interval(
    theirs: list[float], none: list[float], rounds: int = 400
) -> tuple[float, float]:
    """A 95% bootstrap interval of median(theirs) - median(none)."""
    rng = random.Random(23)
    found = []
    for _ in range(rounds):
        a = [theirs[rng.randrange(len(theirs))] for _ in theirs]
        b = [none[rng.randrange(len(none))] for _ in none]
        found.append(statistics.median(a) - statistics.median(b))
    found.sort()
    return found[int(0.025 * rounds)], found[int(0.975 * rounds)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls of each kind per run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import grpc
    from connectrpc.client import ConnectClientSync
    from connectrpc.compat import google_protobuf_binary_codec
    from connectrpc.errors import ConnectError
    from connectrpc.protocol import ProtocolType

    from tablelog.service.access.identity import new_token
    from tablelog.service.api.http_api import method_info
    from tablelog.service.api.server import BackgroundServer, channel
    from tablelog.service.logs import configure_logging
    from tablelog.service.store.chain import Chain, ChainKey
    from tablelog.service.store.embedded import EmbeddedRedis
    from tablelog.v1 import service_pb2, service_pb2_grpc
    from tablelog_client import Client

    configure_logging("error", json=True)
    with tempfile.TemporaryDirectory() as data:
        redis = EmbeddedRedis(Path(data))
        redis.start()
        operator = new_token()
        server = BackgroundServer(
            redis.url,
            chain=Chain(ChainKey.of(uuid.uuid4().bytes * 2)),
            owner_token=operator,
            http_address="127.0.0.1:0",
        ).start()
        try:
            with Client(server.target, token=operator) as op:
                a = op.create_club("A").owner_token
                b = op.create_club("B").owner_token
            with Client(server.target, token=a) as owner_a:
                game = owner_a.create_game("splendor", ["Ann", "Bob"], mode="dealt")
                for _ in range(10):
                    owner_a.record(game.game_id, owner_a.legal_moves(game.game_id)[1][0].notation)
            with Client(server.target, token=b) as owner_b:
                member = owner_b.add_member("B recorder", "recorder")
                token_b = owner_b.create_token(member.member_id).token
            metadata = (("authorization", f"Bearer {token_b}"),)
            headers = {"authorization": f"Bearer {token_b}"}

            def grpc_call(stub: Any, method: str, game_id: str) -> float:
                request = getattr(service_pb2, f"{method}Request")(game_id=game_id)
                started = time.perf_counter()
                try:
                    getattr(stub, method)(request, metadata=metadata, timeout=10)
                except grpc.RpcError as error:
                    if error.code() != grpc.StatusCode.NOT_FOUND:
                        raise
                else:
                    raise AssertionError("answered")
                return time.perf_counter() - started

            def http_call(client: Any, method: str, game_id: str) -> float:
                request = getattr(service_pb2, f"{method}Request")(game_id=game_id)
                path = f"/tablelog.v1.TablelogService/{method}"
                started = time.perf_counter()
                try:
                    client.execute_unary(
                        request=request,
                        method=method_info(path),
                        headers=headers,
                        timeout_ms=10_000,
                    )
                except ConnectError as error:
                    if error.code.name.upper() != "NOT_FOUND":
                        raise
                else:
                    raise AssertionError("answered")
                return time.perf_counter() - started

            print(f"{args.calls} calls of each kind per run, {args.repeat} runs; microseconds")
            print("port  method    kind          median    p10    p90   diff [95% interval]")
            with (
                channel(server.target) as opened,
                ConnectClientSync(
                    server.http_url,
                    protocol=ProtocolType.CONNECT,
                    codec=google_protobuf_binary_codec(),
                ) as http,
            ):
                stub = service_pb2_grpc.TablelogServiceStub(opened)
                ports: list[tuple[str, Any, Any]] = [
                    ("grpc", stub, grpc_call),
                    ("http", http, http_call),
                ]
                for port, handle, call in ports:
                    for method in ("GetGame", "GetState"):
                        for run in range(args.repeat):
                            theirs: list[float] = []
                            none: list[float] = []
                            for _ in range(50):  # warm up both paths
                                call(handle, method, game.game_id)
                                call(handle, method, uuid.uuid4().hex[:12])
                            for index in range(2 * args.calls):
                                if index % 2 == run % 2:
                                    theirs.append(call(handle, method, game.game_id))
                                else:
                                    none.append(call(handle, method, uuid.uuid4().hex[:12]))
                            low, high = median_difference_interval(theirs, none)
                            diff = statistics.median(theirs) - statistics.median(none)
                            for kind, values in (("other club", theirs), ("no game", none)):
                                print(
                                    f"{port:5} {method:9} {kind:11} "
                                    f"{statistics.median(values) * 1e6:8.0f} "
                                    f"{percentile(values, 0.1) * 1e6:6.0f} "
                                    f"{percentile(values, 0.9) * 1e6:6.0f}",
                                    end="",
                                )
                                if kind == "no game":
                                    interval = f"[{low * 1e6:+.0f}, {high * 1e6:+.0f}]"
                                    print(f"  {diff * 1e6:+6.0f} {interval}")
                                else:
                                    print()
        finally:
            server.stop()
            redis.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
