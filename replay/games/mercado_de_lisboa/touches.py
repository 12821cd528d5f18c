"""Which touches on Mercado de Lisboa's picture (`picture.py`'s `data-touch` ids) select each
legal move, in tap order (issue 25; cut to the shortest unambiguous start by
`tablelog.replay.touch`).

Ids: `space-b3` the market's spaces, `entrance-w3` its entrances; `display-fish` the stand
display's tiles; `offer-2-fish+flower` the customer tiles on offer (goods in the canonical
order); `pS-stand-fish`, `pS-restaurant-sushi` and `pS-coins` what lies in front of seat S
(from 1); `refresh` and `swap`, buttons; and what the table may turn up: `bag-fish` (a stand
tile drawn), `unseen-pizza` (a restaurant turned over) and the tray, `tray-3-fish+meat` (a
customer tile revealed).

- open a stand (rules §4.1): your stand tile of that good when you hold several goods (one
  good needs no tap), the space, then the display tile you take (or `refresh`, §4.5);
- bring customers (§4.2): the tile on offer, then the entrance;
- open a restaurant (§4.3): your restaurant, then the space;
- take 1 coin (§4.4): your coins;
- swap three identical stand tiles (§4.5): `swap`; take from a refreshed display: the tile;
- the table: a stand tile drawn (§2, §4.1), from the bag; a restaurant turned over (§4.3), its
  type among those not yet turned over; a customer tile revealed (§4.2), from the tray.
"""

from __future__ import annotations

from tablelog.replay.games.mercado_de_lisboa.components import ENTRANCE_NAMES, GOODS, SPACE_NAMES
from tablelog.replay.games.mercado_de_lisboa.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1.mercado_de_lisboa_pb2 import MercadoDeLisboaMove

RESTAURANT_IDS = ("sushi", "tea", "pizza", "burger", "wine", "pub")
"""The restaurants as the picture labels them (enum value - 1)."""


def good_id(good: int) -> str:
    """A good enum value (1 fish .. 5 grape) as its name."""
    return GOODS[good - 1] if 1 <= good <= len(GOODS) else "unknown"


def restaurant_id(restaurant: int) -> str:
    return RESTAURANT_IDS[restaurant - 1] if 1 <= restaurant <= len(RESTAURANT_IDS) else "unknown"


def tile_id(customers: int, goods: list[int]) -> str:
    return f"{customers}-" + "+".join(good_id(g) for g in sorted(goods))


def touches(move: MercadoDeLisboaMove, state: State) -> Touches:
    """The full path of touches of `move` (see the module's docstring)."""
    me = f"p{state.seat + 1}"
    action = move.WhichOneof("action")
    if action == "stand":
        stand = move.stand
        path: tuple[str, ...] = ()
        if len(set(state.hands[state.seat])) > 1:
            path = (f"{me}-stand-{good_id(stand.good)}",)
        path += (f"space-{SPACE_NAMES[stand.space - 1]}",)
        if stand.refresh_display:
            path += ("refresh",)
        elif stand.take:
            path += (f"display-{good_id(stand.take)}",)
        return Touches(path)
    if action == "customer":
        customer = move.customer
        return Touches(
            (
                f"offer-{tile_id(customer.customers, list(customer.goods))}",
                f"entrance-{ENTRANCE_NAMES[customer.entrance - 1]}",
            )
        )
    if action == "restaurant":
        restaurant = move.restaurant
        return Touches(
            (
                f"{me}-restaurant-{restaurant_id(restaurant.restaurant)}",
                f"space-{SPACE_NAMES[restaurant.space - 1]}",
            )
        )
    if action == "coin":
        return Touches((f"{me}-coins",))
    if action == "swap":
        return Touches(("swap",))
    if action == "take":
        return Touches((f"display-{good_id(move.take.good)}",))
    if action == "draw":
        return Touches((f"bag-{good_id(move.draw.good)}",))
    if action == "flip":
        return Touches((f"unseen-{restaurant_id(move.flip.restaurant)}",))
    if action == "reveal":
        reveal = move.reveal
        return Touches((f"tray-{tile_id(reveal.customers, list(reveal.goods))}",))
    return Touches(())
