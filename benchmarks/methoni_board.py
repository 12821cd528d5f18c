"""Castello Methoni on a generated 300-cell board: does enclosure detection stay fast?

    .venv/bin/python benchmarks/methoni_board.py              # 20 games per player count
    .venv/bin/python benchmarks/methoni_board.py --games 5 --rows 10 --cols 30

The board is a 10 x 30 strip of triangles (300 cells, sea all round, six terrains, six
markets), given to the game as a component file exactly as a club's own map would be. It
plays seeded random games (3, 4 and 5 players, table mode) with the wall supply scaled to the
board, then reports two figures on one core:
- fold: decode + fold of the recorded events, in moves per second of CPU time (as
  `benchmarks/fold.py`), and of wall time;
- play: choosing moves with `legal_moves` (which finds every wall that would close a region
  with one bridge search) and applying them, in moves per second.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay.core import TABLE, TERMINAL  # noqa: E402
from tablelog.v1 import castello_methoni_pb2 as pb  # noqa: E402
from tablelog.v1 import events_pb2, game_pb2  # noqa: E402
from tests.support.play import choose, created, events_of  # noqa: E402

TERRAINS = ["mountain", "forest", "field", "pasture", "hill", "marsh"]
NAME = "castello-methoni"


def generated_board(rows: int, cols: int) -> dict[str, Any]:
    """A rows x cols strip of triangles: cell (i, j) points up when i + j is even, shares its
    slanted sides with (i, j +- 1) and its horizontal side with the row above or below."""
    cells = []
    edges: list[dict[str, Any]] = []
    market_at = {
        ((k * 7 + 3) % rows, (k * cols) // 6 + cols // 12): k for k in range(len(TERRAINS))
    }
    for i in range(rows):
        for j in range(cols):
            terrain = (i * 5 + j * 2 + (i * j) % 3) % len(TERRAINS)
            market = (i, j) in market_at
            if market:
                terrain = market_at[(i, j)]
            cells.append({"id": f"r{i}t{j}", "terrain": TERRAINS[terrain], "market": market})
            up = (i + j) % 2 == 0
            if j + 1 < cols:
                edges.append({"cells": [f"r{i}t{j}", f"r{i}t{j + 1}"]})
            for side in (j == 0, j == cols - 1):
                if side:
                    edges.append({"cells": [f"r{i}t{j}", "SEA"]})
            below, above = i + 1, i - 1
            if up and below < rows:
                edges.append({"cells": [f"r{i}t{j}", f"r{below}t{j}"]})
            if (up and below >= rows) or (not up and above < 0):
                edges.append({"cells": [f"r{i}t{j}", "SEA"]})
    walls = len(edges) // 3
    return {
        "terrain_types": TERRAINS,
        "cells": cells,
        "edges": edges,
        "walls_by_player_count": {"3": walls, "4": walls + walls // 10, "5": walls + walls // 5},
    }


def component(data: dict[str, Any]) -> game_pb2.ComponentFile:
    return game_pb2.ComponentFile(
        name="board", media_type="application/json", content=json.dumps(data).encode()
    )


def measure(stored: list[list[bytes]], repeat: int) -> tuple[float, float]:
    """The best CPU time (this process: its time on one core even on a shared machine) and
    the best wall time of decoding and folding every stored game."""
    decode = events_pb2.Event.FromString
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        for game_events in stored:
            folding.fold([decode(raw) for raw in game_events])
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per player count")
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--cols", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    board = component(generated_board(args.rows, args.cols))
    stored: list[list[bytes]] = []
    moves = 0
    play_seconds = 0.0
    for players in (3, 4, 5):
        for seed in range(args.games):
            options = pb.CastelloMethoniOptions(first_player=seed % players)
            body = created(NAME, players, options, TABLE, [board])
            position = folding.start(body)
            game = position.game
            rng = random.Random(seed)
            recorded: list[game_pb2.Move] = []
            began = time.process_time()
            state = position.state
            while game.to_move(state) != TERMINAL:
                move = choose(game, state, rng)
                state = game.apply(state, move)
                recorded.append(position.table.wrap(move))
            play_seconds += time.process_time() - began
            moves += len(recorded)
            stored.append([e.SerializeToString() for e in events_of(body, recorded)])
    cells = args.rows * args.cols
    cpu, wall = measure(stored, args.repeat)
    print(f"castello-methoni on a generated {cells}-cell board, {len(stored)} games, {moves} moves")
    print(
        f"  fold (decode + fold)        {moves / cpu:10,.0f} moves/s CPU, {moves / wall:,.0f} wall"
    )
    print(f"  play (legal_moves + apply)  {moves / play_seconds:10,.0f} moves/s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
