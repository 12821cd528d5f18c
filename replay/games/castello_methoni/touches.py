"""Which touches on Castello Methoni's picture (`picture.py`'s `data-touch` ids) select each
legal move, in tap order (issue 25; cut to the shortest unambiguous start by
`tablelog.replay.touch`).

Ids: `edge-c6-c7@c6` the c6 side of the edge between c6 and c7 (the cells in board order;
the picture's target is the wedge of c6 that reaches the edge), `edge-c6-sea@c6` a cell's
next free sea edge; `castle-c6` a castle (named by its first cell
in board order, as the notation names it); `p1` .. `p5` the seats' panels, `p2-mission` a
seat's mission; `bank`; `card-pasture` .. `card-sea` the card named (table mode: a strip of
every card; dealt mode: the cards of the hand of the seat to play); `mission-m3` the missions
the table may reveal; `end`, `redraw` and `stop`, buttons.

- build (RULES.md §5.1): the edge on the side of your house (with no house of yours left,
  the side of the first neighbour's house); then the seat of each neighbour whose house
  goes on; then the card played; then, with no tower left beside several of your castles
  (§6.4), the castle it merges into (none: the first one built). The usual build is three
  taps: the edge on your side, the neighbour, the card;
- trade (§5.2): the card, then the bank;
- merge (§6.2): the castle absorbed; stop merging: `stop`; end the turn (§4): `end`;
- stuck-hand redraw (§4): `redraw` and, table mode, the five cards revealed, in any order;
- the table: the first player (§2), the seat; a mission (§2, §9), the mission, then the
  seat's mission card when several seats are still to be recorded; a card drawn, the card.
"""

from __future__ import annotations

from tablelog.replay.games.castello_methoni.components import SEA
from tablelog.replay.games.castello_methoni.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1 import castello_methoni_pb2 as pb


def edge_id(state: State, build: pb.CastelloMethoniBuild, side: str) -> str:
    """The target of a build's wall on the picture: its edge (cells in board order, `sea`
    last) and the side that gets the first house."""
    lookup, names = state.board.lookup, state.board.names
    if build.other == SEA:
        cell = names[lookup[build.cell]]
        return f"edge-{cell}-sea@{cell}"
    a, b = sorted((lookup[build.cell], lookup[build.other]))
    return f"edge-{names[a]}-{names[b]}@{names[lookup[side]]}"


def _build(build: pb.CastelloMethoniBuild, state: State) -> tuple[str, ...]:
    """RULES.md §5.1, §6.4: the wall's side (your house's, else the first house's), the
    neighbours whose houses go on, the card, the castle joined."""
    me = state.current
    houses = sorted(build.houses, key=lambda house: house.seat != me)
    side = houses[0].cell if houses else build.cell
    path = [edge_id(state, build, side)]
    path.extend(f"p{house.seat + 1}" for house in houses if house.seat != me)
    path.append(f"card-{build.card}")
    if build.into:
        path.append(f"castle-{build.into}")
    return tuple(path)


def touches(move: pb.CastelloMethoniMove, state: State) -> Touches:
    """The full path of touches of `move` (see the module's docstring)."""
    action = move.WhichOneof("action")
    if action == "build":
        return Touches(_build(move.build, state))
    if action == "trade":
        return Touches((f"card-{move.trade.card}", "bank"))
    if action == "merge":
        return Touches((f"castle-{move.merge.cell}",))
    if action == "stop_merging":
        return Touches(("stop",))
    if action == "end_turn":
        return Touches(("end",))
    if action == "redraw":
        cards = tuple(f"card-{card}" for card in move.redraw.revealed)
        return Touches(("redraw", *cards), any_order=bool(cards))
    if action == "first_player":
        return Touches((f"p{move.first_player.seat + 1}",))
    if action == "mission":
        mission = move.mission
        return Touches((f"mission-{mission.mission}", f"p{mission.seat + 1}-mission"))
    if action == "draw":
        return Touches((f"card-{move.draw.card}",))
    return Touches(())
