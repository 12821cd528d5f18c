"""The board data of Mercado de Lisboa: loading, validating and the fixed geometry.

Rules §1 and §3. The 5x5 grid and its 20 entrances are confirmed; which 11 spaces carry a
restaurant mark and which goods each customer tile shows are approximate (RULES.md §10,
#1 and #2), so they come from a component file that a game may replace at creation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tablelog.replay.components import ComponentCache, packaged_component, quoted, read_json
from tablelog.replay.core import InvalidSetup
from tablelog.v1 import game_pb2

COMPONENT_NAME: Final = "mercado_board.json"
# Read by players (the view, the picture, GameSummary.approximate_notes); what it rests
# on is the rules reference's §3 and §10.
APPROXIMATE_NOTE: Final = (
    "Restaurant-mark positions and the goods on customer tiles are approximate: replace "
    "mercado_board.json when the real data is known."
)

GOODS: Final = ("fish", "flower", "tomato", "meat", "grape")
RESTAURANTS: Final = ("sushi_bar", "tea_house", "pizzeria", "burger_joint", "wine_bar", "pub")
PUB: Final = 5
SIZE = 5
SPACES = 25
ENTRANCES = 20
TILES_PER_SIZE: Final = (10, 10, 10, 5)
"""Customer tiles showing 1, 2, 3 and 4 customers (§1, confirmed)."""
MARKS: Final = 11
RESTAURANT_COPIES: Final = 2

# Lines: rows 0..4 are lines 0..4, columns 0..4 are lines 5..9.
LINE_SPACES: Final = tuple(tuple(r * SIZE + c for c in range(SIZE)) for r in range(SIZE)) + tuple(
    tuple(r * SIZE + c for r in range(SIZE)) for c in range(SIZE)
)
SPACE_LINES: Final = tuple((s // SIZE, SIZE + s % SIZE) for s in range(SPACES))
# Entrances: 0..4 north of columns, 5..9 south of columns, 10..14 west of rows, 15..19 east.
ENTRANCE_LINE: Final = tuple(
    [SIZE + c for c in range(SIZE)] + [SIZE + c for c in range(SIZE)] + list(range(SIZE)) * 2
)
ENTRANCE_NAMES: Final = tuple(f"{side}{i + 1}" for side in "nswe" for i in range(SIZE))
LINE_ENTRANCES: Final = tuple(
    tuple(e for e in range(ENTRANCES) if ENTRANCE_LINE[e] == line) for line in range(2 * SIZE)
)
SPACE_ENTRANCES: Final = tuple(
    LINE_ENTRANCES[SPACE_LINES[s][0]] + LINE_ENTRANCES[SPACE_LINES[s][1]] for s in range(SPACES)
)
SPACE_NAMES: Final = tuple(f"{'abcde'[s % SIZE]}{s // SIZE + 1}" for s in range(SPACES))
NEIGHBOURS: Final = tuple(
    tuple(
        (r + dr) * SIZE + (c + dc)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if 0 <= r + dr < SIZE and 0 <= c + dc < SIZE
    )
    for r, c in (divmod(s, SIZE) for s in range(SPACES))
)


@dataclass(frozen=True, slots=True)
class Board:
    """The replaceable data of one game: restaurant marks and customer tile kinds."""

    marks: tuple[int, ...]
    """Spaces (0..24) with a restaurant mark, ascending."""
    kinds: tuple[tuple[int, tuple[int, ...]], ...]
    """Distinct customer tiles as (customers, goods in canonical order)."""
    kind_counts: tuple[int, ...]
    approximate: bool
    approximate_note: str


def default_components() -> tuple[game_pb2.ComponentFile, ...]:
    """Rules §3: the shipped (approximate) board data."""
    return (
        packaged_component(
            __package__, COMPONENT_NAME, COMPONENT_NAME, "application/json", APPROXIMATE_NOTE
        ),
    )


def _fail(message: str) -> InvalidSetup:
    return InvalidSetup("INVALID_COMPONENTS", f"{COMPONENT_NAME}: {message}")


def _good(name: Any) -> int:
    if not isinstance(name, str) or name.strip().lower() not in GOODS:
        raise _fail(f"unknown good {quoted(name)}; goods are {', '.join(GOODS)}.")
    return GOODS.index(name.strip().lower())


def _marks(data: dict[str, Any]) -> tuple[int, ...]:
    raw = data.get("restaurant_mark_spaces")
    if raw is None:
        spaces = data.get("spaces")
        if not isinstance(spaces, list):
            raise _fail("needs restaurant_mark_spaces or spaces.")
        raw = [
            [s.get("row"), s.get("col")]
            for s in spaces
            if isinstance(s, dict) and s.get("restaurant_mark") is True
        ]
    if not isinstance(raw, list):
        raise _fail("restaurant_mark_spaces must be a list of [row, col].")
    marks: set[int] = set()
    for item in raw:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in item)
            or not all(0 <= v < SIZE for v in item)
        ):
            raise _fail(f"a restaurant mark must be [row, col] with 0..4 each, not {quoted(item)}.")
        marks.add(item[0] * SIZE + item[1])
    if len(marks) != MARKS or len(raw) != MARKS:
        raise _fail(f"the board has {MARKS} distinct restaurant marks, not {len(raw)}.")
    return tuple(sorted(marks))


def _kinds(data: dict[str, Any]) -> tuple[tuple[tuple[int, tuple[int, ...]], ...], tuple[int, ...]]:
    raw = data.get("customer_tiles")
    if not isinstance(raw, list):
        raise _fail("customer_tiles must be a list.")
    counts: dict[tuple[int, tuple[int, ...]], int] = {}
    per_size = [0, 0, 0, 0]
    for tile in raw:
        if not isinstance(tile, dict):
            raise _fail(f"a customer tile must be an object, not {quoted(tile)}.")
        n = tile.get("customers")
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 4:
            raise _fail(f"a customer tile shows 1 to 4 customers, not {quoted(n)}.")
        goods = tile.get("goods")
        if not isinstance(goods, list) or not 1 <= len(goods) <= 2:
            raise _fail(f"a customer tile shows one or two goods, not {quoted(goods)}.")
        key = (n, tuple(sorted(_good(g) for g in goods)))
        counts[key] = counts.get(key, 0) + 1
        per_size[n - 1] += 1
    if tuple(per_size) != TILES_PER_SIZE:
        raise _fail(
            "there are 10, 10, 10 and 5 customer tiles of 1, 2, 3 and 4 customers, not "
            + ", ".join(map(str, per_size))
            + "."
        )
    kinds = tuple(sorted(counts))
    return kinds, tuple(counts[k] for k in kinds)


_BOARDS: ComponentCache[Board] = ComponentCache()


def load_board(component: game_pb2.ComponentFile) -> Board:
    """Rules §3: validate a board component file and read it (cached by content)."""
    extra = (component.approximate, component.approximate_note)
    return _BOARDS.load(component.content, extra, lambda: _read_board(component))


def _read_board(component: game_pb2.ComponentFile) -> Board:
    data = read_json(component.content, COMPONENT_NAME, "INVALID_COMPONENTS")
    if not isinstance(data, dict):
        raise _fail("must be a JSON object.")
    marks = _marks(data)
    kinds, counts = _kinds(data)
    note = component.approximate_note or (APPROXIMATE_NOTE if component.approximate else "")
    return Board(marks, kinds, counts, component.approximate, note)
