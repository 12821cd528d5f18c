"""The board as data: a graph of cells (terrain, market flag) and edges (two cells, or a cell
and the sea), loaded from a JSON component file and validated (RULES.md §3.3).

Only the graph matters to the rules (RULES.md §3.3: "an engine can treat the board as a planar
graph"), so any map, the real one once a club transcribes it, can be dropped in. The sea is
one place: every sea edge of a cell links that cell to the same sea, so the sea edges of one
cell are interchangeable and are counted rather than named.

Where the cells are drawn is read from the file too when it gives coordinates, or derived
from the graph when it does not (RULES.md, "Board coordinates"); the rules never use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tablelog.replay.components import ComponentCache, packaged_component, quoted, read_json
from tablelog.replay.core import InvalidSetup
from tablelog.v1 import game_pb2

BOARD_COMPONENT = "board"
BOARD_FILE = "methoni_board.json"
MEDIA_TYPE = "application/json"
# Both notes are read by players (the view, the picture, GameSummary.approximate_notes):
# the rules reference they rest on is RULES.md §3.4 (the counts checked) and §9 (the
# balanced mission set).
APPROXIMATE_NOTE = (
    "Approximate board: the published Castello Methoni map is not available; this 54-cell "
    "hexagon respects every count that could be checked (six land types, six markets, a card "
    "mix matching the board's), but its outline and the terrain and market positions are "
    "invented."
)
MISSIONS_ASSUMED_NOTE = (
    "missions assumed: the board file has no mission_cards, so a balanced set is used (each "
    "land type on three of the six cards; the real mission cards are not known)"
)
SEA = "sea"
"""The name of the Market/Sea card, and of the far side of a sea edge."""

DEFAULT_MISSIONS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("m1", (0, 1, 3)),
    ("m2", (1, 2, 4)),
    ("m3", (2, 3, 5)),
    ("m4", (3, 4, 0)),
    ("m5", (4, 5, 1)),
    ("m6", (5, 0, 2)),
)
"""RULES.md §9: the balanced assumption M1 {T1,T2,T4} ... M6 {T6,T1,T3}, by terrain index."""

DEFAULT_WALLS = {3: 30, 4: 33, 5: 36}
"""RULES.md §2: walls in the supply by player count."""

MAX_CORNERS = 32
"""The most corners a cell's outline may have in a board file (RULES.md, "Board coordinates")."""
MAX_COORDINATE = 1_000_000
"""The largest coordinate, in absolute value, a board file may give."""
LAYOUT_WORK = 400_000
"""The most steps (pairs of cells visited) the derived layout spends, so that a large board
file without coordinates costs a bounded time, once, when it is loaded."""
STRESS_ROUNDS = 60

Point = tuple[float, float]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _fail(code: str, message: str) -> InvalidSetup:
    return InvalidSetup(f"BOARD_{code}", f"Board file: {message}")


@dataclass(frozen=True, slots=True)
class Mission:
    name: str
    terrains: frozenset[int]


@dataclass(frozen=True, slots=True)
class Board:
    """A validated board. Cells are numbered 0..n-1 in file order; internal edges 0..m-1."""

    name: str
    approximate: bool
    note: str
    terrains: tuple[str, ...]
    cell_ids: tuple[str, ...]
    names: tuple[str, ...]
    """The notation name of each cell: its `label` if the file gives one, else its id."""
    lookup: dict[str, int]
    terrain: tuple[int, ...]
    market: tuple[bool, ...]
    market_ducats: tuple[int, ...]
    sea_edges: tuple[int, ...]
    """How many sea edges each cell has."""
    edges: tuple[tuple[int, int], ...]
    """Internal edges as (low cell, high cell)."""
    edge_index: dict[tuple[int, int], int]
    neighbours: tuple[tuple[tuple[int, int], ...], ...]
    """Per cell: (other cell, edge index) for each internal edge."""
    missions: tuple[Mission, ...]
    deck: tuple[int, ...]
    """Copies of each card: one entry per terrain, then the Market/Sea card."""
    walls_by_players: dict[int, int]
    missions_assumed: bool = False
    """True when the file has no `mission_cards`: the missions are the assumption of §9."""
    longest_name: int = 0
    """The longest name a move can give (a cell id or label, a card, a mission)."""
    centres: tuple[Point, ...] = ()
    """Where each cell is drawn (board units, y growing north): from the file, or derived."""
    outlines: tuple[tuple[Point, ...], ...] = ()
    """Each cell's corners as the file gives them; empty when the file gives none."""
    layout_derived: bool = False
    """True when the file has no coordinates and `centres` come from `derive_layout`."""

    @property
    def sea_card(self) -> int:
        return len(self.terrains)

    def card_name(self, card: int) -> str:
        return SEA if card == len(self.terrains) else self.terrains[card]

    def edge_between(self, a: int, b: int) -> int | None:
        return self.edge_index.get((a, b) if a < b else (b, a))


