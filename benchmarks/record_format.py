"""Text record throughput of every registered game: export and import, in moves per second.

    .venv/bin/python benchmarks/record_format.py              # 100 games per game type
    .venv/bin/python benchmarks/record_format.py --games 20   # quicker
    .venv/bin/python benchmarks/record_format.py --only splendor

For each game in `replay.registry.all_games()` it plays seeded random games in table mode
(`tests/support/play.random_game`, player counts cycling over the game's range), stores
each as serialized `Event` bytes, and times on one core (the process's CPU time, best of
`--repeat` runs):

- export: write the record of the folded games (`tablelog.replay.record.record_of` and `write`),
  the work ExportRecord adds to the game's head, which the service keeps folded in its
  head cache (the fold itself is benchmarks/fold.py's; its rate is printed for reference);
- import: read the record (`tablelog.replay.record.read`: every move parsed, checked by the rules
  and written canonically, the main line folded once), build the events that store it
  (`events_of`), run the import path's history check on them taking the reader's moves as
  checked (`HistoryCheck` with `checked_moves`, as ImportRecord does: the reader's fold is
  the only one, no position is built per move) and serialize them: the work of
  ImportRecord before the append;
- import, moves checked twice: the same with the history check applying every move again,
  as ImportRecord did before it passed the reader's moves through (for comparison).

Everything runs under the service's garbage-collector setting
(`tablelog.service.api.server.tune_gc`, as benchmarks/record.py does: an import allocates a position
per move, and the default thresholds collect the young generation every 700 allocations);
`--default-gc` keeps Python's defaults. The floor is decoding the same events alone, measured in the
same run. Beside it, the game's own cost per move, also in the same run: its `split`, `parse`,
`format` and `apply` of each move (the least any reader of its notation must do), as the bound on
import for a game whose own rules and notation are slower than the target, and its parse, format and
apply each timed apart (µs per move), to show which part of the game bounds it. The target is 50,000
moves per second (chance moves included) each way; a game below it makes the exit status 1.
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

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay import record  # noqa: E402
from tablelog.replay.core import Game  # noqa: E402
from tablelog.replay.registry import all_games  # noqa: E402
from tablelog.service.api.server import tune_gc  # noqa: E402
from tablelog.service.recording import variations  # noqa: E402
from tablelog.service.recording.verification import HistoryCheck  # noqa: E402
from tablelog.v1 import events_pb2  # noqa: E402
from tests.support.play import created, events_of, random_game  # noqa: E402

TARGET = 50_000


def corpus(
    name: str, game: Game[Any, Any], count: int
) -> tuple[list[list[bytes]], str, int, list[tuple[Any, str]]]:
    """`count` seeded random games of `name`: as serialized events, as one record, their
    move count, and each move's notation with the state it was made in."""
    counts = list(range(game.min_players, game.max_players + 1))
    stored: list[list[bytes]] = []
    records = []
    typed: list[tuple[Any, str]] = []
    moves = 0
    for seed in range(count):
        players = counts[seed % len(counts)]
        played = random_game(name, players, seed=seed)
        events = events_of(created(name, players), played.moves, played.notations)
        stored.append([e.SerializeToString() for e in events])
        records.append(record.record_of(played.position))
        typed += [(applied.before, applied.notation) for applied in played.position.moves()]
        moves += len(played.moves)
    return stored, record.write(records), moves, typed


def import_record(text: str, trust_the_reader: bool) -> None:
    """ImportRecord's work before the append: read, build the events, check the history
    (taking the reader's moves as checked, or applying each again), serialize."""
    for read in record.read(text):
        events = record.events_of(read)
        check = HistoryCheck(variations.variation_viewer)
        checked = {m.applied.revision: m.applied for m in read.moves if m.applied is not None}
        for event in events:
            check.add(event, checked.get(event.revision) if trust_the_reader else None)
        check.finish()
        for event in events:
            event.SerializeToString()


def game_alone(game: Game[Any, Any], typed: list[tuple[Any, str]]) -> None:
    """The game's own split, parse, format and apply of every move, in its state."""
    for state, text in typed:
        for line in game.split(text, state):
            inner = game.parse(line, state)
            game.format(inner, state)
            state = game.apply(state, inner)


def part_costs(game: Game[Any, Any], typed: list[tuple[Any, str]], repeat: int) -> dict[str, float]:
    """The CPU seconds of the game's parse, format and apply of every move of `typed`,
    each timed apart (the bound on import, part by part)."""
    parts: list[tuple[str, Any, Any]] = []  # (a line, the state it is read in, its move)
    for state, text in typed:
        for line in game.split(text, state):
            inner = game.parse(line, state)
            parts.append((line, state, inner))
            state = game.apply(state, inner)

    def parse() -> None:
        for line, state, _ in parts:
            game.parse(line, state)

    def format_() -> None:
        for _, state, inner in parts:
            game.format(inner, state)

    def apply() -> None:
        for _, state, inner in parts:
            game.apply(state, inner)

    return {
        "parse": best_cpu(parse, repeat),
        "format": best_cpu(format_, repeat),
        "apply": best_cpu(apply, repeat),
    }


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
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="keep Python's default collector thresholds rather than the service's",
    )
    args = parser.parse_args(argv)
    if not args.default_gc:
        tune_gc()  # the setting ExportRecord and ImportRecord run under in the service
    decode = events_pb2.Event.FromString
    below = 0
    collector = "Python's default" if args.default_gc else "the service's (tune_gc)"
    print(f"text record throughput, target {TARGET:,} moves/s each way on one core")
    print(f"garbage collector thresholds: {collector}")
    for name, game in all_games().items():
        if args.only and name not in args.only:
            continue
        stored, text, moves, typed = corpus(name, game, args.games)

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
            import_record(text, trust_the_reader=True)

        def import_twice(text: str = text) -> None:
            import_record(text, trust_the_reader=False)

        def rules_alone(game: Game[Any, Any] = game, typed: list[tuple[Any, str]] = typed) -> None:
            game_alone(game, typed)

        assert export() == text, f"{name}: the export is not the record the games make"
        floor = moves / best_cpu(decode_only, args.repeat)
        folded = moves / best_cpu(fold, args.repeat)
        own = moves / best_cpu(rules_alone, args.repeat)
        print(
            f"{name:20s} decode floor {floor:,.0f} moves/s; decode + fold {folded:,.0f} "
            f"moves/s; the game's split + parse + format + apply alone {own:,.0f} moves/s"
        )
        each = ", ".join(
            f"{part} {seconds / moves * 1e6:.1f}"
            for part, seconds in part_costs(game, typed, args.repeat).items()
        )
        print(f"{name:20s} the game alone, µs per move: {each}")
        for label, work in (("export", export), ("import", import_)):
            rate = moves / best_cpu(work, args.repeat)
            verdict = "ok" if rate >= TARGET else "BELOW TARGET"
            below += rate < TARGET
            print(
                f"{name:20s} {label} {args.games:4d} games {moves:7d} moves "
                f"{rate:9,.0f} moves/s  {rate / TARGET:5.2f}x target  "
                f"{rate / floor:5.3f}x the decode floor  {rate / own:5.2f}x the game alone  "
                f"{verdict}"
            )
        twice = moves / best_cpu(import_twice, args.repeat)
        print(f"{name:20s} import, moves checked twice (before) {twice:9,.0f} moves/s")
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
