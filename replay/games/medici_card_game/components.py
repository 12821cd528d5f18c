"""The goods deck as data (Rules §A1, G-A1): card kinds and their copy counts, read from a
CSV component file. The shipped file's counts are placeholders (UNVERIFIED)."""

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

DECK_COMPONENT: Final = "deck"
DECK_FILE: Final = "medici_card_game_deck.csv"
DECK_TOTAL: Final = 95
"""§A1: the goods deck has 95 cards (the one sourced count of the deck)."""
UNVERIFIED_NOTE: Final = (
    "The per-card copy counts of the deck are UNVERIFIED placeholders (only the 95-card total "
    "and the card kinds are sourced, Rules G-A1): table mode checks only that a revealed card "
    "is a real kind; dealt mode deals from the placeholder deck."
)


@dataclass(frozen=True, slots=True)
class CardKind:
    """One kind of card (Rules §A1): its printed name, good (-1 for neutral), value, icons,
    green flag (no hold space) and whether it goes to the warehouse."""

    name: str
    good: int
    value: int
    icons: int
    green_flag: bool
    takes_hold: bool
    to_warehouse: bool


@dataclass(frozen=True, slots=True)
class Deck:
    kinds: tuple[CardKind, ...]
    counts: tuple[int, ...]
    by_name: dict[str, int]
    verified: bool
    total: int


def _yes(text: str) -> bool:
    return text.strip().lower().startswith("yes")


def _kind_name(kind: str, good: str, value: int) -> str:
    if kind == "goods":
        return f"{good}{value}"
    if kind == "goods_flag":
        return f"{good}flag"
    if kind == "neutral_flag":
        return f"green{value}"
    if kind == "neutral_black":
        return f"black{value}"
    raise InvalidSetup("DECK_FILE", f"Unknown card kind {quoted(kind)} in the deck file.")


_DECKS: ComponentCache[Deck] = ComponentCache()


def load_deck(content: bytes) -> Deck:
    """Rules §A1, G-A1: read and validate a deck file (the columns of
    medici_card_game_deck.csv), cached by content. The deck is verified when every row has a
    `count_confirmed`, and then its copies must add up to the 95 cards of §A1; otherwise
    `count_placeholder` is used (any total: a placeholder deck is marked unverified wherever
    it is shown)."""
    return _DECKS.load(content, None, lambda: _read_deck(content))


def _read_deck(content: bytes) -> Deck:
    rows = read_rows(content, "DECK_FILE", "deck file")
    if not rows:
        raise InvalidSetup("DECK_FILE", "The deck file lists no cards.")
    kinds: list[CardKind] = []
    confirmed: list[int | None] = []
    placeholder: list[int] = []
    for row in rows:
        good = row.get("good", "").lower()
        kind = row.get("kind", "").lower()
        value = cell_number(row, "value", "DECK_FILE", "deck file", MAX_VALUE)
        icons = cell_number(row, "icons", "DECK_FILE", "deck file", MAX_VALUE)
        if kind.startswith("goods") and good not in GOOD_INDEX:
            raise InvalidSetup("DECK_FILE", f"Unknown good {quoted(good)} in the deck file.")
        for column in ("green_flag", "takes_hold_space", "goes_to_warehouse"):
            if column not in row:
                raise InvalidSetup("DECK_FILE", f"The deck file has no {quoted(column)} column.")
        kinds.append(
            CardKind(
                name=_kind_name(kind, good, value),
                good=GOOD_INDEX[good] if kind.startswith("goods") else -1,
                value=value,
                icons=icons,
                green_flag=_yes(row["green_flag"]),
                takes_hold=_yes(row["takes_hold_space"]),
                to_warehouse=_yes(row["goes_to_warehouse"]),
            )
        )
        sure = row.get("count_confirmed", "")
        confirmed.append(
            cell_number(row, "count_confirmed", "DECK_FILE", "deck file", MAX_COPIES)
            if sure
            else None
        )
        placeholder.append(
            cell_number(row, "count_placeholder", "DECK_FILE", "deck file", MAX_COPIES)
            if row.get("count_placeholder", "")
            else 0
        )
    verified = all(c is not None for c in confirmed)
    counts = tuple(c or 0 for c in confirmed) if verified else tuple(placeholder)
    by_name = {k.name: i for i, k in enumerate(kinds)}
    if len(by_name) != len(kinds):
        raise InvalidSetup("DECK_FILE", "The deck file lists a card kind twice.")
    if sum(counts) > MAX_COPIES:
        raise InvalidSetup("DECK_FILE", f"The deck file lists over {MAX_COPIES} cards.")
    if any(c < 0 for c in counts) or sum(counts) == 0:
        raise InvalidSetup("DECK_FILE", "The deck file's copy counts must be >= 0, not all 0.")
    if verified and sum(counts) != DECK_TOTAL:
        raise InvalidSetup(
            "DECK_FILE",
            f"A verified deck file (every row has count_confirmed) must have the {DECK_TOTAL} "
            f"cards of the goods deck (Rules §A1); its counts add up to {sum(counts)}.",
        )
    return Deck(tuple(kinds), counts, by_name, verified, sum(counts))


def default_components() -> tuple[game_pb2.ComponentFile, ...]:
    """Rules §A1, G-A1: the shipped deck file, marked approximate (its copy counts are
    placeholders)."""
    return (
        packaged_component(__package__, DECK_FILE, DECK_COMPONENT, "text/csv", UNVERIFIED_NOTE),
    )
