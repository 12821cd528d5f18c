"""Text record throughput of every registered game: export and import, in moves per second.

    .venv/bin/python benchmarks/record_format.py              # 100 games per game type
    .venv/bin/python benchmarks/record_format.py --games 20   # quicker
    .venv/bin/python benchmarks/record_format.py --only splendor

For each game in `replay.registry.all_games()` it plays seeded random games in table mode
(`tests/support/play.random_game`, player counts cycling over the game's range), stores
each as serialized `Event` bytes, and times on one core (the process's CPU time, best of
`--repeat` runs):

- export: write the record of the folded games (`replay.record.record_of` and `write`),
  the work ExportRecord adds to the game's head, which the service keeps folded in its
  head cache (the fold itself is benchmarks/fold.py's; its rate is printed for reference);
- import: read the record (`replay.record.read`: every move parsed, checked by the rules
  and written canonically) and build and serialize the events that store it
  (`events_of`), the work of ImportRecord before the append.

The floor is decoding the same events alone, measured in the same run. The target is
50,000 moves per second (chance moves included) each way; a game below it makes the exit
status 1.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from replay import fold as folding  # noqa: E402  (the path is set up just above)
from replay import record  # noqa: E402
from replay.core import Game  # noqa: E402
from replay.registry import all_games  # noqa: E402
from tablelog.v1 import events_pb2  # noqa: E402
from tests.support.play import created, events_of, random_game  # noqa: E402

TARGET = 50_000


def corpus(name: str, game: Game[Any, Any], count: int) -> tuple[list[list[bytes]], str, int]:
    """`count` seeded random games of `name`: as serialized events, as one record, and
    their move count."""
    counts = list(range(game.min_players, game.max_players + 1))
    stored: list[list[bytes]] = []
    records = []
    moves = 0
    for seed in range(count):
        players = counts[seed % len(counts)]
        played = random_game(name, players, seed=seed)
        events = events_of(created(name, players), played.moves, played.notations)
        stored.append([e.SerializeToString() for e in events])
        records.append(record.record_of(played.position))
        moves += len(played.moves)
    return stored, record.write(records), moves


def best_cpu(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        cpu = time.process_time()
        work()
        best = min(best, time.process_time() - cpu)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="random games per game type")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    parser.add_argument("--only", action="append", help="benchmark only these games")
    args = parser.parse_args(argv)
    decode = events_pb2.Event.FromString
    below = 0
    print(f"text record throughput, target {TARGET:,} moves/s each way on one core")
    for name, game in all_games().items():
        if args.only and name not in args.only:
            continue
        stored, text, moves = corpus(name, game, args.games)

        def decode_only(stored: list[list[bytes]] = stored) -> None:
            for raw_events in stored:
                [decode(raw) for raw in raw_events]

        positions = [folding.fold([decode(raw) for raw in raw]) for raw in stored]

        def fold(stored: list[list[bytes]] = stored) -> None:
            for raw_events in stored:
                folding.fold([decode(raw) for raw in raw_events])

        def export(positions: list[folding.Position] = positions) -> str:
            return record.write([record.record_of(position) for position in positions])

        def import_(text: str = text) -> None:
            for read in record.read(text):
                for event in record.events_of(read):
                    event.SerializeToString()

        assert export() == text, f"{name}: the export is not the record the games make"
        floor = moves / best_cpu(decode_only, args.repeat)
        folded = moves / best_cpu(fold, args.repeat)
        print(f"{name:20s} decode floor {floor:,.0f} moves/s; decode + fold {folded:,.0f} moves/s")
        for label, work in (("export", export), ("import", import_)):
            rate = moves / best_cpu(work, args.repeat)
            verdict = "ok" if rate >= TARGET else "BELOW TARGET"
            below += rate < TARGET
            print(
                f"{name:20s} {label} {args.games:4d} games {moves:7d} moves "
                f"{rate:9,.0f} moves/s  {rate / TARGET:5.2f}x target  "
                f"{rate / floor:5.3f}x the decode floor  {verdict}"
            )
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
