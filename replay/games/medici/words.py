"""Medici's moves in a player's words (issue 25: the recording bar confirms a move composed
by taps with them): "Bob bids 7 florins for the lot of 2 tiles", "The table draws cloth3"."""

from __future__ import annotations

from tablelog.replay.core import Viewer
from tablelog.replay.games.medici.rules import State, to_move, visible_to
from tablelog.v1.medici_pb2 import MediciMove


def _lot(state: State) -> str:
    size = len(state.lot)
    return f"the lot of {size} tile{'s' if size != 1 else ''}"


def words(move: MediciMove, state: State, viewer: Viewer) -> str:
    """RULES.md §B3 (a turn: the drawer draws into the lot or puts it up for auction, then
    each bids or passes), §B4 (the free fill of the last ship), §B2 (the tiles removed unseen
    at a day's setup: named to nobody but the full view, `visible_to`) and §B2/§B5 (the
    table names the start player among the tied), said for `viewer`."""
    names = state.rules.players
    who = to_move(state)
    kind = move.WhichOneof("action")
    if kind == "draw":
        return f"The table draws {move.draw.tile} from the bag."
    if kind == "remove":
        if not visible_to(move, state, viewer):
            return "The table removes a tile from the bag unseen."
        return f"The table removes {move.remove.tile} from the bag unseen."
    if kind == "start_player":
        seat = move.start_player.seat
        named = names[seat] if seat < len(names) else f"seat {seat}"
        return f"The table names {named} start player of the day."
    mover = names[who] if 0 <= who < len(names) else f"Seat {who}"
    if kind == "draw_more":
        return f"{mover} draws one more tile into {_lot(state)}."
    if kind == "close_lot":
        return f"{mover} puts {_lot(state)} up for auction."
    if kind == "bid":
        florins = move.bid.florins
        return f"{mover} bids {florins} florin{'s' if florins != 1 else ''} for {_lot(state)}."
    if kind == "pass_bid":
        return f"{mover} passes on {_lot(state)}."
    return f"{mover} does nothing."
