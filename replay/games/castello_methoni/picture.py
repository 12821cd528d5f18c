"""The picture of a Castello Methoni view (a self-contained SVG, drawn with
`tablelog.replay.picture`): the board graph as the board file places it (cells by terrain, markets
with their ducats, walls, houses, castles with their tower, houses and villas), and beside it the
bank, the wall supply, the piles and every player's supply, hand, mission and score.

A board file with corners draws each cell as its polygon and each wall on the side the two
cells share; a file with centres only, or a layout derived from the graph (RULES.md, "Board
coordinates"), draws each cell as a round node, its edges as lines and its walls across them.
Drawn from the view alone: a hand or mission the viewer may not see is drawn face down."""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tablelog.replay.core import counted
from tablelog.replay.picture import (
    INK,
    MUTED,
    PAPER,
    PHONE,
    PHONE_WIDTH,
    TOUCH_UNITS,
    Picture,
    check_layout,
    fitted,
)
from tablelog.v1 import castello_methoni_pb2 as pb

WIDTH = 900
HEADER = 58
BOARD_SIZE = 560
"""The square the board is fitted into (the panel of players stands to its right)."""
MARGIN = 12
PANEL_X = MARGIN + BOARD_SIZE + 14
PANEL_WIDTH = WIDTH - PANEL_X - MARGIN
SEAT_HEIGHT = 98
CARD_WIDTH, CARD_HEIGHT = 24, 34
MISSION_X = PANEL_X + PANEL_WIDTH - 8 - 70
SEA_COLOUR = "#cfe2ec"
COAST = "#7fa7bd"
WALL = "#3a2e25"
COIN = "#e2b93b"

TERRAIN_COLOURS = {
    "mountain": "#9b9189",
    "forest": "#3e7a3a",
    "field": "#e6c85e",
    "pasture": "#a5d67e",
    "hill": "#c98a4c",
    "marsh": "#5f9c95",
}
"""The shipped board's terrains; a board file's other terrain names take OTHER_TERRAINS in
the order the file lists them."""
OTHER_TERRAINS = ("#b7a3cf", "#d99aa5", "#8fb3d9", "#d4d08a", "#a0a0a0", "#7fc4b8")
SEAT_COLOURS = (
    ("red", "#c23b22"),
    ("blue", "#2f5fb3"),
    ("black", "#2b2b2b"),
    ("white", "#f4f4f0"),
    ("purple", "#7b3f98"),
)

Point = tuple[float, float]


def picture(
    view: pb.CastelloMethoniView,
    last_move: pb.CastelloMethoniMove | None = None,
    approximate: str = "",
    layout: str = "wide",
) -> str:
    """The SVG of `view`; `last_move` highlighted (its wall, merged castle, the pile or bank
    it used, or the seat it concerned), `approximate` marked along the bottom edge; `layout`
    "phone" in one column (`phone_picture`)."""
    check_layout(layout)
    if layout == PHONE:
        return phone_picture(view, last_move, approximate)
    seats_height = HEADER + 96 + SEAT_HEIGHT * len(view.seats) + MARGIN
    height: float = max(HEADER + BOARD_SIZE + 34, seats_height)
    controls_top = height
    height += _controls_height(view)
    names = [s.name for s in view.seats]
    p = Picture(WIDTH, height, _title(view, names))
    drawn = _Drawn()
    fragments = _Fragments(p)
    _header(p, view, names, drawn)
    _board(p, view, names, drawn, fragments)
    _supplies(p, view, drawn)
    for seat in range(len(view.seats)):
        _seat(p, view, seat, HEADER + 96 + SEAT_HEIGHT * seat, drawn, fragments)
    _controls(p, view, controls_top)
    notes = _approximate_notes(view, approximate)
    if notes:
        p.approximate_note("; ".join(notes))
    if last_move is not None:
        _highlight(p, view, last_move, drawn)
    return fragments.fill(p.svg())


_FRAGMENT_MARK = re.compile(r'<fragment n="(\d+)" />')
FRAGMENTS_BYTES = 8 << 20
"""What the remembered parts' texts may hold, as Python keeps them (`sys.getsizeof`): about
a thousand parts (a seat's panel or a board's edge targets are 5-20 KB), the parts of the
dozen or so games a worker draws at once. Counted in bytes, not parts: a picture worker
that kept 4,096 parts grew by some 75 MB over a long club night (issue 29)."""


