"""Medici: statistics from the moves (`tablelog.replay.insights`). Every figure is public: the lot,
the bids, the ships and the payouts are on the table (RULES.md §B3-§B5); the tiles removed
unseen at a day's setup (dealt mode) are never read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from tablelog.replay.games.medici.rules import BID, DAYS, FILL, State
from tablelog.replay.insights import Statistic, Step, Tally
from tablelog.v1.medici_pb2 import MediciMove

STATISTICS: Final = (
    Statistic("lots_offered", "Lots auctioned with the seat as drawer (§B3)."),
    Statistic("bids", "Bids made (§B3 step 2)."),
    Statistic("passes", "Auctions passed (§B3 step 2)."),
    Statistic("lots_won", "Lots won at auction (§B3 step 3)."),
    Statistic("tiles_bought", "Tiles loaded from lots won at auction (§B3 step 3)."),
    Statistic("florins_paid", "Florins paid for the lots won (§B3 step 3)."),
    Statistic("free_tiles", "Tiles drawn free into the last open ship (§B4)."),
    Statistic("ship_value", "Average ship value over the days (§B5 step 1).", kind="final"),
    Statistic("best_ship_value", "The highest ship value of a day (§B5 step 1).", kind="final"),
    Statistic(
        "majorities_won",
        "Goods a seat led (alone or tied) in the pyramid at a day's end (§B5 step 2).",
    ),
    Statistic("bonus_florins", "Florins from the bonus of the top pyramid levels (§B5)."),
    Statistic("florins", "Florins at the end (§B7).", kind="final"),
    Statistic("lots_auctioned", "Lots put up for auction.", scope="game"),
    Statistic("lots_discarded", "Lots every player passed on (§B3 step 3).", scope="game"),
    Statistic("average_lot_size", "Tiles per lot auctioned.", scope="game", kind="final"),
)


def insights(steps: Sequence[Step], players: int) -> Tally:
    """Fold a finished game's moves into its statistics (RULES.md §B3-§B7)."""
    tally = Tally(players)
    ship_values = [[0] * DAYS for _ in range(players)]
    lots = 0
    lot_tiles = 0
    final: State | None = None
    for step in steps:
        final = step.after
        move = cast("MediciMove | None", step.move)
        if move is None:
            continue
        before: State = step.before
        after: State = step.after
        action = move.WhichOneof("action")
        values = before.rules.tiles.kinds
        if before.phase == FILL and action == "draw":
            kind = before.rules.tiles.by_name[move.draw.tile]
            tally.add(before.current, "free_tiles")
            ship_values[before.current][before.day - 1] += values[kind].value
        if before.phase != BID or action not in ("bid", "pass_bid"):
            continue
        tally.add(step.seat, "bids" if action == "bid" else "passes")
        if after.lot or not before.lot:
            continue  # the auction goes on
        winner = step.seat if action == "bid" else before.high_bidder
        lots += 1
        tally.add(before.drawer, "lots_offered")
        lot_tiles += len(before.lot)
        tally.add_game("lots_auctioned")
        if winner < 0:
            tally.add_game("lots_discarded")
            continue
        price = move.bid.florins if action == "bid" else before.high_bid
        tally.add(winner, "lots_won")
        tally.add(winner, "tiles_bought", len(before.lot))
        tally.add(winner, "florins_paid", price)
        ship_values[winner][before.day - 1] += sum(values[k].value for k in before.lot)
    for name in (
        "lots_offered",
        "bids",
        "passes",
        "lots_won",
        "tiles_bought",
        "florins_paid",
        "free_tiles",
    ):
        tally.zero(name)
    tally.zero_game("lots_auctioned")
    tally.zero_game("lots_discarded")
    tally.set_game("average_lot_size", round(lot_tiles / lots, 3) if lots else 0)
    for seat in range(players):
        tally.set(seat, "ship_value", round(sum(ship_values[seat]) / DAYS, 3))
        tally.set(seat, "best_ship_value", max(ship_values[seat]))
    if final is not None:
        _payouts(tally, final, players)
    return tally


def _payouts(tally: Tally, final: State, players: int) -> None:
    """Majorities and bonuses from the itemised payouts (§B5 step 2): a seat led a good on a
    day when its pyramid award was the largest paid for that good that day."""
    best: dict[tuple[int, str], int] = {}
    for seat in range(players):
        for day, label, florins in final.payouts[seat]:
            if label.endswith(" pyramid"):
                best[day, label] = max(best.get((day, label), 0), florins)
    for seat in range(players):
        tally.set(seat, "florins", final.florins[seat])
        tally.set(seat, "majorities_won", 0)
        tally.set(seat, "bonus_florins", 0)
        for day, label, florins in final.payouts[seat]:
            if label.endswith(" pyramid") and florins and florins == best[day, label]:
                tally.add(seat, "majorities_won")
            elif label.endswith(" bonus"):
                tally.add(seat, "bonus_florins", florins)
