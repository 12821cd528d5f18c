"""Reading component files (boards, decks, tiles), the same way for every game.

A component file arrives from a client at creation (or from an import), so it is hostile
until read: every game reads it through these functions, which refuse, as `InvalidSetup`
with the game's own code, a file that is too large, not UTF-8 text, JSON nested deeper than
any board needs, or a number with more digits than any count on a table could have (a
5,000-digit integer would otherwise cost seconds to convert, or escape as a ValueError).
The one file this module reads is a game's own default component, shipped in the game's
`data/` folder (`packaged_component`); it never reads a path a client names.

A validated file is kept in a bounded cache keyed by a hash of its content, so folding a
game again does not parse its board again, and no number of distinct uploads grows memory.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cache
from importlib import resources
from typing import Any, Final, Generic, TypeVar

from tablelog.replay.core import InvalidSetup, clip
from tablelog.v1 import game_pb2

MAX_COMPONENT_BYTES: Final = 1 << 20
"""The largest component file a game reads (the service refuses larger ones earlier)."""
MAX_JSON_DEPTH: Final = 16
"""Nesting of a JSON component file: a board is objects of lists of small objects."""
MAX_NUMBER_DIGITS: Final = 9
"""Digits of a number in a component file: every count, value and cost fits in 9."""
MAX_CSV_ROWS: Final = 10_000
"""Rows of a CSV component file (a deck or a tile bag has about a hundred)."""
CACHE_SIZE: Final = 32
"""Validated files kept per game (a service folds few distinct boards at a time)."""

_CONTROL: Final = frozenset(chr(c) for c in range(32)) - {"\t", "\n", "\r"}


def component_text(content: bytes, what: str, code: str) -> str:
    """The content of a component file as text; `InvalidSetup(code)` naming `what` ("The
    board file") when it is too large, not UTF-8, or holds control characters (not text)."""
    if len(content) > MAX_COMPONENT_BYTES:
        raise InvalidSetup(
            code,
            f"{what} is {len(content):,} bytes; a component file is at most "
            f"{MAX_COMPONENT_BYTES:,}.",
        )
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidSetup(code, f"{what} is not UTF-8 text.") from None
    if not _CONTROL.isdisjoint(text):
        raise InvalidSetup(code, f"{what} holds control characters: it is not a text file.")
    return text


def _number(code: str, what: str) -> Callable[[str], int | float]:
    def parse(digits: str) -> int | float:
        if len(digits) > 2 * MAX_NUMBER_DIGITS or sum(map(str.isdigit, digits)) > MAX_NUMBER_DIGITS:
            raise InvalidSetup(
                code, f"{what} has the number {clip(digits, 20)}: too large for any component."
            )
        return float(digits) if any(ch in digits for ch in ".eE") else int(digits)

    return parse


def _refuse_constant(code: str, what: str) -> Callable[[str], Any]:
    def parse(name: str) -> Any:
        raise InvalidSetup(code, f"{what} has {name}, which is not a number a component has.")

    return parse


def _check_depth(data: Any, code: str, what: str) -> None:
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise InvalidSetup(code, f"{what} is nested too deeply to be a component file.")
        if isinstance(value, dict):
            pending.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            pending.extend((v, depth + 1) for v in value)


def read_json(content: bytes, what: str, code: str) -> Any:
    """A JSON component file as Python values, refused as `InvalidSetup(code)` when it is not
    bounded text (`component_text`), not JSON, nested deeper than MAX_JSON_DEPTH, or has a
    number longer than MAX_NUMBER_DIGITS digits, NaN or Infinity."""
    text = component_text(content, what, code)
    number = _number(code, what)
    try:
        data = json.loads(
            text,
            parse_int=number,
            parse_float=number,
            parse_constant=_refuse_constant(code, what),
        )
    except json.JSONDecodeError as error:
        raise InvalidSetup(
            code, f"{what} is not valid JSON ({error.msg} at line {error.lineno})."
        ) from None
    except RecursionError:  # the decoder recursed past Python's limit: far too deep anyway
        raise InvalidSetup(code, f"{what} is nested too deeply to be a component file.") from None
    _check_depth(data, code, what)
    return data


def read_csv(content: bytes, what: str, code: str) -> list[list[str]]:
    """The non-empty rows of a CSV component file, each cell stripped; refused as
    `InvalidSetup(code)` when it is not bounded text, not CSV, or has over MAX_CSV_ROWS rows."""
    text = component_text(content, what, code)
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(text)):
            if not row:
                continue
            if len(rows) >= MAX_CSV_ROWS:
                raise InvalidSetup(code, f"{what} has over {MAX_CSV_ROWS:,} rows.")
            rows.append([cell.strip() for cell in row])
    except csv.Error as error:  # a field over the csv module's limit, an unclosed quote, ...
        raise InvalidSetup(code, f"{what} is not a readable CSV file: {error}.") from None
    return rows


