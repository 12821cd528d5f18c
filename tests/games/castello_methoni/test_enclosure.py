"""Enclosure detection on crafted shapes (RULES.md §3.1, §3.3, §5.1.c).

A region is enclosed only when every edge on its border, sea edges included, has a wall.
Because the sea is one place, one wall can split a region in two but at least one part keeps
the opening, so one wall never encloses two regions: the test below shows the part with the
opening stays open while the other closes.
"""

from __future__ import annotations

import pytest

from tablelog.replay.core import IllegalMove, NotationError
from tablelog.replay.games.castello_methoni.rules import (
    PLAY,
    State,
    closing_edges,
    enclosed_region,
    merge_targets,
    replace,
)
from tablelog.v1 import castello_methoni_pb2 as pb
from tests.games.castello_methoni.boards import grid_data, moves, start, with_walls


def region(state: State, name: str) -> set[str] | None:
    board = state.board
    found = enclosed_region(
        board, state.walls, state.sea_walls, state.cell_castle, board.lookup[name]
    )
    return None if found is None else {board.names[c] for c in found}


def closing(state: State) -> dict[str, set[str]]:
    board = state.board
    named = {}
    for key, cells in closing_edges(state).items():
        if key >= 0:
            a, b = board.edges[key]
            label = f"{board.names[a]}|{board.names[b]}"
        else:
            label = f"{board.names[-1 - key]}|sea"
        named[label] = {board.names[c] for c in cells}
    return named


def test_a_coastal_cell_is_open_until_its_sea_edges_are_walled() -> None:
    state = start(grid_data(1, 2)).state  # r1c1 (3 sea edges) | r1c2 (3 sea edges)
    state = with_walls(state, ["r1c1|r1c2", "r1c1|sea", "r1c1|sea"])
    assert region(state, "r1c1") is None
    assert closing(state) == {"r1c1|sea": {"r1c1"}}
    state = with_walls(state, ["r1c1|sea"])
    assert region(state, "r1c1") == {"r1c1"}
    assert region(state, "r1c2") is None


def test_a_ring_around_a_hole_of_sea_is_enclosed_only_when_the_hole_is_walled_too() -> None:
    data = grid_data(3, 3, holes=["r2c2"])  # the centre is sea: its 4 edges are sea edges
    state = start(data).state
    outer = [f"r1c{j}|sea" for j in (1, 2, 3)] + [f"r3c{j}|sea" for j in (1, 2, 3)]
    outer += [f"r{i}c1|sea" for i in (1, 2, 3)] + [f"r{i}c3|sea" for i in (1, 2, 3)]
    state = with_walls(state, outer)
    assert region(state, "r1c1") is None  # the hole is still an opening
    inner = ["r1c2|sea", "r2c1|sea", "r2c3|sea"]
    state = with_walls(state, inner)
    assert closing(state) == {
        "r3c2|sea": {f"r{i}c{j}" for i in (1, 2, 3) for j in (1, 2, 3) if (i, j) != (2, 2)}
    }
    state = with_walls(state, ["r3c2|sea"])
    assert region(state, "r2c1") is not None
    assert len(region(state, "r2c1") or ()) == 8


def test_a_region_around_an_island_castle_closes_with_its_outer_border() -> None:
    position = start(grid_data(3, 3))
    state: State = position.state
    centre = ["r1c2|r2c2", "r2c1|r2c2", "r2c2|r2c3", "r2c2|r3c2"]
    state = with_walls(state, centre)
    assert region(state, "r2c2") == {"r2c2"}  # walled all round: the centre alone
    assert region(state, "r1c1") is None


def test_one_wall_between_two_pockets_encloses_only_the_pocket_without_an_opening() -> None:
    state = start(grid_data(1, 3)).state  # r1c1 | r1c2 | r1c3, sea all round
    state = with_walls(state, ["r1c1|sea"] * 3 + ["r1c2|sea"] * 2)
    # Walling r1c2|r1c3 splits {r1c1, r1c2} (no opening left) from r1c3 (sea still open).
    assert closing(state) == {"r1c2|r1c3": {"r1c1", "r1c2"}, "r1c1|r1c2": {"r1c1"}}
    state = with_walls(state, ["r1c2|r1c3"])
    assert region(state, "r1c1") == {"r1c1", "r1c2"}
    assert region(state, "r1c3") is None


def test_cells_touching_only_at_a_corner_are_not_adjacent() -> None:
    position = start(grid_data(2, 2))
    corner = pb.CastelloMethoniBuild(card="mountain", cell="r1c1", other="r2c2")
    with pytest.raises(IllegalMove) as refused:
        position.game.apply(position.state, pb.CastelloMethoniMove(build=corner))
    assert refused.value.code == "NOT_AN_EDGE"
    with pytest.raises(NotationError, match="corner"):
        moves(position, "build mountain r1c1|r2c2 own r1c1 left r2c2")
    # Jerry walls r1c1 and r2c2 into two castles; they touch at a corner only: no merge.
    lines = [
        "build mountain r1c1|sea own r1c1",
        "build mountain r1c1|sea own r1c1",  # Jerry
        "build mountain r2c2|sea own r2c2",
        "end",  # Andrew
        "build mountain r2c2|sea own r2c2",
        "end",  # Evan
        "build mountain r1c1|r1c2 own r1c2 left r1c1",  # Jerry
        "build mountain r1c1|r2c1 own r2c1 left r1c1",  # encloses r1c1
        "build mountain r1c2|r2c2 own r1c2 left r2c2",
        "end",  # Andrew
        "build mountain r2c1|r2c2 own r2c1 left r2c2",
        "end",  # Evan encloses r2c2
    ]
    state: State = moves(position, *lines).state
    first, second = state.cell_castle[0], state.cell_castle[3]
    assert first
    assert second
    assert first != second
    assert merge_targets(state, first) == []
    assert merge_targets(state, second) == []
    assert region(state, "r1c2") is None
    assert region(state, "r2c1") is None
    assert state.phase == PLAY


def test_closing_edges_agree_with_a_search_after_each_wall() -> None:
    """The bridge search used for legal moves agrees with the direct search used by apply."""
    state = start(grid_data(4, 4, holes=["r2c3"])).state
    walls = [
        "r1c1|sea",
        "r1c1|r1c2",
        "r2c2|r3c2",
        "r2c1|r2c2",
        "r1c2|r2c2",
        "r4c4|sea",
        "r2c2|sea",
        "r3c3|r3c4",
        "r1c1|sea",
        "r1c2|sea",
        "r3c3|sea",
    ]
    for wall in walls:
        state = with_walls(state, [wall])
        expected: dict[str, set[str]] = {}
        board = state.board
        for index, (a, b) in enumerate(board.edges):
            if (state.walls >> index) & 1:
                continue
            after = replace(state, walls=state.walls | 1 << index)
            found = region(after, board.names[a]) or region(after, board.names[b])
            if found:
                expected[f"{board.names[a]}|{board.names[b]}"] = found
        for cell, count in enumerate(board.sea_edges):
            if count and state.sea_walls[cell] < count:
                sea = list(state.sea_walls)
                sea[cell] += 1
                found = region(replace(state, sea_walls=tuple(sea)), board.names[cell])
                if found:
                    expected[f"{board.names[cell]}|sea"] = found
        assert closing(state) == expected, wall
