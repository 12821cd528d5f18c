"""Picture time per state of every game that draws pictures: p50 against a 2 ms target.

    .venv/bin/python benchmarks/pictures.py                # 6 games per game type
    .venv/bin/python benchmarks/pictures.py --games 2      # quicker
    .venv/bin/python benchmarks/pictures.py --only splendor
    .venv/bin/python benchmarks/pictures.py --layout phone   # the phone layout (issue 25)

For each game in `replay.registry.all_games()` with a `picture` (new games are picked up
automatically) it plays seeded random games through `tests/support/play.random_game`
(player counts cycling over the game's range, table and dealt modes alternating when the
game has both), takes every state's view (the full view and seat 0's, alternately) with the
move that led to it, and times `Game.picture` of each, best of `--repeat` calls, in CPU time
of this process (so other load on a shared machine does not count). It prints the p50 and
p95 per state; the target (issue 13) is a p50 of at most 2 ms, and a game above it makes the
exit status 1. The floor, measured in the same run on the same views, is `Game.render` (the
text rendering of the same view): picture/floor says what drawing costs over writing.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay.core import DEALT, FULL, TABLE, Game  # noqa: E402  (the path is set up just above)
from tablelog.replay.picture import LAYOUTS, WIDE  # noqa: E402
from tablelog.replay.registry import all_games  # noqa: E402
from tests.support.play import random_game  # noqa: E402

TARGET_MS = 2.0


def views(name: str, game: Game[Any, Any], count: int) -> list[tuple[Any, Any]]:
    """(view, last move) of every state of `count` seeded random games of `name`."""
    counts = list(range(game.min_players, game.max_players + 1))
    modes = [m for m in (TABLE, DEALT) if m in game.modes]
    drawn: list[tuple[Any, Any]] = []
    for seed in range(count):
        players = counts[seed % len(counts)]
        mode = modes[(seed // len(counts)) % len(modes)]
        played = random_game(name, players, seed=seed, mode=mode, keep_states=True)
        table = played.position.table
        for index, state in enumerate(played.states):
            last = table.unwrap(played.moves[index - 1]) if index else None
            drawn.append((game.view(state, FULL if index % 2 else 0), last))
    return drawn


def per_state(
    work: Callable[[Any, Any], object], drawn: list[tuple[Any, Any]], repeat: int
) -> list[float]:
    """The best CPU time, in milliseconds, of `work(view, last)` for each view."""
    clock = time.process_time_ns
    times = []
    gc.collect()
    gc.disable()  # a collection landing in one call would be charged to that state
    try:
        for view, last in drawn:
            best = float("inf")
            for _ in range(repeat):
                start = clock()
                work(view, last)
                best = min(best, clock() - start)
            times.append(best / 1e6)
    finally:
        gc.enable()
    return times


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="random games per game type")
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per state; the best")
    parser.add_argument("--only", action="append", help="benchmark only these games")
    parser.add_argument("--layout", choices=LAYOUTS, default=WIDE, help="the pictures' layout")
    args = parser.parse_args(argv)
    above = 0
    print(f"picture time per state (CPU), {args.layout} layout, target p50 <= {TARGET_MS} ms")
    for name, game in all_games().items():
        if args.only and name not in args.only:
            continue
        if not hasattr(game, "picture"):  # a branch where this game has no picture.py yet
            print(f"{name:24s} draws no picture")
            continue
        drawn = views(name, game, args.games)

        def picture(view: Any, last: Any, game: Game[Any, Any] = game) -> object:
            return game.picture(view, last_move=last, layout=args.layout)

        def render(view: Any, _last: Any, game: Game[Any, Any] = game) -> object:
            return game.render(view)

        pictures = per_state(picture, drawn, args.repeat)
        floor = per_state(render, drawn, args.repeat)
        p50 = statistics.median(pictures)
        verdict = "ok" if p50 <= TARGET_MS else "ABOVE TARGET"
        above += p50 > TARGET_MS
        floor_p50 = statistics.median(floor)
        print(
            f"{name:24s} {len(drawn):6d} states  p50 {p50:6.3f} ms  p95 {p95(pictures):6.3f} ms  "
            f"{p50 / TARGET_MS:5.2f}x target  {verdict}"
        )
        print(
            f"{'':24s} text rendering floor p50 {floor_p50:6.3f} ms; "
            f"the picture costs {p50 / floor_p50:.1f}x the floor"
        )
    return 1 if above else 0


if __name__ == "__main__":
    raise SystemExit(main())
