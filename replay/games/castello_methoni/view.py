"""Scoring (RULES.md §8), views with hidden information redacted, and the text rendering."""

from __future__ import annotations

import re
from collections.abc import Iterable

from replay.core import Viewer
from replay.games.castello_methoni.board import MISSIONS_ASSUMED_NOTE
from replay.games.castello_methoni.rules import (
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
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2

TOWER_POINTS = (0, 1, 3, 6, 10)
"""RULES.md §8: points for 0..4 towers on the board."""
LAND_POINTS = 3
LARGEST = 10
SECOND = 5
MISSIONS_LATER = "missions: revealed at the end"
"""RULES.md §2 step 3, §8: the mission item while the game is in progress (value 0)."""


def _rank_points(state: State) -> tuple[list[int], list[int]]:
    """RULES.md §8 (engine decision §10 #13): every owner of a castle of the largest size
    scores 10; the next size down scores 5 only when exactly one castle is largest (or with
    the option `second_place_after_tie`). Once per rank per player."""
    n = state.ctx.n
    largest, second = [0] * n, [0] * n
    castles = list(state.live_castles())
    if not castles:
        return largest, second
    sizes = sorted({len(c.cells) for c in castles}, reverse=True)
    top = [c for c in castles if len(c.cells) == sizes[0]]
    for castle in top:
        largest[castle.owner] = LARGEST
    if len(sizes) > 1 and (len(top) == 1 or state.ctx.second_place_after_tie):
        for castle in castles:
            if len(castle.cells) == sizes[1]:
                second[castle.owner] = SECOND
    return largest, second


def result(state: State) -> game_pb2.GameResult:
    """RULES.md §8: itemised scores; winner by total, then most valuable castle, then ducats.
    RULES.md §2 step 3 and §8: the secret mission bonus counts only once the game is over;
    until then the item is 0 ("missions: revealed at the end"), so that the running result,
    which every viewer receives, gives no mission away."""
    board, n = state.board, state.ctx.n
    over = state.phase == OVER
    largest, second = _rank_points(state)
    scores = []
    keys: list[tuple[int, int, int]] = []
    for seat in range(n):
        own = [c for c in state.live_castles() if c.owner == seat]
        cells = [cell for c in own for cell in c.cells]
        mission = state.missions[seat]
        if not over:
            # §2 step 3: missions are secret until the final scoring; the running result goes to
            # every viewer, so it says nothing about them.
            mission_label, bonus = MISSIONS_LATER, 0
        elif mission >= 0:
            terrains = board.missions[mission].terrains
            mission_label = "mission"
            bonus = sum(1 for cell in cells if board.terrain[cell] in terrains)
        else:
            mission_label, bonus = "mission (not recorded)", 0
        items = [
            game_pb2.ScoreItem(label="land (3 per castle cell)", value=LAND_POINTS * len(cells)),
            game_pb2.ScoreItem(label="ducats", value=state.ducats[seat]),
            game_pb2.ScoreItem(label=mission_label, value=bonus),
            game_pb2.ScoreItem(label="largest castle", value=largest[seat]),
            game_pb2.ScoreItem(label="second-largest castle", value=second[seat]),
            game_pb2.ScoreItem(label="towers", value=TOWER_POINTS[min(len(own), 4)]),
        ]
        total = sum(i.value for i in items)
        scores.append(game_pb2.SeatScore(seat=seat, total=total, items=items))
        keys.append((total, max((c.value for c in own), default=0), state.ducats[seat]))
    termination = (
        game_pb2.TERMINATION_ONGOING
        if not over
        else game_pb2.TERMINATION_DEADLOCK
        if state.deadlock
        else game_pb2.TERMINATION_COMPLETED
    )
    best = max(keys)
    winners = [s for s in range(n) if keys[s] == best]
    tiebreak = ""
    leaders = [s for s in range(n) if keys[s][0] == best[0]]
    if len(leaders) > 1:
        castle_leaders = [s for s in leaders if keys[s][1] == best[1]]
        if len(castle_leaders) < len(leaders):
            tiebreak = "most valuable castle"
        elif len(winners) < len(castle_leaders):
            tiebreak = "most valuable castle, then most ducats"
        else:
            tiebreak = "shared win: tied on points, castle value and ducats"
    return game_pb2.GameResult(
        termination=termination,
        scores=scores,
        winners=winners if over else [],
        tiebreak=tiebreak if over else "",
    )


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
    The view says when the board or the missions are approximate (RULES.md §3.4, §9)."""
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
    )


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
        status += f", {names[v.current_player]} to play ({v.cards_played} card(s) played)"
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


def _natural(name: str) -> tuple[object, ...]:
    """Sort key putting c2 before c10."""
    parts = re.split(r"(\d+)", name)
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _initials(names: list[str]) -> list[str]:
    return [f"{i + 1}{(n[:1] or '?').upper()}" for i, n in enumerate(names)]


def _pieces(counts: Iterable[int], initials: list[str], mark: str) -> str:
    return " ".join(f"{k}{mark}{initials[s]}" for s, k in enumerate(counts) if k)
