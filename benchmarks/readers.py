"""Readers never slow a recorder (issue 24): a recorder's RecordMove beside people stepping
through games' pictures, against the same recorder alone, alternating in one run.

    .venv/bin/python benchmarks/readers.py                       # 3 rounds of 8 s windows
    .venv/bin/python benchmarks/readers.py --rounds 5 --seconds 10 --hog
    .venv/bin/python benchmarks/readers.py --before-tree /tmp/base   # also a tree to compare

Everything runs on one embedded Redis. Each server (`--before-tree`: also the same service
from another source tree, e.g. `git archive 8e34d96 | tar -x -C /tmp/base`, in the same
rounds) is a process of its own (`tablelog.service.api.server.build_server`, one JSON log line per
RPC, as `tablelog serve`) with its default picture settings but `--picture-cache-bytes` (0 by
default: every picture is drawn, the worst case; the cache's hits only make it cheaper).

* the recorder, in this process: one RecordMove every `--interval` s (0.05) on a game of
  its own (a new one when a game ends), by notation, timed to the answer;
* `--viewers` people (4) in a process of their own, each stepping through a 200-move
  4-player Splendor game of its own as the web app fetches pictures: ReplayGame of 32
  revisions with pictures (clients/web/src/picture.ts's BLOCK), block after block, the next
  asked as soon as the last arrived, over and over.

Windows of `--seconds` alternate, round by round: the recorder alone (the floor), then with
the viewers, on each server. Printed per server: RecordMove p50 and p99 alone and with the
viewers (over all rounds, and each round's ratio: the spread), the pictures drawn per
second and the block time. Targets: p99 with viewers <= 2x alone, p50 <= 1.5x.
`--hog` runs a CPU-bound process beside everything (the machine's other core busy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv else ROOT
sys.path[:0] = [str(TREE), str(TREE / "proto"), str(ROOT / "clients" / "python"), str(ROOT)]

TARGETS = {"p99": 2.0, "p50": 1.5}
BLOCK = 32
VIEWED_MOVES = 200


# ----------------------------------------------------------------------------- the server


async def run_service(redis_url: str, port: int, cache_bytes: int) -> None:
    from tablelog.service.api.server import build_server, mark_serving
    from tablelog.service.logs import configure_logging
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain import Chain, ChainKey

    configure_logging("info", json=True)
    store = RedisEventStore.from_url(redis_url, chain=Chain(ChainKey.of(secrets.token_bytes(32))))
    settings: dict[str, Any] = {}
    try:
        from tablelog.service.recording.pictures import PictureLimits

        settings["picture_limits"] = PictureLimits(cache_bytes=cache_bytes)
    except ImportError:  # a tree from before the picture settings
        pass
    built = build_server(store, f"127.0.0.1:{port}", **settings)
    await built.server.start()
    await mark_serving(built)
    print("ready", flush=True)
    await built.server.wait_for_termination()


def start_service(
    redis_url: str, tree: Path, cache_bytes: int
) -> tuple[subprocess.Popen[str], str]:
    from tablelog.service.store.embedded import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "service", "--tree", str(tree), "--redis-url", redis_url,
         "--port", str(port), "--cache-bytes", str(cache_bytes)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    if "ready" not in process.stdout.readline():
        raise RuntimeError(f"the service from {tree} did not start")
    return process, f"127.0.0.1:{port}"


# ----------------------------------------------------------------------------- the viewers


async def run_viewers(target: str, game_ids: list[str], heads: list[int]) -> None:
    """One stepper per game, block after block, until a line comes on stdin; then prints
    what was done while "go" ... "stop" bracketed a window, as JSON, and waits again."""
    from grpc import aio

    from benchmarks.record import bearer
    from tablelog.v1 import service_pb2

    channel = aio.insecure_channel(target)
    replay: Any = channel.unary_stream("/tablelog.v1.TablelogService/ReplayGame")
    stepping = asyncio.Event()
    blocks: list[float] = []
    pictures = 0

    async def step(game_id: str, head: int) -> None:
        nonlocal pictures
        first = 1
        while True:
            await stepping.wait()
            last = min(head, first + BLOCK - 1)
            request = service_pb2.ReplayGameRequest(
                game_id=game_id, from_revision=first, to_revision=last, picture=True
            )
            started = time.monotonic()
            count = 0
            async for data in replay(request.SerializeToString(), metadata=bearer()):
                count += bool(service_pb2.ReplayGameResponse.FromString(data).state.picture)
            if stepping.is_set():
                blocks.append(time.monotonic() - started)
                pictures += count
            first = 1 if last >= head else last + 1

    tasks = [asyncio.create_task(step(g, h)) for g, h in zip(game_ids, heads, strict=True)]
    print("ready", flush=True)
    while True:
        line = (await asyncio.to_thread(sys.stdin.readline)).strip()
        if line == "go":
            blocks.clear()
            pictures = 0
            stepping.set()
        elif line == "stop":
            stepping.clear()
            print(json.dumps({"blocks": blocks, "pictures": pictures}), flush=True)
        else:
            break
    for task in tasks:
        task.cancel()
    await channel.close()


# ----------------------------------------------------------------------------- the recorder


class Recorder:
    """A recorder on one server: its own game, a new one when a game ends."""

    def __init__(self, target: str, lines: list[list[str]]) -> None:
        from benchmarks.record import authenticated_channel
        from tablelog.v1 import service_pb2_grpc

        self.channel = authenticated_channel(target)
        self.stub = service_pb2_grpc.TablelogServiceStub(self.channel)
        self.lines = lines
        self.line = 0
        self.game_id = ""
        self.version = 0
        self.remaining: list[str] = []

    def _new_game(self) -> None:
        from tablelog.v1 import events_pb2, service_pb2

        created = self.stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor", players=[events_pb2.Player(name=n) for n in "ABCD"]
            )
        )
        self.game_id, self.version = created.game.game_id, created.game.version
        self.remaining = list(self.lines[self.line % len(self.lines)])
        self.line += 1

    def move(self) -> float:
        """One RecordMove; its time in seconds."""
        from tablelog.v1 import service_pb2

        if not self.remaining:
            self._new_game()
        request = service_pb2.RecordMoveRequest(
            game_id=self.game_id,
            notation=self.remaining.pop(0),
            expected_version=self.version,
            request_id=os.urandom(8).hex(),
        )
        started = time.monotonic()
        response = self.stub.RecordMove(request)
        took = time.monotonic() - started
        self.version = response.game.version
        return took

    def window(self, seconds: float, interval: float) -> list[float]:
        times = []
        started = time.monotonic()
        index = 0
        while time.monotonic() - started < seconds:
            due = started + index * interval
            time.sleep(max(0.0, due - time.monotonic()))
            times.append(self.move())
            index += 1
        return times


def prepare_viewed(target: str, lines: list[list[str]], count: int) -> tuple[list[str], list[int]]:
    """`count` games of VIEWED_MOVES moves; their ids and head revisions."""
    from benchmarks.record import authenticated_channel
    from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc

    ids, heads = [], []
    with authenticated_channel(target) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        for index in range(count):
            created = stub.CreateGame(
                service_pb2.CreateGameRequest(
                    game="splendor", players=[events_pb2.Player(name=n) for n in "ABCD"]
                )
            )
            game_id, version = created.game.game_id, created.game.version
            for notation in lines[index % len(lines)][:VIEWED_MOVES]:
                version = stub.RecordMove(
                    service_pb2.RecordMoveRequest(
                        game_id=game_id,
                        notation=notation,
                        expected_version=version,
                        request_id=os.urandom(8).hex(),
                    )
                ).game.version
            ids.append(game_id)
            heads.append(version)
    return ids, heads


def hog() -> None:
    while True:
        pass


def quantile(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("role", nargs="?", default="bench", choices=("bench", "service", "viewers"))
    parser.add_argument("--tree", default=str(ROOT))
    parser.add_argument("--redis-url")
    parser.add_argument("--port", type=int)
    parser.add_argument("--target")
    parser.add_argument("--game-ids")
    parser.add_argument("--heads")
    parser.add_argument("--cache-bytes", type=int, default=0, help="the picture cache (0: off)")
    parser.add_argument("--before-tree", help="another source tree, measured in the same rounds")
    parser.add_argument("--viewers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per window")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between moves")
    parser.add_argument("--hog", action="store_true", help="a CPU-bound process beside it all")
    args = parser.parse_args()
    if args.role == "service":
        asyncio.run(run_service(args.redis_url, args.port, args.cache_bytes))
        return 0
    if args.role == "viewers":
        heads = [int(h) for h in args.heads.split(",")]
        asyncio.run(run_viewers(args.target, args.game_ids.split(","), heads))
        return 0

    import multiprocessing

    from benchmarks.record import random_lines, register_token, stop
    from tablelog.service.store.embedded import EmbeddedRedis

    print("preparing games ...", file=sys.stderr)
    lines = [line for line in random_lines(60, players=4, seed=300) if len(line) >= VIEWED_MOVES]
    trees = {"after": ROOT}
    if args.before_tree:
        trees = {"before": Path(args.before_tree), **trees}
    hogging = multiprocessing.Process(target=hog, daemon=True) if args.hog else None
    results: dict[str, dict[str, list[Any]]] = {
        name: {"alone": [], "viewers": [], "blocks": [], "pictures": [], "seconds": []}
        for name in trees
    }
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch, EmbeddedRedis(Path(scratch) / "redis") as redis:
        register_token(redis.url)
        servers: dict[str, Any] = {}
        try:
            for name, tree in trees.items():
                process, target = start_service(redis.url, tree, args.cache_bytes)
                ids, heads = prepare_viewed(target, lines, args.viewers)
                viewers = subprocess.Popen(
                    [sys.executable, __file__, "viewers", "--target", target,
                     "--game-ids", ",".join(ids), "--heads", ",".join(map(str, heads))],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                )  # fmt: skip
                assert viewers.stdout is not None
                assert viewers.stdin is not None
                assert "ready" in viewers.stdout.readline()
                recorder = Recorder(target, lines)
                recorder.window(1.0, args.interval)  # warm-up: connections, first games
                servers[name] = (process, viewers, recorder)
            if hogging is not None:
                hogging.start()
            for number in range(args.rounds):
                order = list(servers) if number % 2 == 0 else list(reversed(servers))
                for name in order:
                    process, viewers, recorder = servers[name]
                    conditions = ("alone", "viewers") if number % 2 == 0 else ("viewers", "alone")
                    for condition in conditions:
                        print(f"round {number + 1}, {name}, {condition} ...", file=sys.stderr)
                        if condition == "viewers":
                            viewers.stdin.write("go\n")
                            viewers.stdin.flush()
                            time.sleep(0.5)  # every viewer inside a block
                        started = time.monotonic()
                        times = recorder.window(args.seconds, args.interval)
                        results[name][condition].append(times)
                        if condition == "viewers":
                            viewers.stdin.write("stop\n")
                            viewers.stdin.flush()
                            done = json.loads(viewers.stdout.readline())
                            results[name]["blocks"] += done["blocks"]
                            results[name]["pictures"].append(done["pictures"])
                            results[name]["seconds"].append(time.monotonic() - started + 0.5)
                        else:
                            time.sleep(0.5)
        finally:
            if hogging is not None and hogging.is_alive():
                hogging.terminate()
            for process, viewers, recorder in servers.values():
                recorder.channel.close()
                if viewers.poll() is None:
                    viewers.stdin.write("exit\n")
                    viewers.stdin.flush()
                    try:
                        viewers.wait(10)
                    except subprocess.TimeoutExpired:
                        viewers.kill()
                stop(process)
    print(
        f"a recorder: one RecordMove every {args.interval:g} s; {args.viewers} viewers each "
        f"stepping through a {VIEWED_MOVES}-move game's pictures in blocks of {BLOCK} "
        f"(ReplayGame, pictures on), back to back; picture cache {args.cache_bytes} bytes; "
        f"{args.rounds} rounds of {args.seconds:g} s windows, alternated; "
        f"{'a CPU hog beside it; ' if args.hog else ''}"
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    print(
        f"{'server':>7} {'p50 alone':>9} {'p50 with':>9} {'ratio':>6} {'p99 alone':>9} "
        f"{'p99 with':>9} {'ratio':>6} {'p50 ratios':>18} {'p99 ratios':>18} "
        f"{'pictures/s':>10} {'block p50':>9} {'block p99':>9}"
    )
    failed = False
    for name, got in results.items():
        alone = [t for window in got["alone"] for t in window]
        with_viewers = [t for window in got["viewers"] for t in window]

        def ms(times: list[float], q: float) -> float:
            return 1000 * quantile(times, q)

        p50 = ms(with_viewers, 0.5) / ms(alone, 0.5)
        p99 = ms(with_viewers, 0.99) / ms(alone, 0.99)
        rounds50 = [
            quantile(w, 0.5) / quantile(a, 0.5)
            for a, w in zip(got["alone"], got["viewers"], strict=True)
        ]
        rounds99 = [
            quantile(w, 0.99) / quantile(a, 0.99)
            for a, w in zip(got["alone"], got["viewers"], strict=True)
        ]
        rate = sum(got["pictures"]) / max(1e-9, sum(got["seconds"]))
        blocks = got["blocks"] or [0.0]
        print(
            f"{name:>7} {ms(alone, 0.5):>7.2f}ms {ms(with_viewers, 0.5):>7.2f}ms {p50:>6.2f} "
            f"{ms(alone, 0.99):>7.2f}ms {ms(with_viewers, 0.99):>7.2f}ms {p99:>6.2f} "
            f"{min(rounds50):>8.2f}-{max(rounds50):<8.2f} "
            f"{min(rounds99):>8.2f}-{max(rounds99):<8.2f} "
            f"{rate:>10.0f} {1000 * quantile(blocks, 0.5):>7.0f}ms "
            f"{1000 * quantile(blocks, 0.99):>7.0f}ms"
        )
        if name == "after":
            failed = p99 > TARGETS["p99"] or p50 > TARGETS["p50"]
        print(f"  ({len(alone)} moves alone, {len(with_viewers)} with viewers)")
    print(
        f"targets: RecordMove p99 with the viewers <= {TARGETS['p99']:g}x alone, p50 <= "
        f"{TARGETS['p50']:g}x; ratios: over all rounds, then each round's (the spread)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
