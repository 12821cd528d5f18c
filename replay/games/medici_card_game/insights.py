"""Medici: The Card Game: statistics from the moves (`tablelog.replay.insights`). Every figure is
public: the market, the cards taken onto the ships, the warehouses and the payouts are on the
table (RULES.md §A3-§A5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from tablelog.replay.games.medici_card_game.rules import ROUNDS, State
from tablelog.replay.insights import Statistic, Step, Tally
from tablelog.v1.medici_card_game_pb2 import MediciCardGameMove

STATISTICS: Final = (
    Statistic("flips", "Cards turned over from the deck before taking (§A3 step 1)."),
    Statistic("takes", "Turns ended by taking cards (§A3 step 2)."),
    Statistic("cards_taken", "Cards taken onto the ship (§A3 step 2)."),
    Statistic("green_flags", "Cards with a green flag taken (they need no hold space, §A3)."),
    Statistic("ship_value", "Average ship value over the rounds (§A4 step 1).", kind="final"),
    Statistic("best_ship_value", "The highest ship value of a round (§A4 step 1).", kind="final"),
    Statistic(
        "majorities_won",
        "Goods a seat led (alone or tied) in the warehouses at a round's end (§A4 step 2).",
    ),
    Statistic("volume_florins", "Florins from the warehouse volume awards (§A4 step 2)."),
    Statistic("florins", "Florins at the end (§A6).", kind="final"),
    Statistic("cards_per_take", "Cards taken per take, all seats.", scope="game", kind="final"),
)


def insights(steps: Sequence[Step], players: int) -> Tally:
    """Fold a finished game's moves into its statistics (RULES.md §A3-§A6)."""
    tally = Tally(players)
    ship_values = [[0] * ROUNDS for _ in range(players)]
    takes = 0
    taken_cards = 0
    final: State | None = None
    for step in steps:
        final = step.after
        move = cast("MediciCardGameMove | None", step.move)
        if move is None or step.seat < 0:
            continue
        before: State = step.before
        action = move.WhichOneof("action")
        if action == "flip":
            tally.add(step.seat, "flips")
        elif action == "take":
            kinds = before.rules.deck.kinds
            market = before.market
            taken = [kinds[market[len(market) - p]] for p in move.take.positions]
            takes += 1
            taken_cards += len(taken)
            tally.add(step.seat, "takes")
            tally.add(step.seat, "cards_taken", len(taken))
            tally.add(step.seat, "green_flags", sum(1 for k in taken if k.green_flag))
            ship_values[step.seat][before.round - 1] += sum(k.value for k in taken)
    for name in ("flips", "takes", "cards_taken", "green_flags"):
        tally.zero(name)
    tally.set_game("cards_per_take", round(taken_cards / takes, 3) if takes else 0)
    for seat in range(players):
        tally.set(seat, "ship_value", round(sum(ship_values[seat]) / ROUNDS, 3))
        tally.set(seat, "best_ship_value", max(ship_values[seat]))
    if final is not None:
        _payouts(tally, final, players)
    return tally


def _payouts(tally: Tally, final: State, players: int) -> None:
    """Majorities and volume awards from the itemised payouts (§A4 step 2): a seat led a
    good in a round when its majority award was the largest paid for that good then."""
    best: dict[tuple[int, str], int] = {}
    for seat in range(players):
        for when, label, florins in final.payouts[seat]:
            if label.endswith(" majority"):
                best[when, label] = max(best.get((when, label), 0), florins)
    for seat in range(players):
        tally.set(seat, "florins", final.florins[seat])
        tally.set(seat, "majorities_won", 0)
        tally.set(seat, "volume_florins", 0)
        for when, label, florins in final.payouts[seat]:
            if label.endswith(" majority") and florins and florins == best[when, label]:
                tally.add(seat, "majorities_won")
            elif label.endswith(" volume"):
                tally.add(seat, "volume_florins", florins)
