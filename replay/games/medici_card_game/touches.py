"""Which touches on the card game's picture (`picture.py`'s `data-touch` ids) select each
legal move, in tap order (issue 25; cut to the shortest unambiguous start by
`tablelog.replay.touch`).

Ids: `deck`; `market-1` .. `market-3`, the cards within reach (position 1 the last placed);
`p1` .. `p6`, the seats; and, while the table records the card turned over, the tray:
`tray-<card>` (`tray-fur3`).

- flip (RULES.md §A3 step 1): the deck;
- take (§A3 step 2): the cards taken, from position 1 on (`take 1 3` is `market-1`,
  `market-3`; `take 1` is `market-1` alone, recorded as it is or followed by more cards);
- the card turned over (§A3 step 1): its kind in the tray;
- the round's start player among the tied (§A5): the seat.
"""

from __future__ import annotations

from tablelog.replay.games.medici_card_game.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1.medici_card_game_pb2 import MediciCardGameMove


def touches(move: MediciCardGameMove, state: State) -> Touches:
    """The full path of touches of `move` (see the module's docstring)."""
    action = move.WhichOneof("action")
    if action == "flip":
        return Touches(("deck",))
    if action == "take":
        return Touches(tuple(f"market-{p}" for p in move.take.positions))
    if action == "reveal":
        return Touches((f"tray-{move.reveal.card}",))
    if action == "start_player":
        return Touches((f"p{move.start_player.seat + 1}",))
    return Touches(())