def default_components() -> tuple[game_pb2.ComponentFile, ...]:
    """The shipped approximate board (RULES.md §3.4), marked approximate."""
    return (
        packaged_component(__package__, BOARD_FILE, BOARD_COMPONENT, MEDIA_TYPE, APPROXIMATE_NOTE),
    )


_BOARDS: ComponentCache[Board] = ComponentCache()


def load_board(component: game_pb2.ComponentFile) -> Board:
    """Parse and validate a board component file (cached by content); raises InvalidSetup
    with a clear reason."""
    extra = (component.name, component.approximate, component.approximate_note)
    return _BOARDS.load(component.content, extra, lambda: _read_board(component))


def _read_board(component: game_pb2.ComponentFile) -> Board:
    data = read_json(component.content, "Board file", "BOARD_NOT_JSON")
    note = component.approximate_note or (APPROXIMATE_NOTE if component.approximate else "")
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip():
        name = component.name or BOARD_COMPONENT
    return parse_board(data, name.strip(), component.approximate, note)


def _list(data: dict[str, Any], key: str, required: bool = True) -> list[Any]:
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise _fail("MISSING_" + key.upper(), f"'{key}' must be a list.")
    return value


def parse_board(data: Any, name: str, approximate: bool, note: str) -> Board:
    """RULES.md §3.3: validate the engine-facing board format and build the graph."""
    if not isinstance(data, dict):
        raise _fail("NOT_AN_OBJECT", "the top level must be a JSON object.")
    terrains_raw = _list(data, "terrain_types")
    if not terrains_raw:
        raise _fail("NO_TERRAINS", "'terrain_types' is empty.")
    terrains: list[str] = []
    for raw in terrains_raw:
        if not isinstance(raw, str) or not _NAME.match(raw.lower()) or raw.lower() == SEA:
            raise _fail(
                "BAD_TERRAIN_NAME",
                f"terrain name {quoted(raw)} must be a word of letters and digits, and not 'sea'.",
            )
        if raw.lower() in terrains:
            raise _fail("DUPLICATE_TERRAIN", f"terrain {quoted(raw)} is listed twice.")
        terrains.append(raw.lower())
    terrain_index = {t: i for i, t in enumerate(terrains)}

    cells_raw = _list(data, "cells")
    if not cells_raw:
        raise _fail("NO_CELLS", "'cells' is empty.")
    cell_ids: list[str] = []
    names: list[str] = []
    lookup: dict[str, int] = {}
    terrain: list[int] = []
    market: list[bool] = []
    for position, cell in enumerate(cells_raw):
        if not isinstance(cell, dict) or not isinstance(cell.get("id"), str) or not cell["id"]:
            raise _fail("BAD_CELL", f"cell #{position + 1} has no string 'id'.")
        cell_id = cell["id"]
        keys = {cell_id.lower()}
        label = cell.get("label")
        if label is not None:
            if not isinstance(label, str) or not label or not _NAME.match(label.lower()):
                raise _fail(
                    "BAD_LABEL", f"cell {quoted(cell_id)} has an invalid label {quoted(label)}."
                )
            keys.add(label.lower())
        for key in keys:
            if key == SEA or "|" in key or " " in key:
                raise _fail(
                    "BAD_CELL", f"cell name {quoted(key)} is reserved or has '|' or a space."
                )
            if key in lookup:
                raise _fail("DUPLICATE_CELL", f"cell name {quoted(key)} is used twice.")
            lookup[key] = len(cell_ids)
        kind = cell.get("terrain")
        if not isinstance(kind, str) or kind.lower() not in terrain_index:
            raise _fail(
                "UNKNOWN_TERRAIN",
                f"cell {quoted(cell_id)} has terrain {quoted(kind)}, which is not one of "
                f"{', '.join(terrains)}.",
            )
        is_market = cell.get("market", False)
        if not isinstance(is_market, bool):
            raise _fail("BAD_CELL", f"cell {quoted(cell_id)}: 'market' must be true or false.")
        cell_ids.append(cell_id)
        names.append(label.lower() if isinstance(label, str) else cell_id.lower())
        terrain.append(terrain_index[kind.lower()])
        market.append(is_market)
    count = len(cell_ids)
    placed = _coordinates(cells_raw, cell_ids)

    def cell_of(raw: Any, where: str) -> int:
        if not isinstance(raw, str) or raw.lower() not in lookup:
            raise _fail("UNKNOWN_CELL", f"{where} names an unknown cell {quoted(raw)}.")
        return lookup[raw.lower()]

    market_ducats = [0] * count
    markets_raw = _list(data, "markets", required=False)
    listed: set[int] = set()
    for entry in markets_raw:
        if not isinstance(entry, dict):
            raise _fail("BAD_MARKET", "each entry of 'markets' must be an object.")
        cell = cell_of(entry.get("cell"), "a market")
        if not market[cell]:
            raise _fail(
                "MARKET_MISMATCH", f"market {quoted(cell_ids[cell])} is not flagged 'market'."
            )
        if cell in listed:
            raise _fail("DUPLICATE_MARKET", f"market {quoted(cell_ids[cell])} is listed twice.")
        listed.add(cell)
        kind = entry.get("terrain")
        if kind is not None and (
            not isinstance(kind, str) or kind.lower() != terrains[terrain[cell]]
        ):
            raise _fail(
                "MARKET_MISMATCH",
                f"market {quoted(cell_ids[cell])} says terrain {quoted(kind)} but the cell is "
                f"{terrains[terrain[cell]]}.",
            )
        ducats = entry.get("starting_ducats", 1)
        if not isinstance(ducats, int) or isinstance(ducats, bool) or ducats < 0:
            raise _fail("BAD_MARKET", f"market {quoted(cell_ids[cell])}: bad 'starting_ducats'.")
        market_ducats[cell] = ducats
    for cell in range(count):
        if market[cell] and cell not in listed:
            if markets_raw:
                raise _fail(
                    "MARKET_MISMATCH",
                    f"cell {quoted(cell_ids[cell])} is flagged 'market' but not in 'markets'.",
                )
            market_ducats[cell] = 1

    sea_edges = [0] * count
    edges: list[tuple[int, int]] = []
    edge_index: dict[tuple[int, int], int] = {}
    edge_ids: set[str] = set()
    for position, edge in enumerate(_list(data, "edges")):
        where = f"edge #{position + 1}"
        if not isinstance(edge, dict) or not isinstance(edge.get("cells"), list):
            raise _fail("BAD_EDGE", f"{where} has no 'cells' list.")
        edge_id = edge.get("id")
        if edge_id is not None:
            if not isinstance(edge_id, str):
                raise _fail("BAD_EDGE", f"{where}: 'id' must be a string.")
            if edge_id in edge_ids:
                raise _fail("DUPLICATE_EDGE", f"edge {quoted(edge_id)} is listed twice.")
            edge_ids.add(edge_id)
            where = f"edge {quoted(edge_id)}"
        sides = edge["cells"]
        sea_sides = [s for s in sides if isinstance(s, str) and s.lower() == SEA]
        if len(sides) != 2 or len(sea_sides) == 2:
            raise _fail("BAD_EDGE", f"{where} must join two cells, or a cell and 'SEA'.")
        if sea_sides:
            land = next(s for s in sides if not (isinstance(s, str) and s.lower() == SEA))
            sea_edges[cell_of(land, where)] += 1
            continue
        if edge.get("sea") is True:
            raise _fail("BAD_EDGE", f"{where} is marked 'sea' but joins two cells.")
        a, b = cell_of(sides[0], where), cell_of(sides[1], where)
        if a == b:
            raise _fail("BAD_EDGE", f"{where} joins cell {quoted(cell_ids[a])} to itself.")
        pair = (a, b) if a < b else (b, a)
        if pair in edge_index:
            raise _fail(
                "DUPLICATE_EDGE",
                f"the edge between {quoted(cell_ids[a])} and {quoted(cell_ids[b])} "
                "is listed twice.",
            )
        edge_index[pair] = len(edges)
        edges.append(pair)

    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    for index, (a, b) in enumerate(edges):
        neighbours[a].append((b, index))
        neighbours[b].append((a, index))
    for cell in range(count):
        if not neighbours[cell] and not sea_edges[cell]:
            raise _fail("CELL_WITHOUT_EDGES", f"cell {quoted(cell_ids[cell])} has no edges.")
    _check_sea_reachable(cell_ids, neighbours, sea_edges)

    missions = _missions(data, terrains, terrain_index)
    deck = _deck(data, len(terrains))
    walls = _walls(data)
    centres, outlines = placed if placed else (derive_layout(neighbours), ((),) * count)
    return Board(
        name=name,
        approximate=approximate,
        note=note,
        terrains=tuple(terrains),
        cell_ids=tuple(cell_ids),
        names=tuple(names),
        lookup=lookup,
        terrain=tuple(terrain),
        market=tuple(market),
        market_ducats=tuple(market_ducats),
        sea_edges=tuple(sea_edges),
        edges=tuple(edges),
        edge_index=edge_index,
        neighbours=tuple(tuple(n) for n in neighbours),
        missions=missions,
        deck=deck,
        walls_by_players=walls,
        missions_assumed=data.get("mission_cards") is None,
        longest_name=max(
            len(text) for text in (*lookup, *terrains, SEA, *(m.name for m in missions))
        ),
        centres=centres,
        outlines=outlines,
        layout_derived=placed is None,
    )


