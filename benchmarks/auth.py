"""What authentication and authorization cost a RecordMove: server CPU per call of the
service as built (the gate resolves the bearer token, checks the role against the table
and the game's club) against the same service whose gate admits every call as the owner
without looking at anything (`Trusting`), in the same run, under the same load.

    .venv/bin/python benchmarks/auth.py [--seconds 5] [--clients 1 8] [--repeat 3]

The load, the games, the embedded Redis and the CPU accounting are benchmarks/record.py's
(each server in its own process; CPU from /proc over the timed window). Both servers get
the very same requests, token included. Prints the medians and the ratio
authenticated / trusting of server CPU per call (the target: at most 1.05).

On a shared machine the two servers' CPU per call differ by more than the gate costs from
one run to the next, so the gate's own work is also measured in-process: `Gate.admit` of a
RecordMove (cached token, the table, the game's club) against the trusting gate's, in a
loop of calls, and given as a share of the server CPU per call measured above.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from benchmarks import record  # noqa: E402  (the path is set just above)
from tablelog.service.store.embedded import Durability, EmbeddedRedis, free_port  # noqa: E402

KINDS = ("trusting", "authenticated")


async def serve(kind: str, redis_url: str, port: int, key_file: str) -> None:
    """The service as `record.py service` runs it; `trusting`: with a gate that admits
    every call as the local owner."""
    from tablelog.service.access.authentication import Gate
    from tablelog.service.access.identity import Caller
    from tablelog.service.api.server import build_server, mark_serving
    from tablelog.service.logs import configure_logging
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import load_key_file

    configure_logging("info", json=True)
    store = RedisEventStore.from_url(redis_url, chain=load_key_file(Path(key_file)))
    gate: Gate | None = None
    if kind == "trusting":
        from tablelog.service.access.members import MemberStore

        members = MemberStore(store.redis)
        owner_record, owner, club = await members.resolve(record.bearer()[0][1].split()[1])
        fixed = Caller(owner, club, owner_record, "bench")

        class Trusting(Gate):
            """Admits every call as the owner: no token, no table, no club."""

            async def admit(
                self, method: str, request: Any, metadata: Any, peer: str = ""
            ) -> Caller:
                return fixed

        from tablelog.service.access.authentication import GameClubs

        gate = Trusting(members, GameClubs(store))
    built = build_server(store, f"127.0.0.1:{port}", redis_url=redis_url, gate=gate)
    await built.server.start()
    await mark_serving(built)
    print("ready", flush=True)
    await built.server.wait_for_termination()


def start(kind: str, redis_url: str, key_file: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, kind, "--redis-url", redis_url, "--port", str(port),
         "--chain-key-file", key_file],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    if "ready" not in process.stdout.readline():
        raise RuntimeError(f"the {kind} server did not start")
    return process, f"127.0.0.1:{port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("role", nargs="?", default="bench", choices=("bench", *KINDS))
    parser.add_argument("--redis-url")
    parser.add_argument("--port", type=int)
    parser.add_argument("--chain-key-file")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are shown")
    args = parser.parse_args()
    if args.role in KINDS:
        asyncio.run(serve(args.role, args.redis_url, args.port, args.chain_key_file))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        lines_file = Path(scratch) / "lines.json"
        lines_file.write_text(json.dumps(record.random_lines(60)))
        from tablelog.service.store.chain_keys import KEY_FILE_NAME, data_dir_chain

        data_dir_chain(Path(scratch))
        key_file = str(Path(scratch) / KEY_FILE_NAME)
        runs: list[dict[str, Any]] = []
        with EmbeddedRedis(Path(scratch) / "redis", durability=Durability.FAST) as redis:
            assert redis.process is not None
            record.register_token(redis.url)
            for _round in range(args.repeat):  # the two alternate: the same conditions
                for clients in args.clients:
                    for kind in KINDS:
                        process, target = start(kind, redis.url, key_file)
                        try:
                            row = record.run_load(
                                target, "service", clients, args.seconds, str(lines_file),
                                process.pid, redis.process.pid,
                            )  # fmt: skip
                        finally:
                            record.stop(process)
                        row["kind"] = kind
                        runs.append(row)
            admit_us = asyncio.run(gate_cost(redis.url, key_file))
    print(f"medians of {args.repeat} rounds of {args.seconds:g} s; server CPU in us per call")
    print(f"{'clients':>7} {'server':>14} {'calls/s':>9} {'p50 ms':>7} {'server CPU':>10}")
    medians: dict[tuple[int, str], float] = {}
    for clients in args.clients:
        for kind in KINDS:
            mine = [r for r in runs if (r["clients"], r["kind"]) == (clients, kind)]
            cpu = statistics.median(r["cpu_us"] for r in mine)
            medians[(clients, kind)] = cpu
            print(
                f"{clients:>7} {kind:>14} {statistics.median(r['per_second'] for r in mine):>9.0f} "
                f"{statistics.median(r['p50_ms'] for r in mine):>7.2f} {cpu:>10.1f}"
            )
    for clients in args.clients:
        ratio = medians[(clients, "authenticated")] / medians[(clients, "trusting")]
        share = admit_us / medians[(clients, "trusting")]
        print(
            f"server CPU per RecordMove at {clients} clients, authenticated / trusting: "
            f"{ratio:.3f} (target <= 1.05); the gate's own work: {admit_us:.1f} us a call, "
            f"ratio {1 + share:.3f}"
        )
    return 0


async def gate_cost(redis_url: str, key_file: str, calls: int = 20_000) -> float:
    """CPU microseconds `Gate.admit` adds to a RecordMove over a gate that admits as the
    owner without looking (both in this process, on a game of the run)."""
    import time

    from tablelog.service.access.authentication import GameClubs, Gate
    from tablelog.service.access.identity import Caller
    from tablelog.service.access.members import MemberStore
    from tablelog.service.api.server import SERVICE_NAME
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import load_key_file
    from tablelog.service.store.game_index import game_of
    from tablelog.v1 import service_pb2

    store = RedisEventStore.from_url(redis_url, chain=load_key_file(Path(key_file)))
    members = MemberStore(store.redis)
    token = record.bearer()[0][1].split()[1]
    owner_record, owner, club = await members.resolve(token)
    fixed = Caller(owner, club, owner_record, "bench")

    class Trusting(Gate):
        async def admit(self, method: str, request: Any, metadata: Any, peer: str = "") -> Caller:
            return fixed

    position, *_ = await store.list_game_ids(club.club_id, "", 0, None, 1)
    game_id = game_of(position)
    request = service_pb2.RecordMoveRequest(game_id=game_id, notation="x", expected_version=1)
    metadata = (
        ("x-tablelog-client", "bench"),
        ("authorization", f"Bearer {token}"),
        ("user-agent", "grpc-python-asyncio/1.85"),
    )
    method = f"/{SERVICE_NAME}/RecordMove"
    costs = {}
    for gate in (Trusting(members, GameClubs(store)), Gate(members, GameClubs(store))):
        await gate.admit(method, request, metadata)  # resolved and cached
        best = float("inf")
        for _ in range(5):
            started = time.process_time()
            for _ in range(calls):
                await gate.admit(method, request, metadata)
            best = min(best, time.process_time() - started)
        costs[type(gate).__name__] = 1e6 * best / calls
    await store.close()
    return costs["Gate"] - costs["Trusting"]


if __name__ == "__main__":
    sys.exit(main())
