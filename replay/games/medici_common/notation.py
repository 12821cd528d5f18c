"""Notation shared by both Medici games: good synonyms, tokens, and the `start N` move."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from tablelog.replay.core import NotationError

GOOD_SYNONYMS: Final = {
    "cloth": "cloth",
    "cloths": "cloth",
    "fabric": "cloth",
    "fur": "fur",
    "furs": "fur",
    "grain": "grain",
    "grains": "grain",
    "dye": "dye",
    "dyes": "dye",
    "spice": "spice",
    "spices": "spice",
}

_TOKEN = re.compile(r"[a-z]+|\d+")

START_WORDS: Final = frozenset({"start", "starts", "first"})
"""Notation: the words that open a `start N` move (both games)."""


def parse_start(tokens: Sequence[str], text: str, players: Sequence[str]) -> int:
    """The seat of a `start N` move (tokens after the start word): "2", "p2" or a name."""
    seat = seat_from_text(tokens, players)
    if seat is None:
        raise NotationError(f"`start` needs a seat 1-{len(players)}.", text)
    return seat


def format_start(seat: int) -> str:
    """The canonical text of the start-player chance move: `start 2` for seat index 1."""
    return f"start {seat + 1}"


def words(text: str) -> list[str]:
    """Lowercase letters-or-digits tokens of `text` ("Fur 3" -> ["fur", "3"])."""
    return _TOKEN.findall(text.lower())


def compact(text: str) -> str:
    """Lowercase, with everything but letters and digits removed ("Fur 3" -> "fur3")."""
    return "".join(_TOKEN.findall(text.lower()))


def seat_from_text(tokens: Sequence[str], players: Sequence[str]) -> int | None:
    """A seat named as "2", "p2" or by its player's name; None when it names none."""
    joined = "".join(tokens)
    if joined.isdigit() and len(joined) <= 2 and 1 <= int(joined) <= len(players):
        return int(joined) - 1
    if len(tokens) == 2 and tokens[0] in ("p", "seat", "player") and tokens[1].isdigit():
        number = tokens[1]
        if len(number) <= 2 and 1 <= int(number) <= len(players):
            return int(number) - 1
    for seat, name in enumerate(players):
        if compact(name) and compact(name) == joined:
            return seat
    return None