def _point(raw: Any, where: str) -> Point:
    if (
        not isinstance(raw, list)
        or len(raw) != 2
        or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= MAX_COORDINATE
            for v in raw
        )
    ):
        raise _fail(
            "BAD_COORDINATES",
            f"{where} must be [x, y], two numbers within ±{MAX_COORDINATE:,}.",
        )
    return (float(raw[0]), float(raw[1]))


def _coordinates(
    cells_raw: list[Any], cell_ids: list[str]
) -> tuple[tuple[Point, ...], tuple[tuple[Point, ...], ...]] | None:
    """RULES.md "Board coordinates": each cell's optional `centroid` [x, y] and `corners`
    [[x, y], ...]; either every cell gives one of them or none does (None: derive them)."""
    centres: list[Point] = []
    outlines: list[tuple[Point, ...]] = []
    for position, (cell, cell_id) in enumerate(zip(cells_raw, cell_ids, strict=True)):
        where = f"cell {quoted(cell_id)}"
        raw_corners = cell.get("corners")
        raw_centre = cell.get("centroid")
        placed = raw_corners is not None or raw_centre is not None
        if position and placed != bool(centres):
            raise _fail(
                "BAD_COORDINATES",
                f"{where} {'has' if placed else 'lacks'} coordinates ('centroid' or "
                f"'corners') unlike the cells before it: give them for every cell or for none.",
            )
        if not placed:
            continue
        corners: tuple[Point, ...] = ()
        if raw_corners is not None:
            if not isinstance(raw_corners, list) or not 3 <= len(raw_corners) <= MAX_CORNERS:
                raise _fail(
                    "BAD_COORDINATES",
                    f"{where}: 'corners' must list 3 to {MAX_CORNERS} points [x, y].",
                )
            corners = tuple(_point(p, f"{where}: a corner") for p in raw_corners)
        if raw_centre is not None:
            centre = _point(raw_centre, f"{where}: 'centroid'")
        else:
            centre = (
                sum(x for x, _ in corners) / len(corners),
                sum(y for _, y in corners) / len(corners),
            )
        centres.append(centre)
        outlines.append(corners)
    return (tuple(centres), tuple(outlines)) if centres else None