def read_csv_records(content: bytes, what: str, code: str) -> list[dict[str, str]]:
    """The rows of a CSV component file with a header line, as {column: cell}; a missing
    cell reads as ""."""
    rows = read_csv(content, what, code)
    if not rows:
        return []
    header = [name.lower() for name in rows[0]]
    return [
        {name: row[i] if i < len(row) else "" for i, name in enumerate(header)} for row in rows[1:]
    ]


def whole_number(text: str, what: str, code: str, low: int, high: int) -> int:
    """`text` read as a whole number from `low` to `high`, else `InvalidSetup(code)`. The
    digits are counted before any conversion, so a huge number costs nothing."""
    digits = text.strip()
    body = digits[1:] if digits[:1] in "+-" else digits
    if not body.isdigit() or not body.isascii():
        raise InvalidSetup(code, f"{what}: {clip(digits)!r} is not a whole number.")
    if len(body.lstrip("0")) > MAX_NUMBER_DIGITS:
        raise InvalidSetup(code, f"{what}: {clip(digits)} is outside {low}..{high}.")
    number = int(digits)
    if not low <= number <= high:
        raise InvalidSetup(code, f"{what}: {number} is outside {low}..{high}.")
    return number


T = TypeVar("T")


class ComponentCache(Generic[T]):
    """Validated component files, at most `size` of them, keyed by a SHA-256 of their
    content (plus whatever else the reading depends on); the least recently used go first."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[bytes, Hashable], T] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def load(self, content: bytes, extra: Hashable, read: Callable[[], T]) -> T:
        """The cached value for `content` and `extra`, or `read()` (which raises
        `InvalidSetup` for a bad file; refusals are not cached)."""
        key = (hashlib.sha256(content).digest(), extra)
        # pop and re-insert rather than look up and move: two callers racing on one key
        # (threads of a service) can then never make the other's step fail.
        value = self._entries.pop(key, None)
        if value is None:
            value = read()
        self._entries[key] = value
        while len(self._entries) > self._size:
            try:
                self._entries.popitem(last=False)
            except KeyError:  # another caller emptied it first
                break
        return value


def quoted(value: object, limit: int = 40) -> str:
    """`repr(value)` clipped for an error message (`tablelog.replay.core.clip`)."""
    return clip(repr(value), limit)


def packaged_component(
    package: str, file: str, name: str, media_type: str, approximate_note: str = ""
) -> game_pb2.ComponentFile:
    """The default component file `file` shipped in the `data/` folder of the game package
    `package`, as a new game records it under `name`; marked approximate when
    `approximate_note` says what is not sourced."""
    content = _packaged_content(package, file)
    return game_pb2.ComponentFile(
        name=name,
        media_type=media_type,
        content=content,
        approximate=bool(approximate_note),
        approximate_note=approximate_note,
    )


@cache
def _packaged_content(package: str, file: str) -> bytes:
    """The bytes of a file the engine ships, read once: a game's default components are
    asked for at every creation and every record read or written, and the files do not
    change while the engine runs."""
    return resources.files(package).joinpath("data", file).read_bytes()