class _Remembered:
    """The parts' texts by key, the least recently used let go first past `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self._texts: dict[object, tuple[str, int]] = {}

    def get(self, key: object) -> str | None:
        known = self._texts.pop(key, None)
        if known is None:
            return None
        self._texts[key] = known  # last again: the most recently used
        return known[0]

    def put(self, key: object, text: str) -> None:
        size = sys.getsizeof(text)
        self._texts[key] = (text, size)
        self.bytes += size
        while self.bytes > self.limit:
            self.bytes -= self._texts.pop(next(iter(self._texts)))[1]

    def __len__(self) -> int:
        return len(self._texts)

    def clear(self) -> None:
        self._texts.clear()
        self.bytes = 0


_FRAGMENTS = _Remembered(FRAGMENTS_BYTES)


class _Fragments:
    """Parts of a picture that recur from one picture to the next (a board's cells, a cell
    with its pieces, a player's panel), each drawn and written out once and then put into
    the text in its place. ElementTree writes about a hundred elements a millisecond and a
    board picture has some six hundred; most of them are the same in the next state. The
    text is the same whether a part is remembered or drawn again: a part is written exactly
    as ElementTree writes it inside the whole (no namespace prefixes), and its key holds
    everything it is drawn from."""

    def __init__(self, p: Picture) -> None:
        self.p = p
        self.texts: list[str] = []

    def insert(self, parent: ET.Element, text: str) -> None:
        """`text` (elements written by ElementTree) put at this point of `parent`."""
        # A plain element as the mark, written alike by every serializer Picture.svg may use;
        # no words of the view can look like it, as "<" is escaped in text and attributes.
        ET.SubElement(parent, "fragment", {"n": str(len(self.texts))})
        self.texts.append(text)

    def put(self, parent: ET.Element, key: object, draw: Callable[[ET.Element], None]) -> None:
        """What `draw` draws into a group, remembered under `key`, put at this point."""
        text = _FRAGMENTS.get(key)
        if text is None:
            holder = ET.Element("g")
            draw(holder)
            text = "".join(
                ET.tostring(child, encoding="unicode", short_empty_elements=True)
                for child in holder
            )
            _FRAGMENTS.put(key, text)
        self.insert(parent, text)

    def fill(self, svg: str) -> str:
        parts = _FRAGMENT_MARK.split(svg)
        parts[1::2] = [self.texts[int(index)] for index in parts[1::2]]
        return "".join(parts)


class _Drawn:
    """Where things were drawn, so the last move can be framed: boxes as (x, y, w, h)."""

    def __init__(self) -> None:
        self.walls: dict[tuple[str, str], tuple[float, float, float, float]] = {}
        self.towers: dict[int, tuple[float, float, float, float]] = {}
        self.cells: dict[str, tuple[float, float, float, float]] = {}
        self.seat_rows: list[tuple[float, float, float, float]] = []
        self.missions: list[tuple[float, float, float, float]] = []
        self.status = (0.0, 0.0, 0.0, 0.0)
        self.bank = (0.0, 0.0, 0.0, 0.0)
        self.piles = (0.0, 0.0, 0.0, 0.0)
        self.board: ET.Element | None = None
        self.panel: ET.Element | None = None
        """The groups the board and the panel were drawn in, when not the picture's own (a
        phone's, scaled into place): the boxes above are in their units."""


def _title(view: pb.CastelloMethoniView, names: Sequence[str]) -> str:
    return f"Castello Methoni on {view.board_name}: {_status(view, names)}"


def _status(view: pb.CastelloMethoniView, names: Sequence[str]) -> str:
    if view.game_over:
        return "game over"
    words = f"phase {view.phase}"
    if 0 <= view.current_player < len(names):
        played = counted(view.cards_played, "card")
        words = f"{names[view.current_player]} to play ({played} played)"
    if view.pending_chance:
        words += f"; the table records {view.pending_chance}"
    if view.last_turn:
        words += "; last turn"
    return words


def _seat_colour(seat: int) -> tuple[str, str]:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def _terrain_colour(view: pb.CastelloMethoniView, terrain: str) -> str:
    if terrain in TERRAIN_COLOURS:
        return TERRAIN_COLOURS[terrain]
    others = [t for t in view.terrains if t not in TERRAIN_COLOURS]
    index = others.index(terrain) if terrain in others else 0
    return OTHER_TERRAINS[index % len(OTHER_TERRAINS)]


def _is_dark(colour: str) -> bool:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * red + 0.587 * green + 0.114 * blue < 140


def _approximate_notes(view: pb.CastelloMethoniView, approximate: str) -> list[str]:
    """What the picture says is not the real game, in a player's words: the game's own
    note (`approximate`), else an invented board (RULES.md §3.4); assumed missions (§9:
    the real mission cards were not found)."""
    notes = [n for n in (approximate,) if n]
    if not approximate and view.board_approximate:
        notes.append("approximate board: outline, terrains and markets invented")
    if view.missions_assumed:
        notes.append("missions assumed: the real mission cards are not known")
    return notes


def _header(p: Picture, view: pb.CastelloMethoniView, names: Sequence[str], drawn: _Drawn) -> None:
    header = p.group(cls="status", title=_status(view, names))
    p.text(header, MARGIN, 24, f"Castello Methoni — {view.board_name}", size=17, bold=True)
    status = _status(view, names)
    p.text(header, MARGIN, 45, status, size=12, fill=INK)
    drawn.status = (MARGIN, 33, min(7.0 * len(status), WIDTH - 2 * MARGIN), 16)


# ---------------------------------------------------------------------------- the board


class _Frame:
    """Board units (y growing north) to picture pixels, fitted into the board square."""

    def __init__(self, points: Sequence[Point], margin: float) -> None:
        xs = [x for x, _ in points] or [0.0]
        ys = [y for _, y in points] or [0.0]
        self.west, self.north = min(xs) - margin, max(ys) + margin
        spread = max(max(xs) - min(xs) + 2 * margin, max(ys) - min(ys) + 2 * margin, 1e-9)
        self.scale = BOARD_SIZE / spread
        width = (max(xs) - min(xs) + 2 * margin) * self.scale
        height = (max(ys) - min(ys) + 2 * margin) * self.scale
        self.left = MARGIN + (BOARD_SIZE - width) / 2
        self.top = HEADER + (BOARD_SIZE - height) / 2

    def __call__(self, point: Point) -> Point:
        return (
            round(self.left + (point[0] - self.west) * self.scale, 1),
            round(self.top + (self.north - point[1]) * self.scale, 1),
        )


Segment = tuple[Point, Point]
Box = tuple[float, float, float, float]


class _Layout:
    """What a board's geometry alone decides, worked out once per board: where each cell,
    each wall place and each sea edge is drawn, and the drawn cells themselves (terrain,
    name), which every picture of a game on that board shares."""

    def __init__(self, p: Picture, view: pb.CastelloMethoniView) -> None:
        self.serial = next(_LAYOUT_SERIALS)
        """Names this layout in the keys of remembered fragments."""
        places = list(zip(view.cells, view.layout.cells, strict=False))
        centres = {cell.id: (place.centre.x, place.centre.y) for cell, place in places}
        neighbours = {cell.id: list(place.neighbours) for cell, place in places}
        self.polygons = bool(places) and all(len(place.corners) >= 3 for _, place in places)
        step = _step(centres, neighbours)
        points = [(k.x, k.y) for _, place in places for k in place.corners]
        points.extend(centres.values())
        frame = _Frame(points, 0.25 * step if self.polygons else 0.9 * step)
        self.radius = round(0.34 * step * frame.scale, 1)
        self.centres = {name: frame(centre) for name, centre in centres.items()}
        self.corners = {
            cell.id: [frame((k.x, k.y)) for k in place.corners] for cell, place in places
        }
        self.cell_boxes: dict[str, Box] = {}
        self.walls: dict[tuple[str, str], Segment] = {}
        self.sea: dict[str, list[Segment]] = {}
        self.cells = ET.Element("g", {"class": "cells"})
        holders: dict[Segment, int] = {}
        for corners in self.corners.values():
            for a, b in _sides(corners):
                holders[_side_key(a, b)] = holders.get(_side_key(a, b), 0) + 1
        if not self.polygons:
            edges = p.group(self.cells, cls="edges")
            for name, others in neighbours.items():
                for other in others:
                    if name < other and other in centres:
                        a, b = self.centres[name], self.centres[other]
                        p.line(edges, *a, *b, stroke=MUTED, stroke_width=2, cls="edge")
        for cell, _ in places:
            corners = self.corners[cell.id]
            self._cell(p, view, cell, corners)
            for other in neighbours[cell.id]:
                if other in centres:
                    self.walls[(cell.id, other)] = self._wall_place(
                        corners, self.corners[other], cell.id, other
                    )
            free = [(a, b) for a, b in _sides(corners) if holders[_side_key(a, b)] == 1]
            self.sea[cell.id] = [
                free[index]
                if index < len(free)
                else self._sea_stub(p, cell, neighbours[cell.id], index)
                for index in range(cell.sea_edges)
            ]
        self.text = ET.tostring(self.cells, encoding="unicode", short_empty_elements=True)

    def _cell(
        self,
        p: Picture,
        view: pb.CastelloMethoniView,
        cell: pb.CastelloMethoniCellView,
        corners: list[Point],
    ) -> None:
        colour = _terrain_colour(view, cell.terrain)
        title = f"{cell.id}: {cell.terrain}{', market' if cell.market else ''}"
        if cell.sea_edges:
            title += f", {counted(cell.sea_edges, 'sea edge')}"
        group = p.group(self.cells, cls=f"cell terrain-{cell.terrain}", title=title)
        x, y = self.centres[cell.id]
        if corners:
            p.polygon(group, corners, fill=colour, stroke=PAPER, stroke_width=1.2)
            xs = [x for x, _ in corners]
            ys = [y for _, y in corners]
            self.cell_boxes[cell.id] = (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
        else:
            p.circle(group, x, y, self.radius, fill=colour, stroke=PAPER, stroke_width=1.5)
            r = self.radius
            self.cell_boxes[cell.id] = (x - r, y - r, 2 * r, 2 * r)
        label = PAPER if _is_dark(colour) else INK
        p.text(group, x, y - 4, cell.id, size=9, fill=label, anchor="middle", cls="cell-name")

    def _wall_place(self, mine: list[Point], theirs: list[Point], cell: str, other: str) -> Segment:
        """The side two cells share, or (no such side: no corners, or corners that do not
        meet) a bar across the line between their centres."""
        shared = {_side_key(a, b) for a, b in _sides(theirs)}
        for a, b in _sides(mine):
            if _side_key(a, b) in shared:
                return (a, b)
        return _across(self.centres[cell], self.centres[other])

    def _sea_stub(
        self, p: Picture, cell: pb.CastelloMethoniCellView, neighbours: list[str], index: int
    ) -> Segment:
        """A sea edge with no free side to stand for it: a short line to seaward (away from
        the cell's neighbours, several sea edges fanned out), its wall place across its end."""
        x, y = self.centres[cell.id]
        others = [self.centres[n] for n in neighbours if n in self.centres]
        dx = x - sum(o[0] for o in others) / len(others) if others else 0.0
        dy = y - sum(o[1] for o in others) / len(others) if others else -1.0
        angle = math.atan2(dy, dx) if (dx or dy) else -math.pi / 2
        angle += (index - (cell.sea_edges - 1) / 2) * 0.6
        reach = self.radius * 2.1
        end = (round(x + math.cos(angle) * reach, 1), round(y + math.sin(angle) * reach, 1))
        rim = (x + math.cos(angle) * self.radius, y + math.sin(angle) * self.radius)
        p.line(self.cells, *rim, *end, stroke=COAST, stroke_width=2, cls="sea-edge")
        return _across((x, y), (2 * end[0] - x, 2 * end[1] - y))


_LAYOUTS: dict[tuple[object, ...], _Layout] = {}
_LAYOUT_SERIALS = itertools.count()
_LAYOUTS_KEPT = 16


def _layout(p: Picture, view: pb.CastelloMethoniView) -> _Layout:
    """The layout of the view's board, remembered for the boards drawn last (a picture is
    the same whether the layout is remembered or worked out again)."""
    key = (
        view.board_name,
        tuple(view.terrains),
        view.layout.SerializeToString(deterministic=True),
        tuple((c.id, c.terrain, c.market, c.sea_edges) for c in view.cells),
    )
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = _Layout(p, view)
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            _LAYOUTS.pop(next(iter(_LAYOUTS)), None)
        _LAYOUTS[key] = layout
    return layout


def _side_key(a: Point, b: Point) -> Segment:
    return (a, b) if a <= b else (b, a)


def _sides(corners: Sequence[Point]) -> list[Segment]:
    return [(corners[i], corners[(i + 1) % len(corners)]) for i in range(len(corners))]


def _step(centres: dict[str, Point], neighbours: dict[str, list[str]]) -> float:
    """The typical distance between neighbouring cells' centres (board units)."""
    lengths = sorted(
        math.dist(centres[name], centres[other])
        for name, others in neighbours.items()
        for other in others
        if other in centres and name < other
    )
    middle = lengths[len(lengths) // 2] if lengths else 0.0
    return middle if middle > 0 else 1.0


def _across(a: Point, b: Point) -> Segment:
    """A wall place across the middle of the line from `a` to `b` (picture pixels)."""
    mx, my = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    half = min(14.0, length * 0.3)
    nx, ny = -dy / length * half, dx / length * half
    return (round(mx - nx, 1), round(my - ny, 1)), (round(mx + nx, 1), round(my + ny, 1))


def _board(
    p: Picture,
    view: pb.CastelloMethoniView,
    names: Sequence[str],
    drawn: _Drawn,
    fragments: _Fragments,
) -> None:
    layout = _layout(p, view)
    drawn.cells = layout.cell_boxes
    board = p.group(drawn.board, cls="board", title=f"The board: {view.board_name}")
    p.rect(board, MARGIN, HEADER, BOARD_SIZE, BOARD_SIZE, fill=SEA_COLOUR, cls="sea")
    fragments.insert(board, layout.text)
    castle_of = {cell: castle.id for castle in view.castles for cell in castle.cells}
    pieces = p.group(board, cls="pieces")
    named = tuple(names)
    for cell in view.cells:
        if not cell.market and not any(cell.houses):
            continue
        castle = castle_of.get(cell.id, 0)
        key = (
            "pieces",
            layout.serial,
            cell.id,
            cell.market,
            cell.market_ducats,
            castle,
            tuple(cell.houses),
            named,
        )
        draw = functools.partial(
            _cell_pieces, p, cell=cell, castle=castle, names=names, centre=layout.centres[cell.id]
        )
        fragments.put(pieces, key, draw)
    # Castles before walls: a castle's tint would dim the walls around it.
    order = {cell.id: index for index, cell in enumerate(view.cells)}
    for castle_view in view.castles:
        _castle(p, board, castle_view, names, layout, drawn, order)
    walls = p.group(board, cls="walls")
    sea_walls: dict[str, int] = {}
    for wall in view.walls:
        if wall.other == "sea":
            index = sea_walls.get(wall.cell, 0)
            sea_walls[wall.cell] = index + 1
            places = layout.sea.get(wall.cell, [])
            if index >= len(places):
                continue
            place = places[index]
            title = f"a wall between {wall.cell} and the sea"
        else:
            if (wall.cell, wall.other) not in layout.walls:
                continue
            place = layout.walls[(wall.cell, wall.other)]
            title = f"a wall between {wall.cell} and {wall.other}"
        line = p.line(walls, *place[0], *place[1], stroke=WALL, stroke_width=5, cls="wall")
        ET.SubElement(line, "title").text = title
        box = _wall_box(*place)
        drawn.walls[(wall.cell, wall.other)] = drawn.walls[(wall.other, wall.cell)] = box
    built = tuple((wall.cell, wall.other) for wall in view.walls)
    fragments.put(
        board,
        ("edge targets", layout.serial, built),
        functools.partial(_edge_targets, p, layout=layout, view=view, order=order),
    )
    if view.layout.derived:
        p.text(
            board,
            MARGIN + 6,
            HEADER + BOARD_SIZE - 8,
            "places derived from the board's graph (the board file gives no coordinates)",
            size=10,
            fill=MUTED,
        )


def _cell_pieces(
    p: Picture,
    parent: ET.Element,
    *,
    cell: pb.CastelloMethoniCellView,
    castle: int,
    names: Sequence[str],
    centre: Point,
) -> None:
    """A cell's market (with the ducats on it) and houses."""
    x, y = centre
    if cell.market:
        _market(p, parent, cell, castle, x, y + 5)
    if any(cell.houses):
        houses = p.group(
            parent, cls="houses", title=f"Houses on {cell.id}: {_counts(cell.houses, names)}"
        )
        _houses(p, houses, cell.houses, x, y + (16 if cell.market else 5))


def _name(names: Sequence[str], seat: int) -> str:
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def _counts(counts: Sequence[int], names: Sequence[str]) -> str:
    return ", ".join(f"{k} {_name(names, seat)}" for seat, k in enumerate(counts) if k)


def _market(
    p: Picture,
    parent: ET.Element,
    cell: pb.CastelloMethoniCellView,
    castle: int,
    x: float,
    y: float,
) -> None:
    where = f", in castle {castle}" if castle else ""
    market = p.group(
        parent,
        cls="market",
        title=f"Market on {cell.id} ({cell.terrain}{where}): "
        f"{counted(cell.market_ducats, 'ducat')} on it",
    )
    p.circle(market, x, y, 6.5, fill=COIN, stroke=INK, stroke_width=0.8)
    p.text(market, x, y + 3, str(cell.market_ducats), size=8, anchor="middle", bold=True)


def _house_shape(
    p: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    size: float,
    colour: str,
    cls: str,
) -> None:
    """A house (a square under a roof) or, larger, a villa, centred on (x, y)."""
    half = size / 2
    points = [
        (x - half, y + half),
        (x + half, y + half),
        (x + half, y - half * 0.2),
        (x, y - half * 1.1),
        (x - half, y - half * 0.2),
    ]
    p.polygon(parent, points, fill=colour, stroke=INK, stroke_width=0.8, cls=cls)


def _houses(
    p: Picture, parent: ET.Element, counts: Sequence[int], x: float, y: float, per_row: int = 3
) -> None:
    pieces = [seat for seat, k in enumerate(counts) for _ in range(k)]
    for index, seat in enumerate(pieces):
        row, column = divmod(index, per_row)
        in_row = min(per_row, len(pieces) - row * per_row)
        px = x + (column - (in_row - 1) / 2) * 9
        _house_shape(p, parent, px, y + 4 + row * 9, 7, _seat_colour(seat)[1], "house")


def _wall_box(a: Point, b: Point) -> Box:
    return (
        min(a[0], b[0]),
        min(a[1], b[1]),
        max(abs(a[0] - b[0]), 4.0),
        max(abs(a[1] - b[1]), 4.0),
    )


def _castle(
    p: Picture,
    parent: ET.Element,
    castle: pb.CastelloMethoniCastleView,
    names: Sequence[str],
    layout: _Layout,
    drawn: _Drawn,
    order: dict[str, int],
) -> None:
    """The castle's land tinted in its owner's colour, its tower on its most central cell,
    its houses and villas beside the tower (positions inside a castle do not matter, §6.1).
    Touched as `castle-<its first cell in board order>` (a merge, §6.2; `into`, §6.4)."""
    cells = [c for c in castle.cells if c in layout.centres]
    if not cells:
        return
    colour_name, colour = _seat_colour(castle.owner)
    owner = _name(names, castle.owner)
    title = (
        f"Castle {castle.id} of {owner} ({colour_name}): {counted(len(castle.cells), 'cell')} "
        f"({', '.join(castle.cells)}), value {castle.value}"
    )
    if castle.markets:
        title += f", markets {', '.join(castle.markets)}"
    if any(castle.houses):
        title += f"; houses: {_counts(castle.houses, names)}"
    if any(castle.villas):
        title += f"; villas: {_counts(castle.villas, names)}"
    group = p.group(parent, cls="castle", title=title)
    p.touch(group, f"castle-{min(castle.cells, key=lambda c: order.get(c, len(order)))}")
    for cell in cells:
        if layout.polygons:
            tint = p.polygon(group, layout.corners[cell], fill=colour, cls="castle-land")
            tint.set("fill-opacity", "0.38")
        else:
            x, y = layout.centres[cell]
            ring = p.circle(group, x, y, layout.radius * 0.8, fill="none", cls="castle-land")
            ring.set("stroke", colour)
            ring.set("stroke-width", "4")
    mean = (
        sum(layout.centres[c][0] for c in cells) / len(cells),
        sum(layout.centres[c][1] for c in cells) / len(cells),
    )
    home = min(cells, key=lambda c: (math.dist(layout.centres[c], mean), c))
    x, y = layout.centres[home]
    tower = [
        (x - 7, y + 9),
        (x + 7, y + 9),
        (x + 7, y - 9),
        (x + 4, y - 9),
        (x + 4, y - 6),
        (x + 1.5, y - 6),
        (x + 1.5, y - 9),
        (x - 1.5, y - 9),
        (x - 1.5, y - 6),
        (x - 4, y - 6),
        (x - 4, y - 9),
        (x - 7, y - 9),
    ]
    edge = PAPER if colour_name == "black" else INK
    p.polygon(group, tower, fill=colour, stroke=edge, stroke_width=1.2, cls="tower")
    drawn.towers[castle.id] = (x - 7, y - 9, 14, 18)
    pieces = [(seat, "villa") for seat, k in enumerate(castle.villas) for _ in range(k)]
    pieces += [(seat, "house") for seat, k in enumerate(castle.houses) for _ in range(k)]
    for index, (seat, kind) in enumerate(pieces):
        row, column = divmod(index, 4)
        size = 10 if kind == "villa" else 7
        px, py = x + 14 + column * 11, y - 5 + row * 11
        _house_shape(p, group, px, py, size, _seat_colour(seat)[1], kind)


def _edge_targets(
    p: Picture,
    parent: ET.Element,
    *,
    layout: _Layout,
    view: pb.CastelloMethoniView,
    order: dict[str, int],
) -> None:
    """Issue 25: where a wall may still go, one target on each side of the edge: the wedge
    between the cell's centre and the edge, touched as `edge-<cell>-<cell>@<side>` (cells in
    board order; the side is the cell that gets the first house, your own, §5.1.b) or
    `edge-<cell>-sea@<cell>` (a cell's sea edges are interchangeable: the next free one
    stands for them all). One tap names the edge and the side, where two would be needed
    otherwise. Edges of a castle's cells carry none: its boundary is walled and its inside
    takes no wall, and the castle itself is tapped (a merge, §6.2)."""
    built = {(w.cell, w.other) for w in view.walls} | {(w.other, w.cell) for w in view.walls}
    in_castles = {cell for castle in view.castles for cell in castle.cells}
    sea_walls: dict[str, int] = {}
    for wall in view.walls:
        if wall.other == "sea":
            sea_walls[wall.cell] = sea_walls.get(wall.cell, 0) + 1
    targets = p.group(parent, cls="edge-targets")
    for (cell, other), (a, b) in layout.walls.items():
        if (
            order.get(cell, 0) < order.get(other, 0)
            and (cell, other) not in built
            and cell not in in_castles
            and other not in in_castles
        ):
            edge = f"edge-{cell}-{other}"
            for side in (cell, other):
                words = f"wall {cell}|{other}, the house on {side}"
                _wedge(p, targets, layout.centres[side], a, b, f"{edge}@{side}", words)
    for cell, places in layout.sea.items():
        free = sea_walls.get(cell, 0)
        if free < len(places) and cell not in in_castles:
            a, b = places[free]
            words = f"wall {cell}|sea"
            _wedge(p, targets, layout.centres[cell], a, b, f"edge-{cell}-sea@{cell}", words)


def _wedge(
    p: Picture, parent: ET.Element, centre: Point, a: Point, b: Point, touch: str, title: str
) -> None:
    wedge = p.polygon(parent, (centre, a, b), fill=PAPER, cls="edge-target", title=title)
    wedge.set("fill-opacity", "0")
    p.touch(wedge, touch)


CONTROL_ROW = 40


def _controls_height(view: pb.CastelloMethoniView) -> float:
    rows = int(bool(_card_strip(view))) + int(bool(view.missions_to_reveal))
    rows += int(view.phase in ("play", "merge") and not view.game_over)
    return rows * CONTROL_ROW + (8 if rows else 0)


def _card_strip(view: pb.CastelloMethoniView) -> list[str]:
    """The cards the table may name (RULES.md §4: table mode records no hand, so the card a
    player plays is named when played; a dealt card is drawn by the table)."""
    if view.phase in ("deal", "draw") and view.pending_chance == "the next card drawn":
        return [*view.terrains, "sea"]
    if view.phase == "play" and not view.dealt_mode and not view.game_over:
        return [*view.terrains, "sea"]
    return []


def _controls(p: Picture, view: pb.CastelloMethoniView, top: float) -> None:
    """Issue 25: what is tapped that is no component on the board: the card named (table
    mode), end the turn, redraw a stuck hand, stop merging, and the missions revealed."""
    controls = p.group(cls="controls", title="controls")
    y = top + 4
    strip = _card_strip(view)
    if strip:
        p.text(controls, MARGIN, y + 20, "card:", size=12, fill=MUTED)
        for index, card in enumerate(strip):
            words = "Market/Sea" if card == "sea" else card
            p.button(controls, MARGIN + 40 + index * 98, y, words, f"card-{card}", width=92)
        y += CONTROL_ROW
    if view.missions_to_reveal:
        p.text(controls, MARGIN, y + 20, "mission:", size=12, fill=MUTED)
        for index, mission in enumerate(view.missions_to_reveal):
            p.button(controls, MARGIN + 60 + index * 56, y, mission, f"mission-{mission}")
        y += CONTROL_ROW
    if view.phase == "play" and not view.game_over:
        p.button(controls, MARGIN, y, "end the turn", "end")
        p.button(controls, MARGIN + 120, y, "stuck hand: redraw", "redraw")
    elif view.phase == "merge" and not view.game_over:
        p.button(controls, MARGIN, y, "stop merging", "stop")


# ---------------------------------------------------------------------------- the panel


@dataclass(frozen=True)
class _Sizes:
    """The panel's card, bank and mission sizes: the wide layout's, or a phone's (each a
    finger's size once the panel is scaled across a phone's width)."""

    card_w: float = CARD_WIDTH
    card_h: float = CARD_HEIGHT
    seat_h: float = SEAT_HEIGHT
    bank_h: float = 24
    mission_w: float = 70
    card_gap: float = 3
    supplies_h: float = 96
    """Where the seats' panels start, below the bank and the piles."""


WIDE_SIZES = _Sizes()


def _supplies(
    p: Picture, view: pb.CastelloMethoniView, drawn: _Drawn, sizes: _Sizes = WIDE_SIZES
) -> None:
    top = HEADER
    bank_h = sizes.bank_h
    bank = p.group(drawn.panel, cls="bank", title=f"The bank: {counted(view.bank, 'ducat')}")
    p.touch(bank, "bank")  # a trade's second tap: the card, for 2 ducats from the bank (§5.2)
    p.rect(bank, PANEL_X + 2, top + 2, 60, bank_h, fill=PAPER, radius=3)
    p.circle(bank, PANEL_X + 12, top + 2 + bank_h / 2, 10, fill=COIN, stroke=INK)
    middle = top + 6 + bank_h / 2
    p.text(bank, PANEL_X + 12, middle, str(view.bank), size=10, anchor="middle", bold=True)
    p.text(bank, PANEL_X + 28, middle, "bank", size=11)
    drawn.bank = (PANEL_X + 2, top + 4, 60, bank_h - 4)
    walls = p.group(
        drawn.panel,
        cls="wall-supply",
        title=f"Walls: {view.wall_supply} in the supply, {view.walls_in_play} on the board",
    )
    p.rect(walls, PANEL_X + 80, top + 10, 22, 6, fill=WALL)
    p.text(
        walls,
        PANEL_X + 108,
        top + 18,
        f"{view.wall_supply} walls left ({view.walls_in_play} built)",
        size=11,
    )
    piles = p.group(
        drawn.panel,
        cls="piles",
        title=f"Draw pile: {counted(view.draw_pile, 'card')}; discard pile: {len(view.discard)}",
    )
    y = top + 8 + bank_h
    card_w, card_h = sizes.card_w, sizes.card_h
    if view.draw_pile:
        p.face_down(
            piles,
            PANEL_X + 2,
            y,
            card_w,
            card_h,
            title=f"the draw pile, {counted(view.draw_pile, 'card')}",
        )
    else:
        p.rect(piles, PANEL_X + 2, y, card_w, card_h, fill="none", stroke=MUTED, radius=3)
    middle = y + card_h / 2 + 4
    p.text(piles, PANEL_X + 8 + card_w, middle, f"draw {view.draw_pile}", size=11)
    discard_x = PANEL_X + 68 + card_w
    if view.discard:
        _card(p, piles, view, view.discard[-1], discard_x, y, "discard-top", sizes)
    else:
        p.rect(piles, discard_x, y, card_w, card_h, fill="none", stroke=MUTED, radius=3)
    p.text(piles, discard_x + card_w + 6, middle, f"discard {len(view.discard)}", size=11)
    drawn.piles = (PANEL_X + 2, y, 180, card_h)


def _card(
    p: Picture,
    parent: ET.Element,
    view: pb.CastelloMethoniView,
    card: str,
    x: float,
    y: float,
    cls: str = "card",
    sizes: _Sizes = WIDE_SIZES,
) -> ET.Element:
    card_w, card_h = sizes.card_w, sizes.card_h
    colour = "#f3ead2" if card == "sea" else _terrain_colour(view, card)
    group = p.group(parent, cls=cls, title=f"a {'Market/Sea' if card == 'sea' else card} card")
    p.rect(group, x, y, card_w, card_h, fill=colour, stroke=INK, radius=3)
    if card == "sea":
        p.rect(group, x + 3, y + card_h / 2, card_w - 6, card_h / 2 - 3, fill=SEA_COLOUR)
        p.circle(group, x + card_w / 2, y + 10, 5, fill=COIN, stroke=INK, stroke_width=0.6)
    else:
        fill = PAPER if _is_dark(colour) else INK
        p.text(
            group,
            x + card_w / 2,
            y + card_h / 2 + 4,
            card[:2].title(),
            size=10,
            fill=fill,
            anchor="middle",
            bold=True,
        )
    return group


def _seat(
    p: Picture,
    view: pb.CastelloMethoniView,
    seat: int,
    top: float,
    drawn: _Drawn,
    fragments: _Fragments,
    sizes: _Sizes = WIDE_SIZES,
) -> None:
    drawn.seat_rows.append((PANEL_X + 4, top + 4, PANEL_WIDTH - 8, 20))
    mission_x = PANEL_X + PANEL_WIDTH - 8 - sizes.mission_w
    drawn.missions.append((mission_x, top + 46, sizes.mission_w, sizes.card_h))
    s = view.seats[seat]
    key = (
        "seat",
        seat,
        top,
        seat == view.current_player,
        view.dealt_mode,
        tuple(view.terrains),
        s.SerializeToString(deterministic=True),
        sizes,
    )
    parent = p.root if drawn.panel is None else drawn.panel
    fragments.put(parent, key, lambda holder: _seat_panel(p, holder, view, seat, top, sizes))


def _seat_panel(
    p: Picture,
    parent: ET.Element,
    view: pb.CastelloMethoniView,
    seat: int,
    top: float,
    sizes: _Sizes = WIDE_SIZES,
) -> None:
    """A player's name, score, supply, hand and mission (`sizes`: a phone's are larger)."""
    card_w, card_h = sizes.card_w, sizes.card_h
    s = view.seats[seat]
    colour_name, colour = _seat_colour(seat)
    playing = seat == view.current_player
    points = counted(s.score, "point")
    group = p.group(parent, cls="seat", title=f"{s.name} ({colour_name}): {points}")
    p.touch(group, f"p{seat + 1}")
    p.rect(
        group,
        PANEL_X,
        top,
        PANEL_WIDTH,
        sizes.seat_h - 6,
        fill="#f1ece0" if playing else PAPER,
        stroke=INK if playing else MUTED,
        stroke_width=2 if playing else 1,
        radius=5,
    )
    p.rect(group, PANEL_X + 8, top + 8, 12, 12, fill=colour, stroke=INK, radius=2)
    marker = " — to play" if playing else ""
    p.text(group, PANEL_X + 26, top + 19, f"{s.name}{marker}", size=13, bold=True)
    # The running score as RULES.md §8 counts it; the tooltip says it in a player's words.
    score = p.group(group, cls="score", title=f"{s.name}: {points} so far")
    p.text(
        score,
        PANEL_X + PANEL_WIDTH - 8,
        top + 19,
        f"{s.score} pts",
        size=13,
        anchor="end",
        bold=True,
    )
    supply = p.group(
        group,
        cls="supply",
        title=f"{s.name}'s supply: {counted(s.ducats, 'ducat')}, "
        f"{counted(s.houses_left, 'house')}, {counted(s.villas_left, 'villa')}, "
        f"{counted(s.towers_left, 'tower')}",
    )
    y = top + 36
    p.circle(supply, PANEL_X + 14, y - 4, 7, fill=COIN, stroke=INK, stroke_width=0.8)
    p.text(supply, PANEL_X + 25, y, str(s.ducats), size=11)
    for offset, (size, count) in ((62, (7, s.houses_left)), (108, (10, s.villas_left))):
        _house_shape(p, supply, PANEL_X + offset, y - 4, size, colour, "piece")
        p.text(supply, PANEL_X + offset + 9, y, str(count), size=11)
    tx = PANEL_X + 160
    p.rect(supply, tx - 5, y - 11, 10, 13, fill=colour, stroke=INK, stroke_width=0.8)
    p.text(supply, tx + 9, y, str(s.towers_left), size=11)
    cards = top + 46
    hand = p.group(group, cls="hand", title=_hand_title(view, s))
    if s.hand and not s.hand_hidden:
        marked: set[str] = set()
        for index, card in enumerate(s.hand):
            x = PANEL_X + 8 + index * (card_w + sizes.card_gap)
            face = _card(p, hand, view, card, x, cards, "card", sizes)
            # The seat to play names a card of its dealt hand by tapping it (one per kind).
            if playing and card not in marked:
                marked.add(card)
                p.touch(face, f"card-{card}")
    else:
        for index in range(s.hand_size):
            p.face_down(
                hand,
                PANEL_X + 8 + index * (card_w + sizes.card_gap),
                cards,
                card_w,
                card_h,
                title=f"a card in {s.name}'s hand",
                radius=3,
            )
    mission_x = PANEL_X + PANEL_WIDTH - 8 - sizes.mission_w
    if s.mission:
        mission = p.group(
            group,
            cls="mission",
            title=f"{s.name}'s mission {s.mission}: +1 per castle cell of "
            f"{', '.join(s.mission_terrains)}",
        )
        p.touch(mission, f"p{seat + 1}-mission")
        p.rect(
            mission, mission_x, cards, sizes.mission_w, card_h, fill="#f3ead2", stroke=INK, radius=3
        )
        p.text(mission, mission_x + 4, cards + 11, s.mission, size=9, bold=True)
        for index, terrain in enumerate(s.mission_terrains[:3]):
            p.rect(
                mission,
                mission_x + 4 + index * 21,
                cards + 16,
                19,
                14,
                fill=_terrain_colour(view, terrain),
                stroke=INK,
                stroke_width=0.6,
            )
    else:
        why = "secret" if s.mission_hidden else "not recorded yet"
        back = p.face_down(
            group,
            mission_x,
            cards,
            sizes.mission_w,
            card_h,
            title=f"{s.name}'s mission ({why})",
            radius=3,
        )
        p.touch(back, f"p{seat + 1}-mission")


def _hand_title(view: pb.CastelloMethoniView, s: pb.CastelloMethoniSeatView) -> str:
    if not view.dealt_mode:
        return f"{s.name}'s hand: {counted(s.hand_size, 'card')}, not recorded (table mode)"
    if s.hand_hidden:
        return f"{s.name}'s hand: {counted(s.hand_size, 'card')}, secret"
    return f"{s.name}'s hand: {', '.join(s.hand) or 'empty'}"


# ---------------------------------------------------------------------------- the last move


def _highlight(
    p: Picture, view: pb.CastelloMethoniView, move: pb.CastelloMethoniMove, drawn: _Drawn
) -> None:
    """Frame what `move` changed: the wall it built, the castle it merged into, the bank it
    traded with, the piles it drew from, the seat it named, or the turn it ended."""
    action = move.WhichOneof("action")
    box: tuple[float, float, float, float] | None = None
    if action == "build":
        other = "sea" if move.build.other.lower() == "sea" else move.build.other.lower()
        box = drawn.walls.get((move.build.cell.lower(), other))
    elif action == "merge":
        cell = move.merge.cell.lower()
        castle = next((c for c in view.castles if cell in c.cells), None)
        box = drawn.towers.get(castle.id) if castle else drawn.cells.get(cell)
    elif action == "trade":
        box = drawn.bank
    elif action in ("redraw", "draw"):
        box = drawn.piles
    elif action == "first_player" and move.first_player.seat < len(drawn.seat_rows):
        box = drawn.seat_rows[move.first_player.seat]
    elif action == "mission" and move.mission.seat < len(drawn.missions):
        box = drawn.missions[move.mission.seat]
    elif action in ("end_turn", "stop_merging"):
        box = drawn.status
    if box is not None:
        on_board = action in ("build", "merge")
        inside = drawn.board if on_board else drawn.panel if action != "end_turn" else None
        if action == "stop_merging":
            inside = None
        frame = p.group(inside, cls="last-move-mark", title="the last move")
        p.highlight(frame, *box)


# ---------------------------------------------------------------------------- a phone's layout

PHONE_MARGIN = 6
PHONE_BOARD = (PHONE_WIDTH - 2) / BOARD_SIZE
"""The board's scale on a phone: across the picture's width (an edge's side is still about
15 CSS px at 390 px: the map stays a map, and the web app zooms to tap it)."""
PHONE_PANEL = (PHONE_WIDTH - 2 * PHONE_MARGIN) / PANEL_WIDTH
PHONE_HEADER = 50
PHONE_CARDS_PER_ROW = 3
PHONE_SIZES = _Sizes(
    card_w=43, card_h=43, seat_h=100, bank_h=43, mission_w=62, card_gap=1, supplies_h=116
)
"""A phone's panel, in the panel's units (drawn PHONE_PANEL times that): a hand's five cards,
the bank and a mission 46 units a side at least (45 CSS px fit to a 360 px phone)."""


def _phone_controls_height(view: pb.CastelloMethoniView) -> float:
    row = TOUCH_UNITS + 8
    rows = -(-len(_card_strip(view)) // PHONE_CARDS_PER_ROW)
    rows += -(-len(view.missions_to_reveal) // 4)
    rows += int(view.phase in ("play", "merge") and not view.game_over)
    return rows * row + (8 if rows else 0)


def _phone_controls(p: Picture, view: pb.CastelloMethoniView, top: float) -> None:
    """`_controls` a finger high, wrapped to a phone's width."""
    controls = p.group(cls="controls", title="controls")
    row = TOUCH_UNITS + 8
    y = top + 4
    strip = _card_strip(view)
    width = (PHONE_WIDTH - 2 * PHONE_MARGIN - 40) / PHONE_CARDS_PER_ROW - 6
    if strip:
        p.text(controls, PHONE_MARGIN, y + 28, "card:", size=12, fill=MUTED)
        for index, card in enumerate(strip):
            words = "Market/Sea" if card == "sea" else card
            x = PHONE_MARGIN + 40 + index % PHONE_CARDS_PER_ROW * (width + 6)
            at = y + index // PHONE_CARDS_PER_ROW * row
            p.button(controls, x, at, words, f"card-{card}", width=width, height=TOUCH_UNITS)
        y += -(-len(strip) // PHONE_CARDS_PER_ROW) * row
    if view.missions_to_reveal:
        p.text(controls, PHONE_MARGIN, y + 28, "mission:", size=12, fill=MUTED)
        for index, mission in enumerate(view.missions_to_reveal):
            x = PHONE_MARGIN + 60 + index % 4 * 66
            at = y + index // 4 * row
            p.button(controls, x, at, mission, f"mission-{mission}", width=60, height=TOUCH_UNITS)
        y += -(-len(view.missions_to_reveal) // 4) * row
    if view.phase == "play" and not view.game_over:
        p.button(controls, PHONE_MARGIN, y, "end the turn", "end", height=TOUCH_UNITS)
        p.button(
            controls, PHONE_MARGIN + 130, y, "stuck hand: redraw", "redraw", height=TOUCH_UNITS
        )
    elif view.phase == "merge" and not view.game_over:
        p.button(controls, PHONE_MARGIN, y, "stop merging", "stop", height=TOUCH_UNITS)


def phone_picture(
    view: pb.CastelloMethoniView,
    last_move: pb.CastelloMethoniMove | None = None,
    approximate: str = "",
) -> str:
    """`picture` laid out for a phone in portrait (issue 25): PHONE_WIDTH units wide, the
    board across the width, the controls (a finger high) under it, then the bank, the piles
    and the players' panels. The board stays a map: its edges' sides and the panel's cards
    stay under a finger's size fit to a phone's width, and the web app zooms to tap them
    (docs/web.md, "Recording by touch")."""
    names = [s.name for s in view.seats]
    board_top = PHONE_HEADER
    controls_top = board_top + BOARD_SIZE * PHONE_BOARD + 6
    panel_top = controls_top + _phone_controls_height(view)
    sizes = PHONE_SIZES
    panel_height = (sizes.supplies_h + sizes.seat_h * len(view.seats)) * PHONE_PANEL
    height = panel_top + panel_height + 24
    p = Picture(PHONE_WIDTH, height, _title(view, names))
    drawn = _Drawn()
    fragments = _Fragments(p)
    header = p.group(cls="status", title=_status(view, names))
    room = PHONE_WIDTH - 2 * PHONE_MARGIN
    title = fitted(f"Castello Methoni — {view.board_name}", room, 15)
    p.text(header, PHONE_MARGIN, 20, title, size=15, bold=True)
    status = fitted(_status(view, names), room, 12)
    p.text(header, PHONE_MARGIN, 40, status, size=12, fill=INK)
    drawn.status = (PHONE_MARGIN, 28, min(6.7 * len(status), room), 16)
    drawn.board = p.group(
        cls="place",
        x=1 - MARGIN * PHONE_BOARD,
        y=board_top - HEADER * PHONE_BOARD,
        scale=PHONE_BOARD,
    )
    _board(p, view, names, drawn, fragments)
    _phone_controls(p, view, controls_top)
    drawn.panel = p.group(
        cls="place",
        x=PHONE_MARGIN - PANEL_X * PHONE_PANEL,
        y=panel_top - HEADER * PHONE_PANEL,
        scale=PHONE_PANEL,
    )
    _supplies(p, view, drawn, sizes)
    for seat in range(len(view.seats)):
        top = HEADER + sizes.supplies_h + sizes.seat_h * seat
        _seat(p, view, seat, top, drawn, fragments, sizes)
    notes = _approximate_notes(view, approximate)
    if notes:
        p.approximate_note(fitted("; ".join(notes), room, 11))
    if last_move is not None:
        _highlight(p, view, last_move, drawn)
    return fragments.fill(p.svg())
