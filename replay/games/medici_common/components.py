"""The goods of both Medici games, which their component files name, and the reading of
those CSV files through the shared loaders of `tablelog.replay.components`."""

from __future__ import annotations

from typing import Final

from tablelog.replay.components import read_csv_records, whole_number
from tablelog.replay.core import InvalidSetup

GOODS: Final = ("cloth", "fur", "grain", "dye", "spice")
"""The five goods, in the order of the board game's pyramids (seed-ZH)."""

GOOD_INDEX: Final = {good: i for i, good in enumerate(GOODS)}

MAX_VALUE: Final = 99
"""The largest value a tile or card of either game may show (the real ones reach 10)."""
MAX_COPIES: Final = 999
"""The most copies of one kind a component file may list (the real decks have under 20)."""


def read_rows(content: bytes, code: str, what: str) -> list[dict[str, str]]:
    """The rows of a component CSV file by column name; `InvalidSetup(code)` naming `what`
    ("deck file") when it is not a bounded UTF-8 CSV file."""
    return read_csv_records(content, f"The {what}", code)


def cell_number(row: dict[str, str], column: str, code: str, what: str, high: int) -> int:
    """The whole number 0..`high` in `column` of a row; `InvalidSetup(code)` otherwise."""
    if column not in row:
        raise InvalidSetup(code, f"The {what} has no {column!r} column.")
    return whole_number(row[column], f"The {what}'s {column}", code, 0, high)
