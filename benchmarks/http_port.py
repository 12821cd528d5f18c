"""Unary latency over the HTTP port (Connect, binary protobuf) against the gRPC port of the
same server, in the same run: GetGame, GetState and RecordMove, one call at a time.

    .venv/bin/python benchmarks/http_port.py [--calls 2000] [--rounds 5]

One `tablelog serve` (its embedded Redis, `--durability fast` so that a disk's fsync does
not hide what the ports cost; rates per caller out of reach) serves both ports; this
process calls it through grpc's client on one port and connect-python's on the other, in
alternating rounds of `--calls` calls each, so that the machine's drift falls on both
alike. Both clients send the same bearer token; RecordMove records the next move of a
seeded random Splendor line on a game of its own per port. Prints the median and p90
per method and port, and the ratio HTTP / gRPC of the medians (the target: at most 1.5).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from connectrpc.client import ConnectClientSync  # noqa: E402  (the path is set just above)
from connectrpc.compat import google_protobuf_binary_codec  # noqa: E402
from connectrpc.protocol import ProtocolType  # noqa: E402

from tablelog.service.api.http_api import method_info  # noqa: E402
from tablelog.service.api.server import channel  # noqa: E402
from tablelog.service.store.embedded import free_port  # noqa: E402
from tablelog.v1 import events_pb2, game_pb2, service_pb2, service_pb2_grpc  # noqa: E402
from tests.support.play import random_game  # noqa: E402

TABLELOG = "/tablelog.v1.TablelogService/"
TARGET = 1.5
UNLIMITED = ("1000000",) * 4


def serve(data_dir: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`tablelog serve` on free ports: the process, the gRPC target and the HTTP URL."""
    grpc_address = f"127.0.0.1:{free_port()}"
    http_address = f"127.0.0.1:{free_port()}"
    changes, burst, reads, read_burst = UNLIMITED
    process = subprocess.Popen(
        [sys.executable, "-m", "tablelog_client.cli", "serve", "--data-dir", str(data_dir),
         "--address", grpc_address, "--http-address", http_address, "--durability", "fast",
         "--changes-per-second", changes, "--change-burst", burst,
         "--reads-per-second", reads, "--read-burst", read_burst, "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path[:3])},
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("web app: "):
            return process, grpc_address, f"http://{http_address}"
    process.wait()
    raise RuntimeError("tablelog serve did not start")


class Ports:
    """The same calls through either port."""

    def __init__(self, target: str, url: str, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.headers = {"authorization": f"Bearer {token}"}
        self._channel = channel(target)
        self.stub = service_pb2_grpc.TablelogServiceStub(self._channel)
        self.http = ConnectClientSync(
            url,
            protocol=ProtocolType.CONNECT,
            codec=google_protobuf_binary_codec(),
            send_compression=None,
            accept_compression=(),
        )

    def caller(self, port: str, name: str) -> Callable[[Any], Any]:
        if port == "grpc":
            method = getattr(self.stub, name)
            return lambda request: method(request, metadata=self.metadata, timeout=30)
        info = method_info(TABLELOG + name)
        return lambda request: self.http.execute_unary(
            request=request, method=info, headers=self.headers, timeout_ms=30_000
        )

    def close(self) -> None:
        self.http.close()
        self._channel.close()


class Recording:
    """The next RecordMove request of a seeded random Splendor line, a new game when one
    ends (created through the gRPC port, outside the timed calls)."""

    def __init__(self, ports: Ports, seed: int) -> None:
        self.ports = ports
        self.seed = seed
        self.moves: Iterator[str] = iter(())
        self.game_id = ""
        self.version = 0

    def next(self) -> service_pb2.RecordMoveRequest:
        notation = next(self.moves, None)
        if notation is None:
            self._new_game()
            notation = next(self.moves)
        return service_pb2.RecordMoveRequest(
            game_id=self.game_id, notation=notation, expected_version=self.version
        )

    def call(self, record: Callable[[Any], Any]) -> Callable[[Any], None]:
        """`record` (a port's RecordMove), keeping the game's version."""

        def recorded(request: service_pb2.RecordMoveRequest) -> None:
            self.version = record(request).game.version

        return recorded

    def _new_game(self) -> None:
        self.seed += 1
        made = self.ports.stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor",
                players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
                mode=game_pb2.MODE_TABLE,
            ),
            metadata=self.ports.metadata,
        )
        self.game_id = made.game.game_id
        self.version = made.game.version
        self.moves = iter(random_game("splendor", 2, self.seed).notations)


def timed(call: Callable[[Any], Any], requests: Callable[[], Any], calls: int) -> list[float]:
    """Seconds per call, one call at a time; `requests` makes each call's request."""
    spent: list[float] = []
    for _ in range(calls):
        request = requests()
        started = time.perf_counter()
        call(request)
        spent.append(time.perf_counter() - started)
    return spent


def measure(ports: Ports, calls: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    probe = Recording(ports, seed=1000)
    probe.next()  # a game to read
    game_id = probe.game_id
    reads = {
        "GetGame": lambda: service_pb2.GetGameRequest(game_id=game_id),
        "GetState": lambda: service_pb2.GetStateRequest(game_id=game_id),
    }
    recordings = {"grpc": Recording(ports, seed=0), "http": Recording(ports, seed=500_000)}
    spent: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for port in ("grpc", "http"):
            for name, request in reads.items():
                call = ports.caller(port, name)
                timed(call, request, calls // 10)  # warm up
                spent.setdefault((name, port), []).extend(timed(call, request, calls))
            recording = recordings[port]
            spent.setdefault(("RecordMove", port), []).extend(
                timed(recording.call(ports.caller(port, "RecordMove")), recording.next, calls)
            )
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per method, port, round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tablelog-http-bench-") as scratch:
        process, target, url = serve(Path(scratch))
        try:
            token = (Path(scratch) / "owner.token").read_text(encoding="utf-8").strip()
            ports = Ports(target, url, token)
            try:
                spent = measure(ports, args.calls, args.rounds)
            finally:
                ports.close()
        finally:
            process.terminate()
            process.wait(30)
    print(f"{'method':<11} {'port':<5} {'p50 us':>8} {'p90 us':>8}")
    worst = 0.0
    for name in ("GetGame", "GetState", "RecordMove"):
        medians = {}
        for port in ("grpc", "http"):
            times = sorted(spent[(name, port)])
            medians[port] = statistics.median(times)
            p90 = times[int(len(times) * 0.9)]
            print(f"{name:<11} {port:<5} {medians[port] * 1e6:>8.0f} {p90 * 1e6:>8.0f}")
        ratio = medians["http"] / medians["grpc"]
        worst = max(worst, ratio)
        print(f"{name:<11} ratio HTTP / gRPC of the medians: {ratio:.2f} (target <= {TARGET})")
    print(f"worst ratio {worst:.2f}: {'within' if worst <= TARGET else 'OVER'} the target")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
