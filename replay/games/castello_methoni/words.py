"""Castello Methoni's moves in a player's words (issue 25: the recording bar confirms a move
composed by taps with them): "Ann walls c6|c7 with a pasture card: Ann's house on c6, Bob's
on c7", "The table deals Ann a card"."""

from __future__ import annotations

from tablelog.replay.core import FULL, Viewer, spoken_list
from tablelog.replay.games.castello_methoni.components import SEA
from tablelog.replay.games.castello_methoni.rules import (
    DRAW,
    HAND_SIZE,
    REVEAL,
    State,
    to_move,
    visible_to,
)
from tablelog.v1 import castello_methoni_pb2 as pb


def _card(card: str) -> str:
    """A card as a player says it: "a pasture card", "a market/sea card"."""
    return "a market/sea card" if card.lower() == SEA else f"a {card.lower()} card"


def _seat(state: State, seat: int) -> str:
    names = state.ctx.players
    return names[seat] if 0 <= seat < len(names) else "a player"


def words(move: pb.CastelloMethoniMove, state: State, viewer: Viewer) -> str:
    """RULES.md §5.1 (a build: the card played, the edge walled, the houses on each side,
    §6.4 the castle it merges into), §5.2 (a trade for 2 ducats), §6.2 (merging), §4 (the end
    of a turn, a stuck hand redrawn) and §2/§9 (the table: the first player, the missions, the
    cards dealt), said for `viewer`. In dealt mode a mission dealt at setup and a card dealt
    into a hand are named only to the seat that receives them (`visible_to`); to any other
    viewer the words say who receives what, never which."""
    kind = move.WhichOneof("action")
    if kind == "first_player":
        return f"The table names {_seat(state, move.first_player.seat)} first player."
    if kind == "mission":
        mission = move.mission
        seat = _seat(state, mission.seat)
        if not visible_to(move, state, viewer):
            return f"The table deals {seat} a mission."
        if state.phase == REVEAL:
            return f"The table reveals {seat}'s mission {mission.mission.lower()}."
        return f"The table deals {seat} the mission {mission.mission.lower()}."
    if kind == "draw":
        # The seat the card goes to, from what every viewer sees (`rules.chance_seat` asks
        # first whether missions are still to be dealt, which another seat's are not known).
        if state.phase == DRAW:
            receiver = state.current
        else:
            short = [s for s, k in enumerate(state.hand_sizes) if k < HAND_SIZE]
            receiver = short[0] if short else -1
        seat = _seat(state, receiver)
        # As `visible_to` (a card dealt into a hand is seen by its seat alone, dealt mode).
        if viewer is not FULL and state.ctx.dealt and viewer != receiver:
            return f"The table deals {seat} a card."
        return f"The table deals {seat} {_card(move.draw.card)}."
    mover = _seat(state, to_move(state))
    if kind == "build":
        build = move.build
        if build.other.lower() == SEA:
            edge = f"the sea edge of {build.cell.lower()}"
        else:
            edge = f"{build.cell.lower()}|{build.other.lower()}"
        houses = spoken_list(
            [f"{_seat(state, h.seat)}'s house on {h.cell.lower()}" for h in build.houses]
        )
        said = f"{mover} walls {edge} with {_card(build.card)}"
        said += f": {houses}" if houses else ", no house"
        if build.into:
            said += f", joining the castle at {build.into.lower()}"
        return said + "."
    if kind == "trade":
        return f"{mover} trades {_card(move.trade.card)} for 2 ducats."
    if kind == "merge":
        return f"{mover} merges the castle at {move.merge.cell.lower()} into the new castle."
    if kind == "stop_merging":
        return f"{mover} stops merging."
    if kind == "end_turn":
        return f"{mover} ends the turn."
    if kind == "redraw":
        revealed = [card.lower() for card in move.redraw.revealed]
        if revealed:
            return f"{mover} shows a stuck hand and draws {spoken_list(revealed)}."
        return f"{mover} shows a stuck hand and draws five new cards."
    return f"{mover} does nothing."
