"""The service's own CPU per recorded move, without gRPC, of two checkouts in one run.

    .venv/bin/python benchmarks/record_inprocess.py --baseline DIR [--moves 400] [--repeat 5]

`benchmarks/record.py` measures RecordMove end to end (gRPC, three processes), where a
shared machine's noise is a few percent of a call. This measures what a change to the
recording path itself costs: a process per round, alternating this checkout and the one
at DIR (e.g. the main branch's worktree), each recording the same Splendor games through
`Recorder.record_move` (notation, the version from the previous answer, a fresh request
id, as a recorder does) on one embedded Redis, timing the process's CPU over the recorded
moves only (creation and warm-up excluded). The medians of the rounds are printed, with
this checkout's CPU per move as a ratio of the baseline's. CreateGame is timed the same
way over CREATIONS games of each round (`Recorder.create_game`, a fresh request id each),
and given as a ratio of RecordMove's CPU in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CREATIONS = 100
"""Games created per round with their CPU timed (CreateGame's cost beside RecordMove's)."""


def measure(
    root: Path, redis_url: str, key_file: str, lines: list[list[str]]
) -> tuple[float, float]:
    """CPU microseconds per recorded move, and per created game, of the service at `root`
    (run in its own process, so `root`'s modules are the ones imported)."""
    sys.path[:0] = [str(root), str(root / "proto")]
    from tablelog.service.api.server import tune_gc
    from tablelog.service.recording.recorder import Recorder
    from tablelog.service.store import RedisEventStore
    from tablelog.v1 import events_pb2, service_pb2

    options: dict[str, Any] = {}
    if "chain" in inspect.signature(RedisEventStore.from_url).parameters:
        from tablelog.service.store.chain_keys import load_key_file

        options["chain"] = load_key_file(Path(key_file))
    actor = events_pb2.Actor(user="bench", client="record_inprocess")

    async def run() -> tuple[float, float]:
        store = RedisEventStore.from_url(redis_url, **options)
        recorder = Recorder(store)
        tune_gc()
        games = []
        for _ in range(5):  # the first creations warm the process (imports, caches)
            await recorder.create_game(
                service_pb2.CreateGameRequest(
                    game="splendor",
                    players=[events_pb2.Player(name=n) for n in ("Ann", "Bob")],
                    request_id=secrets.token_hex(8),
                ),
                actor,
            )
        creating = time.process_time()
        for _ in range(CREATIONS):
            await recorder.create_game(
                service_pb2.CreateGameRequest(
                    game="splendor",
                    players=[events_pb2.Player(name=n) for n in ("Ann", "Bob")],
                    request_id=secrets.token_hex(8),
                ),
                actor,
            )
        per_game = 1e6 * (time.process_time() - creating) / CREATIONS
        for line in lines:
            created = await recorder.create_game(
                service_pb2.CreateGameRequest(
                    game="splendor",
                    players=[events_pb2.Player(name=n) for n in ("Ann", "Bob")],
                    request_id=secrets.token_hex(8),
                ),
                actor,
            )
            games.append((created.head.game_id, created.head.revision, line))
        moves = 0
        started = time.process_time()
        for game_id, version, line in games:
            for notation in line:
                outcome = await recorder.record_move(
                    game_id, move=None, notation=notation, seat=None,
                    expected_version=version, request_id=secrets.token_hex(8), actor=actor,
                )  # fmt: skip
                version = outcome.head.revision
                moves += 1
        spent = time.process_time() - started
        await store.close()
        return 1e6 * spent / moves, per_game

    return asyncio.run(run())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--baseline", required=True, metavar="DIR")
    parser.add_argument("--moves", type=int, default=400, help="moves per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are shown")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a round's process: its root
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    parser.add_argument("--key-file", help=argparse.SUPPRESS)
    parser.add_argument("--lines", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        lines = json.loads(Path(args.lines).read_text())
        print(*measure(Path(args.measure), args.redis_url, args.key_file, lines))
        return 0

    sys.path[:0] = [str(ROOT), str(ROOT / "proto")]
    from benchmarks.record import random_lines
    from tablelog.service.store.chain_keys import KEY_FILE_NAME, data_dir_chain
    from tablelog.service.store.embedded import EmbeddedRedis

    lines, total = [], 0
    for line in random_lines(40, seed=7):
        lines.append(line[: args.moves - total])
        total += len(lines[-1])
        if total >= args.moves:
            break
    roots = {"service": ROOT, "baseline": Path(args.baseline).resolve()}
    results: dict[str, list[float]] = {kind: [] for kind in roots}
    creations: dict[str, list[float]] = {kind: [] for kind in roots}
    with tempfile.TemporaryDirectory() as scratch:
        data_dir_chain(Path(scratch))
        lines_file = Path(scratch) / "lines.json"
        lines_file.write_text(json.dumps(lines))
        with EmbeddedRedis(Path(scratch) / "redis") as redis:
            for _round in range(args.repeat):
                for kind, root in roots.items():
                    done = subprocess.run(
                        [sys.executable, __file__, "--baseline", args.baseline,
                         "--measure", str(root), "--redis-url", redis.url,
                         "--key-file", str(Path(scratch) / KEY_FILE_NAME),
                         "--lines", str(lines_file)],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    move, create = done.stdout.split()[-2:]
                    results[kind].append(float(move))
                    creations[kind].append(float(create))
    service, baseline = (statistics.median(results[k]) for k in ("service", "baseline"))
    print(f"{total} moves per round, medians of {args.repeat} rounds; CPU us per move")
    for kind, values in results.items():
        shown = " ".join(f"{v:.0f}" for v in values)
        print(f"{kind:>9}: {statistics.median(values):7.1f}   (rounds: {shown})")
    print(f"service / baseline: {service / baseline:.3f}")
    print(f"CreateGame, {CREATIONS} games per round; CPU us per game, and / RecordMove's")
    for kind, values in creations.items():
        shown = " ".join(f"{v:.0f}" for v in values)
        ratio = statistics.median(values) / statistics.median(results[kind])
        print(f"{kind:>9}: {statistics.median(values):7.1f}   x{ratio:.2f}   (rounds: {shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
