"""Splendor's components: the 90 development cards and the 10 nobles (RULES.md §1).

The data ships in this package (`data/*.csv`) and is offered as the default component files
of a new game; a game may be created with replacement files, which are validated here.
Parsed files are cached by content, so folding many games shares one `Components` value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from tablelog.replay.components import (
    ComponentCache,
    packaged_component,
    quoted,
    read_csv,
    whole_number,
)
from tablelog.replay.core import InvalidSetup
from tablelog.v1 import game_pb2

GEMS: Final = ("white", "blue", "green", "red", "black")
"""The five gem colours in rules order; index 5 is gold in token tuples."""
GOLD: Final = 5
LETTERS: Final = "wugrky"
"""Notation letters: w u g r k for the gems, y for gold (RULES.md, suggested notation)."""

CARDS_FILE: Final = "splendor_cards.csv"
NOBLES_FILE: Final = "splendor_nobles.csv"
CARD_HEADER: Final = ("id", "level", "bonus", "points", *GEMS)
NOBLE_HEADER: Final = ("id", "points", *GEMS)
MAX_ID: Final = 10_000


def cost_text(cost: tuple[int, ...]) -> str:
    """`w2u3r3`: the non-zero counts in gem order."""
    return "".join(f"{LETTERS[c]}{n}" for c, n in enumerate(cost) if n)


@dataclass(frozen=True, slots=True)
class Card:
    """A development card: `bonus` is a gem index 0-4, `cost` five counts (RULES.md §1)."""

    id: int
    level: int
    bonus: int
    points: int
    cost: tuple[int, int, int, int, int]
    text: str


@dataclass(frozen=True, slots=True)
class Noble:
    """A noble tile: the card bonuses it requires per gem colour (RULES.md §7)."""

    id: int
    points: int
    requires: tuple[int, int, int, int, int]
    text: str


@dataclass(frozen=True, slots=True)
class Components:
    """The cards and nobles of one game, indexed for the rules core."""

    cards: tuple[Card | None, ...]
    """Indexed by card id (unused ids are None)."""
    levels: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    """The card ids of level 1, 2 and 3, in file order."""
    nobles: dict[int, Noble]
    by_text: dict[str, int]
    noble_by_text: dict[str, int]
    level_masks: tuple[int, int, int]
    """A bit per card id of each level (the unseen sets are bit masks)."""

    def card(self, card_id: int) -> Card:
        card = self.cards[card_id] if 0 < card_id < len(self.cards) else None
        if card is None:
            raise KeyError(card_id)
        return card

    def has_card(self, card_id: int) -> bool:
        return 0 < card_id < len(self.cards) and self.cards[card_id] is not None


def _int(value: str, what: str, low: int, high: int) -> int:
    return whole_number(value, what, "COMPONENTS", low, high)


def _rows(content: bytes, name: str, header: tuple[str, ...]) -> list[list[str]]:
    rows = read_csv(content, name, "COMPONENTS")
    if not rows or tuple(rows[0]) != header:
        raise InvalidSetup("COMPONENTS", f"{name} must start with the header {','.join(header)}.")
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise InvalidSetup(
                "COMPONENTS", f"{name} line {number} has {len(row)} fields, not {len(header)}."
            )
    return rows[1:]


_COMPONENTS: ComponentCache[Components] = ComponentCache()


def parse_components(cards_csv: bytes, nobles_csv: bytes) -> Components:
    """Validate and index the two component files (RULES.md §1: data files), cached by
    content."""
    nobles_key = hashlib.sha256(nobles_csv).digest()
    return _COMPONENTS.load(cards_csv, nobles_key, lambda: _read(cards_csv, nobles_csv))


def _read(cards_csv: bytes, nobles_csv: bytes) -> Components:
    cards: dict[int, Card] = {}
    by_text: dict[str, int] = {}
    for row in _rows(cards_csv, CARDS_FILE, CARD_HEADER):
        where = f"{CARDS_FILE} card {row[0]}"
        card_id = _int(row[0], where, 1, MAX_ID)
        level = _int(row[1], where + " level", 1, 3)
        if row[2] not in GEMS:
            raise InvalidSetup(
                "COMPONENTS", f"{where}: bonus {quoted(row[2])} is not a gem colour."
            )
        bonus = GEMS.index(row[2])
        points = _int(row[3], where + " points", 0, 9)
        c0, c1, c2, c3, c4 = (_int(v, where + " cost", 0, 9) for v in row[4:9])
        cost = (c0, c1, c2, c3, c4)
        text = f"{level}{LETTERS[bonus]}{points}:{cost_text(cost)}"
        if card_id in cards:
            raise InvalidSetup("COMPONENTS", f"{CARDS_FILE}: card id {card_id} appears twice.")
        if text in by_text:
            raise InvalidSetup(
                "COMPONENTS", f"{CARDS_FILE}: two cards read {text}; cards must be distinct."
            )
        cards[card_id] = Card(card_id, level, bonus, points, cost, text)
        by_text[text] = card_id
    levels = tuple(tuple(i for i in cards if cards[i].level == lv) for lv in (1, 2, 3))
    for lv, ids in enumerate(levels, start=1):
        if not ids:
            raise InvalidSetup("COMPONENTS", f"{CARDS_FILE} has no level-{lv} cards.")
    nobles: dict[int, Noble] = {}
    noble_by_text: dict[str, int] = {}
    for row in _rows(nobles_csv, NOBLES_FILE, NOBLE_HEADER):
        where = f"{NOBLES_FILE} noble {row[0]}"
        noble_id = _int(row[0], where, 1, MAX_ID)
        points = _int(row[1], where + " points", 0, 9)
        r0, r1, r2, r3, r4 = (_int(v, where + " requirement", 0, 9) for v in row[2:7])
        requires = (r0, r1, r2, r3, r4)
        text = cost_text(requires)
        if noble_id in nobles or not text or text in noble_by_text:
            raise InvalidSetup(
                "COMPONENTS", f"{where}: nobles need distinct ids and distinct requirements."
            )
        nobles[noble_id] = Noble(noble_id, points, requires, text)
        noble_by_text[text] = noble_id
    table: list[Card | None] = [None] * (max(cards) + 1)
    for card_id, card in cards.items():
        table[card_id] = card
    l1, l2, l3 = (sum(1 << i for i in ids) for ids in levels)
    return Components(
        cards=tuple(table),
        levels=(levels[0], levels[1], levels[2]),
        nobles=nobles,
        by_text=by_text,
        noble_by_text=noble_by_text,
        level_masks=(l1, l2, l3),
    )


def default_components() -> tuple[game_pb2.ComponentFile, ...]:
    """The published cards and nobles, verified across four sources (RULES.md §10)."""
    return tuple(
        packaged_component(__package__, name, name, "text/csv")
        for name in (CARDS_FILE, NOBLES_FILE)
    )


def load(files: Mapping[str, game_pb2.ComponentFile]) -> Components:
    """The components of a game from the files recorded in its creation event: a replay
    never depends on the packaged files, which may change after the game was recorded."""
    missing = [name for name in (CARDS_FILE, NOBLES_FILE) if name not in files]
    if missing:
        raise InvalidSetup(
            "COMPONENTS", f"A Splendor game must record its {' and '.join(missing)} file."
        )
    contents = {name: files[name].content for name in (CARDS_FILE, NOBLES_FILE)}
    unknown = set(files) - {CARDS_FILE, NOBLES_FILE}
    if unknown:
        raise InvalidSetup(
            "COMPONENTS", f"Splendor has no component file called {', '.join(sorted(unknown))}."
        )
    return parse_components(contents[CARDS_FILE], contents[NOBLES_FILE])
