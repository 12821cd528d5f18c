"""Hand-made boards and positions for the scenario tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tablelog.replay import fold
from tablelog.replay.core import TABLE
from tablelog.replay.games.castello_methoni.components import Board, parse_board
from tablelog.replay.games.castello_methoni.rules import State, replace, resolve_edge
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2
from tests.support import play

TERRAINS = ["mountain", "forest", "field", "pasture", "hill", "marsh"]
GAME = "castello-methoni"


def board_data(
    cells: dict[str, str | tuple[str, bool]], edges: Sequence[tuple[str, str]], **extra: Any
) -> dict[str, Any]:
    """A board file: cells as {id: terrain} or {id: (terrain, market)}; edges as pairs, a
    sea edge as (cell, "SEA")."""
    cell_list = []
    for cell_id, spec in cells.items():
        terrain, market = (spec, False) if isinstance(spec, str) else spec
        cell_list.append({"id": cell_id, "terrain": terrain, "market": market})
    data: dict[str, Any] = {
        "terrain_types": list(TERRAINS),
        "cells": cell_list,
        "edges": [{"cells": [a, b]} for a, b in edges],
    }
    data.update(extra)
    return data


def component(data: dict[str, Any], approximate: bool = False) -> game_pb2.ComponentFile:
    return game_pb2.ComponentFile(
        name="board",
        media_type="application/json",
        content=json.dumps(data).encode(),
        approximate=approximate,
    )


def load(data: dict[str, Any]) -> Board:
    return parse_board(data, "test", False, "")


def grid_data(
    rows: int, cols: int, holes: Sequence[str] = (), terrain: str = "mountain"
) -> dict[str, Any]:
    """Square cells r<i>c<j> (1-based); the outside and every hole are sea. Squares that
    touch only at a corner share no edge."""
    cells: dict[str, str | tuple[str, bool]] = {}
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            if f"r{i}c{j}" not in holes:
                cells[f"r{i}c{j}"] = terrain
    edges: list[tuple[str, str]] = []
    for name in cells:
        i, j = (int(x) for x in name[1:].split("c"))
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            other = f"r{i + di}c{j + dj}"
            if other in cells:
                if (di, dj) in ((1, 0), (0, 1)):
                    edges.append((name, other))
            else:
                edges.append((name, "SEA"))
    return board_data(cells, edges)


def start(
    data: dict[str, Any],
    players: Sequence[str] = ("Jerry", "Andrew", "Evan"),
    first: int | None = 0,
    mode: game_pb2.Mode.ValueType = TABLE,
    options: pb.CastelloMethoniOptions | None = None,
) -> fold.Position:
    opts = options or pb.CastelloMethoniOptions()
    if first is not None:
        opts.first_player = first
    return play.new_position(GAME, list(players), opts, mode, [component(data)])


def with_walls(state: State, walls: Sequence[str]) -> State:
    """The state with walls put on the named edges ("a|b", "a|sea"), no houses, no checks."""
    mask, sea = state.walls, list(state.sea_walls)
    supply = state.wall_supply
    for text in walls:
        left, right = text.split("|")
        a, b, edge = resolve_edge(state, left, right)
        if b < 0:
            sea[a] += 1
        else:
            mask |= 1 << edge
        supply -= 1
    return replace(state, walls=mask, sea_walls=tuple(sea), wall_supply=supply)


def moves(position: fold.Position, *lines: str) -> fold.Position:
    return play.play_all(position, list(lines))
