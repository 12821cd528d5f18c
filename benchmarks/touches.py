"""Taps per move when recording by touch (issue 25), per game, and what working them out costs.

    .venv/bin/python benchmarks/touches.py              # 6 games per game type
    .venv/bin/python benchmarks/touches.py --games 20 --only castello-methoni

For each registered game, seeded random games are played (tests/support/play.random_game,
player counts cycling over the game's range, table and dealt modes alternating); at every
position the legal moves' touches are worked out as ListLegalMoves does
(`tablelog.replay.touch.legal_touches`), and the move actually played is counted: how many taps on
the picture select it (the recording tap that follows is one more for every move, and not
counted). Printed per game: the median, mean and worst taps per move, per kind of move, and
the share of moves of one tap; the target is a median of at most 3 for every game, and the
script exits with status 1 when a game misses it.

Cost: `legal_touches` per position (CPU time, p50 and p95) beside `legal_moves` for the same
positions, the floor measured in the same run (the touches cannot be had without the list);
and the words of every legal move (`Game.words`, for the seat to move, or the full view for
the table), which ListLegalMoves also says for each move of a page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay.core import DEALT, FULL, TABLE  # noqa: E402  (the path is set up just above)
from tablelog.replay.registry import all_games  # noqa: E402
from tablelog.replay.touch import legal_touches  # noqa: E402
from tests.support.play import random_game  # noqa: E402

TARGET_MEDIAN = 3


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(name: str, games: int) -> dict[str, Any]:
    game = all_games()[name]
    taps: list[int] = []
    by_kind: dict[str, list[int]] = defaultdict(list)
    listing: list[float] = []
    touching: list[float] = []
    saying: list[float] = []
    sizes = range(game.min_players, game.max_players + 1)
    for index in range(games):
        mode = DEALT if index % 2 and DEALT in game.modes else TABLE
        played = random_game(
            name, sizes[index % len(sizes)], seed=index, mode=mode, keep_states=True
        )
        for state, wrapped in zip(played.states, played.moves, strict=False):
            move = getattr(wrapped, game.oneof_field)
            started = time.process_time()
            moves = game.legal_moves(state)
            listed = time.process_time()
            touches = legal_touches(game, state, moves)
            done = time.process_time()
            who = game.to_move(state)
            for legal in moves:
                game.words(legal, state, who if who >= 0 else FULL)
            said = time.process_time()
            listing.append(listed - started)
            touching.append(done - listed)
            saying.append(said - done)
            count = len(touches[list(moves).index(move)].ids)
            taps.append(count)
            by_kind[move.WhichOneof("action") or "?"].append(count)
    return {
        "name": name,
        "moves": len(taps),
        "median": statistics.median(taps),
        "mean": statistics.fmean(taps),
        "worst": max(taps),
        "one_tap": sum(1 for t in taps if t == 1) / len(taps),
        "kinds": {
            kind: (statistics.median(counts), max(counts), len(counts))
            for kind, counts in sorted(by_kind.items())
        },
        "list_p50": percentile(listing, 0.5) * 1000,
        "touch_p50": percentile(touching, 0.5) * 1000,
        "touch_p95": percentile(touching, 0.95) * 1000,
        "words_p50": percentile(saying, 0.5) * 1000,
        "words_p95": percentile(saying, 0.95) * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="random games per game type")
    parser.add_argument("--only", help="one game's registry name")
    args = parser.parse_args()
    names = [args.only] if args.only else sorted(all_games())
    missed = []
    print(
        "| game | moves | median taps | mean | worst | one tap | legal_moves p50 ms "
        "| touches p50 ms | touches p95 ms | words p50 ms | words p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    results = [measure(name, args.games) for name in names]
    for r in results:
        print(
            f"| {r['name']} | {r['moves']:,} | {r['median']:g} | {r['mean']:.2f} | {r['worst']} "
            f"| {r['one_tap']:.0%} | {r['list_p50']:.3f} | {r['touch_p50']:.3f} "
            f"| {r['touch_p95']:.3f} | {r['words_p50']:.3f} | {r['words_p95']:.3f} |"
        )
        if r["median"] > TARGET_MEDIAN:
            missed.append(r["name"])
    print()
    print("| game | kind of move | median taps | worst | moves |")
    print("|---|---|---|---|---|")
    for r in results:
        for kind, (median, worst, count) in r["kinds"].items():
            print(f"| {r['name']} | {kind} | {median:g} | {worst} | {count:,} |")
    if missed:
        print(f"median over {TARGET_MEDIAN} taps: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
