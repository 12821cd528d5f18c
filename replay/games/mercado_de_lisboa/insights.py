"""Mercado de Lisboa: statistics from the moves (`tablelog.replay.insights`). Every figure is
public: stands, customer tiles and restaurants are placed on the board (RULES.md §4.1-§4.4); the
money a seat earned is read only from the final state, whose ledgers the rules reveal at the end
even when money is kept hidden during play (§6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from tablelog.replay.games.mercado_de_lisboa.rules import (
    L_COSTS,
    L_CUSTOMERS,
    L_RESTAURANTS,
    L_STANDS,
    State,
)
from tablelog.replay.insights import Statistic, Step, Tally
from tablelog.v1.mercado_de_lisboa_pb2 import MercadoDeLisboaMove

STATISTICS: Final = (
    Statistic("turns", "Turns played: each of the four actions (§4)."),
    Statistic("stands", "Stands opened (§4.1)."),
    Statistic("customer_tiles", "Customer tiles brought to an entrance (§4.2)."),
    Statistic("customers_brought", "Customers on the tiles the seat brought (§4.2)."),
    Statistic("restaurants", "Restaurants opened (§4.3)."),
    Statistic("coins_taken", "Turns spent taking a coin (§4.4)."),
    Statistic("swaps", "Hands of three identical stand tiles swapped (§4.5)."),
    Statistic(
        "customers_served",
        "Coins the seat's stands earned from arriving customers (§4.2), from the final ledger.",
        kind="final",
    ),
    Statistic(
        "stand_income",
        "Coins earned by opening stands (§4.1), from the final ledger.",
        kind="final",
    ),
    Statistic(
        "restaurant_income",
        "Coins earned by restaurants (§4.3), from the final ledger.",
        kind="final",
    ),
    Statistic(
        "stand_costs", "Coins paid to open stands (§4.1), from the final ledger.", kind="final"
    ),
    Statistic("money", "Coins at the end (§6).", kind="final"),
    Statistic("customers", "Customers brought to the market in the game.", scope="game"),
)

_ACTIONS: Final = frozenset({"stand", "customer", "restaurant", "coin"})


def insights(steps: Sequence[Step], players: int) -> Tally:
    """Fold a finished game's moves into its statistics (RULES.md §4-§6)."""
    tally = Tally(players)
    final: State | None = None
    for step in steps:
        final = step.after
        move = cast("MercadoDeLisboaMove | None", step.move)
        seat = step.seat
        if move is None or seat < 0:
            continue
        action = move.WhichOneof("action")
        if action in _ACTIONS:
            tally.add(seat, "turns")
        if action == "stand":
            tally.add(seat, "stands")
        elif action == "customer":
            tally.add(seat, "customer_tiles")
            tally.add(seat, "customers_brought", move.customer.customers)
            tally.add_game("customers", move.customer.customers)
        elif action == "restaurant":
            tally.add(seat, "restaurants")
        elif action == "coin":
            tally.add(seat, "coins_taken")
        elif action == "swap":
            tally.add(seat, "swaps")
    for name in (
        "turns",
        "stands",
        "customer_tiles",
        "customers_brought",
        "restaurants",
        "coins_taken",
        "swaps",
    ):
        tally.zero(name)
    tally.zero_game("customers")
    if final is not None:
        for seat in range(players):
            ledger = final.ledger[seat]
            tally.set(seat, "customers_served", ledger[L_CUSTOMERS])
            tally.set(seat, "stand_income", ledger[L_STANDS])
            tally.set(seat, "restaurant_income", ledger[L_RESTAURANTS])
            tally.set(seat, "stand_costs", ledger[L_COSTS])
            tally.set(seat, "money", final.money(seat))
    return tally
