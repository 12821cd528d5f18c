"""Castello Methoni: statistics from the moves (`tablelog.replay.insights`). Every figure is public:
walls, houses and castles are on the board (RULES.md §5, §6); trades and redraws are played
face up (§4, §5.2). Hands and missions are never read; the ducats are read only from the
final state, which the rules reveal at the end (§8)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from tablelog.replay.games.castello_methoni.rules import State
from tablelog.replay.insights import Statistic, Step, Tally
from tablelog.v1.castello_methoni_pb2 import CastelloMethoniMove

STATISTICS: Final = (
    Statistic("turns", "Turns played: each card played, or a turn ended without one (§4)."),
    Statistic("walls", "Walls built, each with a card (§5.1)."),
    Statistic("sea_walls", "Walls built on the sea edge (§5.1)."),
    Statistic("houses_placed", "The seat's houses placed by any builder (§5.1.b)."),
    Statistic("castles_founded", "Castles founded by the seat's own build (§6.1)."),
    Statistic("merges", "Castles absorbed into one of the seat's castles (§6.2)."),
    Statistic("trades", "Cards played to trade at a market (§5.2)."),
    Statistic("redraws", "Stuck hands revealed and redrawn (§4)."),
    Statistic("castles", "Castles owned at the end (§6).", kind="final"),
    Statistic(
        "largest_castle", "Cells of the seat's largest castle at the end (§8).", kind="final"
    ),
    Statistic(
        "best_castle_value", "The value of the seat's best castle at the end (§6.3).", kind="final"
    ),
    Statistic("ducats", "Ducats at the end (§8).", kind="final"),
    Statistic("walls_built", "Walls built in the game.", scope="game"),
    Statistic("castles_at_end", "Castles on the board at the end.", scope="game", kind="final"),
)


def insights(steps: Sequence[Step], players: int) -> Tally:
    """Fold a finished game's moves into its statistics (RULES.md §4-§8)."""
    tally = Tally(players)
    final: State | None = None
    for step in steps:
        final = step.after
        move = cast("CastelloMethoniMove | None", step.move)
        seat = step.seat
        if move is None or seat < 0:
            continue
        before: State = step.before
        after: State = step.after
        action = move.WhichOneof("action")
        if action in ("build", "trade", "end_turn") and before.cards_played == 0:
            tally.add(seat, "turns")
        if action == "build":
            tally.add(seat, "walls")
            tally.add_game("walls_built")
            if "sea" in (move.build.cell, move.build.other):
                tally.add(seat, "sea_walls")
            for house in move.build.houses:
                if 0 <= house.seat < players:
                    tally.add(house.seat, "houses_placed")
            # A castle is founded by the builder (§6.1) and keeps its id for good (a merge
            # empties the absorbed castle's slot): new ids are the castles founded.
            tally.add(seat, "castles_founded", len(after.castles) - len(before.castles))
        elif action == "merge":
            tally.add(seat, "merges")
        elif action == "trade":
            tally.add(seat, "trades")
        elif action == "redraw":
            tally.add(seat, "redraws")
    for name in (
        "turns",
        "walls",
        "sea_walls",
        "houses_placed",
        "castles_founded",
        "merges",
        "trades",
        "redraws",
    ):
        tally.zero(name)
    tally.zero_game("walls_built")
    if final is not None:
        castles = list(final.live_castles())
        tally.set_game("castles_at_end", len(castles))
        for seat in range(players):
            own = [c for c in castles if c.owner == seat]
            tally.set(seat, "castles", len(own))
            tally.set(seat, "largest_castle", max((len(c.cells) for c in own), default=0))
            tally.set(seat, "best_castle_value", max((c.value for c in own), default=0))
            tally.set(seat, "ducats", final.ducats[seat])
    return tally
