"""Mercado de Lisboa's moves in a player's words (issue 25: the recording bar confirms a move
composed by taps with them): "Ann opens a fish stand on b3 and takes grape from the display",
"The table reveals the 3-customer tile fish+meat". Read from the canonical text
(`notation.py`), so that a good, a space or a tile reads as a recorder types it."""

from __future__ import annotations

from tablelog.replay.core import Viewer
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.notation import format_move


def words(move: rl.Move, state: rl.State, viewer: Viewer) -> str:
    """Rules §4.1 (a stand opened, the display tile taken or the display refreshed, §4.5),
    §4.2 (customers brought to an entrance), §4.3 (a restaurant opened), §4.4 (a coin), §4.5
    (a swap of three identical stand tiles) and §2/§4 (the table: a stand tile drawn, a
    restaurant turned over, a customer tile revealed). No move is hidden (`visible_to`) and
    hidden money (§2 step 8) is never said, so the words are the same for every viewer."""
    del viewer  # every move is public; the words name no coins held
    text = format_move(move, state).split()
    kind = move.WhichOneof("action")
    if kind == "draw":
        return f"The table draws a {text[1]} stand tile from the bag."
    if kind == "flip":
        return f"The table turns over the {text[1]} restaurant."
    if kind == "reveal":
        return f"The table reveals the {text[1]}-customer tile {text[2]}."
    names = state.rules.names
    seat = rl.to_move(state)
    mover = names[seat] if 0 <= seat < len(names) else f"Seat {seat}"
    if kind == "stand":
        said = f"{mover} opens a {text[1]} stand on {text[2]}"
        if len(text) > 3 and text[3] == "refresh":
            return said + " and refreshes the display."
        if len(text) > 4:
            return said + f" and takes {text[4]} from the display."
        return said + "."
    if kind == "customer":
        return f"{mover} brings the {text[1]}-customer tile {text[2]} to entrance {text[3]}."
    if kind == "restaurant":
        return f"{mover} opens the {text[1]} restaurant on {text[2]}."
    if kind == "coin":
        return f"{mover} takes 1 coin."
    if kind == "swap":
        return f"{mover} puts back three identical stand tiles and draws three."
    if kind == "take":
        return f"{mover} takes {text[1]} from the refreshed display."
    return f"{mover} does nothing."
