"""The HTTP port under a flood of anonymous unfinished bodies, and refusals a second for
callers without a valid token on both ports.

    .venv/bin/python benchmarks/http_flood.py [--connections 20] [--body-mib 16]
                                              [--hold-seconds 8] [--anonymous-seconds 5]
                                              [--source DIR]

Runs `tablelog serve` (its embedded Redis, both ports, `--log-level info`) from `--source`
(a tablelog source tree: this one by default; an unpacked older commit, e.g. `git archive
8e34d96 | tar -x -C /tmp/main`, to measure before a change), then:

* flood: `--connections` connections each send, with no token, the head of a ListGames
  call with a `--body-mib` MiB Content-Length and then as much of that body as the server
  takes (one byte short of it), for `--hold-seconds`; prints the server's resident memory
  before and at its peak (VmRSS, VmHWM from /proc), how many connections the server
  answered and closed, and the bytes it took of the bodies;
* anonymous calls: one client calls ListGames with a wrong token as fast as it can for
  `--anonymous-seconds` on each port: prints the calls a second by status, and the log
  lines the server wrote for them.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

import grpc  # noqa: E402  (the path is set just above)

from tablelog.service.store.embedded import free_port  # noqa: E402
from tablelog.v1 import service_pb2, service_pb2_grpc  # noqa: E402

LIST_GAMES = "/tablelog.v1.TablelogService/ListGames"
UNLIMITED = "1000000"


def serve(source: Path, data_dir: Path, log: Path) -> tuple[subprocess.Popen[str], str, int]:
    grpc_address = f"127.0.0.1:{free_port()}"
    http_port = free_port()
    paths = [str(source), str(source / "proto"), str(source / "clients" / "python")]
    process = subprocess.Popen(
        [sys.executable, "-m", "tablelog_client.cli", "serve", "--data-dir", str(data_dir),
         "--address", grpc_address, "--http-address", f"127.0.0.1:{http_port}",
         "--durability", "fast", "--reads-per-second", UNLIMITED, "--read-burst", UNLIMITED,
         "--log-level", "info"],
        stdout=subprocess.PIPE, stderr=log.open("w"), stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths), "TABLELOG_REDIS_URL": ""},
        cwd=str(data_dir.parent),
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if "listening on" in line:
            break
    else:
        raise RuntimeError("tablelog serve did not start")
    return process, grpc_address, http_port


def rss_mib(pid: int) -> tuple[float, float]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def flood(port: int, connections: int, body: int, seconds: float) -> tuple[int, int]:
    """Connections answered-and-closed, and body bytes the server took in all."""
    head = (
        f"POST {LIST_GAMES} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/proto\r\n"
        f"Content-Length: {body}\r\n\r\n"
    ).encode()
    closed = 0
    taken = 0
    lock = threading.Lock()
    chunk = b"\0" * 65536

    def one() -> None:
        nonlocal closed, taken
        sent = 0
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(head)
            connection.settimeout(0.5)
            deadline = time.monotonic() + seconds
            ended = False
            while time.monotonic() < deadline and sent < body - 1:
                try:
                    sent += connection.send(chunk[: min(len(chunk), body - 1 - sent)])
                except TimeoutError:
                    continue  # the server is not reading: hold the connection
                except OSError:
                    ended = True
                    break
            while not ended and time.monotonic() < deadline:
                try:
                    if connection.recv(65536) == b"":
                        ended = True
                except TimeoutError:
                    continue
                except OSError:
                    ended = True
            with lock:
                closed += ended
                taken += sent

    threads = [threading.Thread(target=one) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return closed, taken


def anonymous_grpc(target: str, seconds: float) -> Counter[str]:
    counts: Counter[str] = Counter()
    with grpc.insecure_channel(target) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        metadata = (("authorization", "Bearer not-a-token"),)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                stub.ListGames(service_pb2.ListGamesRequest(), metadata=metadata)
                counts["OK"] += 1
            except grpc.RpcError as error:
                counts[error.code().name] += 1
    return counts


def anonymous_http(port: int, seconds: float) -> Counter[str]:
    import http.client

    counts: Counter[str] = Counter()
    body = service_pb2.ListGamesRequest().SerializeToString()
    headers = {"content-type": "application/proto", "authorization": "Bearer not-a-token"}
    deadline = time.monotonic() + seconds
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while time.monotonic() < deadline:
        try:
            connection.request("POST", LIST_GAMES, body=body, headers=headers)
            answer = connection.getresponse()
            answer.read()
            counts[str(answer.status)] += 1
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.close()
    return counts


def log_lines(log: Path) -> int:
    return sum(1 for line in log.read_text().splitlines() if '"rpc"' in line or " rpc " in line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--body-mib", type=int, default=16)
    parser.add_argument("--hold-seconds", type=float, default=8)
    parser.add_argument("--anonymous-seconds", type=float, default=5)
    parser.add_argument("--source", type=Path, default=ROOT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "serve.log"
        process, target, port = serve(args.source.resolve(), Path(scratch) / "data", log)
        try:
            time.sleep(1)
            before, _ = rss_mib(process.pid)
            closed, taken = flood(
                port, args.connections, args.body_mib * 1024 * 1024, args.hold_seconds
            )
            after, peak = rss_mib(process.pid)
            print(f"source: {args.source}")
            print(
                f"flood: {args.connections} anonymous unfinished {args.body_mib} MiB bodies for "
                f"{args.hold_seconds:g} s: RSS {before:.0f} MiB before, peak {peak:.0f} MiB "
                f"(+{peak - before:.0f}), {after:.0f} MiB after; {closed} of "
                f"{args.connections} connections answered and closed; "
                f"{taken / 1024 / 1024:.1f} MiB of bodies taken"
            )
            for name in ("gRPC", "HTTP"):
                time.sleep(5)  # budgets earned back between the two
                lines = log_lines(log)
                counts = (
                    anonymous_grpc(target, args.anonymous_seconds)
                    if name == "gRPC"
                    else anonymous_http(port, args.anonymous_seconds)
                )
                time.sleep(0.5)
                written = log_lines(log) - lines
                total = sum(counts.values())
                rate = ", ".join(
                    f"{code} {n / args.anonymous_seconds:.0f}/s" for code, n in counts.most_common()
                )
                print(
                    f"anonymous calls over {name}: {total / args.anonymous_seconds:.0f}/s "
                    f"({rate}); {written} log lines ({written / args.anonymous_seconds:.1f}/s)"
                )
        finally:
            process.terminate()
            process.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
