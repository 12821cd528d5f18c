"""The rules of Mercado de Lisboa as pure functions on an immutable state.

Section numbers (§) refer to RULES.md in this package (the project's rules reference).
Internally goods are 0..4 (fish, flower, tomato, meat, grape), restaurants 0..5 (the first
five boost the good of the same index, 5 is the pub), spaces 0..24 (row * 5 + column) and
entrances 0..19 (north, south, west, east; see components.py). Protobuf enums are these
numbers plus one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as replace_fields
from itertools import chain
from typing import Any, Final, TypeAlias, cast

from tablelog.replay.copying import replacer
from tablelog.replay.core import (
    CHANCE,
    TERMINAL,
    GameOver,
    IllegalMove,
    InvalidSetup,
    no_such_seat,
    recorded_component,
    refuse_unknown_components,
)
from tablelog.replay.games.mercado_de_lisboa.components import (
    COMPONENT_NAME,
    ENTRANCE_LINE,
    ENTRANCE_NAMES,
    ENTRANCES,
    GOODS,
    LINE_SPACES,
    NEIGHBOURS,
    PUB,
    RESTAURANT_COPIES,
    RESTAURANTS,
    SIZE,
    SPACE_ENTRANCES,
    SPACE_LINES,
    SPACE_NAMES,
    SPACES,
    TILES_PER_SIZE,
    Board,
    load_board,
)
from tablelog.v1 import game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

# Board cells.
EMPTY: Final = 0
FACE_DOWN: Final = 1
RESTAURANT_BASE: Final = 2  # 2..7: a face-up restaurant of type cell - 2
STAND_BASE: Final = 8  # 8..27: a stand, owner * 5 + good

# Pending chance items: (kind, argument[, argument]).
DRAW_DISPLAY: Final = 0
DRAW_HAND: Final = 1
FLIP: Final = 2
REVEAL_OFFER: Final = 3
REVEAL_ENTRANCE: Final = 4

# Turn phases.
ACTION: Final = 0
TAKE: Final = 1

# The ledger of a seat's money (money = sum of the first five minus the last).
LEDGER_LABELS: Final = (
    "starting coins",
    "customers arriving",
    "stands opened",
    "restaurants opened",
    "coins taken",
    "stand costs",
)
L_START, L_CUSTOMERS, L_STANDS, L_RESTAURANTS, L_COINS, L_COSTS = range(6)

MAX_STANDS: Final = 8
END_EMPTY_SPACES: Final = 4
END_EMPTY_ENTRANCES: Final = 4


@dataclass(frozen=True, slots=True)
class Stage:
    number: int
    name: str
    thresholds: tuple[int, int, int]
    rules: str


STAGES: Final = {
    1: Stage(
        1,
        "One-track life",
        (80, 90, 100),
        "Only stands of one good earn money (fixed by the first earning).",
    ),
    2: Stage(
        2, "Big groups", (55, 60, 70), "Only money earned from 4-customer tiles counts for fame."
    ),
    3: Stage(
        3,
        "Solos and couples",
        (70, 80, 90),
        "Only 1- and 2-customer tiles; at most 2 stands per row and per column.",
    ),
    4: Stage(
        4, "The three musketeers", (80, 90, 100), "Only 3-customer tiles; start with 4 coins."
    ),
    5: Stage(
        5,
        "Last order",
        (35, 45, 50),
        "7 customer tiles (one each of 1, 2, 3 and four 4s); fame needs three 4s placed.",
    ),
    6: Stage(
        6,
        "Queue at the hot spot",
        (30, 40, 50),
        "One customer tile per size; start with 2 coins; a tile's line must hold "
        "stands of all its goods.",
    ),
    7: Stage(
        7,
        "Packed house",
        (55, 70, 80),
        "Entrances start full (north 1s, east 2s, south 3s, west 4s); a tile pays once "
        "its line holds as many stands as it shows customers; ends after the 8th stand.",
    ),
    8: Stage(
        8,
        "In search of the pub",
        (50, 60, 70),
        "You start with the pub; stands and the pub cannot go on restaurant spaces.",
    ),
    9: Stage(
        9,
        "Marquis of Lisboa",
        (75, 90, 110),
        "Three 1-customer tiles start on lines 1, 3, 5 of one side; stands only in those "
        "lines and of a good on that line's tile; the entrances between are closed.",
    ),
}
STAGE_PILES: Final = {
    3: (10, 10, 0, 0),
    4: (0, 0, 10, 0),
    5: (1, 1, 1, 4),
    6: (1, 1, 1, 1),
    7: (5, 5, 5, 5),
}
STAGE_MONEY: Final = {4: 4, 6: 2}
MASTER_STROKE: Final = 32
MASTER_STROKE_FAME: Final = 2
# Stage 7: which size of tile starts on which side (north 1s, east 2s, south 3s, west 4s).
STAGE7_ENTRANCES: Final = (
    tuple((e, 1) for e in range(0, 5))
    + tuple((e, 2) for e in range(15, 20))
    + tuple((e, 3) for e in range(5, 10))
    + tuple((e, 4) for e in range(10, 15))
)


@dataclass(frozen=True, slots=True)
class Rules:
    """Everything fixed at creation: players, options, stage and component data."""

    players: int
    board: Board
    kind_size: tuple[int, ...]
    kind_mask: tuple[int, ...]
    kinds_of_size: tuple[tuple[int, ...], ...]
    kind_index: Mapping[tuple[int, tuple[int, ...]], int]
    removed: tuple[int, ...]
    """Customer tiles per size that are out of play (a stage's setup)."""
    money_hidden: bool
    clamp_penalty: bool
    first_player: int
    stage: int
    stage1_good: int
    stage9_entrances: tuple[int, ...]
    stage9_closed: tuple[int, ...]
    campaign_fame: int
    master_stroke_used: bool
    campaign: tuple[tuple[int, int, int, bool, str], ...]
    campaign_name: str
    names: tuple[str, ...] = ()
    solo_waits_for_refills: bool = False
    """Rules version mercado-de-lisboa/1: a solo stage left with no placement ended only after
    the display refills of its last turn were recorded (kept for games recorded under it)."""

    @property
    def solo(self) -> bool:
        return self.players == 1

    def kind_of(self, customers: int, goods: Sequence[int]) -> int:
        """The customer tile kind showing `customers` and `goods` (any order), or -1."""
        return self.kind_index.get((customers, tuple(sorted(goods))), -1)


@dataclass(frozen=True, slots=True)
class State:
    rules: Rules
    board: tuple[int, ...]
    entrances: tuple[int, ...]
    """Customer tile kind at each entrance, -1 when empty."""
    hands: tuple[tuple[int, ...], ...]
    """Stand tiles carrying a wooden stand, per seat (sorted goods)."""
    dead: tuple[tuple[int, ...], ...]
    """Stand tiles taken with no wooden stand left (never placeable)."""
    held: tuple[tuple[int, ...], ...]
    """Unplaced restaurants in front of each seat; -1 until turned over."""
    stands: tuple[int, ...]
    ledger: tuple[tuple[int, ...], ...]
    display: tuple[int, ...]
    bag: tuple[int, ...]
    offers: tuple[tuple[int, ...], ...]
    """Available customer tile kinds per size (sorted)."""
    piles: tuple[int, ...]
    """Customer tiles per size still face down in their pile (not yet revealed)."""
    seen: tuple[int, ...]
    """Revealed tiles per customer kind."""
    unseen_restaurants: tuple[int, ...]
    pending: tuple[tuple[int, ...], ...]
    seat: int
    phase: int = ACTION
    swapped: bool = False
    streak: int = 0
    trigger_seat: int = -1
    turns_left: int = 0
    over: bool = False
    best_action: int = 0
    locked_good: int = -1
    from_four: int = 0
    fours_placed: int = 0

    def money(self, seat: int) -> int:
        led = self.ledger[seat]
        return led[0] + led[1] + led[2] + led[3] + led[4] - led[5]


replace: Final = replacer(State)
"""A copy of a state with some fields changed (`tablelog.replay.copying`: state copies dominate
folding)."""


def _good_name(good: int) -> str:
    return GOODS[good]


def stage_of(rules: Rules) -> Stage | None:
    """Rules §9: the solo campaign stage whose rules and fame thresholds apply, or None
    (multiplayer, or the solo rules without a stage)."""
    return STAGES.get(rules.stage)


# ---------------------------------------------------------------------------------- setup


def _check_campaign(previous: Sequence[tuple[int, int, int, bool, str]], stage: int) -> int:
    """Rules §9: the earlier stages of a campaign, as carried in the options, checked as far
    as a record allows: stages in order, each once, before this one; every stage names the
    game that recorded it (once); the fame agrees with the stage's thresholds for the
    recorded money (stage 2 counts only the money from 4-customer tiles, which the record
    does not hold, so only its range is checked; stage 5 scores 0 when fewer than three
    4-customer tiles were placed); the master stroke at most once. Returns the number of
    master strokes (0 or 1)."""
    last = 0
    strokes = 0
    games: set[str] = set()
    for number, fame, money, stroke, game_id in previous:
        if not last < number < stage:
            raise InvalidSetup(
                "CAMPAIGN",
                f"Campaign stages are played in order, each once: stage {number} cannot come "
                f"after stage {last} and before stage {stage}.",
            )
        if fame > 3:
            raise InvalidSetup(
                "CAMPAIGN", f"Campaign stage {number}: a stage awards 0 to 3 fame, not {fame}."
            )
        if not game_id.strip():
            raise InvalidSetup(
                "CAMPAIGN",
                f"Campaign stage {number} must name the game that recorded it (game_id).",
            )
        if game_id in games:
            raise InvalidSetup(
                "CAMPAIGN",
                f"Campaign stage {number} names game {game_id!r}, already the record of an "
                "earlier stage: each stage is a game of its own.",
            )
        games.add(game_id)
        spec = STAGES[number]
        earned = sum(1 for t in spec.thresholds if money >= t)
        needs = "/".join(map(str, spec.thresholds))
        if number == 5 and fame not in (0, earned):
            raise InvalidSetup(
                "CAMPAIGN",
                f"Campaign stage 5 ({spec.name}) recorded {money} coins: that earns {earned} "
                f"fame (thresholds {needs}), or 0 with fewer than three 4-customer tiles "
                f"placed, not {fame}.",
            )
        if number not in (2, 5) and fame != earned:
            raise InvalidSetup(
                "CAMPAIGN",
                f"Campaign stage {number} ({spec.name}) recorded {money} coins: that earns "
                f"{earned} fame (thresholds {needs}), not {fame}.",
            )
        last = number
        strokes += stroke
    if strokes > 1:
        raise InvalidSetup(
            "CAMPAIGN",
            f"The master-stroke bonus is awarded once per campaign; {strokes} earlier stages "
            "claim it.",
        )
    return strokes


def setup(
    players: Sequence[str],
    options: pb.MercadoDeLisboaOptions | None,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
    *,
    solo_waits_for_refills: bool = False,
) -> State:
    """Rules §2: validate players, options and the board file recorded at creation (never
    the packaged default: it may have changed since); all draws stay pending.
    `solo_waits_for_refills` keeps the rules of games recorded under mercado-de-lisboa/1
    (§9: their solo stages waited for the last display refills)."""
    refuse_unknown_components(components, (COMPONENT_NAME,), "Mercado de Lisboa")
    board = load_board(recorded_component(components, COMPONENT_NAME, "Mercado de Lisboa"))
    chosen = options if options is not None else pb.MercadoDeLisboaOptions()
    rules = make_rules(players, chosen, board)
    return initial_state(replace_fields(rules, solo_waits_for_refills=solo_waits_for_refills))


def make_rules(names: Sequence[str], options: pb.MercadoDeLisboaOptions, board: Board) -> Rules:
    """Rules §2, §8 and §9: validate the options for this player count."""
    players = len(names)
    if not 1 <= players <= 4:
        raise InvalidSetup(
            "PLAYER_COUNT", f"Mercado de Lisboa is for 1 to 4 players, not {players}."
        )
    if options.first_player >= players:
        raise InvalidSetup(
            "FIRST_PLAYER",
            no_such_seat("first_player", options.first_player, names),
        )
    stage = options.stage
    solo_only = stage or options.campaign.stages or options.stage1_good or options.stage9_side
    if players > 1 and solo_only:
        raise InvalidSetup(
            "SOLO_OPTIONS", "Stages and campaigns are options of the solo game only."
        )
    if stage > 9:
        raise InvalidSetup("STAGE", f"The solo campaign has stages 1 to 9, not {stage}.")
    if options.stage1_good and stage != 1:
        raise InvalidSetup("STAGE1_GOOD", "stage1_good is an option of stage 1 only.")
    if options.stage9_side and stage != 9:
        raise InvalidSetup("STAGE9_SIDE", "stage9_side is an option of stage 9 only.")
    if options.stage1_good > len(GOODS) or options.stage9_side > 4:
        raise InvalidSetup("OPTIONS", "Unknown good or side in the options.")
    previous = [
        (r.stage, r.fame, r.money, r.master_stroke, r.game_id) for r in options.campaign.stages
    ]
    if previous and not stage:
        raise InvalidSetup("CAMPAIGN", "A campaign's next game must name its stage (1..9).")
    strokes = _check_campaign(previous, stage)
    kinds = board.kinds
    kind_size = tuple(k[0] for k in kinds)
    kind_mask = tuple(sum(1 << g for g in set(k[1])) for k in kinds)
    kinds_of_size = tuple(tuple(i for i, k in enumerate(kinds) if k[0] == n) for n in range(1, 5))
    piles = STAGE_PILES.get(stage, TILES_PER_SIZE) if players == 1 else TILES_PER_SIZE
    removed = tuple(TILES_PER_SIZE[i] - piles[i] for i in range(4))
    side = (options.stage9_side or pb.MERCADO_DE_LISBOA_SIDE_WEST) - 1
    stage9 = (side * 5, side * 5 + 2, side * 5 + 4) if stage == 9 else ()
    closed = (side * 5 + 1, side * 5 + 3) if stage == 9 else ()
    return Rules(
        players=players,
        names=tuple(names),
        board=board,
        kind_size=kind_size,
        kind_mask=kind_mask,
        kinds_of_size=kinds_of_size,
        kind_index={k: i for i, k in enumerate(kinds)},
        removed=removed,
        money_hidden=options.money != pb.MERCADO_DE_LISBOA_MONEY_OPEN,
        clamp_penalty=options.clamp_penalty_at_zero,
        first_player=options.first_player,
        stage=stage if players == 1 else 0,
        stage1_good=options.stage1_good - 1,
        stage9_entrances=stage9,
        stage9_closed=closed,
        campaign_fame=sum(p[1] for p in previous) + MASTER_STROKE_FAME * strokes,
        master_stroke_used=strokes > 0,
        campaign=tuple(previous),
        campaign_name=options.campaign.name,
    )


def initial_state(rules: Rules) -> State:
    """Rules §2 (setup) with §8 and §9's changes. Every draw is left pending as chance."""
    n = rules.players
    board = [EMPTY] * SPACES
    for s in rules.board.marks:
        board[s] = FACE_DOWN
    held: list[tuple[int, ...]] = [() for _ in range(n)]
    if n == 4:
        held[(rules.first_player - 1) % n] = (PUB,)
    if rules.stage == 8:
        held[0] = (PUB,)
    unseen = tuple(RESTAURANT_COPIES if t != PUB else 1 for t in range(len(RESTAURANTS)))
    pending: list[tuple[int, ...]] = []
    if rules.stage == 7:
        pending.extend((REVEAL_ENTRANCE, e, size) for e, size in STAGE7_ENTRANCES)
    if rules.stage == 9:
        pending.extend((REVEAL_ENTRANCE, e, 1) for e in rules.stage9_entrances)
    pending.extend((DRAW_DISPLAY, 0) for _ in range(3))
    for i in range(n):
        seat = (rules.first_player + i) % n
        pending.extend((DRAW_HAND, seat) for _ in range(3))
    piles = tuple(TILES_PER_SIZE[i] - rules.removed[i] for i in range(4))
    offered = list(piles)
    for e_size in STAGE7_ENTRANCES if rules.stage == 7 else ():
        offered[e_size[1] - 1] -= 1
    if rules.stage == 9:
        offered[0] -= 3
    for size in range(1, 5):
        pending.extend((REVEAL_OFFER, size) for _ in range(min(3, offered[size - 1])))
    start = STAGE_MONEY.get(rules.stage, 1)
    return State(
        rules=rules,
        board=tuple(board),
        entrances=(-1,) * ENTRANCES,
        hands=((),) * n,
        dead=((),) * n,
        held=tuple(held),
        stands=(0,) * n,
        ledger=((start, 0, 0, 0, 0, 0),) * n,
        display=(),
        bag=(7, 7, 7, 7, 7),
        offers=((), (), (), ()),
        piles=piles,
        seen=(0,) * len(rules.board.kinds),
        unseen_restaurants=unseen,
        pending=tuple(pending),
        seat=rules.first_player,
        locked_good=rules.stage1_good,
    )


# ------------------------------------------------------------------------------- geometry


def stand_value(board: tuple[int, ...], space: int, good: int) -> int:
    """Rules §5: 1 + the face-up restaurants orthogonally next to the stand that match its
    good (the pub matches every good; two of a kind count twice)."""
    value = 1
    for n in NEIGHBOURS[space]:
        cell = board[n]
        if RESTAURANT_BASE <= cell < STAND_BASE and (cell - RESTAURANT_BASE in (good, PUB)):
            value += 1
    return value


def line_stands(board: tuple[int, ...], line: int) -> int:
    """Rules §4.1 (a stand's cost counts the stands of every player in its row and column,
    restaurants excluded) and §4.2 (a customer tile needs a line holding at least as many
    stands, any owners, as it shows customers): the stands on `line` (rows 0..4, columns
    5..9). Also §9 stages 3 and 7, which count the stands of a line."""
    a, b, c, d, e = LINE_SPACES[line]  # five spaces: unrolled, each comparison 0 or 1
    return (
        (board[a] >= STAND_BASE)
        + (board[b] >= STAND_BASE)
        + (board[c] >= STAND_BASE)
        + (board[d] >= STAND_BASE)
        + (board[e] >= STAND_BASE)
    )


def stand_cost(board: tuple[int, ...], space: int) -> int:
    """Rules §4.1: the larger count of stands in the space's row or column, counting the new
    stand and every player's stands."""
    row, col = SPACE_LINES[space]
    return 1 + max(line_stands(board, row), line_stands(board, col))


def _is_open(cell: int) -> bool:
    return cell in (EMPTY, FACE_DOWN)


# ------------------------------------------------------------------------------ earnings


def _stage1_filter(state: State, per_good: list[int]) -> tuple[int, int]:
    """Rules §9 stage 1: only one good's stands earn; the good is fixed by the first earning
    (the good earning most in that action; ties go to the earlier good in fish, flower,
    tomato, meat, grape order). Returns (the earning that counts, the locked good)."""
    locked = state.locked_good
    if locked < 0:
        best = max(range(len(per_good)), key=lambda g: (per_good[g], -g))
        if per_good[best] == 0:
            return 0, -1
        locked = best
    return per_good[locked], locked


def stand_earnings(state: State, space: int, good: int) -> tuple[list[int], int, int]:
    """Rules §5.2: what a new stand of `good` on `space` earns from the customer tiles at the
    entrances of its row and column. Returns (earnings per seat, earnings from 4-customer
    tiles, the stage-1 locked good). Stage 7 (§9): a tile pays once its line holds as many
    stands as it shows customers; when the new stand brings the line to that count, the tile
    pays every matching stand of the line."""
    rules = state.rules
    board = state.board
    seat = state.seat
    gains = [0] * rules.players
    four = 0
    kinds = rules.kind_size
    masks = rules.kind_mask
    entrances = state.entrances
    bit = 1 << good
    if rules.stage != 7:
        value = 0
        for e in SPACE_ENTRANCES[space]:
            k = entrances[e]
            if k >= 0 and masks[k] & bit:
                if not value:
                    value = stand_value(board, space, good)
                gain = kinds[k] * value
                gains[seat] += gain
                if kinds[k] == 4:
                    four += gain
    else:
        placed = (*board[:space], STAND_BASE + seat * 5 + good, *board[space + 1 :])
        for e in SPACE_ENTRANCES[space]:
            k = entrances[e]
            if k < 0:
                continue
            n = kinds[k]
            mask = masks[k]
            count = line_stands(placed, ENTRANCE_LINE[e])
            if count < n:
                continue
            if count == n:
                paid = [s for s in LINE_SPACES[ENTRANCE_LINE[e]] if placed[s] >= STAND_BASE]
            else:
                paid = [space]
            for s in paid:
                owner, g = divmod(placed[s] - STAND_BASE, 5)
                if mask >> g & 1:
                    gain = n * stand_value(placed, s, g)
                    gains[owner] += gain
                    if n == 4:
                        four += gain
    locked = state.locked_good
    if rules.stage == 1 and gains[seat]:
        per_good = [0] * len(GOODS)
        per_good[good] = gains[seat]
        counted, locked = _stage1_filter(state, per_good)
        if counted != gains[seat]:
            gains[seat] = counted
            four = 0
    return gains, four, locked


def customer_earnings(state: State, kind: int, entrance: int) -> tuple[list[int], int, int]:
    """Rules §5.1: every stand of the entrance's line whose good is on the tile earns its
    owner `customers x value`, whoever's turn it is. Returns (earnings per seat, earnings
    from 4-customer tiles, the stage-1 locked good)."""
    rules = state.rules
    board = state.board
    n = rules.kind_size[kind]
    mask = rules.kind_mask[kind]
    gains = [0] * rules.players
    per_good = [0] * len(GOODS)
    for s in LINE_SPACES[ENTRANCE_LINE[entrance]]:
        cell = board[s]
        if cell >= STAND_BASE:
            owner, g = divmod(cell - STAND_BASE, 5)
            if mask >> g & 1:
                gain = n * stand_value(board, s, g)
                gains[owner] += gain
                per_good[g] += gain
    locked = state.locked_good
    if rules.stage == 1:
        counted, locked = _stage1_filter(state, per_good)
        gains[0] = counted
    four = gains[state.seat] if n == 4 else 0
    return gains, four, locked


# ----------------------------------------------------------------------------- legality


def check_stand(state: State, good: int, space: int) -> tuple[int, list[int], int, int]:
    """Rules §4.1 (and §9 stages 3, 8, 9): may the seat to move open a stand of `good` on
    `space`? Returns (cost, earnings per seat, earnings from 4s, stage-1 locked good)."""
    rules = state.rules
    seat = state.seat
    if good not in state.hands[seat]:
        have = ", ".join(_good_name(g) for g in state.hands[seat]) or "none"
        raise IllegalMove(
            "NO_SUCH_STAND_TILE",
            f"You have no {_good_name(good)} stand tile with a wooden stand in front of you "
            f"(you have: {have}).",
        )
    cell = state.board[space]
    name = SPACE_NAMES[space]
    if not _is_open(cell):
        raise IllegalMove(
            "SPACE_TAKEN",
            f"{name} already holds a stand or a face-up restaurant; a stand needs a space "
            "that is empty or holds a face-down restaurant.",
        )
    stage = rules.stage
    if stage == 3:
        row, col = SPACE_LINES[space]
        most = max(line_stands(state.board, row), line_stands(state.board, col))
        if most >= 2:
            raise IllegalMove(
                "STAGE3_TWO_PER_LINE",
                f"Stage 3 allows at most 2 stands per row and per column; {name}'s "
                f"{'row' if line_stands(state.board, row) >= 2 else 'column'} has {most}.",
            )
    elif stage == 8 and cell == FACE_DOWN:
        raise IllegalMove(
            "STAGE8_RESTAURANT_SPACE",
            f"Stage 8: stands and the pub cannot go on restaurant spaces such as {name}.",
        )
    elif stage == 9:
        lines = {ENTRANCE_LINE[e]: e for e in rules.stage9_entrances}
        line = next((ln for ln in SPACE_LINES[space] if ln in lines), -1)
        if line < 0:
            raise IllegalMove(
                "STAGE9_LINE",
                f"Stage 9: stands go only in the lines of the starting customers "
                f"({', '.join(ENTRANCE_NAMES[e] for e in rules.stage9_entrances)}); "
                f"{name} is in none of them.",
            )
        k = state.entrances[lines[line]]
        if k >= 0 and not rules.kind_mask[k] >> good & 1:
            raise IllegalMove(
                "STAGE9_GOOD",
                f"Stage 9: a stand on {name} must sell a good of the customers at "
                f"{ENTRANCE_NAMES[lines[line]]} ("
                + "+".join(_good_name(g) for g in rules.board.kinds[k][1])
                + f"), not {_good_name(good)}.",
            )
    cost = stand_cost(state.board, space)
    gains, four, locked = stand_earnings(state, space, good)
    money = state.money(seat)
    if money + gains[seat] < cost:
        raise IllegalMove(
            "CANNOT_AFFORD_STAND",
            f"A stand on {name} costs {cost}; you have {money} and it would earn {gains[seat]}, "
            f"{money + gains[seat]} in all.",
        )
    return cost, gains, four, locked


def check_customer(state: State, kind: int, entrance: int) -> None:
    """Rules §4.2 (and §9 stages 6, 7, 9): may the seat to move bring this tile to
    `entrance`?"""
    rules = state.rules
    seat = state.seat
    n = rules.kind_size[kind]
    if rules.stage == 7:
        raise IllegalMove(
            "STAGE7_NO_CUSTOMERS",
            "Stage 7: the customers are all at the entrances from the start; none can be brought.",
        )
    if kind not in state.offers[n - 1]:
        offered = ", ".join(tile_text(rules, k) for k in state.offers[n - 1]) or "none"
        raise IllegalMove(
            "NO_SUCH_CUSTOMER_TILE",
            f"The customer tile {tile_text(rules, kind)} is not available "
            f"(available with {n}: {offered}).",
        )
    name = ENTRANCE_NAMES[entrance]
    if state.entrances[entrance] >= 0:
        raise IllegalMove("ENTRANCE_TAKEN", f"Entrance {name} already has customers.")
    if entrance in rules.stage9_closed:
        raise IllegalMove(
            "STAGE9_ENTRANCE_CLOSED",
            f"Stage 9: entrance {name} lies between the starting customers and stays closed.",
        )
    line = ENTRANCE_LINE[entrance]
    count = line_stands(state.board, line)
    if count < n:
        raise IllegalMove(
            "LINE_TOO_FEW_STANDS",
            f"A tile of {n} customers needs at least {n} stands in its line; the line of "
            f"{name} has {count}.",
        )
    mask = rules.kind_mask[kind]
    own = False
    present = 0
    for s in LINE_SPACES[line]:
        cell = state.board[s]
        if cell >= STAND_BASE:
            owner, g = divmod(cell - STAND_BASE, 5)
            if mask >> g & 1:
                present |= 1 << g
                if owner == seat:
                    own = True
    if not own:
        raise IllegalMove(
            "NO_MATCHING_STAND",
            f"The line of {name} has none of your stands selling "
            + " or ".join(_good_name(g) for g in rules.board.kinds[kind][1])
            + ".",
        )
    if rules.stage == 6 and present != mask:
        missing = [
            _good_name(g) for g in range(len(GOODS)) if mask >> g & 1 and not present >> g & 1
        ]
        raise IllegalMove(
            "STAGE6_ALL_GOODS",
            f"Stage 6: the line of {name} must hold stands of every good on the tile; "
            f"it has no {' or '.join(missing)} stand.",
        )


def check_restaurant(state: State, restaurant: int, space: int) -> None:
    """Rules §4.3 (and §9 stage 8): may the seat to move open `restaurant` on `space`?"""
    seat = state.seat
    if restaurant not in state.held[seat]:
        raise IllegalMove(
            "NO_SUCH_RESTAURANT",
            f"You have no face-up {RESTAURANTS[restaurant].replace('_', ' ')} in front of you.",
        )
    cell = state.board[space]
    name = SPACE_NAMES[space]
    if not _is_open(cell):
        raise IllegalMove(
            "SPACE_TAKEN",
            f"{name} already holds a stand or a face-up restaurant; a restaurant needs a "
            "space that is empty or holds a face-down restaurant.",
        )
    if state.rules.stage == 8 and cell == FACE_DOWN:
        raise IllegalMove(
            "STAGE8_RESTAURANT_SPACE",
            f"Stage 8: stands and the pub cannot go on restaurant spaces such as {name}.",
        )


def can_swap(state: State) -> bool:
    """Rules §4.5: three identical stand tiles, once, at the start of the turn."""
    hand = state.hands[state.seat]
    return state.phase == ACTION and not state.swapped and len(hand) == 3 and hand[0] == hand[2]


def tile_text(rules: Rules, kind: int) -> str:
    n, goods = rules.board.kinds[kind]
    return f"{n} " + "+".join(GOODS[g] for g in goods)


def empty_spaces(state: State) -> int:
    """Rules §6: empty market spaces (face-down restaurant spaces count as empty)."""
    return state.board.count(EMPTY) + state.board.count(FACE_DOWN)


def empty_entrances(state: State) -> int:
    """Rules §6: entrances without customers."""
    return state.entrances.count(-1)


# ----------------------------------------------------------------------------- applying


def _add(values: tuple[int, ...], index: int, delta: int) -> tuple[int, ...]:
    return (*values[:index], values[index] + delta, *values[index + 1 :])


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _set_row(
    rows: tuple[tuple[int, ...], ...], index: int, row: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return (*rows[:index], row, *rows[index + 1 :])


def _remove_one(values: tuple[int, ...], value: int) -> tuple[int, ...]:
    i = values.index(value)
    return values[:i] + values[i + 1 :]


def _insert_sorted(values: tuple[int, ...], value: int) -> tuple[int, ...]:
    return tuple(sorted((*values, value)))


def _credit(
    ledger: tuple[tuple[int, ...], ...], gains: list[int], column: int
) -> tuple[tuple[int, ...], ...]:
    if not any(gains):
        return ledger
    return tuple(_add(row, column, gains[i]) if gains[i] else row for i, row in enumerate(ledger))


def open_stand(state: State, good: int, space: int, take: int, refresh: bool) -> State:
    """Rules §4.1: place the stand, capture a face-down restaurant, collect §5.2 earnings,
    pay the cost, then take a tile from the display (or refresh three identical ones)."""
    if state.phase != ACTION:
        raise IllegalMove("CHOOSE_DISPLAY_TILE", "First take one of the new display tiles.")
    cost, gains, four, locked = check_stand(state, good, space)
    seat = state.seat
    display = state.display
    if refresh:
        if len(display) != 3 or display[0] != display[2]:
            raise IllegalMove(
                "DISPLAY_NOT_TRIPLET",
                "The display can be refreshed only when its 3 tiles are the same good.",
            )
        if take >= 0:
            raise IllegalMove(
                "TAKE_AFTER_REFRESH", "After refreshing the display, take from the new tiles."
            )
    elif display and take < 0:
        raise IllegalMove(
            "TAKE_REQUIRED",
            "After opening a stand, take one of the display tiles: "
            + ", ".join(_good_name(g) for g in display)
            + ".",
        )
    elif take >= 0 and take not in display:
        shown = ", ".join(_good_name(g) for g in display) or "nothing"
        raise IllegalMove(
            "NOT_IN_DISPLAY",
            f"There is no {_good_name(take)} tile in the display (it shows {shown}).",
        )
    cell = state.board[space]
    board = _set(state.board, space, STAND_BASE + seat * 5 + good)
    hand = _remove_one(state.hands[seat], good)
    stands = _add(state.stands, seat, 1)
    held = state.held
    pending: list[tuple[int, ...]] = []
    if cell == FACE_DOWN:
        held = _set_row(held, seat, held[seat] + (-1,))
        pending.append((FLIP, seat))
    ledger = _credit(state.ledger, gains, L_STANDS)
    ledger = _set_row(ledger, seat, _add(ledger[seat], L_COSTS, cost))
    bag = state.bag
    dead = state.dead
    phase = ACTION
    if refresh:
        bag = _add(bag, display[0], 3)
        display = ()
        pending.extend((DRAW_DISPLAY, 0) for _ in range(3))
        phase = TAKE
    elif take >= 0:
        display = _remove_one(display, take)
        pending.append((DRAW_DISPLAY, 0))
        if stands[seat] + len(hand) < MAX_STANDS:
            hand = _insert_sorted(hand, take)
        else:
            dead = _set_row(dead, seat, _insert_sorted(dead[seat], take))
    changes: dict[str, Any] = {
        "board": board,
        "hands": _set_row(state.hands, seat, hand),
        "stands": stands,
        "ledger": ledger,
        "display": display,
        "pending": state.pending + tuple(pending),
    }
    # The other fields only where they change (a copy sets each change again).
    if dead is not state.dead:
        changes["dead"] = dead
    if held is not state.held:
        changes["held"] = held
    if bag is not state.bag:
        changes["bag"] = bag
    if gains[seat] > state.best_action:
        changes["best_action"] = gains[seat]
    if locked != state.locked_good:
        changes["locked_good"] = locked
    if four:
        changes["from_four"] = state.from_four + four
    if phase == TAKE:
        return replace(state, phase=phase, **changes)
    return end_turn(state, changes, board_placement=True)


def take_tile(state: State, good: int) -> State:
    """Rules §4.1 step 4 after a §4.5 display refresh: take one of the new display tiles."""
    if state.phase != TAKE:
        raise IllegalMove(
            "NOTHING_TO_TAKE",
            "A display tile is taken as part of opening a stand: stand <good> <space> take <good>.",
        )
    if good not in state.display:
        shown = ", ".join(_good_name(g) for g in state.display) or "nothing"
        raise IllegalMove(
            "NOT_IN_DISPLAY",
            f"There is no {_good_name(good)} tile in the display (it shows {shown}).",
        )
    seat = state.seat
    hand = state.hands[seat]
    dead = state.dead
    if state.stands[seat] + len(hand) < MAX_STANDS:
        hand = _insert_sorted(hand, good)
    else:
        dead = _set_row(dead, seat, _insert_sorted(dead[seat], good))
    changes: dict[str, Any] = {
        "hands": _set_row(state.hands, seat, hand),
        "dead": dead,
        "display": _remove_one(state.display, good),
        "pending": (*state.pending, (DRAW_DISPLAY, 0)),
        "phase": ACTION,
    }
    return end_turn(state, changes, board_placement=True)


def bring_customers(state: State, kind: int, entrance: int) -> State:
    """Rules §4.2 and §5.1: place the tile, pay every matching stand of the line, refill."""
    if state.phase != ACTION:
        raise IllegalMove("CHOOSE_DISPLAY_TILE", "First take one of the new display tiles.")
    check_customer(state, kind, entrance)
    gains, four, locked = customer_earnings(state, kind, entrance)
    rules = state.rules
    n = rules.kind_size[kind]
    offers = _set_row(state.offers, n - 1, _remove_one(state.offers[n - 1], kind))
    pending = state.pending
    if state.piles[n - 1] > 0:
        pending = (*pending, (REVEAL_OFFER, n))
    changes: dict[str, Any] = {
        "entrances": _set(state.entrances, entrance, kind),
        "offers": offers,
        "ledger": _credit(state.ledger, gains, L_CUSTOMERS),
        "pending": pending,
    }
    # The other fields only where they change (a copy sets each change again).
    if gains[state.seat] > state.best_action:
        changes["best_action"] = gains[state.seat]
    if locked != state.locked_good:
        changes["locked_good"] = locked
    if four:
        changes["from_four"] = state.from_four + four
    if n == 4:
        changes["fours_placed"] = state.fours_placed + 1
    return end_turn(state, changes, customer_placement=True)


def open_restaurant(state: State, restaurant: int, space: int) -> State:
    """Rules §4.3: place one of your restaurants face up (capturing a face-down one there)
    and gain 1 coin; no customer earnings."""
    if state.phase != ACTION:
        raise IllegalMove("CHOOSE_DISPLAY_TILE", "First take one of the new display tiles.")
    check_restaurant(state, restaurant, space)
    seat = state.seat
    mine = _remove_one(state.held[seat], restaurant)
    pending = state.pending
    if state.board[space] == FACE_DOWN:
        mine = (*mine, -1)
        pending = (*pending, (FLIP, seat))
    changes: dict[str, Any] = {
        "board": _set(state.board, space, RESTAURANT_BASE + restaurant),
        "held": _set_row(state.held, seat, mine),
        "ledger": _set_row(state.ledger, seat, _add(state.ledger[seat], L_RESTAURANTS, 1)),
        "pending": pending,
    }
    return end_turn(state, changes, board_placement=True)


def take_coin(state: State) -> State:
    """Rules §4.4: gain 1 coin (not in the solo game, §9)."""
    if state.rules.solo:
        raise IllegalMove("SOLO_NO_COIN", "The solo game forbids the Take 1 Coin action.")
    if state.phase != ACTION:
        raise IllegalMove("CHOOSE_DISPLAY_TILE", "First take one of the new display tiles.")
    seat = state.seat
    changes = {"ledger": _set_row(state.ledger, seat, _add(state.ledger[seat], L_COINS, 1))}
    return end_turn(state, changes, coin=True)


def swap_hand(state: State) -> State:
    """Rules §4.5: at the start of your turn, three identical stand tiles go back to the bag
    and three new ones are drawn (the wooden stands move onto them)."""
    hand = state.hands[state.seat]
    if state.phase != ACTION or state.swapped:
        raise IllegalMove(
            "SWAP_ONLY_AT_START",
            "The stand-tile refresh is allowed once, at the start of your turn.",
        )
    if len(hand) != 3 or hand[0] != hand[2]:
        raise IllegalMove(
            "SWAP_NOT_TRIPLET",
            "You may refresh your stand tiles only when all 3 are the same good; you have "
            + (", ".join(_good_name(g) for g in hand) or "none")
            + ".",
        )
    return normalise(
        replace(
            state,
            hands=_set_row(state.hands, state.seat, ()),
            bag=_add(state.bag, hand[0], 3),
            pending=state.pending + ((DRAW_HAND, state.seat),) * 3,
            swapped=True,
        )
    )


def end_turn(
    state: State,
    changes: dict[str, Any],
    board_placement: bool = False,
    customer_placement: bool = False,
    coin: bool = False,
) -> State:
    """Rules §4.4 and §6: the consecutive-coins ending, the two end triggers with one more
    turn for every other player (immediate in solo), and §9 stage 7's 8th-stand ending.
    `changes` are the action's own changes to `state` (applied with the turn's end)."""
    rules = state.rules
    n = rules.players
    streak = state.streak + 1 if coin else 0
    over = False
    trigger = state.trigger_seat
    left = state.turns_left
    if coin and streak >= (4 if n == 2 else n):
        over = True
    if trigger >= 0:
        left -= 1
        if left <= 0:
            over = True
    else:
        board: tuple[int, ...] = changes.get("board", state.board)
        entrances: tuple[int, ...] = changes.get("entrances", state.entrances)
        if (
            board_placement and board.count(EMPTY) + board.count(FACE_DOWN) <= END_EMPTY_SPACES
        ) or (customer_placement and entrances.count(-1) <= END_EMPTY_ENTRANCES):
            trigger = state.seat
            left = n - 1
            if left == 0:
                over = True
    if rules.stage == 7 and changes.get("stands", state.stands)[0] >= MAX_STANDS:
        over = True
    changes["seat"] = (state.seat + 1) % n
    # The rest of the turn's end only where it changes (a copy sets each change again).
    if state.swapped:
        changes["swapped"] = False
    if streak != state.streak:
        changes["streak"] = streak
    if trigger != state.trigger_seat:
        changes["trigger_seat"] = trigger
    if left != state.turns_left:
        changes["turns_left"] = left
    if over != state.over:
        changes["over"] = over
    if state.phase != ACTION:
        changes["phase"] = ACTION
    return normalise(replace(state, **changes))


def normalise(state: State) -> State:
    """Drop draws that cannot happen (§10 #6: an empty bag leaves the slot empty); at the end
    nothing more is revealed; §9: a solo stage ends when no tile placement is legal, without
    waiting for display refills (a tile drawn into the display changes no placement)."""
    pending = state.pending
    if state.over:
        return replace(state, pending=()) if pending else state
    while pending:
        kind = pending[0][0]
        if (kind <= DRAW_HAND and not any(state.bag)) or (
            kind >= REVEAL_OFFER and state.piles[pending[0][-1] - 1] <= 0
        ):
            pending = pending[1:]
        else:
            break
    if pending is not state.pending:
        state = replace(state, pending=pending)
    rules = state.rules
    if rules.players != 1 or state.phase != ACTION:
        return state  # only a solo stage ends for want of a placement
    refills_only = not rules.solo_waits_for_refills and all(
        item[0] == DRAW_DISPLAY for item in pending
    )
    if (not pending or refills_only) and not can_swap(state) and not any_placement(state):
        state = replace(state, over=True, pending=())
    return state


def any_placement(state: State) -> bool:
    """Rules §9: is any stand, customer or restaurant placement legal for the seat?"""
    # The restaurants first: they are the fewest and the cheapest to check.
    placements = chain(
        restaurant_placements(state), stand_placements(state), customer_placements(state)
    )
    return next(placements, None) is not None


# --------------------------------------------------------------------------------- chance


def _name(state: State, seat: int) -> str:
    names = state.rules.names
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def pending_text(state: State) -> str:
    if not state.pending:
        return ""
    item = state.pending[0]
    kind = item[0]
    if kind == DRAW_DISPLAY:
        return "draw a stand tile from the bag for the display"
    if kind == DRAW_HAND:
        return f"draw a stand tile from the bag for {_name(state, item[1])}"
    if kind == FLIP:
        return f"turn over the restaurant {_name(state, item[1])} took"
    if kind == REVEAL_OFFER:
        return f"reveal the next {item[1]}-customer tile"
    return f"reveal the {item[2]}-customer tile starting at {ENTRANCE_NAMES[item[1]].upper()}"


def draw_tile(state: State, good: int) -> State:
    """Rules §2 step 3, §4.1 step 4, §4.5: a stand tile drawn from the bag."""
    item = _expect(state, (DRAW_DISPLAY, DRAW_HAND), "draw")
    if state.bag[good] <= 0:
        raise IllegalMove("NOT_IN_BAG", f"No {_good_name(good)} stand tile is left in the bag.")
    bag = _add(state.bag, good, -1)
    if item[0] == DRAW_DISPLAY:
        after = replace(
            state, bag=bag, display=_insert_sorted(state.display, good), pending=state.pending[1:]
        )
    else:
        seat = item[1]
        after = replace(
            state,
            bag=bag,
            hands=_set_row(state.hands, seat, _insert_sorted(state.hands[seat], good)),
            pending=state.pending[1:],
        )
    return normalise(after)


def flip_restaurant(state: State, restaurant: int) -> State:
    """Rules §4.1 step 1 and §4.3: the face-down restaurant a player took is turned over."""
    item = _expect(state, (FLIP,), "flip")
    if state.unseen_restaurants[restaurant] <= 0:
        raise IllegalMove(
            "NOT_FACE_DOWN",
            f"No {RESTAURANTS[restaurant].replace('_', ' ')} is still face down.",
        )
    seat = item[1]
    mine = state.held[seat]
    i = mine.index(-1)
    mine = (*mine[:i], restaurant, *mine[i + 1 :])
    return normalise(
        replace(
            state,
            held=_set_row(state.held, seat, mine),
            unseen_restaurants=_add(state.unseen_restaurants, restaurant, -1),
            pending=state.pending[1:],
        )
    )


def reveal_customers(state: State, customers: int, goods: Sequence[int]) -> State:
    """Rules §2 step 4, §4.2 step 2, §9 stages 5-7 and 9: a customer tile is revealed."""
    item = _expect(state, (REVEAL_OFFER, REVEAL_ENTRANCE), "reveal")
    rules = state.rules
    size = item[-1]
    kind = rules.kind_of(customers, goods)
    if customers != size:
        raise IllegalMove(
            "WRONG_PILE",
            f"The table must reveal a {size}-customer tile, not {_tile_named(customers, goods)}.",
        )
    if kind < 0:
        raise IllegalMove(
            "NO_SUCH_CUSTOMER_TILE", f"There is no customer tile {_tile_named(customers, goods)}."
        )
    if state.seen[kind] >= rules.board.kind_counts[kind]:
        raise IllegalMove(
            "NOT_UNSEEN",
            f"Every {_tile_named(customers, goods)} tile has already been revealed.",
        )
    seen = _add(state.seen, kind, 1)
    piles = _add(state.piles, size - 1, -1)
    if item[0] == REVEAL_OFFER:
        after = replace(
            state,
            offers=_set_row(state.offers, size - 1, _insert_sorted(state.offers[size - 1], kind)),
            seen=seen,
            piles=piles,
            pending=state.pending[1:],
        )
    else:
        after = replace(
            state,
            entrances=_set(state.entrances, item[1], kind),
            seen=seen,
            piles=piles,
            pending=state.pending[1:],
        )
    return normalise(after)


def _tile_named(customers: int, goods: Sequence[int]) -> str:
    """A customer tile as a refusal names it: `3 fish+meat`."""
    return f"{customers} " + "+".join(_good_name(g) for g in sorted(goods))


def _expect(state: State, kinds: tuple[int, ...], verb: str) -> tuple[int, ...]:
    if not state.pending:
        raise IllegalMove("NO_REVEAL_PENDING", "Nothing is waiting to be drawn or revealed.")
    item = state.pending[0]
    if item[0] not in kinds:
        raise IllegalMove("WRONG_CHANCE", f"The table must {pending_text(state)}, not {verb}.")
    return item


def chance_draws(state: State) -> list[tuple[str, int, tuple[int, ...], int]]:
    """Rules §2 steps 2-4, §4.1 steps 1 and 4, §4.2 step 2, §4.3 and §4.5: each possible
    outcome of the pending chance event (a stand tile drawn from the bag, a face-down
    restaurant turned over, a customer tile revealed) with its weight, the copies still
    unseen."""
    if not state.pending or state.over:
        return []
    item = state.pending[0]
    kind = item[0]
    if kind <= DRAW_HAND:
        return [("draw", g, (), w) for g, w in enumerate(state.bag) if w > 0]
    if kind == FLIP:
        return [("flip", t, (), w) for t, w in enumerate(state.unseen_restaurants) if w > 0]
    rules = state.rules
    size = item[-1]
    out = []
    for k in rules.kinds_of_size[size - 1]:
        w = rules.board.kind_counts[k] - state.seen[k]
        if w > 0:
            out.append(("reveal", size, rules.board.kinds[k][1], w))
    return out


# -------------------------------------------------------------------------------- scoring


def final_money(state: State, seat: int) -> tuple[int, int]:
    """Rules §7: (money after the restaurant penalty, the penalty paid)."""
    money = state.money(seat)
    penalty = len(state.held[seat])
    if state.rules.clamp_penalty:
        penalty = min(penalty, max(money, 0))
    return money - penalty, penalty


def stage_fame(state: State) -> tuple[int, int, int]:
    """Rules §9: (fame from the stage's money, master-stroke fame, the money that counted)."""
    stage = stage_of(state.rules)
    if stage is None:
        return 0, 0, 0
    money, _ = final_money(state, 0)
    if stage.number == 2:
        money = state.from_four
    fame = sum(1 for t in stage.thresholds if money >= t)
    if stage.number == 5 and state.fours_placed < 3:
        fame = 0
    stroke = (
        MASTER_STROKE_FAME
        if not state.rules.master_stroke_used and state.best_action >= MASTER_STROKE
        else 0
    )
    return fame, stroke, money


# Protobuf moves in and out of the rules: decoding, applying, listing legal moves.
Move = pb.MercadoDeLisboaMove
CHANCE_ACTIONS: Final = frozenset({"draw", "flip", "reveal"})


def _malformed(what: str) -> IllegalMove:
    return IllegalMove("MALFORMED_MOVE", f"The move names {what}.")


def _good(value: int, what: str = "good") -> int:
    if not 1 <= value <= len(GOODS):
        raise _malformed(f"no valid {what} ({value})")
    return value - 1


def _space(value: int) -> int:
    if not 1 <= value <= SPACES:
        raise _malformed(f"no valid space ({value}; spaces are 1..25)")
    return value - 1


def _goods(values: Sequence[int]) -> list[int]:
    goods = [v - 1 for v in values]
    for good in goods:
        if not 0 <= good < len(GOODS):
            raise _malformed(f"no valid good ({good + 1})")
    if not 1 <= len(goods) <= 2:
        raise _malformed(f"{len(goods)} goods for a customer tile (one or two)")
    return goods


def visible_to(move: Move, state: State, viewer: int | None) -> bool:
    """Rules §2 steps 2-4, §4.1 step 1 and §4.3: no chance move of this game carries hidden
    identity, so every move is visible to everyone. The restaurants are drawn onto the
    marked spaces face down, but that draw is not recorded (engine decision: a face-down
    restaurant's type is recorded only when it is turned over, `flip`, and turning it over
    shows it to the whole table); stand tiles drawn into the display or in front of a
    player are face up (public information, §2 step 3); customer tiles are revealed face
    up. Hidden money (§2 step 8) hides no move: it is a matter of the views and of the
    running result (`result`)."""
    return True


def to_move(state: State) -> int:
    """Rules §4: nobody once the game is over, the table (CHANCE) while a draw or reveal
    is pending, otherwise the seat whose turn it is."""
    if state.over:
        return TERMINAL
    if state.pending:
        return CHANCE
    return state.seat


def check_bounds(state: State, move: Move) -> None:
    """Rules §3: a customer tile shows 1 to 4 customers and one or two goods, checked before
    the move is formatted (one word is written per good), whatever the other fields say."""
    action = move.WhichOneof("action")
    if action not in ("customer", "reveal"):
        return
    tile = move.customer if action == "customer" else move.reveal
    if len(tile.goods) > 2:
        raise _malformed(f"{len(tile.goods)} goods for a customer tile (one or two)")
    if not 1 <= tile.customers <= len(TILES_PER_SIZE):
        raise _malformed(f"a tile of {tile.customers} customers (1..{len(TILES_PER_SIZE)})")


def apply(state: State, move: Move) -> State:
    """Decode `move` and apply it (every rule check is in rules.py)."""
    if state.over:
        raise GameOver()
    action = move.WhichOneof("action")
    if action is None:
        raise _malformed("no action")
    if state.pending and action not in CHANCE_ACTIONS:
        raise IllegalMove("REVEAL_PENDING", f"The table must first {pending_text(state)}.")
    if action in CHANCE_ACTIONS:  # the chance moves first: more than half of all moves
        if not state.pending:
            raise IllegalMove("NO_REVEAL_PENDING", "Nothing is waiting to be drawn or revealed.")
        if action == "draw":
            return draw_tile(state, _good(move.draw.good))
        if action == "reveal":
            v = move.reveal
            return reveal_customers(state, v.customers, _goods(v.goods))
        f = move.flip.restaurant
        if not 1 <= f <= len(RESTAURANTS):
            raise _malformed(f"no valid restaurant ({f})")
        return flip_restaurant(state, f - 1)
    if action == "stand":
        m = move.stand
        take = _good(m.take, "display tile") if m.take else -1
        return open_stand(state, _good(m.good), _space(m.space), take, m.refresh_display)
    if action == "customer":
        c = move.customer
        goods = _goods(c.goods)
        if not 1 <= c.customers <= 4:
            raise _malformed(f"a tile of {c.customers} customers (1..4)")
        if not 1 <= c.entrance <= ENTRANCES:
            raise _malformed(f"no valid entrance ({c.entrance}; entrances are 1..20)")
        kind = state.rules.kind_of(c.customers, goods)
        if kind < 0:
            raise IllegalMove(
                "NO_SUCH_CUSTOMER_TILE",
                f"There is no customer tile {c.customers} "
                + "+".join(GOODS[g] for g in sorted(goods))
                + " in this game.",
            )
        return bring_customers(state, kind, c.entrance - 1)
    if action == "restaurant":
        r = move.restaurant
        if not 1 <= r.restaurant <= len(RESTAURANTS):
            raise _malformed(f"no valid restaurant ({r.restaurant})")
        return open_restaurant(state, r.restaurant - 1, _space(r.space))
    if action == "coin":
        return take_coin(state)
    if action == "swap":
        return swap_hand(state)
    return take_tile(state, _good(move.take.good))


Good: TypeAlias = pb.MercadoDeLisboaGood.ValueType
Restaurant: TypeAlias = pb.MercadoDeLisboaRestaurant.ValueType


def good_enum(good: int) -> Good:
    """The protobuf enum of an internal good index."""
    return cast("Good", good + 1)


def goods_enum(goods: tuple[int, ...] | list[int]) -> list[Good]:
    return cast("list[Good]", [g + 1 for g in goods])  # one cast, not a call per good


def restaurant_enum(restaurant: int) -> Restaurant:
    return cast("Restaurant", restaurant + 1)


# The moves are built by setting the fields of a new move rather than by nested
# constructors (half the time; a move is built per move read). Setting a field of the
# action, even to its default, selects the action in the oneof as the constructor does.


def stand_move(good: int, space: int, take: int = -1, refresh: bool = False) -> Move:
    move = Move()
    stand = move.stand
    stand.good = good_enum(good)
    stand.space = space + 1
    if take >= 0:
        stand.take = good_enum(take)
    if refresh:
        stand.refresh_display = True
    return move


def customer_move(customers: int, goods: tuple[int, ...], entrance: int) -> Move:
    move = Move()
    tile = move.customer
    tile.customers = customers
    tile.goods.extend(goods_enum(goods))
    tile.entrance = entrance + 1
    return move


def restaurant_move(restaurant: int, space: int) -> Move:
    move = Move()
    placed = move.restaurant
    placed.restaurant = restaurant_enum(restaurant)
    placed.space = space + 1
    return move


COIN = Move(coin=pb.MercadoDeLisboaTakeCoin())
SWAP = Move(swap=pb.MercadoDeLisboaSwapStandTiles())


def take_move(good: int) -> Move:
    move = Move()
    move.take.good = good_enum(good)
    return move


def chance_move(kind: str, value: int, goods: tuple[int, ...]) -> Move:
    move = Move()
    if kind == "draw":
        move.draw.good = good_enum(value)
    elif kind == "flip":
        move.flip.restaurant = restaurant_enum(value)
    else:
        reveal = move.reveal
        reveal.customers = value
        reveal.goods.extend(goods_enum(goods))
    return move


def chance_outcomes(state: State) -> list[tuple[Move, int]]:
    return [(chance_move(k, v, g), w) for k, v, g, w in chance_draws(state)]


def _open_spaces(
    state: State, check: Callable[[State, int, int], object], piece: int
) -> Iterator[int]:
    """Rules §4.1, §4.3: the spaces, empty or face down, on which the seat to move may place
    `piece` (a stand's good or a restaurant), as `check` (the move's rule check) allows."""
    for space in range(SPACES):
        if state.board[space] > FACE_DOWN:
            continue
        try:
            check(state, piece, space)
        except IllegalMove:
            continue
        yield space


def _line_counts(board: tuple[int, ...]) -> list[int]:
    """Rules §4.1 and §4.2: `line_stands` of every line (rows 0..4, columns 5..9)."""
    return [line_stands(board, line) for line in range(2 * SIZE)]


def stand_placements(state: State) -> Iterator[tuple[int, int]]:
    """Rules §4.1: (good, space) of every stand the seat to move may open. A space the seat
    cannot pay for (§4.1 place-then-pay, the refusal of most spaces) is passed over before
    `check_stand`, with the cost and earnings `check_stand` computes, but no refusal built."""
    board = state.board
    seat = state.seat
    lines = _line_counts(board)
    money = state.money(seat)
    for good in sorted(set(state.hands[seat])):
        for space in range(SPACES):
            if board[space] > FACE_DOWN:
                continue
            row, col = SPACE_LINES[space]
            cost = 1 + max(lines[row], lines[col])  # stand_cost
            if money < cost and money + stand_earnings(state, space, good)[0][seat] < cost:
                continue
            try:
                check_stand(state, good, space)
            except IllegalMove:
                continue
            yield good, space


def customer_placements(state: State) -> Iterator[tuple[int, int, int]]:
    """Rules §4.2: (size index, kind, entrance) of every customer tile on offer that the
    seat to move may bring to a free entrance. An entrance whose line has too few stands,
    or none of the seat's stands of the tile's goods (the refusals of most entrances), is
    passed over before `check_customer`, without a refusal built."""
    board = state.board
    seat = state.seat
    lines = _line_counts(board)
    own_goods = [0] * (2 * SIZE)  # per line, a bit per good the seat has a stand of
    for space, cell in enumerate(board):
        if cell >= STAND_BASE:
            owner, good = divmod(cell - STAND_BASE, 5)
            if owner == seat:
                row, col = SPACE_LINES[space]
                own_goods[row] |= 1 << good
                own_goods[col] |= 1 << good
    masks = state.rules.kind_mask
    for size in range(4):
        for kind in sorted(set(state.offers[size])):
            mask = masks[kind]
            for entrance in range(ENTRANCES):
                if state.entrances[entrance] >= 0:
                    continue
                line = ENTRANCE_LINE[entrance]
                if lines[line] <= size or not own_goods[line] & mask:
                    continue
                try:
                    check_customer(state, kind, entrance)
                except IllegalMove:
                    continue
                yield size, kind, entrance


def restaurant_placements(state: State) -> Iterator[tuple[int, int]]:
    """Rules §4.3: (restaurant, space) of every face-up restaurant in front of the seat to
    move that it may open."""
    for restaurant in sorted({t for t in state.held[state.seat] if t >= 0}):
        for space in _open_spaces(state, check_restaurant, restaurant):
            yield restaurant, space


def legal_moves(state: State) -> list[Move]:
    """Every legal move: the chance outcomes, or the seat's actions (rules §4)."""
    if state.over:
        return []
    if state.pending:
        return [m for m, _ in chance_outcomes(state)]
    if state.phase == TAKE:
        return [take_move(g) for g in sorted(set(state.display))]
    moves: list[Move] = []
    if can_swap(state):
        moves.append(SWAP)
    display = state.display
    takes = sorted(set(display))
    triplet = len(display) == 3 and display[0] == display[2]
    for good, space in stand_placements(state):
        if not takes:
            moves.append(stand_move(good, space))
        for take in takes:
            moves.append(stand_move(good, space, take))
        if triplet:
            moves.append(stand_move(good, space, refresh=True))
    rules = state.rules
    for size, kind, entrance in customer_placements(state):
        moves.append(customer_move(size + 1, rules.board.kinds[kind][1], entrance))
    for restaurant, space in restaurant_placements(state):
        moves.append(restaurant_move(restaurant, space))
    if not rules.solo:
        moves.append(COIN)
    return moves
