"""The shared world of the two Medici games (see the package docstring)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from tablelog.v1 import game_pb2

GOODS: Final = ("cloth", "fur", "grain", "dye", "spice")
"""The five goods, in the order of the board game's pyramids (seed-ZH)."""

GOOD_INDEX: Final = {good: i for i, good in enumerate(GOODS)}

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

SHIP_REWARDS: Final = {
    2: (20, 0),
    3: (30, 15, 0),
    4: (30, 20, 10, 0),
    5: (30, 20, 10, 5, 0),
    6: (30, 20, 15, 10, 5, 0),
}
"""Ship-value payments by place and player count: the board game's table (§B5, G-B1), which
the card game adopts (§A4, G-A2)."""

Payout = tuple[int, str, int]
"""(round or day, label, florins): one line of a seat's itemised payouts."""

_TOKEN = re.compile(r"[a-z]+|\d+")


def ranked_shares(
    values: Sequence[int],
    rewards: Sequence[int],
    unit: int = 1,
    qualifies: Sequence[bool] | None = None,
) -> list[int]:
    """Rules §A5 / §B6: rank seats by `values` (highest first) and pay `rewards` by place.

    Tied seats pool the rewards of every place they jointly cover and split the pool evenly;
    each share is rounded down to a multiple of `unit` (5 in the card game, 1 in the board
    game) and the remainder is lost. Seats that do not qualify take no place and get 0
    (card game G-A4); places beyond `rewards` pay 0."""
    seats = [s for s in range(len(values)) if qualifies is None or qualifies[s]]
    seats.sort(key=lambda s: -values[s])
    shares = [0] * len(values)
    place = 0
    i = 0
    while i < len(seats):
        j = i
        while j + 1 < len(seats) and values[seats[j + 1]] == values[seats[i]]:
            j += 1
        tied = j - i + 1
        pool = sum(rewards[place : place + tied])
        share = (pool // tied) // unit * unit
        for k in range(i, j + 1):
            shares[seats[k]] = share
        place += tied
        i = j + 1
    return shares


def poorest(florins: Sequence[int]) -> tuple[int, ...]:
    """Rules §A5 / §B2: the seats with the fewest florins (they start the next round or day;
    a tie is broken at random, which the table records as a chance move)."""
    low = min(florins)
    return tuple(s for s, f in enumerate(florins) if f == low)


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


def build_result(
    florins: Sequence[int],
    items: Sequence[Sequence[tuple[str, int]]],
    finished: bool,
    tiebreak_rule: str,
) -> game_pb2.GameResult:
    """Rules §A6 / §B7: the most florins wins; tied players share the win.

    `items` are each seat's itemised lines, which add up to its florins."""
    result = game_pb2.GameResult(
        termination=(game_pb2.TERMINATION_COMPLETED if finished else game_pb2.TERMINATION_ONGOING)
    )
    for seat, total in enumerate(florins):
        result.scores.append(
            game_pb2.SeatScore(
                seat=seat,
                total=total,
                items=[
                    game_pb2.ScoreItem(label=label, value=value) for label, value in items[seat]
                ],
            )
        )
    if finished:
        best = max(florins)
        winners = [s for s, f in enumerate(florins) if f == best]
        result.winners.extend(winners)
        if len(winners) > 1:
            result.tiebreak = tiebreak_rule
    return result


def payout_items(payouts: Sequence[Payout], period: str) -> list[tuple[str, int]]:
    """A seat's payouts as result lines ("round 1 ship", 30)."""
    return [(f"{period} {when} {label}", florins) for when, label, florins in payouts]


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A plain left-aligned text table for `render`."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )
    return lines
