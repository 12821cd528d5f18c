"""Fold throughput of every registered game: decode + validate + apply, in moves per second.

    .venv/bin/python benchmarks/fold.py                # 200 games per game type
    .venv/bin/python benchmarks/fold.py --games 50     # quicker
    .venv/bin/python benchmarks/fold.py --only splendor

For each game in `replay.registry.all_games()` (new games are picked up automatically) it
plays seeded random games through `tests/support/play.random_game` (player counts cycling
over the game's range, table and dealt modes alternating when the game has both), stores
them as serialized `Event` bytes, then times, on one core, `Event.FromString` of every
event followed by `tablelog.replay.fold.fold` of the decoded list. The figure counts recorded moves
(chance moves included) per second of CPU time of decode + fold (the process's own time,
so other load on the machine does not count), best of `--repeat` runs. The target
is 30,000 moves per second; a game below it is reported as such and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay.core import DEALT, TABLE, Game  # noqa: E402
from tablelog.replay.registry import all_games  # noqa: E402
from tablelog.v1 import events_pb2  # noqa: E402
from tests.support.play import created, events_of, random_game  # noqa: E402

TARGET = 30_000


def corpus(name: str, game: Game[Any, Any], count: int) -> tuple[list[list[bytes]], int]:
    """`count` seeded random games of `name` as serialized events, and their move count."""
    counts = list(range(game.min_players, game.max_players + 1))
    modes = [m for m in (TABLE, DEALT) if m in game.modes]
    stored: list[list[bytes]] = []
    moves = 0
    for seed in range(count):
        players = counts[seed % len(counts)]
        mode = modes[(seed // len(counts)) % len(modes)]
        played = random_game(name, players, seed=seed, mode=mode)
        events = events_of(created(name, players, mode=mode), played.moves, played.notations)
        stored.append([e.SerializeToString() for e in events])
        moves += len(played.moves)
    return stored, moves


def decode_floor(stored: list[list[bytes]], repeat: int) -> float:
    """The best CPU time of decoding alone, the floor measured in the same run: no fold can
    be faster than reading its events, so fold/floor says what the rules cost on top."""
    decode = events_pb2.Event.FromString
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        cpu = time.process_time()
        for game_events in stored:
            [decode(raw) for raw in game_events]
        best = min(best, time.process_time() - cpu)
    return best


def measure(stored: list[list[bytes]], repeat: int) -> tuple[float, float]:
    """The best CPU time of this process and the best wall time of decoding and folding
    every stored game. The fold is single-threaded, so CPU time is its time on one core
    even when other processes share the machine."""
    decode = events_pb2.Event.FromString
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        gc.collect()
        wall = time.perf_counter()
        cpu = time.process_time()
        for game_events in stored:
            folding.fold([decode(raw) for raw in game_events])
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="random games per game type")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    parser.add_argument("--only", action="append", help="benchmark only these games")
    args = parser.parse_args(argv)
    below = 0
    print(f"fold throughput (decode + fold), target {TARGET:,} moves/s on one core")
    for name, game in all_games().items():
        if args.only and name not in args.only:
            continue
        try:
            stored, moves = corpus(name, game, args.games)
            seconds, wall = measure(stored, args.repeat)
            floor = decode_floor(stored, args.repeat)
        except Exception as error:  # one broken game must not hide the others
            below += 1
            print(f"{name:24s} FAILED: {type(error).__name__}: {error}")
            continue
        rate = moves / seconds if seconds else float("inf")
        verdict = "ok" if rate >= TARGET else "BELOW TARGET"
        below += rate < TARGET
        print(
            f"{name:24s} {args.games:5d} games {moves:8d} moves {seconds:7.3f} s cpu "
            f"({wall:.3f} s wall) {rate:10,.0f} moves/s  {rate / TARGET:5.2f}x target  {verdict}"
        )
        floor_rate = moves / floor if floor else float("inf")
        print(
            f"{'':24s} decode-only floor {floor_rate:10,.0f} moves/s; "
            f"fold runs at {rate / floor_rate:.2f}x the floor"
        )
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
