"""Splendor: statistics from the moves (`tablelog.replay.insights`). Every figure is public: tokens,
purchased cards, reserves (a blind reserve's card is not read, only that it was taken),
nobles and prestige are on the table for all to see (RULES.md §4, §5, §7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from tablelog.replay.games.splendor.rules import State
from tablelog.replay.insights import Statistic, Step, Tally
from tablelog.v1.splendor_pb2 import SplendorMove

COLOURS: Final = ("white", "blue", "green", "red", "black")
GOLD: Final = 5

STATISTICS: Final = (
    Statistic("turns", "Turns played: each take, reserve, buy or pass (RULES.md §4)."),
    *(
        Statistic(f"gems_taken_{colour}", f"{colour.capitalize()} tokens taken (§4A, §4B).")
        for colour in COLOURS
    ),
    Statistic("gems_taken", "Coloured tokens taken in all (§4A, §4B)."),
    Statistic("gold_taken", "Gold tokens taken with a reservation (§4C)."),
    Statistic("tokens_returned", "Tokens returned to get down to 10 (§3.2)."),
    Statistic("reserves", "Cards reserved (§4C)."),
    Statistic("blind_reserves", "Cards reserved blind from the top of a deck (§4C)."),
    Statistic("purchases", "Cards bought (§4D)."),
    Statistic("purchases_from_reserve", "Cards bought from the player's own reserve (§4D)."),
    Statistic("passes", "Turns passed with no legal action (E7)."),
    Statistic("first_purchase_turn", "The turn of the first card bought.", kind="first"),
    Statistic("first_noble_turn", "The turn the first noble visited.", kind="first"),
    Statistic("nobles", "Nobles at the end (§7).", kind="final"),
    Statistic("prestige", "Prestige points at the end (§5).", kind="final"),
    Statistic("points_per_turn", "Prestige points per turn played.", kind="final"),
    Statistic("rounds", "Rounds played (the most turns any seat played).", scope="game"),
)

_ACTIONS: Final = frozenset({"take_different", "take_same", "reserve", "buy", "pass"})


def insights(steps: Sequence[Step], players: int) -> Tally:
    """Fold a finished game's moves into its statistics (RULES.md §3-§8)."""
    tally = Tally(players)
    turns = [0] * players
    final: State | None = None
    for step in steps:
        final = step.after
        seat = step.seat
        move = cast("SplendorMove | None", step.move)
        if seat < 0 or move is None:
            continue
        before: State = step.before
        after: State = step.after
        action = move.WhichOneof("action")
        if action in _ACTIONS:
            turns[seat] += 1
            tally.add(seat, "turns")
        if action == "take_different":
            for gem in move.take_different.gems:
                tally.add(seat, f"gems_taken_{COLOURS[gem - 1]}")
                tally.add(seat, "gems_taken")
        elif action == "take_same":
            tally.add(seat, f"gems_taken_{COLOURS[move.take_same.gem - 1]}", 2)
            tally.add(seat, "gems_taken", 2)
        elif action == "reserve":
            tally.add(seat, "reserves")
            if move.reserve.slot == 0:
                tally.add(seat, "blind_reserves")
            gold = after.players[seat].tokens[GOLD] - before.players[seat].tokens[GOLD]
            tally.add(seat, "gold_taken", gold + move.returned.gold)
        elif action == "buy":
            tally.add(seat, "purchases")
            if len(after.players[seat].reserved) < len(before.players[seat].reserved):
                tally.add(seat, "purchases_from_reserve")
            tally.first(seat, "first_purchase_turn", turns[seat])
        elif action == "pass":
            tally.add(seat, "passes")
        returned = move.discard.tokens if action == "discard" else move.returned
        tally.add(
            seat,
            "tokens_returned",
            returned.white
            + returned.blue
            + returned.green
            + returned.red
            + returned.black
            + returned.gold,
        )
        if len(after.players[seat].nobles) > len(before.players[seat].nobles):
            tally.first(seat, "first_noble_turn", turns[seat])
    for name in (
        "turns",
        *(f"gems_taken_{c}" for c in COLOURS),
        "gems_taken",
        "gold_taken",
        "tokens_returned",
        "reserves",
        "blind_reserves",
        "purchases",
        "purchases_from_reserve",
        "passes",
    ):
        tally.zero(name)
    if final is not None:
        for seat, player in enumerate(final.players):
            tally.set(seat, "nobles", len(player.nobles))
            tally.set(seat, "prestige", player.prestige)
            tally.set(seat, "points_per_turn", round(player.prestige / max(turns[seat], 1), 3))
    tally.set_game("rounds", max(turns, default=0))
    return tally
