"""The 36 goods tiles as data (Rules §B1), read from a CSV component file: one row per piece.
Identical pieces (the two 5s of each good) form one kind, named as printed: "cloth5", "gold"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tablelog.replay.components import ComponentCache, packaged_component, quoted
from tablelog.replay.core import InvalidSetup
from tablelog.replay.games.medici_common.components import (
    GOOD_INDEX,
    MAX_COPIES,
    MAX_VALUE,
    cell_number,
    read_rows,
)
from tablelog.v1 import game_pb2

TILES_COMPONENT: Final = "tiles"
TILES_FILE: Final = "medici_tiles.csv"


@dataclass(frozen=True, slots=True)
class TileKind:
    """A kind of tile: name, good (-1 for gold, which moves no pyramid marker) and value."""

    name: str
    good: int
    value: int


@dataclass(frozen=True, slots=True)
class Tiles:
    kinds: tuple[TileKind, ...]
    counts: tuple[int, ...]
    by_name: dict[str, int]
    total: int


_TILES: ComponentCache[Tiles] = ComponentCache()


def load_tiles(content: bytes) -> Tiles:
    """Rules §B1: read and validate a tile file (the columns of medici_tiles.csv), cached by
    content."""
    return _TILES.load(content, None, lambda: _read_tiles(content))


def _read_tiles(content: bytes) -> Tiles:
    rows = read_rows(content, "TILE_FILE", "tile file")
    kinds: list[TileKind] = []
    counts: list[int] = []
    by_name: dict[str, int] = {}
    for row in rows:
        kind = row.get("kind", "").lower()
        good = row.get("good", "").lower()
        value = cell_number(row, "value", "TILE_FILE", "tile file", MAX_VALUE)
        if kind == "goods":
            if good not in GOOD_INDEX:
                raise InvalidSetup("TILE_FILE", f"Unknown good {quoted(good)} in the tile file.")
            tile = TileKind(f"{good}{value}", GOOD_INDEX[good], value)
        elif kind == "gold":
            tile = TileKind("gold" if value == 10 else f"gold{value}", -1, value)
        else:
            raise InvalidSetup("TILE_FILE", f"Unknown tile kind {quoted(kind)} in the tile file.")
        if tile.name in by_name:
            counts[by_name[tile.name]] += 1
        else:
            by_name[tile.name] = len(kinds)
            kinds.append(tile)
            counts.append(1)
    if not kinds:
        raise InvalidSetup("TILE_FILE", "The tile file lists no tiles.")
    if sum(counts) > MAX_COPIES:
        raise InvalidSetup("TILE_FILE", f"The tile file lists over {MAX_COPIES} tiles.")
    return Tiles(tuple(kinds), tuple(counts), by_name, sum(counts))


def default_components() -> tuple[game_pb2.ComponentFile, ...]:
    """Rules §B1: the shipped tile file, one row per piece of the published game."""
    return (packaged_component(__package__, TILES_FILE, TILES_COMPONENT, "text/csv"),)
