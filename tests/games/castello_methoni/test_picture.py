"""The picture of a Castello Methoni view: one drawn component per thing the view holds
(cells, walls, markets, houses, villas, towers, seats, cards), hidden hands and missions
face down, the last move framed, and a board file without coordinates drawn from a layout
derived from its graph (RULES.md, "Board coordinates")."""

from __future__ import annotations

import json
import math
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tablelog.replay import fold
from tablelog.replay.core import DEALT, FULL, InvalidSetup
from tablelog.replay.games.castello_methoni import GAME
from tablelog.replay.games.castello_methoni import picture as drawing
from tablelog.replay.games.castello_methoni.components import derive_layout
from tablelog.replay.games.castello_methoni.rules import State
from tablelog.v1 import castello_methoni_pb2 as pb
from tests.games.castello_methoni.boards import board_data, grid_data, load, moves, start
from tests.support import play

SVG = "{http://www.w3.org/2000/svg}"


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _with_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def _title(element: ET.Element) -> str:
    title = element.find(f"{SVG}title")
    assert title is not None, f"{element.get('class')} has no title"
    assert title.text, f"{element.get('class')} has an empty title"
    return title.text


@pytest.fixture(scope="module")
def dealt_game() -> play.PlayedGame:
    return play.random_game("castello-methoni", 4, seed=7, mode=DEALT, keep_states=True)


