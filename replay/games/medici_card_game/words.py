"""Medici: The Card Game's moves in a player's words (issue 25: the recording bar confirms a
move composed by taps with them): "Ann takes fur3 and green2", "The table turns over fur3"."""

from __future__ import annotations

from tablelog.replay.core import Viewer, spoken_list
from tablelog.replay.games.medici_card_game.notation import detail
from tablelog.replay.games.medici_card_game.rules import State, to_move
from tablelog.v1.medici_card_game_pb2 import MediciCardGameMove


def words(move: MediciCardGameMove, state: State, viewer: Viewer) -> str:
    """RULES.md §A3 step 1 (a card turned over into the market, named by the table), §A3
    step 2 (the cards taken, named as `detail` names them: every market card is face up) and
    §A5 (the table names the start player among the tied). Every move is public, so the
    words are the same for every viewer."""
    del viewer  # nothing recorded is hidden (views.hides_from)
    names = state.rules.players
    kind = move.WhichOneof("action")
    if kind == "reveal":
        return f"The table turns over {move.reveal.card} into the market."
    if kind == "start_player":
        seat = move.start_player.seat
        named = names[seat] if seat < len(names) else f"seat {seat}"
        return f"The table names {named} start player of the round."
    who = to_move(state)
    mover = names[who] if 0 <= who < len(names) else f"Seat {who}"
    if kind == "flip":
        return f"{mover} turns over one more card from the deck."
    if kind == "take":
        cards = detail(move, state).split()
        return f"{mover} takes {spoken_list(cards) or 'the last card'} from the market."
    return f"{mover} does nothing."
