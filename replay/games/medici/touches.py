"""Which touches on Medici's picture (`picture.py`'s `data-touch` ids) select each legal move,
in tap order (issue 25; cut to the shortest unambiguous start by `tablelog.replay.touch`).

Ids: `bag`; `auction`; `pass`; the bid keypad, `bid-tens-T` and `bid-unit-U`; `p1` .. `p6`,
the seats; and, while the table records a tile, the tray: `tray-<tile>` (`tray-fur3`).

- draw one more tile into the lot (RULES.md §B3 step 1): the bag;
- put the lot up for auction (§B3 step 1): `auction`;
- bid (§B3 step 2): its tens, then its units (`bid 34` is `bid-tens-3`, `bid-unit-4`);
- pass (§B3 step 2): `pass`;
- the tile drawn, or removed unseen (§B2, §B4): its kind in the tray;
- the day's start player among the tied (§B5): the seat.
"""

from __future__ import annotations

from tablelog.replay.games.medici.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1.medici_pb2 import MediciMove


def touches(move: MediciMove, state: State) -> Touches:
    """The full path of touches of `move` (see the module's docstring)."""
    action = move.WhichOneof("action")
    if action == "draw_more":
        return Touches(("bag",))
    if action == "close_lot":
        return Touches(("auction",))
    if action == "pass_bid":
        return Touches(("pass",))
    if action == "bid":
        amount = move.bid.florins
        return Touches((f"bid-tens-{amount // 10}", f"bid-unit-{amount % 10}"))
    if action == "draw":
        return Touches((f"tray-{move.draw.tile}",))
    if action == "remove":
        return Touches((f"tray-{move.remove.tile}",))
    if action == "start_player":
        return Touches((f"p{move.start_player.seat + 1}",))
    return Touches(())
