"""The 36 goods tiles as data (Rules §B1), read from a CSV component file: one row per piece.
Identical pieces (the two 5s of each good) form one kind, named as printed: "cloth5", "gold"."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Final

from replay.core import InvalidSetup
from replay.games.medici_common.world import GOOD_INDEX, bad_rows, read_csv_rows
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


def load_tiles(content: bytes) -> Tiles:
    """Read and validate a tile file (the columns of medici_tiles.csv)."""
    rows = read_csv_rows(content, "TILE_FILE", "tile file")
    kinds: list[TileKind] = []
    counts: list[int] = []
    by_name: dict[str, int] = {}
    with bad_rows("TILE_FILE", "tile file"):
        for row in rows:
            kind = (row.get("kind") or "").strip().lower()
            good = (row.get("good") or "").strip().lower()
            value = int(row["value"])
            if kind == "goods":
                if good not in GOOD_INDEX:
                    raise InvalidSetup("TILE_FILE", f"Unknown good {good!r} in the tile file.")
                tile = TileKind(f"{good}{value}", GOOD_INDEX[good], value)
            elif kind == "gold":
                tile = TileKind("gold" if value == 10 else f"gold{value}", -1, value)
            else:
                raise InvalidSetup("TILE_FILE", f"Unknown tile kind {kind!r} in the tile file.")
            if tile.name in by_name:
                counts[by_name[tile.name]] += 1
            else:
                by_name[tile.name] = len(kinds)
                kinds.append(tile)
                counts.append(1)
    if not kinds:
        raise InvalidSetup("TILE_FILE", "The tile file lists no tiles.")
    return Tiles(tuple(kinds), tuple(counts), by_name, sum(counts))


def default_tiles_file() -> game_pb2.ComponentFile:
    content = resources.files(__package__).joinpath(TILES_FILE).read_bytes()
    return game_pb2.ComponentFile(name=TILES_COMPONENT, media_type="text/csv", content=content)
