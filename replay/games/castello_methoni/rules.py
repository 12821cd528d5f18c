"""The rules of Castello Methoni on any board graph: state, setup, moves and their legality.

The state is immutable and cheap to copy: walls on internal edges are one integer bitmask,
everything else small tuples. A region (RULES.md §5.1.c) is a connected group of non-castle
cells linked through edges without a wall; it is enclosed exactly when it can no longer reach
an unwalled sea edge. Because the sea is one place, walling one edge splits a region in at
most two parts and at least one of them keeps the opening: a single wall never encloses two
regions at once (the case RULES.md §10 #10 provides for cannot arise on a graph), so every
build creates at most one castle. `apply` finds it with a breadth-first search that stops at
the first open sea edge; `legal_moves` finds every closing edge at once as a bridge of the
graph (non-castle cells + the sea, unwalled edges), in linear time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, overload

from tablelog.replay.components import quoted
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    FULL,
    TERMINAL,
    IllegalMove,
    InvalidSetup,
    no_such_seat,
    recorded_component,
    refuse_unknown_components,
)
from tablelog.replay.games.castello_methoni.components import (
    BOARD_COMPONENT,
    SEA,
    Board,
    load_board,
)
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2

# Phases.
FIRST: Final = 0
"""The table records who plays first (RULES.md §2 step 6)."""
DEAL: Final = 1
"""Dealt mode: missions, then 5 cards to each seat (RULES.md §2 steps 3-4)."""
PLAY: Final = 2
MERGE: Final = 3
DRAW: Final = 4
"""Dealt mode: the seat that played draws its cards one chance move at a time."""
REVEAL: Final = 5
"""Table mode, game over: the missions are recorded for the final scoring (engine decisions)."""
OVER: Final = 6
CHANCE_ACTIONS: Final = frozenset({"first_player", "mission", "draw"})
"""The moves the table records: who starts, a mission dealt or revealed, a card drawn."""

PHASE_NAMES = ("first player", "deal", "play", "merge", "draw", "missions", "over")

HAND_SIZE: Final = 5
START_DUCATS = {3: 20, 4: 15, 5: 12}
"""RULES.md §2: 60 ducats split evenly."""
BANK_START: Final = 4
HOUSES: Final = 15
VILLAS: Final = 5
TOWERS: Final = 4
TRADE_GAIN: Final = 2
INCOME_PER_MARKET: Final = 2
NO_CELL: Final = -1
"""The far side of a sea edge."""


_CardTables = tuple[tuple[int, ...], ...]
_LAST_CARD_TABLES: list[tuple[Board | None, bool, _CardTables, _CardTables]] = [
    (None, False, (), ())
]
"""The last board's card tables (`Context.edge_cards`, `sea_cards`): every game on the same
board (the loaded boards are cached) has the same, and a record read sets up each game
twice. One entry, replaced whole (safe across threads)."""


@dataclass(frozen=True, slots=True)
class Context:
    """What never changes during a game: board, seats, mode and options."""

    board: Board
    players: tuple[str, ...]
    dealt: bool
    second_place_after_tie: bool
    sea_edges_need_sea_card: bool
    edge_cards: tuple[tuple[int, ...], ...] = field(init=False)
    """The cards that may wall each internal edge (RULES.md §5.1.3), sorted."""
    sea_cards: tuple[tuple[int, ...], ...] = field(init=False)
    """The cards that may wall a sea edge of each cell."""

    def __post_init__(self) -> None:
        last = _LAST_CARD_TABLES[0]
        if last[0] is self.board and last[1] == self.sea_edges_need_sea_card:
            object.__setattr__(self, "edge_cards", last[2])
            object.__setattr__(self, "sea_cards", last[3])
            return
        board = self.board
        inner = []
        for a, b in board.edges:
            cards = {board.terrain[a], board.terrain[b]}
            if board.market[a] or board.market[b]:
                cards.add(board.sea_card)
            inner.append(tuple(sorted(cards)))
        sea = []
        for cell in range(len(board.cell_ids)):
            land = () if self.sea_edges_need_sea_card else (board.terrain[cell],)
            sea.append((*land, board.sea_card) if board.sea_edges[cell] else ())
        object.__setattr__(self, "edge_cards", tuple(inner))
        object.__setattr__(self, "sea_cards", tuple(sea))
        _LAST_CARD_TABLES[0] = (
            board,
            self.sea_edges_need_sea_card,
            self.edge_cards,
            self.sea_cards,
        )

    @property
    def n(self) -> int:
        return len(self.players)


@dataclass(frozen=True, slots=True)
class Castle:
    """RULES.md §6.1: after ownership only the count per colour matters, not positions."""

    id: int
    owner: int
    cells: frozenset[int]
    houses: tuple[int, ...]
    villas: tuple[int, ...]
    markets: int

    @property
    def value(self) -> int:
        """RULES.md §6.3: 2 per cell + 1 per house + 5 per villa."""
        return 2 * len(self.cells) + sum(self.houses) + 5 * sum(self.villas)


class State(NamedTuple):
    """The whole position. A NamedTuple rather than a dataclass: copying it with a change
    is several times cheaper, and folding is benchmarked in moves per second."""

    ctx: Context
    phase: int
    current: int
    first: int
    cards_played: int
    redrawn: bool
    merging: int
    last_turn: bool
    idle_turns: int
    deadlock: bool
    walls: int
    sea_walls: tuple[int, ...]
    wall_supply: int
    cell_castle: tuple[int, ...]
    castles: tuple[Castle | None, ...]
    houses: tuple[tuple[int, ...], ...]
    market_ducats: tuple[int, ...]
    ducats: tuple[int, ...]
    bank: int
    houses_left: tuple[int, ...]
    villas_left: tuple[int, ...]
    towers_left: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...] | None
    hand_sizes: tuple[int, ...]
    discard: tuple[int, ...]
    draw_pile: int
    missions: tuple[int, ...]
    pending_draws: int

    @property
    def board(self) -> Board:
        return self.ctx.board

    def live_castles(self) -> Iterator[Castle]:
        return (c for c in self.castles if c is not None)

    def castle(self, castle_id: int) -> Castle:
        found = self.castles[castle_id - 1]
        assert found is not None
        return found


def replace(state: State, **changes: Any) -> State:
    """A copy of `state` with `changes` (a NamedTuple's `_replace`: fast, which matters to
    folding speed as it runs a few times per move)."""
    return state._replace(**changes)


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _add(values: tuple[int, ...], index: int, delta: int) -> tuple[int, ...]:
    return (*values[:index], values[index] + delta, *values[index + 1 :])


# --------------------------------------------------------------------------------------
# Setup


def setup(
    players: Sequence[str],
    options: pb.CastelloMethoniOptions | None,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
) -> State:
    """RULES.md §2: the game's context from the players, the options and the board file
    recorded at creation (the only component file), then the state by player count."""
    refuse_unknown_components(components, (BOARD_COMPONENT,), "Castello Methoni")
    board = load_board(recorded_component(components, BOARD_COMPONENT, "Castello Methoni"))
    opts = options if isinstance(options, pb.CastelloMethoniOptions) else None
    ctx = Context(
        board=board,
        players=tuple(players),
        dealt=mode == DEALT,
        second_place_after_tie=bool(opts and opts.second_place_after_tie),
        sea_edges_need_sea_card=bool(opts and opts.sea_edges_need_sea_card),
    )
    first = opts.first_player if opts is not None and opts.HasField("first_player") else None
    return initial_state(ctx, first)


def initial_state(ctx: Context, first_player: int | None) -> State:
    """RULES.md §2: setup by player count."""
    board, n = ctx.board, ctx.n
    if n not in START_DUCATS:
        raise InvalidSetup("PLAYER_COUNT", f"Castello Methoni is for 3 to 5 players, not {n}.")
    if n not in board.walls_by_players:
        raise InvalidSetup("BOARD_WALLS", f"The board file gives no wall count for {n} players.")
    if ctx.dealt and len(board.missions) < n:
        raise InvalidSetup(
            "BOARD_MISSIONS", f"The board file has {len(board.missions)} missions for {n} players."
        )
    if sum(board.deck) < HAND_SIZE * n:
        raise InvalidSetup("BOARD_DECK", "The land deck is too small to deal 5 cards each.")
    if first_player is not None and not 0 <= first_player < n:
        raise InvalidSetup("FIRST_PLAYER", no_such_seat("first_player", first_player, ctx.players))
    cells = len(board.cell_ids)
    zeros = (0,) * n
    state = State(
        ctx=ctx,
        phase=FIRST,
        current=0,
        first=-1,
        cards_played=0,
        redrawn=False,
        merging=0,
        last_turn=False,
        idle_turns=0,
        deadlock=False,
        walls=0,
        sea_walls=(0,) * cells,
        wall_supply=board.walls_by_players[n],
        cell_castle=(0,) * cells,
        castles=(),
        houses=(zeros,) * cells,
        market_ducats=board.market_ducats,
        ducats=(START_DUCATS[n],) * n,
        bank=BANK_START,
        houses_left=(HOUSES,) * n,
        villas_left=(VILLAS,) * n,
        towers_left=(TOWERS,) * n,
        hands=((0,) * len(board.deck),) * n if ctx.dealt else None,
        hand_sizes=zeros if ctx.dealt else (HAND_SIZE,) * n,
        discard=(0,) * len(board.deck),
        draw_pile=sum(board.deck) - (0 if ctx.dealt else HAND_SIZE * n),
        missions=(-1,) * n,
        pending_draws=0,
    )
    if first_player is not None:
        state = _after_first_player(state, first_player)
    return state


def _after_first_player(state: State, seat: int) -> State:
    """RULES.md §2 steps 3-6: dealt mode deals missions and hands next; table mode starts."""
    state = replace(state, first=seat, current=seat)
    if state.ctx.dealt:
        return replace(state, phase=DEAL)
    return _begin_turn(state, seat)


def _begin_turn(state: State, seat: int) -> State:
    """RULES.md §4 step 0 / §6.5: market income, 2 per owned market cell, limited by the bank."""
    markets = sum(c.markets for c in state.live_castles() if c.owner == seat)
    gain = min(INCOME_PER_MARKET * markets, state.bank)
    return replace(
        state,
        phase=PLAY,
        current=seat,
        cards_played=0,
        redrawn=False,
        merging=0,
        ducats=_add(state.ducats, seat, gain) if gain else state.ducats,
        bank=state.bank - gain,
    )


def to_move(state: State) -> int:
    """RULES.md §4: the player whose turn it is (also while merging, §6.2), or the table."""
    if state.phase in (PLAY, MERGE):
        return state.current
    if state.phase == OVER:
        return TERMINAL
    return CHANCE


# --------------------------------------------------------------------------------------
# Regions and enclosure (RULES.md §3.1, §5.1.c)


def enclosed_region(
    board: Board, walls: int, sea_walls: Sequence[int], cell_castle: Sequence[int], start: int
) -> frozenset[int] | None:
    """The region of non-castle cell `start` if it is enclosed (no unwalled edge leads to an
    unwalled sea edge), else None. Stops at the first opening it finds (RULES.md §5.1.c)."""
    if cell_castle[start]:
        return None
    is_open, seen = _search(board, walls, sea_walls, start)
    return None if is_open else frozenset(seen)


def _search(
    board: Board, walls: int, sea_walls: Sequence[int], start: int
) -> tuple[bool, set[int]]:
    """Breadth-first search of the region of `start` that stops at the first unwalled sea
    edge: (True, the cells seen so far) if one was found, else (False, the whole region)."""
    sea_edges, neighbours = board.sea_edges, board.neighbours
    seen = {start}
    if sea_walls[start] < sea_edges[start]:
        return True, seen
    queue = [start]
    for cell in queue:  # the list grows while it is walked
        for other, edge in neighbours[cell]:
            if other not in seen and not (walls >> edge) & 1:
                seen.add(other)
                if sea_walls[other] < sea_edges[other]:
                    return True, seen
                queue.append(other)
    return False, seen


def _walled(state: State, a: int, b: int, edge: int) -> tuple[int, tuple[int, ...]]:
    """The walls and sea walls of `state` with a wall on edge a|b (b = NO_CELL: a sea edge
    of a, whose `edge` is then unused)."""
    if b == NO_CELL:
        return state.walls, _add(state.sea_walls, a, 1)
    return state.walls | 1 << edge, state.sea_walls


def _enclosed_by(
    board: Board, walls: int, sea_walls: Sequence[int], a: int, b: int
) -> frozenset[int] | None:
    """RULES.md §5.1.c: the region that the wall just placed on edge a|b (b = NO_CELL for a
    sea edge; `walls` and `sea_walls` include it) encloses, or None.

    The side of `a` first; the side of `b` only when that search did not pass through b
    (then both sides are one region and the first answer holds for both). One wall never
    encloses two regions (so RULES.md §10 #10 cannot arise here): every cell reaches the
    sea (the board loader refuses a landlocked cell, §5.1.c), so before this wall the
    region holding a and b had an opening. The wall splits it into at most two parts and
    each opening stays in one of them: when a's part is enclosed, b's part holds every
    opening. The assert checks this argument on every enclosing wall."""
    is_open, seen = _search(board, walls, sea_walls, a)
    if not is_open:
        assert b == NO_CELL or b in seen or _search(board, walls, sea_walls, b)[0], (
            "one wall enclosed two regions: a cell of this board cannot reach the sea"
        )
        return frozenset(seen)
    if b != NO_CELL and b not in seen:
        is_open, seen = _search(board, walls, sea_walls, b)
        if not is_open:
            return frozenset(seen)
    return None


_LAST_REGION: list[tuple[State | None, int, frozenset[int] | None]] = [(None, 0, None)]
"""The last region `closing_region` found: reading a build (its notation) and applying it
ask for the same one. One entry, replaced whole (safe across threads)."""


def closing_region(state: State, key: int) -> frozenset[int] | None:
    """RULES.md §5.1.5: the region a wall on the edge `key` (as `open_edges` names it)
    would enclose, or None (also for an edge that is not open): the one entry of
    `closing_edges` that a single build needs, found by a search from the wall's sides
    rather than a search of the whole board, and remembered for the last state asked about."""
    last, last_key, found = _LAST_REGION[0]
    if last is state and last_key == key:
        return found
    edge = _open_edge(state, key)
    if not edge:
        return None
    a, b, _ = edge[0]
    walls, sea_walls = _walled(state, a, b, key)
    found = _enclosed_by(state.board, walls, sea_walls, a, b)
    _LAST_REGION[0] = (state, key, found)
    return found


_LAST_CLOSING: list[tuple[State | None, Mapping[int, frozenset[int]]]] = [(None, {})]
"""The last state's closing edges: reading many moves in one state (notation, legal
moves) asks for them once per move. One entry, replaced whole (safe across threads)."""


def closing_edges(state: State) -> Mapping[int, frozenset[int]]:
    """RULES.md §5.1.5: the closing edges of `state` (see `_closing_edges`), remembered for
    the last state asked about."""
    last, found = _LAST_CLOSING[0]
    if last is state:
        return found
    found = _closing_edges(state)
    _LAST_CLOSING[0] = (state, found)
    return found


def _closing_edges(state: State) -> dict[int, frozenset[int]]:
    """Every open edge whose wall would enclose a region, with the region it would enclose.

    Keys: internal edge index, or -1 - cell for the sea edges of a cell (only when exactly
    one sea edge of it is open). The bridges of the graph (non-castle cells + the sea node,
    unwalled edges), found by an iterative Tarjan search rooted at the sea (RULES.md §5.1.5).
    """
    board = state.board
    cells = len(board.cell_ids)
    sea = cells
    castle_of = state.cell_castle
    walls = state.walls
    open_sea = [
        0 if castle_of[c] else board.sea_edges[c] - state.sea_walls[c] for c in range(cells)
    ]
    order = [0] * (cells + 1)
    low = [0] * (cells + 1)
    parent_link = [-2] * (cells + 1)  # edge key used to reach the node; -2 = unvisited
    counter = 1
    order[sea] = low[sea] = counter
    parent_link[sea] = -3
    result: dict[int, frozenset[int]] = {}
    subtree: dict[int, list[int]] = {}
    # Roots: every coastal non-castle cell hangs off the sea.
    sea_children = [(c, -1 - c, open_sea[c]) for c in range(cells) if open_sea[c]]
    for root, key, multiplicity in sea_children:
        if parent_link[root] != -2:
            continue
        counter += 1
        order[root] = low[root] = counter
        parent_link[root] = key
        stack: list[tuple[int, Iterator[tuple[int, int]]]] = [(root, iter(board.neighbours[root]))]
        members: list[list[int]] = [[root]]
        while stack:
            node, it = stack[-1]
            advanced = False
            for other, edge in it:
                if (walls >> edge) & 1 or castle_of[other]:
                    continue
                if edge == parent_link[node]:
                    continue
                if parent_link[other] == -2:
                    counter += 1
                    order[other] = low[other] = counter
                    parent_link[other] = edge
                    stack.append((other, iter(board.neighbours[other])))
                    members.append([other])
                    advanced = True
                    break
                low[node] = min(low[node], order[other])
            if advanced:
                continue
            stack.pop()
            mine = members.pop()
            if open_sea[node] and node != root:
                low[node] = min(low[node], order[sea])
            if stack:
                up = stack[-1][0]
                low[up] = min(low[up], low[node])
                members[-1].extend(mine)
                if low[node] > order[up]:
                    result[parent_link[node]] = frozenset(mine)
            else:
                subtree[root] = mine
        if multiplicity == 1 and low[root] > order[sea]:
            result[key] = frozenset(subtree[root])
    return result


# --------------------------------------------------------------------------------------
# Cards


def _check_card(state: State, card: int) -> None:
    """RULES.md §4 and the engine decisions on hands: a played card must be in the hand
    (dealt mode) or still unseen (table mode: hands are not recorded)."""
    board = state.board
    seat = state.current
    if state.hands is not None:
        if state.hands[seat][card] < 1:
            raise IllegalMove(
                "CARD_NOT_IN_HAND",
                f"{state.ctx.players[seat]} holds no {board.card_name(card)} card.",
            )
    elif board.deck[card] - state.discard[card] < 1:
        raise IllegalMove(
            "CARD_NOT_AVAILABLE",
            f"All {board.deck[card]} {board.card_name(card)} cards are on the discard pile.",
        )
    if state.hand_sizes[seat] < 1:
        raise IllegalMove("NO_CARDS", f"{state.ctx.players[seat]} has no card left to play.")


def _play_card(state: State, card: int) -> State:
    """RULES.md §4 step 2: a played card goes face up onto the discard pile."""
    seat = state.current
    hands = state.hands
    if hands is not None:
        hands = (*hands[:seat], _add(hands[seat], card, -1), *hands[seat + 1 :])
    return replace(
        state,
        hands=hands,
        hand_sizes=_add(state.hand_sizes, seat, -1),
        discard=_add(state.discard, card, 1),
        cards_played=state.cards_played + 1,
    )


def _check_can_play(state: State) -> None:
    """RULES.md §4 step 1 and §6.2: a card is played only between merges, two at most."""
    if state.phase != PLAY:
        raise IllegalMove("MERGE_PENDING", "Finish merging first: merge a castle or stop.")
    if state.cards_played >= 2:
        raise IllegalMove("TWO_CARDS_PLAYED", "A turn has at most 2 cards (RULES.md §4).")


def card_matches_edge(state: State, card: int, a: int, b: int) -> bool:
    """RULES.md §5.1.3: a land card needs a cell of its terrain beside the edge (a sea edge of
    such a cell counts, engine decision §10 #9); the Market/Sea card needs a market beside the
    edge or a sea edge."""
    board = state.board
    if card == board.sea_card:
        return b == NO_CELL or board.market[a] or board.market[b]
    if b == NO_CELL:
        return board.terrain[a] == card and not state.ctx.sea_edges_need_sea_card
    return board.terrain[a] == card or board.terrain[b] == card


# --------------------------------------------------------------------------------------
# Build


def house_options(state: State, a: int, b: int) -> list[tuple[tuple[int, int], ...]]:
    """RULES.md §5.1.b: every legal way to place houses for a wall on edge a|b (b = NO_CELL
    for a sea edge). Placements are (seat, cell), builder first, then left, then right."""
    templates = _house_templates(state, b == NO_CELL)
    sides = (a, b)
    return [tuple((who, sides[side]) for who, side in t) for t in templates]


def _house_templates(state: State, sea: bool) -> list[tuple[tuple[int, int], ...]]:
    """`house_options` for any edge, with cells as sides (0 = first cell, 1 = the other)."""
    a, b = 0, NO_CELL if sea else 1
    seat, n = state.current, state.ctx.n
    left, right = (seat + 1) % n, (seat - 1) % n
    have = state.houses_left
    options: list[tuple[tuple[int, int], ...]] = []
    if b == NO_CELL:
        if have[seat]:
            return [((seat, a),)]
        options = [((x, a),) for x in (left, right) if have[x]]
        return options or [()]
    if have[seat]:
        others = [x for x in (left, right) if have[x]]
        for own, far in ((a, b), (b, a)):
            if others:
                options.extend(((seat, own), (x, far)) for x in others)
            else:
                options.append(((seat, own),))
        return options
    for near, far in ((a, b), (b, a)):
        option = tuple(
            p
            for p in ((left, near) if have[left] else None, (right, far) if have[right] else None)
            if p is not None
        )
        if option not in options:
            options.append(option)
    return options


def _castle_cost(
    state: State, region: frozenset[int], placements: Sequence[tuple[int, int]]
) -> tuple[int, int]:
    """RULES.md §6.1 steps 1-2: (land to the bank, houses to their owners) for a new castle."""
    seat = state.current
    houses = 0
    for cell in region:
        row = state.houses[cell]
        houses += sum(row) - row[seat]
    houses += sum(1 for who, cell in placements if who != seat and cell in region)
    return len(region), houses


def _own_castle_beside(state: State, region: frozenset[int]) -> int:
    """The lowest id of a castle of the current seat sharing an edge with `region`, or 0."""
    beside = own_castles_beside(state, region)
    return beside[0] if beside else 0


def own_castles_beside(state: State, region: frozenset[int]) -> list[int]:
    """RULES.md §6.4: the castles of the current seat sharing an edge with `region`, by id."""
    found: set[int] = set()
    for cell in region:
        for other, _ in state.board.neighbours[cell]:
            cid = state.cell_castle[other]
            if cid and state.castle(cid).owner == state.current:
                found.add(cid)
    return sorted(found)


def merge_into(state: State, region: frozenset[int] | None, into: str) -> int:
    """RULES.md §6.2, §6.4: the own castle that the castle `region` (no tower left) merges
    into, as the build's `into` names it (any cell of it); 0 for the default, the lowest id."""
    if not into:
        return 0
    seat = state.current
    if region is None or state.towers_left[seat]:
        why = "encloses no castle" if region is None else "marks its castle with a tower"
        raise IllegalMove(
            "INTO_WITHOUT_MERGE",
            f"`into` chooses the castle a new castle merges into when its builder has no tower "
            f"left (RULES.md §6.4); this build {why}.",
        )
    board = state.board
    target = state.cell_castle[cell_index(board, into)]
    beside = own_castles_beside(state, region)
    if target not in beside:
        choices = ", ".join(board.names[min(state.castle(c).cells)] for c in beside)
        raise IllegalMove(
            "INTO_NOT_BESIDE",
            f"Cell {board.names[cell_index(board, into)]} is not in a castle of "
            f"{state.ctx.players[seat]} sharing a wall with the new castle; it can merge "
            f"into {choices} (RULES.md §6.4).",
        )
    return target


def check_castle(
    state: State, region: frozenset[int], placements: Sequence[tuple[int, int]]
) -> None:
    """RULES.md §5.1.5 and §6.4: the builder must pay for the castle the wall creates and mark
    it with a tower, or (no tower left) merge it straight into an adjacent castle of theirs."""
    seat = state.current
    land, houses = _castle_cost(state, region, placements)
    if land + houses > state.ducats[seat]:
        raise IllegalMove(
            "CASTLE_UNAFFORDABLE",
            f"This wall encloses {land} cell{'s' if land != 1 else ''}: the castle costs "
            f"{land} for the land and {houses} for other players' houses, {land + houses} "
            f"ducats; {state.ctx.players[seat]} has {state.ducats[seat]}.",
        )
    if not state.towers_left[seat] and not _own_castle_beside(state, region):
        raise IllegalMove(
            "NO_TOWER",
            f"{state.ctx.players[seat]} has no tower left to mark the castle this wall encloses,"
            " and it touches none of their castles to merge into (RULES.md §6.4).",
        )


def resolve_edge(state: State, cell: str, other: str) -> tuple[int, int, int]:
    """(a, b, edge index) for an edge named by its two sides; b = NO_CELL and edge -1 - a for
    a sea edge. Raises IllegalMove for unknown cells or cells that share no edge."""
    board = state.board
    a = cell_index(board, cell)
    if other.strip().lower() == SEA:
        if not board.sea_edges[a]:
            raise IllegalMove("NOT_AN_EDGE", f"Cell {board.names[a]} does not touch the sea.")
        return a, NO_CELL, -1 - a
    b = cell_index(board, other)
    edge = board.edge_between(a, b)
    if edge is None:
        raise IllegalMove(
            "NOT_AN_EDGE",
            f"Cells {board.names[a]} and {board.names[b]} do not share an edge "
            "(cells touching only at a corner are not neighbours).",
        )
    return (a, b, edge) if a < b else (b, a, edge)


def cell_index(board: Board, name: str) -> int:
    """RULES.md §3.3: a cell by its id or label in the board file (case-insensitive)."""
    index = board.lookup.get(name)
    if index is not None:
        return index
    index = board.lookup.get(name.strip().lower())
    if index is None:
        raise IllegalMove("UNKNOWN_CELL", f"There is no cell {quoted(name)} on this board.")
    return index


def card_index(board: Board, name: str) -> int:
    """RULES.md §1: a land card by its terrain name, or "sea" for the Market/Sea card."""
    key = name.strip().lower()
    if key == SEA:
        return board.sea_card
    if key in board.terrains:
        return board.terrains.index(key)
    raise IllegalMove(
        "UNKNOWN_CARD",
        f"There is no {quoted(name)} card; the cards are {', '.join(board.terrains)} and sea.",
    )


def build(state: State, move: pb.CastelloMethoniBuild) -> State:
    """RULES.md §5.1: play a card, wall an edge, place houses, and take any castle it makes."""
    _check_can_play(state)
    board = state.board
    card = card_index(board, move.card)
    a, b, edge = resolve_edge(state, move.cell, move.other)
    _check_card(state, card)
    if state.cell_castle[a] or (b != NO_CELL and state.cell_castle[b]):
        raise IllegalMove("EDGE_IN_CASTLE", "That edge lies inside a castle (RULES.md §5.1.2).")
    if b == NO_CELL:
        if state.sea_walls[a] >= board.sea_edges[a]:
            raise IllegalMove(
                "EDGE_HAS_WALL", f"Every sea edge of {board.names[a]} already has a wall."
            )
    elif (state.walls >> edge) & 1:
        raise IllegalMove(
            "EDGE_HAS_WALL", f"The edge {board.names[a]}|{board.names[b]} already has a wall."
        )
    if not card_matches_edge(state, card, a, b):
        if card == board.sea_card:
            why = "a Market/Sea card builds only beside a market or on a sea edge"
        elif b == NO_CELL and board.terrain[a] == card:
            why = "this game's option lets only the Market/Sea card build on the sea"
        else:
            kind = board.card_name(card)
            why = f"a {kind} card needs a {kind} cell beside the edge"
        raise IllegalMove("CARD_DOES_NOT_MATCH", f"Cannot build there: {why} (RULES.md §5.1.3).")
    if state.wall_supply < 1:
        raise IllegalMove("NO_WALLS_LEFT", "The wall supply is empty (RULES.md §5.1.4).")
    placements = _placements(state, move, a, b)
    options = house_options(state, a, b)
    if placements not in options:
        raise IllegalMove("HOUSES_NOT_ALLOWED", _house_rule(state, a, b, options))

    # Place the wall and the houses.
    walls, sea_walls = _walled(state, a, b, edge)
    houses = state.houses
    houses_left = state.houses_left
    for who, cell in placements:
        houses = (*houses[:cell], _add(houses[cell], who, 1), *houses[cell + 1 :])
        houses_left = _add(houses_left, who, -1)
    region = closing_region(state, edge)  # the walls just placed, as parsing the move found
    if region is not None:
        check_castle(state, region, placements)
    into = merge_into(state, region, move.into)
    state = _play_card(state, card)
    state = replace(
        state,
        walls=walls,
        sea_walls=sea_walls,
        wall_supply=state.wall_supply - 1,
        houses=houses,
        houses_left=houses_left,
        last_turn=state.last_turn or state.wall_supply == 1,
    )
    if region is None:
        return _card_done(state)
    state, castle_id = _take_ownership(state, region, into)
    if merge_targets(state, castle_id):
        return replace(state, phase=MERGE, merging=castle_id)
    return _card_done(state)


def _placements(
    state: State, move: pb.CastelloMethoniBuild, a: int, b: int
) -> tuple[tuple[int, int], ...]:
    """RULES.md §5.1.b: the houses of a build, checked to stand beside the wall, in the
    canonical order (builder, left, right)."""
    board, n = state.board, state.ctx.n
    seat = state.current
    rank = {seat: 0, (seat + 1) % n: 1, (seat - 1) % n: 2}
    found: list[tuple[int, int]] = []
    for house in move.houses:
        if house.seat >= n:
            raise IllegalMove("UNKNOWN_SEAT", _no_player(state, house.seat))
        cell = cell_index(board, house.cell)
        if cell not in (a, b):
            raise IllegalMove(
                "HOUSE_NOT_BESIDE_WALL",
                f"Houses go on the two cells beside the wall, not on {board.names[cell]}.",
            )
        found.append((house.seat, cell))
    if len(found) > 1:  # one house (a sea edge, or a neighbour with none left) is in order
        found.sort(key=lambda p: (rank.get(p[0], 3), p[1]))
    return tuple(found)


def _house_rule(state: State, a: int, b: int, options: list[tuple[tuple[int, int], ...]]) -> str:
    """RULES.md §5.1.b in words, with the choices open in this situation."""
    names, board = state.ctx.players, state.board
    choices = [
        " and ".join(f"{names[w]}'s house on {board.names[c]}" for w, c in o) or "no house"
        for o in options
    ]
    if b == NO_CELL:
        rule = "On a sea edge only the builder's own house is placed"
    elif state.houses_left[state.current]:
        rule = (
            "Put your own house on one side of the wall and a house of the player to your "
            "left or right on the other side"
        )
    else:
        rule = "With no houses left, put one house of each neighbour, one on each side"
    return f"{rule} (RULES.md §5.1.b). Allowed here: {'; '.join(choices)}."


def _upgrade(
    houses: tuple[int, ...], villas: tuple[int, ...], state: State
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """RULES.md §6.1.3: while a colour has 3 houses in the castle and a villa in supply, 3
    houses go back to their owner and a villa comes in. Returns (houses, villas, houses
    left, villas left)."""
    houses_left, villas_left = state.houses_left, state.villas_left
    for seat, count in enumerate(houses):
        while count >= 3 and villas_left[seat] > 0:
            count -= 3
            houses = _set(houses, seat, count)
            villas = _add(villas, seat, 1)
            houses_left = _add(houses_left, seat, 3)
            villas_left = _add(villas_left, seat, -1)
    return houses, villas, houses_left, villas_left


def _take_ownership(state: State, region: frozenset[int], into: int = 0) -> tuple[State, int]:
    """RULES.md §6.1 (pay land, pay houses, upgrade, tower, market ducats) and §6.4 (no tower:
    merge straight into an adjacent own castle: `into`, or the lowest id when 0)."""
    board, n, seat = state.board, state.ctx.n, state.current
    land, _ = _castle_cost(state, region, ())
    ducats = _add(state.ducats, seat, -land)
    bank = state.bank + land
    counts = [0] * n
    houses = state.houses
    empty = (0,) * n
    for cell in region:
        row = houses[cell]
        if any(row):
            for who, count in enumerate(row):
                counts[who] += count
            houses = (*houses[:cell], empty, *houses[cell + 1 :])
    for who, count in enumerate(counts):
        if who != seat and count:
            ducats = _add(_add(ducats, seat, -count), who, count)
    state = replace(state, ducats=ducats, bank=bank, houses=houses)
    castle_houses, villas, houses_left, villas_left = _upgrade(tuple(counts), empty, state)
    market_gain = 0
    market_ducats = state.market_ducats
    markets = 0
    for cell in region:
        if board.market[cell]:
            markets += 1
            market_gain += market_ducats[cell]
            market_ducats = _set(market_ducats, cell, 0)
    castle_id = len(state.castles) + 1
    castle = Castle(castle_id, seat, region, castle_houses, villas, markets)
    cell_castle = list(state.cell_castle)
    for cell in region:
        cell_castle[cell] = castle_id
    target = 0 if state.towers_left[seat] else into or _own_castle_beside(state, region)
    state = replace(
        state,
        castles=(*state.castles, castle),
        cell_castle=tuple(cell_castle),
        houses_left=houses_left,
        villas_left=villas_left,
        towers_left=_add(state.towers_left, seat, -1) if not target else state.towers_left,
        market_ducats=market_ducats,
        ducats=_add(state.ducats, seat, market_gain),
    )
    if target:
        # §6.4 exception: the new castle (no tower) merges free into the adjacent own castle.
        state = _absorb(state, target, castle_id, tower_back=False)
        return state, target
    return state, castle_id


def _absorb(state: State, keep_id: int, gone_id: int, tower_back: bool = True) -> State:
    """RULES.md §6.2 steps 2-4: remove the walls between the castles, upgrade, and send the
    absorbed castle's tower home (also when it is the merger's own: one tower per castle)."""
    board = state.board
    keep, gone = state.castle(keep_id), state.castle(gone_id)
    walls = state.walls
    removed = 0
    for cell in gone.cells:
        for other, edge in board.neighbours[cell]:
            if other in keep.cells and (walls >> edge) & 1:
                walls &= ~(1 << edge)
                removed += 1
    houses = tuple(x + y for x, y in zip(keep.houses, gone.houses, strict=True))
    villas = tuple(x + y for x, y in zip(keep.villas, gone.villas, strict=True))
    houses, villas, houses_left, villas_left = _upgrade(houses, villas, state)
    merged = Castle(
        keep_id, keep.owner, keep.cells | gone.cells, houses, villas, keep.markets + gone.markets
    )
    cell_castle = list(state.cell_castle)
    for cell in gone.cells:
        cell_castle[cell] = keep_id
    castles = list(state.castles)
    castles[keep_id - 1] = merged
    castles[gone_id - 1] = None
    return replace(
        state,
        walls=walls,
        wall_supply=state.wall_supply + removed,
        castles=tuple(castles),
        cell_castle=tuple(cell_castle),
        houses_left=houses_left,
        villas_left=villas_left,
        towers_left=_add(state.towers_left, gone.owner, 1) if tower_back else state.towers_left,
    )


# --------------------------------------------------------------------------------------
# Merge


def merge_targets(state: State, castle_id: int) -> list[int]:
    """RULES.md §6.2: castles sharing a walled edge with `castle_id` that its owner may
    absorb (own castles free; others only if the value can be paid), by id."""
    castle = state.castle(castle_id)
    seen: set[int] = set()
    for cell in castle.cells:
        for other, _ in state.board.neighbours[cell]:
            cid = state.cell_castle[other]
            if cid and cid != castle_id:
                seen.add(cid)
    money = state.ducats[castle.owner]
    return sorted(
        cid
        for cid in seen
        if state.castle(cid).owner == castle.owner or state.castle(cid).value <= money
    )


def merge(state: State, move: pb.CastelloMethoniMerge) -> State:
    """RULES.md §6.2: pay the value to the owner (nothing for one's own), remove the walls
    between, upgrade, return the tower; then merging may go on in a chain."""
    if state.phase != MERGE:
        _refuse_unaffordable_late_merge(state, move.cell)
        raise IllegalMove(
            "NOTHING_TO_MERGE", "Merging happens only right after building a castle (§6.2)."
        )
    board = state.board
    cell = cell_index(board, move.cell)
    target = state.cell_castle[cell]
    if not target:
        raise IllegalMove("NOT_A_CASTLE", f"Cell {board.names[cell]} is not in a castle.")
    if target == state.merging:
        raise IllegalMove("SAME_CASTLE", f"Cell {board.names[cell]} is in the merging castle.")
    keep = state.castle(state.merging)
    other = state.castle(target)
    if not any(state.cell_castle[o] == target for c in keep.cells for o, _ in board.neighbours[c]):
        raise IllegalMove(
            "CASTLE_NOT_ADJACENT",
            "Only a castle sharing a wall with yours can be merged; touching at a corner "
            "is not enough (RULES.md §6.2).",
        )
    seat = state.current
    price = 0 if other.owner == seat else other.value
    if price > state.ducats[seat]:
        raise IllegalMove(
            "MERGE_UNAFFORDABLE",
            f"Merging that castle costs its value, {price} ducats (2 per cell, 1 per house, "
            f"5 per villa); {state.ctx.players[seat]} has {state.ducats[seat]}.",
        )
    if price:
        state = replace(state, ducats=_add(_add(state.ducats, seat, -price), other.owner, price))
    state = _absorb(state, state.merging, target)
    if merge_targets(state, state.merging):
        return state
    return _card_done(replace(state, phase=PLAY, merging=0))


def _refuse_unaffordable_late_merge(state: State, cell_name: str) -> None:
    """RULES.md §6.2: the merge step of a castle built this turn ends when no neighbour can be
    paid for; a merge typed after it is refused with the price that ended it."""
    if state.phase != PLAY or not state.cards_played:
        return
    board, seat = state.board, state.current
    try:
        cell = cell_index(board, cell_name)
    except IllegalMove:
        return
    target = state.cell_castle[cell]
    if not target or state.castle(target).owner == seat:
        return
    other = state.castle(target)
    around = {state.cell_castle[o] for c in other.cells for o, _ in board.neighbours[c]}
    beside = around - {0, target}
    if not any(state.castle(c).owner == seat for c in beside) or other.value <= state.ducats[seat]:
        return
    raise IllegalMove(
        "MERGE_UNAFFORDABLE",
        f"The merge step has ended: merging the castle holding {board.names[cell]} costs its "
        f"value, {other.value} ducats (2 per cell, 1 per house, 5 per villa), and "
        f"{state.ctx.players[seat]} has {state.ducats[seat]} (RULES.md §6.2).",
    )


def stop_merging(state: State) -> State:
    """RULES.md §6.2 / §10 #17: merging is optional."""
    if state.phase != MERGE:
        raise IllegalMove("NOTHING_TO_MERGE", "There is no merge to stop.")
    return _card_done(replace(state, phase=PLAY, merging=0))


# --------------------------------------------------------------------------------------
# Trade, end of turn, redraw


def active_markets(state: State) -> set[int]:
    """RULES.md §5.2: a market inside any castle is active for everyone."""
    board = state.board
    return {
        board.terrain[c]
        for c in range(len(board.cell_ids))
        if board.market[c] and state.cell_castle[c]
    }


def trade(state: State, move: pb.CastelloMethoniTrade) -> State:
    """RULES.md §5.2: a card of an active market's terrain (or Market/Sea) takes 2 ducats from
    the bank, or what is left."""
    _check_can_play(state)
    board = state.board
    card = card_index(board, move.card)
    _check_card(state, card)
    active = active_markets(state)
    if not active:
        raise IllegalMove(
            "NO_ACTIVE_MARKET", "Trade needs a market inside a castle; there is none yet."
        )
    if card != board.sea_card and card not in active:
        raise IllegalMove(
            "NO_MARKET_FOR_CARD",
            f"No active market is on {board.card_name(card)}: trade with a Market/Sea card or "
            f"a card of {', '.join(board.terrains[t] for t in sorted(active))}.",
        )
    gain = min(TRADE_GAIN, state.bank)
    state = _play_card(state, card)
    state = replace(state, bank=state.bank - gain, ducats=_add(state.ducats, state.current, gain))
    return _card_done(state)


def _card_done(state: State) -> State:
    """RULES.md §4: after the second card the turn ends."""
    if state.cards_played >= 2:
        return _end_turn(state)
    return state


def end_turn(state: State) -> State:
    """RULES.md §4: stop after one card (0 cards only after a redraw left nothing playable)."""
    if state.phase != PLAY:
        raise IllegalMove("MERGE_PENDING", "Finish merging first: merge a castle or stop.")
    if state.cards_played == 0 and not state.redrawn:
        raise IllegalMove(
            "MUST_PLAY_A_CARD",
            "Play at least one card; with no playable card, redraw your hand (RULES.md §4).",
        )
    return _end_turn(state)


def _end_turn(state: State) -> State:
    """RULES.md §4 step 2 and §7: draw as many as played; the turn that emptied the wall
    supply is the last. A full round in which nobody could play ends a blocked game."""
    n, seat = state.ctx.n, state.current
    idle = 0 if state.cards_played else state.idle_turns + 1
    state = replace(state, idle_turns=idle, phase=PLAY, merging=0)
    if state.last_turn or idle >= n:
        return _finish(replace(state, deadlock=not state.last_turn))
    played = state.cards_played
    if played:
        if state.ctx.dealt:
            return _start_draws(state, played)
        state = _draw_blind(state, seat, played)
    return _begin_turn(state, (seat + 1) % n)


def _start_draws(state: State, count: int) -> State:
    """Dealt mode: the current seat draws `count` cards, one chance move each."""
    state = _reshuffle_if_needed(replace(state, phase=DRAW, pending_draws=count))
    if state.draw_pile > 0:
        return state
    state = replace(state, pending_draws=0)
    if state.redrawn and state.cards_played == 0:
        return replace(state, phase=PLAY)
    return _begin_turn(state, (state.current + 1) % state.ctx.n)


def _draw_blind(state: State, seat: int, count: int) -> State:
    """Table mode: hands are not recorded, only how many cards each pile holds."""
    pile, discard = state.draw_pile, state.discard
    drawn = 0
    while drawn < count:
        if pile == 0:
            pile, discard = sum(discard), (0,) * len(discard)
            if pile == 0:
                break
        take = min(pile, count - drawn)
        pile -= take
        drawn += take
    return replace(
        state, draw_pile=pile, discard=discard, hand_sizes=_add(state.hand_sizes, seat, drawn)
    )


def _finish(state: State) -> State:
    """RULES.md §7-8: the game is over; in table mode the missions are recorded first."""
    if not state.ctx.dealt and -1 in state.missions:
        return replace(state, phase=REVEAL)
    return replace(state, phase=OVER)


def playable_cards(state: State) -> set[int]:
    """The cards that have a legal Build or Trade now (for the stuck-hand rule, §4)."""
    board = state.board
    cards: set[int] = set()
    if state.wall_supply > 0:
        closing = closing_edges(state)
        for a, b, key in open_edges(state):
            fits = state.ctx.edge_cards[key] if key >= 0 else state.ctx.sea_cards[a]
            wanted = set(fits) - cards
            if not wanted:
                continue
            region = closing.get(key)
            if region is not None and not any(
                _castle_ok(state, region, p) for p in house_options(state, a, b)
            ):
                continue
            cards |= wanted
    active = active_markets(state)
    if active:
        cards |= active | {board.sea_card}
    return cards


def _castle_ok(state: State, region: frozenset[int], placements: Sequence[tuple[int, int]]) -> bool:
    try:
        check_castle(state, region, placements)
    except IllegalMove:
        return False
    return True


def open_edges(state: State) -> Iterator[tuple[int, int, int]]:
    """RULES.md §5.1 conditions 1-2 and §3.1: the edges a Build may wall (outside castles, no
    wall yet), as (a, b, key): internal edges by index, the sea edges of a cell once (the sea is
    one place, §3.1), as (cell, NO_CELL, -1 - cell)."""
    board = state.board
    castle_of, walls = state.cell_castle, state.walls
    for index, (a, b) in enumerate(board.edges):
        if not (walls >> index) & 1 and not castle_of[a] and not castle_of[b]:
            yield a, b, index
    for cell, count in enumerate(board.sea_edges):
        if count and not castle_of[cell] and state.sea_walls[cell] < count:
            yield cell, NO_CELL, -1 - cell


def _open_edge(state: State, key: int) -> list[tuple[int, int, int]]:
    """`open_edges` restricted to the edge `key`: [] or its one entry."""
    castle_of = state.cell_castle
    if key >= 0:
        a, b = state.board.edges[key]
        if (state.walls >> key) & 1 or castle_of[a] or castle_of[b]:
            return []
        return [(a, b, key)]
    cell = -1 - key
    if castle_of[cell] or state.sea_walls[cell] >= state.board.sea_edges[cell]:
        return []
    return [(cell, NO_CELL, key)]


def redraw(state: State, move: pb.CastelloMethoniRedraw) -> State:
    """RULES.md §4, stuck hand: with no playable card, reveal the hand, discard it and draw 5."""
    if state.phase != PLAY or state.cards_played:
        raise IllegalMove("REDRAW_NOT_NOW", "Redraw only at the start of a turn (RULES.md §4).")
    if state.redrawn:
        raise IllegalMove("ALREADY_REDRAWN", "The hand was already redrawn this turn.")
    board, seat = state.board, state.current
    playable = playable_cards(state)
    if state.hands is not None:
        if move.revealed:
            raise IllegalMove(
                "REDRAW_NAMES_CARDS", "In dealt mode the engine knows the hand: just 'redraw'."
            )
        hand = state.hands[seat]
    else:
        counts = [0] * len(board.deck)
        for name in move.revealed:
            counts[card_index(board, name)] += 1
        hand = tuple(counts)
        if sum(hand) != state.hand_sizes[seat]:
            raise IllegalMove(
                "REDRAW_HAND_SIZE",
                f"Reveal the whole hand: {state.hand_sizes[seat]} cards, not {sum(hand)}.",
            )
        for card, count in enumerate(hand):
            if count > board.deck[card] - state.discard[card]:
                raise IllegalMove(
                    "CARD_NOT_AVAILABLE",
                    f"Only {board.deck[card] - state.discard[card]} {board.card_name(card)} "
                    "cards are not on the discard pile.",
                )
    stuck_with = [board.card_name(c) for c, k in enumerate(hand) if k and c in playable]
    if stuck_with:
        raise IllegalMove(
            "HAND_NOT_STUCK",
            f"The hand is not stuck: {', '.join(stuck_with)} can be played (RULES.md §4).",
        )
    discard = tuple(d + h for d, h in zip(state.discard, hand, strict=True))
    if state.hands is not None:
        hands = (*state.hands[:seat], (0,) * len(hand), *state.hands[seat + 1 :])
        state = replace(
            state,
            hands=hands,
            hand_sizes=_set(state.hand_sizes, seat, 0),
            discard=discard,
            redrawn=True,
        )
        return _start_draws(state, HAND_SIZE)
    state = replace(
        state, discard=discard, hand_sizes=_set(state.hand_sizes, seat, 0), redrawn=True
    )
    return _draw_blind(state, seat, HAND_SIZE)


# --------------------------------------------------------------------------------------
# Chance


def draw_composition(state: State) -> tuple[int, ...]:
    """Dealt mode: the cards in the draw pile (all copies not in a hand or the discard)."""
    assert state.hands is not None
    held = [sum(col) for col in zip(*state.hands, strict=True)]
    return tuple(d - x - h for d, x, h in zip(state.board.deck, state.discard, held, strict=True))


def _reshuffle_if_needed(state: State) -> State:
    """RULES.md §4 step 2: an empty draw pile is replaced by the shuffled discard pile."""
    if state.draw_pile == 0 and any(state.discard):
        return replace(state, draw_pile=sum(state.discard), discard=(0,) * len(state.discard))
    return state


def chance_seat(state: State) -> int:
    """The seat a dealt card goes to (DEAL or DRAW phase), or -1 while dealing missions."""
    if state.phase == DRAW:
        return state.current
    if -1 in state.missions:
        return -1
    return next(s for s, k in enumerate(state.hand_sizes) if k < HAND_SIZE)


def chance_outcomes(state: State) -> list[tuple[pb.CastelloMethoniMove, int]]:
    """RULES.md §2 and the engine decisions on hidden information: the first player, the
    missions (one copy each) and the cards (weighted by the copies not yet seen)."""
    board, n = state.board, state.ctx.n
    if state.phase == FIRST:
        return [
            (pb.CastelloMethoniMove(first_player=pb.CastelloMethoniFirstPlayer(seat=s)), 1)
            for s in range(n)
        ]
    if state.phase in (DEAL, REVEAL) and -1 in state.missions:
        used = set(state.missions)
        seats = (
            [state.missions.index(-1)]
            if state.phase == DEAL
            else [s for s in range(n) if state.missions[s] == -1]
        )
        return [
            (
                pb.CastelloMethoniMove(
                    mission=pb.CastelloMethoniMission(seat=s, mission=board.missions[m].name)
                ),
                1,
            )
            for s in seats
            for m in range(len(board.missions))
            if m not in used
        ]
    if state.phase in (DEAL, DRAW):
        return [
            (pb.CastelloMethoniMove(draw=pb.CastelloMethoniDraw(card=board.card_name(c))), k)
            for c, k in enumerate(draw_composition(state))
            if k
        ]
    return []


def visible_to(move: pb.CastelloMethoniMove, state: State, viewer: int | None) -> bool:
    """RULES.md §2 steps 3-4, §4 step 2 and §9 (engine decisions on hidden information):
    in dealt mode a mission dealt at setup and a card dealt or drawn into a hand are
    seen only by the seat that receives them (and FULL). Everything else is public: the
    first player, a card named when it is played, a redraw (the hand is revealed) and
    the missions recorded at the final scoring (table mode, REVEAL phase)."""
    if viewer is FULL:
        return True
    owner = hidden_owner(state, move)
    return owner is None or viewer == owner


def hidden_owner(state: State, move: pb.CastelloMethoniMove) -> int | None:
    """RULES.md §2 steps 3-4 and §4 step 2, engine decisions on hidden information: the
    only seat that may see `move` (recorded in `state`), or None when the move is public.
    Dealt mode only: a mission dealt at setup goes to its seat; a card dealt or drawn goes
    to the seat whose hand it joins. Table mode records no hand, and records the missions
    only when they are revealed at the final scoring, so nothing it records is hidden."""
    kind = move.WhichOneof("action")
    if not state.ctx.dealt or state.phase not in (DEAL, DRAW):
        return None
    if kind == "mission":
        return move.mission.seat
    if kind == "draw":
        if state.phase == DEAL and -1 in state.missions:
            return -2  # not a legal draw now: nobody but FULL sees it
        return chance_seat(state)
    return None


def _no_player(state: State, seat: int) -> str:
    """A seat past the players, as the notation numbers them (`p1` is the first player)."""
    named = ", ".join(f"p{i + 1} {name}" for i, name in enumerate(state.ctx.players))
    return f"There is no p{seat + 1}: the players are {named}."


def choose_first(state: State, move: pb.CastelloMethoniFirstPlayer) -> State:
    """RULES.md §2 step 6: the table says who starts (engine decision: random)."""
    if state.phase != FIRST:
        raise IllegalMove("FIRST_PLAYER_KNOWN", "The first player is already known.")
    if move.seat >= state.ctx.n:
        raise IllegalMove("UNKNOWN_SEAT", _no_player(state, move.seat))
    return _after_first_player(state, move.seat)


def record_mission(state: State, move: pb.CastelloMethoniMission) -> State:
    """Engine decisions: missions are dealt as chance moves (dealt mode) or recorded only at
    the final scoring (table mode). Each of the mission cards exists once."""
    board, n = state.board, state.ctx.n
    if not (state.phase == DEAL and -1 in state.missions) and state.phase != REVEAL:
        if state.ctx.dealt:
            when = "in dealt mode they were dealt at setup (RULES.md §2 step 3)"
        else:
            when = (
                "in table mode each is recorded at the final scoring, once the turn that "
                f"empties the wall supply is over (RULES.md §7, §8); {state.wall_supply} "
                f"wall{'s are' if state.wall_supply != 1 else ' is'} left"
            )
        raise IllegalMove(
            "MISSION_NOT_NOW", f"Missions are secret until the end of the game: {when}."
        )
    if move.seat >= n:
        raise IllegalMove("UNKNOWN_SEAT", _no_player(state, move.seat))
    names = [m.name for m in board.missions]
    key = move.mission.strip().lower()
    if key not in names:
        raise IllegalMove(
            "UNKNOWN_MISSION", f"There is no mission {move.mission!r}; they are {', '.join(names)}."
        )
    mission = names.index(key)
    if state.missions[move.seat] != -1:
        raise IllegalMove(
            "MISSION_KNOWN", f"{state.ctx.players[move.seat]}'s mission is already recorded."
        )
    if state.phase == DEAL and move.seat != state.missions.index(-1):
        raise IllegalMove(
            "DEAL_ORDER",
            f"Missions are dealt in seat order: "
            f"{state.ctx.players[state.missions.index(-1)]}'s next.",
        )
    if mission in state.missions:
        raise IllegalMove("MISSION_TAKEN", f"Mission {key} is already someone else's.")
    state = replace(state, missions=_set(state.missions, move.seat, mission))
    if state.phase == REVEAL and -1 not in state.missions:
        return replace(state, phase=OVER)
    return state


def record_draw(state: State, move: pb.CastelloMethoniDraw) -> State:
    """Dealt mode: a card dealt or drawn, weighted by the unseen copies (RULES.md §4 step 2:
    an empty draw pile is replaced by the shuffled discard pile)."""
    if state.phase not in (DEAL, DRAW) or (state.phase == DEAL and -1 in state.missions):
        raise IllegalMove("DRAW_NOT_NOW", "No card is being dealt or drawn now.")
    board = state.board
    card = card_index(board, move.card)
    if draw_composition(state)[card] < 1:
        raise IllegalMove(
            "CARD_NOT_IN_DRAW_PILE", f"No {board.card_name(card)} card is left in the draw pile."
        )
    seat = chance_seat(state)
    hands = state.hands
    assert hands is not None
    hands = (*hands[:seat], _add(hands[seat], card, 1), *hands[seat + 1 :])
    state = replace(
        state,
        hands=hands,
        hand_sizes=_add(state.hand_sizes, seat, 1),
        draw_pile=state.draw_pile - 1,
    )
    if state.phase == DEAL:
        if all(k >= HAND_SIZE for k in state.hand_sizes):
            return _begin_turn(state, state.first)
        return _reshuffle_if_needed(state)
    state = _reshuffle_if_needed(replace(state, pending_draws=state.pending_draws - 1))
    if state.pending_draws > 0 and state.draw_pile > 0:
        return state
    state = replace(state, pending_draws=0)
    if state.redrawn and state.cards_played == 0:
        return replace(state, phase=PLAY)
    return _begin_turn(state, (seat + 1) % state.ctx.n)


# --------------------------------------------------------------------------------------
# Legal moves


class LegalMoves(Sequence[pb.CastelloMethoniMove]):
    """A lazily built list of moves: the messages are made only when read (random play reads
    one; round-trip tests read all)."""

    __slots__ = ("_items", "_make")

    def __init__(
        self,
        items: list[tuple[object, ...]],
        make: object,
    ) -> None:
        self._items = items
        self._make = make

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> pb.CastelloMethoniMove: ...
    @overload
    def __getitem__(self, index: slice) -> list[pb.CastelloMethoniMove]: ...
    def __getitem__(
        self, index: int | slice
    ) -> pb.CastelloMethoniMove | list[pb.CastelloMethoniMove]:
        make = self._make
        assert callable(make)
        if isinstance(index, slice):
            return [make(item) for item in self._items[index]]
        result: pb.CastelloMethoniMove = make(self._items[index])
        return result


def _make_move(item: tuple[object, ...]) -> pb.CastelloMethoniMove:
    kind = item[0]
    if kind == "build":
        _, card, cell, other, placements, into = item
        assert isinstance(placements, tuple)
        return pb.CastelloMethoniMove(
            build=pb.CastelloMethoniBuild(
                card=str(card),
                cell=str(cell),
                other=str(other),
                houses=[pb.CastelloMethoniHouse(seat=s, cell=c) for s, c in placements],
                into=str(into),
            )
        )
    if kind == "trade":
        return pb.CastelloMethoniMove(trade=pb.CastelloMethoniTrade(card=str(item[1])))
    if kind == "merge":
        return pb.CastelloMethoniMove(merge=pb.CastelloMethoniMerge(cell=str(item[1])))
    if kind == "stop":
        return pb.CastelloMethoniMove(stop_merging=pb.CastelloMethoniStopMerging())
    if kind == "end":
        return pb.CastelloMethoniMove(end_turn=pb.CastelloMethoniEndTurn())
    if kind == "redraw":
        revealed = item[1]
        assert isinstance(revealed, tuple)
        return pb.CastelloMethoniMove(redraw=pb.CastelloMethoniRedraw(revealed=list(revealed)))
    move = item[1]
    assert isinstance(move, pb.CastelloMethoniMove)
    return move


def available_cards(state: State) -> list[int]:
    """RULES.md §4 and the engine decision "hands are secret": the cards the player to move
    may hold: the hand (dealt mode), or any card not on the discard pile (table mode, where
    hands are not recorded)."""
    board, seat = state.board, state.current
    if state.hand_sizes[seat] < 1:
        return []
    if state.hands is not None:
        return [c for c, k in enumerate(state.hands[seat]) if k]
    return [c for c in range(len(board.deck)) if board.deck[c] - state.discard[c] > 0]


def build_items(
    state: State, cards: Sequence[int], only_edge: int | None = None
) -> list[tuple[object, ...]]:
    """RULES.md §5.1 (with §6.1 when the wall encloses a castle): every legal Build with one
    of `cards`, optionally on one edge key only. §6.4: a castle without a tower beside several
    of the builder's castles is listed once per castle it may merge into (`into`: "" for the
    lowest id, else the first cell of the chosen castle)."""
    board, ctx = state.board, state.ctx
    names = board.names
    items: list[tuple[object, ...]] = []
    if state.wall_supply < 1 or not cards:
        return items
    wanted = set(cards)
    edges = open_edges(state) if only_edge is None else _open_edge(state, only_edge)
    if only_edge is None:
        closing = closing_edges(state)
    else:  # one edge: its own search is far cheaper than every bridge of the board
        region = closing_region(state, only_edge)
        closing = {} if region is None else {only_edge: region}
    templates: dict[bool, list[tuple[tuple[int, int], ...]]] = {}  # inner or coast, as needed
    append = items.append
    for a, b, key in edges:
        fits = ctx.edge_cards[key] if key >= 0 else ctx.sea_cards[a]
        matching = [c for c in fits if c in wanted]
        if not matching:
            continue
        sides = (names[a], SEA if b == NO_CELL else names[b])
        region = closing.get(key)
        intos: list[str] = [""]
        if region is None:
            coast = b < 0
            if coast not in templates:
                templates[coast] = _house_templates(state, coast)
            named = [tuple((who, sides[side]) for who, side in t) for t in templates[coast]]
        else:
            named = [
                tuple((who, board.names[c]) for who, c in o)
                for o in house_options(state, a, b)
                if _castle_ok(state, region, o)
            ]
            if not state.towers_left[state.current]:
                others = own_castles_beside(state, region)[1:]
                intos += [names[min(state.castle(c).cells)] for c in others]
        for card in matching:
            card_name = board.card_name(card)
            for option in named:
                for into in intos:
                    append(("build", card_name, sides[0], sides[1], option, into))
    return items


def legal_moves(state: State) -> LegalMoves:
    """Every legal move: chance outcomes, merges (§6.2), builds (§5.1), trades (§5.2), end
    (§4) and the stuck-hand redraw (§4)."""
    board = state.board
    if to_move(state) == CHANCE:
        return LegalMoves([("chance", m) for m, _ in chance_outcomes(state)], _make_move)
    if state.phase == OVER:
        return LegalMoves([], _make_move)
    items: list[tuple[object, ...]] = []
    if state.phase == MERGE:
        for cid in merge_targets(state, state.merging):
            cells = state.castle(cid).cells
            items.append(("merge", board.names[min(cells)]))
        items.append(("stop",))
        return LegalMoves(items, _make_move)
    playable: set[object] = set()
    if state.cards_played < 2:
        cards = available_cards(state)
        items.extend(build_items(state, cards))
        active = active_markets(state)
        if active:
            for card in cards:
                if card == board.sea_card or card in active:
                    items.append(("trade", board.card_name(card)))
        playable = {item[1] for item in items}
    if state.cards_played == 1 or (state.cards_played == 0 and state.redrawn):
        items.append(("end",))
    if state.cards_played == 0 and not state.redrawn:
        items.extend(_redraw_items(state, playable))
    return LegalMoves(items, _make_move)


def _redraw_items(state: State, playable: set[object]) -> list[tuple[object, ...]]:
    """RULES.md §4, stuck hand: `playable` names the cards of the listed builds and trades
    (only cards that can be in the hand were tried, which is all that matters here)."""
    board, seat = state.board, state.current
    if state.hands is not None:
        return [] if playable else [("redraw", ())]
    stuck = [c for c in range(len(board.deck)) if board.card_name(c) not in playable]
    size = state.hand_sizes[seat]
    limits = [board.deck[c] - state.discard[c] for c in stuck]
    items: list[tuple[object, ...]] = []

    def extend(position: int, left: int, chosen: list[int]) -> None:
        if left == 0:
            items.append(("redraw", tuple(board.card_name(c) for c in chosen)))
            return
        if position == len(stuck):
            return
        for take in range(min(left, limits[position]), -1, -1):
            extend(position + 1, left - take, chosen + [stuck[position]] * take)

    extend(0, size, [])
    return items


def check_bounds(state: State, move: pb.CastelloMethoniMove) -> None:
    """RULES.md §1, §3.3: every name in `move` no longer than the board's longest (cell,
    card or mission), at most one house per cell and a hand's worth of revealed cards,
    checked before the move is formatted, so no field value makes that unbounded work."""
    longest = state.board.longest_name
    kind = move.WhichOneof("action")
    names: list[str] = []
    if kind == "build":
        build = move.build
        if len(build.houses) > len(state.board.cell_ids):
            raise IllegalMove(
                "TOO_MANY_HOUSES",
                f"A build places at most one house per cell; the move places {len(build.houses)}.",
            )
        names = [build.card, build.cell, build.other, build.into, *(h.cell for h in build.houses)]
    elif kind == "redraw":
        if len(move.redraw.revealed) > HAND_SIZE:
            raise IllegalMove(
                "REDRAW_HAND_SIZE",
                f"A hand has {HAND_SIZE} cards; the move reveals {len(move.redraw.revealed)}.",
            )
        names = list(move.redraw.revealed)
    elif kind in ("trade", "draw"):
        names = [getattr(move, kind).card]
    elif kind == "merge":
        names = [move.merge.cell]
    elif kind == "mission":
        names = [move.mission.mission]
    for name in names:
        if len(name) > longest:
            raise IllegalMove(
                "UNKNOWN_NAME", f"This board has no cell, card or mission called {quoted(name)}."
            )


def undealt(state: State, move: pb.CastelloMethoniMove) -> tuple[pb.CastelloMethoniMove, ...]:
    """`move`, made in `state` of a dealt game, as a table game records it (issue 26: a
    dealt game's text record imports as a table game). Every card the server dealt is in
    the record, so each one comes to light where the table records it:

    - who starts (RULES.md §2 step 6) is recorded alike;
    - a mission dealt at setup (§2 step 3) is not recorded then: a table records each
      mission at the final scoring (engine decisions, §8-§9), so the move that ends the game
      is followed by every seat's mission, in seat order;
    - a card dealt or drawn into a hand (§2 step 4, §4 step 2) is not recorded: a table
      records no hand, only how many cards each pile holds (engine decisions);
    - a stuck hand's redraw (§4) reveals the hand at the table: the cards the dealt state
      holds are named, as a table's `redraw` names them;
    - any other move (a card played, a merge, the end of a turn) is the same move.

    The moves it stands for, in order (none: a dealing the table does not record)."""
    kind = move.WhichOneof("action")
    if kind in ("mission", "draw"):
        return ()
    if kind == "redraw" and state.hands is not None:
        board = state.board
        hand = state.hands[state.current]
        revealed = [board.card_name(card) for card, count in enumerate(hand) for _ in range(count)]
        return (pb.CastelloMethoniMove(redraw=pb.CastelloMethoniRedraw(revealed=revealed)),)
    after = apply(state, move)
    if after.phase != OVER or state.phase == OVER:
        return (move,)
    missions = after.ctx.board.missions
    revealed_at_scoring = (
        pb.CastelloMethoniMove(
            mission=pb.CastelloMethoniMission(seat=seat, mission=missions[mission].name)
        )
        for seat, mission in enumerate(after.missions)
        if mission >= 0
    )
    return (move, *revealed_at_scoring)


def apply(state: State, move: pb.CastelloMethoniMove) -> State:
    """RULES.md §4-§6: the rule function of the move's action; an empty move is refused."""
    kind = move.WhichOneof("action")
    if kind == "build":
        return build(state, move.build)
    if kind == "trade":
        return trade(state, move.trade)
    if kind == "merge":
        return merge(state, move.merge)
    if kind == "stop_merging":
        return stop_merging(state)
    if kind == "end_turn":
        return end_turn(state)
    if kind == "redraw":
        return redraw(state, move.redraw)
    if kind == "first_player":
        return choose_first(state, move.first_player)
    if kind == "mission":
        return record_mission(state, move.mission)
    if kind == "draw":
        return record_draw(state, move.draw)
    raise IllegalMove("EMPTY_MOVE", "The move names no action.")