def derive_layout(neighbours: Sequence[Sequence[tuple[int, int]]]) -> tuple[Point, ...]:
    """Where to draw the cells of a board file without coordinates (RULES.md "Board
    coordinates"): each connected group of cells is laid out so that drawn distances follow
    distances in the graph (one edge, one unit), by stress majorization started from the
    group's spectral layout (the smoothest two ways of numbering its cells); the groups stand
    side by side from west to east. Deterministic: no randomness, the same graph gives the
    same places."""
    count = len(neighbours)
    centres: list[Point] = [(0.0, 0.0)] * count
    grouped = [False] * count
    west = 0.0
    for start in range(count):
        if grouped[start]:
            continue
        group = [start]
        grouped[start] = True
        for cell in group:
            for other, _ in neighbours[cell]:
                if not grouped[other]:
                    grouped[other] = True
                    group.append(other)
        group.sort()
        local = _group_layout(group, neighbours)
        # Turned so that the file's first cell of the group lies west and north of its last,
        # as a file written row by row reads.
        (first_x, first_y), (last_x, last_y) = local[0], local[-1]
        flip_x = -1.0 if first_x > last_x else 1.0
        flip_y = -1.0 if first_y < last_y else 1.0
        local = [(x * flip_x, y * flip_y) for x, y in local]
        low_x = min(x for x, _ in local)
        high_x = max(x for x, _ in local)
        mean_y = sum(y for _, y in local) / len(local)
        for cell, (x, y) in zip(group, local, strict=True):
            centres[cell] = (round(x - low_x + west, 3), round(y - mean_y, 3))
        west += high_x - low_x + 2.0
    return tuple(centres)


