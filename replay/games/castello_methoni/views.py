"""Views with hidden information redacted, and their text rendering."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from tablelog.replay.core import Viewer, counted
from tablelog.replay.games.castello_methoni.components import (
    MISSIONS_ASSUMED_NOTE,
    Board,
    Point,
)
from tablelog.replay.games.castello_methoni.rules import (
    DEAL,
    DRAW,
    FIRST,
    MERGE,
    OVER,
    PHASE_NAMES,
    PLAY,
    REVEAL,
    Castle,
    State,
    draw_composition,
)
from tablelog.replay.games.castello_methoni.scoring import result
from tablelog.v1 import castello_methoni_pb2 as pb


def _castle_view(state: State, castle: Castle) -> pb.CastelloMethoniCastleView:
    names = state.board.names
    cells = sorted(castle.cells)
    return pb.CastelloMethoniCastleView(
        id=castle.id,
        owner=castle.owner,
        cells=[names[c] for c in cells],
        houses=list(castle.houses),
        villas=list(castle.villas),
        markets=[names[c] for c in cells if state.board.market[c]],
        value=castle.value,
    )


def view(state: State, viewer: Viewer) -> pb.CastelloMethoniView:
    """What `viewer` may see: hands and missions of other seats are hidden until the end.
    The view says when the board or the missions are approximate (RULES.md §3.4, §9), where
    the cells are drawn (RULES.md "Board coordinates") and each seat's running score (§8,
    the secret mission bonus only once the game is over)."""
    board, ctx = state.board, state.ctx
    over = state.phase == OVER
    cells = []
    for c, name in enumerate(board.names):
        cells.append(
            pb.CastelloMethoniCellView(
                id=name,
                terrain=board.terrains[board.terrain[c]],
                market=board.market[c],
                market_ducats=state.market_ducats[c],
                castle=state.cell_castle[c],
                houses=list(state.houses[c]),
                sea_edges=board.sea_edges[c],
                sea_walls=state.sea_walls[c],
            )
        )
    walls = [
        pb.CastelloMethoniWallView(cell=board.names[a], other=board.names[b])
        for i, (a, b) in enumerate(board.edges)
        if (state.walls >> i) & 1
    ]
    walls.extend(
        pb.CastelloMethoniWallView(cell=board.names[c], other="sea")
        for c, k in enumerate(state.sea_walls)
        for _ in range(k)
    )
    scores = result(state).scores
    seats = []
    for seat, name in enumerate(ctx.players):
        may_see = viewer is None or viewer == seat or over
        hand: list[str] = []
        if state.hands is not None and (viewer is None or viewer == seat):
            hand = [board.card_name(c) for c, k in enumerate(state.hands[seat]) for _ in range(k)]
        mission = state.missions[seat]
        seats.append(
            pb.CastelloMethoniSeatView(
                name=name,
                ducats=state.ducats[seat],
                houses_left=state.houses_left[seat],
                villas_left=state.villas_left[seat],
                towers_left=state.towers_left[seat],
                hand_size=state.hand_sizes[seat],
                hand=hand,
                hand_hidden=state.hands is None or not (viewer is None or viewer == seat),
                mission=board.missions[mission].name if may_see and mission >= 0 else "",
                mission_terrains=sorted(board.terrains[t] for t in board.missions[mission].terrains)
                if may_see and mission >= 0
                else [],
                mission_hidden=not may_see,
                score=scores[seat].total,
            )
        )
    pending = ""
    if state.phase == FIRST:
        pending = "who plays first"
    elif state.phase == DEAL and -1 in state.missions:
        pending = f"the mission dealt to {ctx.players[state.missions.index(-1)]}"
    elif state.phase in (DEAL, DRAW):
        pending = "the next card drawn"
    elif state.phase == REVEAL:
        pending = "the missions revealed for the final scoring"
    discard = [board.card_name(c) for c, k in enumerate(state.discard) for _ in range(k)]
    return pb.CastelloMethoniView(
        board_name=board.name,
        board_approximate=board.approximate,
        board_note=board.note,
        terrains=list(board.terrains),
        cells=cells,
        walls=walls,
        castles=[_castle_view(state, c) for c in state.live_castles()],
        seats=seats,
        bank=state.bank,
        wall_supply=state.wall_supply,
        walls_in_play=len(walls),
        draw_pile=sum(draw_composition(state)) if state.hands is not None else state.draw_pile,
        discard=discard,
        current_player=state.current if state.phase in (PLAY, MERGE) else -1,
        phase=PHASE_NAMES[state.phase],
        cards_played=state.cards_played,
        last_turn=state.last_turn,
        game_over=over,
        pending_chance=pending,
        merging_castle=state.merging,
        first_player=state.first,
        viewer=-2 if viewer is None else viewer,
        dealt_mode=ctx.dealt,
        missions_assumed=board.missions_assumed,
        layout=_layout(board),
        missions_to_reveal=_missions_to_reveal(state, viewer),
    )


def _missions_to_reveal(state: State, viewer: Viewer) -> list[str]:
    """Issue 25, RULES.md §2 step 4, §9: the missions not yet recorded, while the table must
    record one, for a viewer who may see the legal moves (in dealt mode what is left tells
    which missions the others hold)."""
    if state.phase not in (DEAL, REVEAL) or -1 not in state.missions:
        return []
    # Dealt mode: the server deals the missions; only its full view lists them (a mission
    # listed just before it is dealt to another seat is no business of that seat's
    # neighbours).
    if hides_from(state, viewer) or (state.ctx.dealt and viewer is not None):
        return []
    used = set(state.missions)
    return [m.name for index, m in enumerate(state.board.missions) if index not in used]


LAYOUTS_KEPT = 16
"""Boards whose layout message is kept (a service sees one board, or a club's few)."""
_LAYOUTS: dict[int, tuple[Board, pb.CastelloMethoniBoardLayout]] = {}


def _layout(board: Board) -> pb.CastelloMethoniBoardLayout:
    """Where the board's cells are drawn (RULES.md "Board coordinates"). The same for every
    state of a board, and about half a view's cost to build (some 600 messages), so built
    once per board and copied into each view (never mutated: callers only copy it). Keyed
    by the board's identity, the entry holding the board, so that an id is never taken for
    another board's."""
    kept = _LAYOUTS.get(id(board))
    if kept is not None and kept[0] is board:
        return kept[1]
    layout = pb.CastelloMethoniBoardLayout(
        cells=[
            pb.CastelloMethoniCellPlace(
                cell=name,
                centre=_point(board.centres[c]),
                corners=[_point(p) for p in board.outlines[c]],
                neighbours=[board.names[other] for other, _ in board.neighbours[c]],
            )
            for c, name in enumerate(board.names)
        ],
        derived=board.layout_derived,
    )
    if len(_LAYOUTS) >= LAYOUTS_KEPT:
        _LAYOUTS.clear()
    _LAYOUTS[id(board)] = (board, layout)
    return layout


def _point(point: Point) -> pb.CastelloMethoniPoint:
    return pb.CastelloMethoniPoint(x=point[0], y=point[1])


def render(v: pb.CastelloMethoniView) -> str:
    """A terminal rendering: board warning, seats, castles, then every cell with its terrain,
    market, walls and houses (walls are listed per cell: '|b3' is a wall towards b3)."""
    lines: list[str] = []
    names = [s.name for s in v.seats]
    initials = _initials(names)
    if v.board_approximate:
        lines.append(f"!! APPROXIMATE BOARD ({v.board_name}): {v.board_note}")
    else:
        lines.append(f"Board: {v.board_name}")
    if v.missions_assumed:
        lines.append(f"!! MISSIONS ASSUMED: {MISSIONS_ASSUMED_NOTE}")
    status = "game over" if v.game_over else f"phase {v.phase}"
    if v.current_player >= 0:
        status += f", {names[v.current_player]} to play ({counted(v.cards_played, 'card')} played)"
    if v.pending_chance:
        status += f", the table records {v.pending_chance}"
    if v.last_turn and not v.game_over:
        status += ", LAST TURN"
    lines.append(status)
    lines.append(
        f"bank {v.bank} ducats | walls: {v.wall_supply} in supply, {v.walls_in_play} on the "
        f"board | draw pile {v.draw_pile}, discard {len(v.discard)}"
    )
    for seat, s in enumerate(v.seats):
        hand = (
            "hidden"
            if s.hand_hidden and v.dealt_mode
            else ("not recorded" if not v.dealt_mode else " ".join(s.hand) or "-")
        )
        mission = (
            "hidden"
            if s.mission_hidden
            else (f"{s.mission} ({' '.join(s.mission_terrains)})" if s.mission else "unknown")
        )
        lines.append(
            f"  [{initials[seat]}] {s.name}: {s.ducats} ducats, houses {s.houses_left}, villas "
            f"{s.villas_left}, towers {s.towers_left}, hand {s.hand_size} ({hand}), "
            f"mission {mission}"
        )
    if v.castles:
        lines.append("castles:")
    for c in v.castles:
        pieces = " ".join(
            p for p in (_pieces(c.houses, initials, "h"), _pieces(c.villas, initials, "V")) if p
        )
        market = f" markets {' '.join(c.markets)}" if c.markets else ""
        lines.append(
            f"  #{c.id} tower [{initials[c.owner]}] {names[c.owner]}: {len(c.cells)} cells "
            f"({' '.join(c.cells)}){market}; {pieces or 'no houses'}; value {c.value}"
        )
    walls: dict[str, list[str]] = {}
    for w in v.walls:
        walls.setdefault(w.cell, []).append(w.other)
        if w.other != "sea":
            walls.setdefault(w.other, []).append(w.cell)
    lines.append("cells (id terrain [M market] #castle houses, walls):")
    for cell in sorted(v.cells, key=lambda c: _natural(c.id)):
        market = f" M{cell.market_ducats}d" if cell.market else ""
        castle = f" #{cell.castle}" if cell.castle else ""
        houses = _pieces(cell.houses, initials, "h")
        sea = f" sea {cell.sea_walls}/{cell.sea_edges} walled" if cell.sea_edges else ""
        walled = [o for o in walls.get(cell.id, []) if o != "sea"]
        wall_text = f" |{' |'.join(walled)}" if walled else ""
        lines.append(
            f"  {cell.id:<6} {cell.terrain}{market}{castle} {houses}{wall_text}{sea}".rstrip()
        )
    return "\n".join(lines)


@lru_cache(maxsize=4096)
def _natural(name: str) -> tuple[object, ...]:
    """Sort key putting c2 before c10 (cached: every rendering sorts every cell's name)."""
    parts = re.split(r"(\d+)", name)
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _initials(names: list[str]) -> list[str]:
    return [f"{i + 1}{(n[:1] or '?').upper()}" for i, n in enumerate(names)]


def _pieces(counts: Iterable[int], initials: list[str], mark: str) -> str:
    return " ".join(f"{k}{mark}{initials[s]}" for s, k in enumerate(counts) if k)


def hides_from(state: State, viewer: Viewer) -> bool:
    """RULES.md §2 steps 3-4 and §9: whether `state` holds something `viewer` may not see:
    in dealt mode, another seat's mission (until the end) or the cards in its hand. Table
    mode records no hand, and the missions only when they are revealed."""
    if viewer is None or not state.ctx.dealt:
        return False
    over = state.phase == OVER
    return any(
        (state.missions[seat] >= 0 and not over)
        or (state.hands is not None and any(state.hands[seat]))
        for seat in range(len(state.ctx.players))
        if seat != viewer
    )


def redact(state: State, viewer: Viewer) -> State:
    """RULES.md §2 steps 3-4 and §9: the state as `viewer` may know it (what `hides_from`
    says it may not see): another seat's mission unknown (-1) until the end, and another
    seat's hand empty, so that a card or mission it holds is checked as one it does not."""
    if not hides_from(state, viewer):
        return state
    over = state.phase == OVER
    seats = range(len(state.ctx.players))
    missions = tuple(m if seat == viewer or over else -1 for seat, m in enumerate(state.missions))
    hands = state.hands
    if hands is not None:
        hands = tuple(
            hand if seat == viewer else (0,) * len(hand)
            for seat, hand in zip(seats, hands, strict=True)
        )
    return state._replace(missions=missions, hands=hands)