def test_every_component_of_the_view_is_drawn_once(dealt_game: play.PlayedGame) -> None:
    for state in dealt_game.states[:: max(1, len(dealt_game.states) // 6)]:
        view = GAME.view(state, FULL)
        root = _root(GAME.picture(view))
        cells = _with_class(root, "cell")
        assert len(cells) == len(view.cells)
        assert {_title(c).split(":")[0] for c in cells} == {c.id for c in view.cells}
        assert all(len(c.findall(f"{SVG}polygon")) == 1 for c in cells), "cells are outlines"
        assert len(_with_class(root, "wall")) == len(view.walls)
        assert len(_with_class(root, "market")) == sum(c.market for c in view.cells)
        houses = sum(sum(c.houses) for c in view.cells) + sum(sum(c.houses) for c in view.castles)
        assert len(_with_class(root, "house")) == houses
        assert len(_with_class(root, "villa")) == sum(sum(c.villas) for c in view.castles)
        assert len(_with_class(root, "tower")) == len(view.castles)
        assert len(_with_class(root, "castle")) == len(view.castles)
        seats = _with_class(root, "seat")
        assert [_title(s).split(" (")[0] for s in seats] == [s.name for s in view.seats]
        for seat, drawn in zip(view.seats, seats, strict=True):
            assert f"{seat.score} pts" in {t.text for t in drawn.iter(f"{SVG}text")}
            hand = _with_class(drawn, "hand")[0]
            assert len(_with_class(hand, "card")) == len(seat.hand)
        for element in (*cells, *_with_class(root, "wall"), *_with_class(root, "castle")):
            _title(element)


def test_hands_and_missions_of_other_seats_are_face_down(dealt_game: play.PlayedGame) -> None:
    state = dealt_game.states[len(dealt_game.states) // 2]
    view = GAME.view(state, 0)
    assert GAME.hides_from(state, 0)
    svg = GAME.picture(view)
    seats = _with_class(_root(svg), "seat")
    own = view.seats[0]
    assert len(_with_class(_with_class(seats[0], "hand")[0], "card")) == len(own.hand)
    assert _with_class(seats[0], "mission"), "the viewer's own mission is face up"
    full = GAME.view(state, FULL)
    for seat, drawn in list(zip(view.seats, seats, strict=True))[1:]:
        hand = _with_class(drawn, "hand")[0]
        assert not _with_class(hand, "card")
        assert len(_with_class(hand, "face-down")) == seat.hand_size > 0
        assert not _with_class(drawn, "mission")
        assert any("mission (secret)" in _title(f) for f in _with_class(drawn, "face-down"))
    secret = {s.mission for s in full.seats[1:]} - {own.mission}
    assert not any(f"mission {m}" in svg for m in secret)


def _frame_box(root: ET.Element) -> tuple[float, float, float, float]:
    (frame,) = _with_class(root, "last-move")
    x, y = float(frame.get("x", "0")), float(frame.get("y", "0"))
    return x, y, x + float(frame.get("width", "0")), y + float(frame.get("height", "0"))


def _inside(box: tuple[float, float, float, float], x: float, y: float) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def test_the_last_move_frames_the_wall_it_built(dealt_game: play.PlayedGame) -> None:
    table = dealt_game.position.table
    builds = [
        (index, inner)
        for index, move in enumerate(dealt_game.moves)
        if isinstance(inner := table.unwrap(move), pb.CastelloMethoniMove)
        and inner.WhichOneof("action") == "build"
    ]
    assert builds
    for index, move in builds[:: max(1, len(builds) // 5)]:
        view = GAME.view(dealt_game.states[index + 1], FULL)
        root = _root(GAME.picture(view, last_move=move))
        box = _frame_box(root)
        other = move.build.other.lower()
        wanted = (
            f"a wall between {move.build.cell.lower()} and {'the sea' if other == 'sea' else other}"
        )
        walls = [w for w in _with_class(root, "wall") if _title(w) == wanted]
        assert walls, wanted
        wall = walls[-1]
        for end in (("x1", "y1"), ("x2", "y2")):
            assert _inside(box, float(wall.get(end[0], "0")), float(wall.get(end[1], "0")))
    assert "last-move" not in GAME.picture(GAME.view(dealt_game.states[-1], FULL))


def test_a_trade_frames_the_bank() -> None:
    position = start(grid_data(2, 2), players=("Ann", "Bob", "Cid"))
    state: State = position.state
    view = GAME.view(state, FULL)
    move = pb.CastelloMethoniMove(trade=pb.CastelloMethoniTrade(card="mountain"))
    root = _root(GAME.picture(view, last_move=move))
    (bank,) = _with_class(root, "bank")
    coin = bank.find(f"{SVG}circle")
    assert coin is not None
    assert _inside(_frame_box(root), float(coin.get("cx", "0")), float(coin.get("cy", "0")))


def test_a_board_file_without_coordinates_is_drawn_from_its_graph() -> None:
    position = start(grid_data(3, 4, holes=["r2c2"]), players=("Ann", "Bob", "Cid"))
    position = moves(position, "build mountain r1c1|r1c2 own r1c1 other bob")
    view = GAME.view(position.state, FULL)
    assert view.layout.derived
    svg = GAME.picture(view)
    root = _root(svg)
    cells = _with_class(root, "cell")
    assert len(cells) == len(view.cells) == 11
    assert all(c.find(f"{SVG}circle") is not None for c in cells), "cells are nodes"
    edges = {tuple(sorted((p.cell, n))) for p in view.layout.cells for n in p.neighbours}
    assert len(_with_class(root, "edge")) == len(edges)
    assert len(_with_class(root, "sea-edge")) == sum(c.sea_edges for c in view.cells)
    assert len(_with_class(root, "wall")) == 1
    assert len(_with_class(root, "house")) == 2
    assert "derived from the board's graph" in svg


def test_the_derived_layout_keeps_neighbours_near_and_cells_apart() -> None:
    board = load(grid_data(4, 5))
    assert board.layout_derived
    assert board.outlines == ((),) * 20
    centres = board.centres
    assert centres == derive_layout(board.neighbours), "deterministic"
    assert centres[0][0] < centres[-1][0], "r1c1 west of r4c5, as the file reads"
    assert centres[0][1] > centres[-1][1], "r1c1 north of r4c5"
    for a, b in board.edges:
        assert 0.6 <= math.dist(centres[a], centres[b]) <= 1.4
    closest = min(math.dist(centres[a], centres[b]) for a in range(20) for b in range(a + 1, 20))
    assert closest > 0.5


def test_separate_groups_of_cells_stand_side_by_side() -> None:
    cells: dict[str, str | tuple[str, bool]] = {
        "a": "mountain",
        "b": "forest",
        "c": "field",
        "d": "hill",
        "e": "marsh",
    }
    data = board_data(
        cells,
        [("a", "b"), ("b", "c"), ("d", "e"), *((x, "SEA") for x in "abcde")],
    )
    centres = load(data).centres
    first, second = centres[:3], centres[3:]
    assert max(x for x, _ in first) + 1 < min(x for x, _ in second)


def _with_corners(data: dict[str, Any]) -> dict[str, Any]:
    for index, cell in enumerate(data["cells"]):
        cell["corners"] = [[index, 0], [index + 1, 0], [index + 1, 1], [index, 1]]
    return data


def test_board_coordinates_are_read_and_checked() -> None:
    cells: dict[str, str | tuple[str, bool]] = {"a": "mountain", "b": "forest", "c": "field"}
    edges = [("a", "b"), ("b", "c"), ("a", "SEA"), ("c", "SEA")]
    board = load(_with_corners(board_data(cells, edges)))
    assert not board.layout_derived
    assert board.outlines[1] == ((1.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 1.0))
    assert board.centres[1] == (1.5, 0.5)
    centred = board_data(cells, edges)
    for index, cell in enumerate(centred["cells"]):
        cell["centroid"] = [index * 2, 1]
    assert load(centred).centres == ((0.0, 1.0), (2.0, 1.0), (4.0, 1.0))
    partial = board_data(cells, edges)
    partial["cells"][1]["centroid"] = [1, 1]
    bad = [partial]
    for corners in ([[0, 0], [1, 0]], [[0, 0], [1, 0], [1, "x"]], [[0, 0], [1, 0], [2e7, 1]]):
        broken = _with_corners(board_data(cells, edges))
        broken["cells"][0]["corners"] = corners
        bad.append(broken)
    for data in bad:
        with pytest.raises(InvalidSetup) as refused:
            load(json.loads(json.dumps(data)))
        assert refused.value.code == "BOARD_BAD_COORDINATES"


def test_walls_stand_on_the_side_two_cells_share() -> None:
    cells: dict[str, str | tuple[str, bool]] = {"a": "mountain", "b": "forest", "c": "field"}
    edges = [("a", "b"), ("b", "c"), ("a", "SEA"), ("c", "SEA")]
    position = start(_with_corners(board_data(cells, edges)), players=("Ann", "Bob", "Cid"))
    position = moves(position, "build forest a|b own a other bob")
    view = GAME.view(position.state, FULL)
    root = _root(GAME.picture(view))
    (wall,) = _with_class(root, "wall")
    a, b = (
        (float(wall.get("x1", "0")), float(wall.get("y1", "0"))),
        (float(wall.get("x2", "0")), float(wall.get("y2", "0"))),
    )
    assert a[0] == b[0], "the side x = 1 shared by a and b is vertical"
    polygons = [c.find(f"{SVG}polygon") for c in _with_class(root, "cell")]
    corners = [
        {tuple(float(v) for v in pt.split(",")) for pt in (p.get("points") or "").split()}
        for p in polygons
        if p is not None
    ]
    shared = corners[0] & corners[1]
    assert a in shared
    assert b in shared


def test_remembered_parts_give_the_same_picture(dealt_game: play.PlayedGame) -> None:
    views = [GAME.view(s, 1) for s in dealt_game.states[::7]]
    first = [GAME.picture(v) for v in views]
    assert not any("<fragment" in svg for svg in first), "every remembered part is put in"
    drawing._FRAGMENTS.clear()
    drawing._LAYOUTS.clear()
    assert [GAME.picture(v) for v in reversed(views)] == first[::-1]


def test_remembered_parts_stay_within_their_bytes(
    dealt_game: play.PlayedGame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts a picture worker remembers are bounded in bytes (issue 29: a worker that
    kept 4,096 of them grew by some 75 MB over a long night), and a picture drawn with
    parts let go is the picture drawn with them all."""
    views = [GAME.view(s, 1) for s in dealt_game.states[::3]]
    small = drawing._Remembered(64 << 10)
    monkeypatch.setattr(drawing, "_FRAGMENTS", small)
    pictures = [GAME.picture(v) for v in views]
    assert len(small) > 1
    assert 48 << 10 < small.bytes <= 64 << 10
    monkeypatch.setattr(drawing, "_FRAGMENTS", drawing._Remembered(0))
    assert [GAME.picture(v) for v in views] == pictures


def test_the_least_recently_used_part_goes_first() -> None:
    parts = drawing._Remembered(3 * sys.getsizeof("x" * 100))
    for key in "abc":
        parts.put(key, key * 100)
    assert parts.get("a") == "a" * 100
    parts.put("d", "d" * 100)
    assert [parts.get(key) is not None for key in "abcd"] == [True, False, True, True]
    assert parts.bytes == 3 * sys.getsizeof("x" * 100)


def test_each_board_gets_its_own_layout_and_a_view_can_change_its_copy() -> None:
    """A board's layout is built once and copied into each view (views.py `_layout`): a
    view of another board has that board's layout, and changing one view's layout (a
    caller's copy) changes no other view's."""
    wide = start(grid_data(3, 4), players=("Ann", "Bob", "Cid"))
    tall = start(grid_data(4, 3), players=("Ann", "Bob", "Cid"))
    first = GAME.view(wide.state, FULL)
    assert [p.cell for p in first.layout.cells] == list(cell_names(wide))
    assert [p.cell for p in GAME.view(tall.state, FULL).layout.cells] == list(cell_names(tall))
    first.layout.cells[0].cell = "changed"
    del first.layout.cells[1:]
    again = GAME.view(wide.state, FULL)
    assert [p.cell for p in again.layout.cells] == list(cell_names(wide))


def cell_names(position: fold.Position) -> tuple[str, ...]:
    state: State = position.state
    return state.board.names