def _group_layout(group: list[int], neighbours: Sequence[Sequence[tuple[int, int]]]) -> list[Point]:
    size = len(group)
    if size == 1:
        return [(0.0, 0.0)]
    position = {cell: i for i, cell in enumerate(group)}
    adjacency = [[position[other] for other, _ in neighbours[cell]] for cell in group]
    xs, ys = _spectral(adjacency)
    edge_lengths = [
        math.hypot(xs[i] - xs[j], ys[i] - ys[j]) for i in range(size) for j in adjacency[i]
    ]
    scale = len(edge_lengths) / (sum(edge_lengths) or 1.0)
    xs = [x * scale for x in xs]
    ys = [y * scale for y in ys]
    rounds = min(STRESS_ROUNDS, LAYOUT_WORK // (size * size))
    if rounds >= 4:
        _majorize_stress(adjacency, xs, ys, rounds)
    return list(zip(xs, ys, strict=True))


def _spectral(adjacency: list[list[int]]) -> tuple[list[float], list[float]]:
    """The two slowest non-constant modes of a random walk on the group, by power iteration
    on (I + D⁻¹A)/2, each kept D-orthogonal to the constant and to the one before."""
    size = len(adjacency)
    degree = [float(len(a)) for a in adjacency]
    work = size + sum(len(a) for a in adjacency)
    rounds = max(3, min(300, LAYOUT_WORK // (2 * work)))
    found: list[list[float]] = [[1.0] * size]
    for mode in (1, 2):
        # A fixed start spread over the cells (golden-ratio steps), different for each mode.
        vector = [((i + 1) * 0.6180339887 * mode) % 1.0 - 0.5 for i in range(size)]
        for _ in range(rounds):
            vector = [
                (vector[i] + sum(vector[j] for j in adjacency[i]) / degree[i]) / 2
                for i in range(size)
            ]
            for basis in found:
                weight = sum(d * b * b for d, b in zip(degree, basis, strict=True))
                if not weight:
                    continue  # a mode that vanished: the group has too few cells for two
                along = sum(d * v * b for d, v, b in zip(degree, vector, basis, strict=True))
                vector = [v - along / weight * b for v, b in zip(vector, basis, strict=True)]
            norm = math.sqrt(sum(d * v * v for d, v in zip(degree, vector, strict=True)))
            vector = [v / (norm or 1.0) for v in vector]
        found.append(vector)
    return found[1], found[2]


def _majorize_stress(
    adjacency: list[list[int]], xs: list[float], ys: list[float], rounds: int
) -> None:
    """Localized stress majorization (Gansner, Koren and North 2004) with weights 1/d²,
    where d counts the edges between two cells; moves `xs` and `ys` in place."""
    size = len(adjacency)
    distances: list[list[int]] = []
    for source in range(size):
        far = [-1] * size
        far[source] = 0
        frontier = [source]
        for cell in frontier:
            for other in adjacency[cell]:
                if far[other] < 0:
                    far[other] = far[cell] + 1
                    frontier.append(other)
        distances.append(far)
    for _ in range(rounds):
        for i in range(size):
            x_i, y_i = xs[i], ys[i]
            total_x = total_y = total_weight = 0.0
            for j, d in enumerate(distances[i]):
                if j == i:
                    continue
                dx, dy = x_i - xs[j], y_i - ys[j]
                apart = math.hypot(dx, dy) or 1e-9
                weight = 1.0 / (d * d)
                total_x += weight * (xs[j] + d * dx / apart)
                total_y += weight * (ys[j] + d * dy / apart)
                total_weight += weight
            xs[i], ys[i] = total_x / total_weight, total_y / total_weight


def _check_sea_reachable(
    cell_ids: list[str], neighbours: list[list[tuple[int, int]]], sea_edges: list[int]
) -> None:
    """RULES.md §5.1.c: a region with no way to the sea would be enclosed before play."""
    reached = [bool(s) for s in sea_edges]
    frontier = [c for c, s in enumerate(sea_edges) if s]
    while frontier:
        cell = frontier.pop()
        for other, _ in neighbours[cell]:
            if not reached[other]:
                reached[other] = True
                frontier.append(other)
    for cell, ok in enumerate(reached):
        if not ok:
            raise _fail(
                "LANDLOCKED",
                f"cell {quoted(cell_ids[cell])} cannot reach the sea: its region would be "
                "enclosed before anyone builds.",
            )


def _missions(
    data: dict[str, Any], terrains: list[str], terrain_index: dict[str, int]
) -> tuple[Mission, ...]:
    """RULES.md §9: mission cards from the file, or the balanced assumption."""
    raw = data.get("mission_cards")
    if raw is None:
        if len(terrains) < 6:
            raise _fail("NO_MISSIONS", "'mission_cards' is required with fewer than 6 terrains.")
        return tuple(Mission(n, frozenset(t)) for n, t in DEFAULT_MISSIONS)
    if not isinstance(raw, list) or not raw:
        raise _fail("BAD_MISSION", "'mission_cards' must be a non-empty list.")
    missions: list[Mission] = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise _fail("BAD_MISSION", "each mission card needs a string 'id'.")
        mission_name = entry["id"].lower()
        if not _NAME.match(mission_name) or any(m.name == mission_name for m in missions):
            raise _fail("BAD_MISSION", f"mission id {quoted(entry['id'])} is invalid or repeated.")
        kinds = entry.get("terrains")
        if not isinstance(kinds, list) or not kinds:
            raise _fail("BAD_MISSION", f"mission {quoted(mission_name)} needs a list of terrains.")
        indices: set[int] = set()
        for kind in kinds:
            if not isinstance(kind, str) or kind.lower() not in terrain_index:
                raise _fail(
                    "UNKNOWN_TERRAIN",
                    f"mission {quoted(mission_name)} names unknown terrain {quoted(kind)}.",
                )
            indices.add(terrain_index[kind.lower()])
        missions.append(Mission(mission_name, frozenset(indices)))
    return tuple(missions)


def _deck(data: dict[str, Any], terrain_count: int) -> tuple[int, ...]:
    """RULES.md §1: 9 land cards per terrain and 6 Market/Sea cards unless the file says."""
    raw = data.get("land_deck", {})
    if not isinstance(raw, dict):
        raise _fail("BAD_DECK", "'land_deck' must be an object.")
    per_terrain = raw.get("per_terrain", 9)
    market_sea = raw.get("market_sea", 6)
    for value in (per_terrain, market_sea):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _fail("BAD_DECK", "'land_deck' counts must be whole numbers.")
    return (per_terrain,) * terrain_count + (market_sea,)


def _walls(data: dict[str, Any]) -> dict[int, int]:
    """RULES.md §2: walls in the supply by player count (30/33/36 unless the file says)."""
    raw = data.get("walls_by_player_count")
    if raw is None:
        return dict(DEFAULT_WALLS)
    if not isinstance(raw, dict):
        raise _fail("BAD_WALLS", "'walls_by_player_count' must map player counts to walls.")
    walls = dict(DEFAULT_WALLS)
    for key, value in raw.items():
        if not str(key).isdigit() or not isinstance(value, int) or value < 1:
            raise _fail(
                "BAD_WALLS",
                f"'walls_by_player_count' has a bad entry {quoted(key)}: {quoted(value)}.",
            )
        walls[int(key)] = value
    return walls
