"""The shared world of the two Medici games (see the package docstring)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, ClassVar, Final, Protocol, TypeVar

from replay.core import IllegalMove, InvalidSetup, NotationError
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

START_WORDS: Final = frozenset({"start", "starts", "first"})
"""Notation: the words that open a `start N` move (both games)."""


class PeriodState(Protocol):
    """What the shared round/day helpers read of either game's frozen state dataclass."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def florins(self) -> tuple[int, ...]: ...

    @property
    def payouts(self) -> tuple[tuple[Payout, ...], ...]: ...


S = TypeVar("S", bound=PeriodState)


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


def pay_period(
    state: PeriodState,
    period: int,
    ship_pay: Sequence[int],
    goods_pay: Sequence[tuple[Sequence[int], Sequence[int]]],
    labels: tuple[str, str],
) -> tuple[tuple[int, ...], tuple[tuple[Payout, ...], ...]]:
    """Rules §A4 / §B5: pay each seat its ship share, then per good (in GOODS order) its two
    awards: card game majority and volume, board game pyramid and bonus (`labels`).

    Returns the new florins and itemised payouts; a zero award is not itemised, a zero ship
    share is (every seat has one ship line per round or day)."""
    n = len(state.florins)
    florins = list(state.florins)
    payouts = [list(p) for p in state.payouts]
    for s in range(n):
        payouts[s].append((period, "ship", ship_pay[s]))
        florins[s] += ship_pay[s]
    for g, (first, second) in enumerate(goods_pay):
        for s in range(n):
            if first[s]:
                payouts[s].append((period, f"{GOODS[g]} {labels[0]}", first[s]))
                florins[s] += first[s]
            if second[s]:
                payouts[s].append((period, f"{GOODS[g]} {labels[1]}", second[s]))
                florins[s] += second[s]
    return tuple(florins), tuple(tuple(p) for p in payouts)


def start_next_period(state: S, start_phase: int, begin: Callable[[S, int], S]) -> S:
    """Rules §A5 / §B2: the poorest player starts the next round or day (`begin(state,
    seat)`); when several tie for fewest florins the table breaks the tie at random, which is
    recorded as a chance move: the state waits in `start_phase` with the tied seats."""
    tied = poorest(state.florins)
    if len(tied) > 1:
        return replace(state, phase=start_phase, tied=tied)
    return begin(state, tied[0])


def start_pending(period: str) -> tuple[str, str]:
    """The (code, message) of a move made while the table must record who starts the
    `period` ("round" or "day") after a tie (§A5 / §B2)."""
    return "START_PENDING", f"The table must first record who starts the {period} (a tie)."


def check_start(seat: int, tied: Sequence[int], players: Sequence[str], period: str) -> None:
    """Rules §A5 / §B2: only a seat tied for fewest florins may start the `period`."""
    if seat not in tied:
        names = ", ".join(players[s] for s in tied)
        raise IllegalMove(
            "START_NOT_POOREST",
            f"The {period} is started by a player with the fewest florins: one of {names}.",
        )


def read_csv_rows(content: bytes, code: str, what: str) -> list[dict[str, str]]:
    """The rows of a component CSV file; `InvalidSetup(code)` naming `what` ("deck file")
    when it is not UTF-8 CSV."""
    try:
        return list(csv.DictReader(io.StringIO(content.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as error:
        raise InvalidSetup(code, f"The {what} is not readable CSV: {error}") from error


@contextmanager
def bad_rows(code: str, what: str) -> Iterator[None]:
    """Turn a missing column or a non-number in a component file's rows into
    `InvalidSetup(code)` naming `what`."""
    try:
        yield
    except (KeyError, ValueError, TypeError) as error:
        raise InvalidSetup(code, f"The {what} has a bad row: {error}") from error


def parse_start(tokens: Sequence[str], text: str, players: Sequence[str]) -> int:
    """The seat of a `start N` move (tokens after the start word): "2", "p2" or a name."""
    seat = seat_from_text(tokens, players)
    if seat is None:
        raise NotationError(f"`start` needs a seat 1-{len(players)}.", text)
    return seat


def format_start(seat: int) -> str:
    """The canonical text of the start-player chance move: `start 2` for seat index 1."""
    return f"start {seat + 1}"


def winners_line(names: Sequence[str], florins: Sequence[int]) -> str:
    """`render`: "Winner: Ann (75)" or "Winners: Ann, Bo (75)" (§A6 / §B7)."""
    best = max(florins)
    winners = [name for name, f in zip(names, florins, strict=True) if f == best]
    return f"Winner{'s' if len(winners) > 1 else ''}: {', '.join(winners)} ({best})"


def payout_lines(seats: Sequence[tuple[str, Sequence[Payout], str]], prefix: str) -> list[str]:
    """`render`: each seat's itemised payouts ("r1 ship 30"; `prefix` "r" or "d"), followed
    by the seat's `suffix`; nothing before the first payout."""
    paid = [seat for seat in seats if seat[1]]
    if not paid:
        return []
    lines = ["Payouts:"]
    for name, payouts, suffix in paid:
        items = ", ".join(f"{prefix}{when} {label} {florins}" for when, label, florins in payouts)
        lines.append(f"  {name}: {items}{suffix}")
    return lines


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
