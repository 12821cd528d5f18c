"""The shared rules of the two Medici games: ship rewards, ranked payouts with pooled tie
splits, the payout of a round or day, and the poorest-player start (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Final, Protocol, TypeVar

from tablelog.replay.core import IllegalMove
from tablelog.replay.games.medici_common.components import GOODS

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
