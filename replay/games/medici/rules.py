"""Medici (the auction board game), the rules (see RULES.md; sections cited as §B1-B9).

A turn is recorded as the drawer's decisions (`draw`: one more tile; `auction`), the
table's draws (chance), then one bid or pass per non-full player clockwise, the drawer last.
In dealt mode the tiles removed unseen at each day's setup are chance moves too (hidden in
every view but the full one); in table mode nobody knows them and they are never recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from tablelog.replay.components import quoted
from tablelog.replay.copying import replacer
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    TERMINAL,
    GameOver,
    IllegalMove,
    InvalidSetup,
    counted,
    no_such_seat,
    recorded_component,
)
from tablelog.replay.games.medici.components import TILES_COMPONENT, Tiles, load_tiles
from tablelog.replay.games.medici_common.components import GOODS
from tablelog.replay.games.medici_common.rules import (
    SHIP_REWARDS,
    Payout,
    check_start,
    pay_period,
    ranked_shares,
    start_next_period,
    start_pending,
)
from tablelog.v1 import game_pb2
from tablelog.v1.medici_pb2 import (
    MEDICI_EDITION_2016,
    MEDICI_EDITION_CLASSIC,
    MEDICI_EDITION_UNSPECIFIED,
    MediciBid,
    MediciCloseLot,
    MediciDraw,
    MediciDrawMore,
    MediciEdition,
    MediciMove,
    MediciOptions,
    MediciPass,
    MediciRemove,
    MediciStartPlayer,
)

DAYS: Final = 3
MAX_LOT: Final = 3
TOP_LEVEL: Final = 7
BONUS: Final = (0, 0, 0, 0, 0, 5, 10, 20)
"""§B5: the bonus for a marker on each level (top three levels: 5, 10, 20)."""
TILES_USED: Final = {2: 18, 3: 18, 4: 24, 5: 30, 6: 36}
START_FLORINS: Final = {2: 40, 3: 40, 4: 40, 5: 30, 6: 30}

# Phases: whose decision it is.
DRAW: Final = 0  # chance: the tile drawn into the lot
DECIDE: Final = 1  # the drawer: draw another tile or auction the lot
BID: Final = 2  # the current bidder: bid or pass
FILL: Final = 3  # chance: a tile drawn free into the last ship (B4)
REMOVE: Final = 4  # chance (dealt mode): a tile removed unseen at the day's setup
START: Final = 5  # chance: the start player among those tied for fewest florins
OVER: Final = 6
CHANCE_PHASES: Final = frozenset({DRAW, FILL, REMOVE, START})
CHANCE_ACTIONS: Final = frozenset({"draw", "remove", "start_player"})
"""The moves the table records in the chance phases (a tile drawn or removed, a start player)."""

NO_BID: Final = -1
PASSED: Final = 0


@dataclass(frozen=True, slots=True)
class Rules:
    players: tuple[str, ...]
    tiles: Tiles
    edition: MediciEdition.ValueType
    spaces: int
    ship_rewards: tuple[int, ...]
    pyramid_rewards: tuple[int, ...]
    start_florins: int
    removed_per_day: int
    dealt: bool
    limit_others_with_money: bool


@dataclass(frozen=True, slots=True)
class State:
    rules: Rules
    day: int
    phase: int
    start: int
    drawer: int
    current: int
    unseen: tuple[int, ...]
    """Per kind, the tiles nobody has seen today: the bag, plus (table mode) those removed."""
    bag_size: int
    removed: tuple[int, ...]
    """Dealt mode: the tiles removed unseen today (full view only)."""
    lot: tuple[int, ...]
    discarded: tuple[int, ...]
    ships: tuple[tuple[int, ...], ...]
    florins: tuple[int, ...]
    paid: tuple[int, ...]
    levels: tuple[tuple[int, ...], ...]
    bids: tuple[int, ...]
    """The auction under way: per seat NO_BID (not yet), PASSED, or the amount bid."""
    high_bid: int
    high_bidder: int
    payouts: tuple[tuple[Payout, ...], ...]
    tied: tuple[int, ...] = ()


replace: Final = replacer(State)
"""A copy of a state with some fields changed (`tablelog.replay.copying`: state copies dominate
folding)."""


def make_rules(
    players: Sequence[str],
    options: MediciOptions,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
) -> Rules:
    """Rules §B2, §B5, §B8, G-B2: setup numbers and tables by player count and edition."""
    n = len(players)
    edition = options.edition
    if edition == MEDICI_EDITION_UNSPECIFIED:
        # Unset: the classic edition, which has no 2-player game; 2 players mean 2016 (G-B2).
        edition = MEDICI_EDITION_2016 if n == 2 else MEDICI_EDITION_CLASSIC
    if n == 2 and edition != MEDICI_EDITION_2016:
        raise InvalidSetup(
            "PLAYER_COUNT", "The classic edition is for 3 to 6 players; 2 need the 2016 edition."
        )
    if not 2 <= n <= 6:
        raise InvalidSetup("PLAYER_COUNT", f"Medici is for 3 to 6 players (2 in 2016), not {n}.")
    if options.first_player >= n:
        raise InvalidSetup(
            "FIRST_PLAYER", no_such_seat("first_player", options.first_player, players)
        )
    tiles_file = recorded_component(components, TILES_COMPONENT, "Medici")
    tiles = load_tiles(tiles_file.content)
    return Rules(
        players=tuple(players),
        tiles=tiles,
        edition=edition,
        spaces=7 if n == 2 else 5,
        ship_rewards=SHIP_REWARDS[n],
        pyramid_rewards=(10, 0 if n == 2 else 5, *([0] * n)),
        start_florins=START_FLORINS[n],
        removed_per_day=max(0, tiles.total - TILES_USED[n]),
        dealt=mode == DEALT,
        limit_others_with_money=options.lot_limit_others_with_money,
    )


def setup(
    players: Sequence[str],
    options: MediciOptions | None,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
) -> State:
    """Rules §B2, G-B2: the rules for these players, options and recorded tiles file, and
    the state before the first move, the options' first player starting day 1."""
    chosen = options if options is not None else MediciOptions()
    return initial_state(make_rules(players, chosen, mode, components), chosen.first_player)


def initial_state(rules: Rules, first_player: int) -> State:
    """Rules §B2: markers at the bottom of every pyramid, starting florins, day 1."""
    n = len(rules.players)
    state = State(
        rules=rules,
        day=1,
        phase=DRAW,
        start=first_player,
        drawer=first_player,
        current=first_player,
        unseen=rules.tiles.counts,
        bag_size=0,
        removed=(),
        lot=(),
        discarded=(),
        ships=((),) * n,
        florins=(rules.start_florins,) * n,
        paid=(0,) * n,
        levels=((0,) * len(GOODS),) * n,
        bids=(NO_BID,) * n,
        high_bid=0,
        high_bidder=-1,
        payouts=((),) * n,
    )
    return _begin_day(state, first_player)


def free_space(state: State, seat: int) -> int:
    """Rules §B1-B2: a ship has 5 spaces (7 in the 2-player 2016 game)."""
    return state.rules.spaces - len(state.ships[seat])


def ship_value(state: State, seat: int) -> int:
    """Rules §B5 step 1: the sum of face values on the ship (gold counts 10)."""
    kinds = state.rules.tiles.kinds
    return sum(kinds[k].value for k in state.ships[seat])


def lot_limit(state: State) -> int:
    """Rules §B3 step 1, G-B3: a lot may not outgrow the largest free space among the
    non-full players, the drawer included (option: only other players who have money; the
    drawer's own space when nobody else qualifies)."""
    n = len(state.rules.players)
    if state.rules.limit_others_with_money:
        spaces = [
            free_space(state, s)
            for s in range(n)
            if s != state.drawer and state.florins[s] > 0 and free_space(state, s) > 0
        ]
        if spaces:
            return max(spaces)
        return free_space(state, state.drawer)
    return state.rules.spaces - min(map(len, state.ships))  # the emptiest ship's free space


# --- day flow ---------------------------------------------------------------------------------


def _begin_day(state: State, start: int) -> State:
    """Rules §B2: every day all pieces go back in the bag and the listed number is removed
    unseen (recorded in dealt mode only); the start player draws first."""
    rules = state.rules
    n = len(rules.players)
    fresh = replace(
        state,
        start=start,
        unseen=rules.tiles.counts,
        bag_size=rules.tiles.total - rules.removed_per_day,
        removed=(),
        lot=(),
        discarded=(),
        ships=((),) * n,
        bids=(NO_BID,) * n,
        high_bid=0,
        high_bidder=-1,
        tied=(),
    )
    if rules.dealt and rules.removed_per_day:
        return replace(fresh, phase=REMOVE, drawer=start, current=start)
    return _begin_turn(fresh, start)


def _begin_turn(state: State, drawer: int) -> State:
    """Rules §B3 step 1, §B4: the drawer must draw at least one tile; an empty bag ends the day."""
    if state.bag_size == 0:
        return _end_day(state)
    return replace(state, phase=DRAW, drawer=drawer, current=drawer, lot=())


def _after_draw(state: State, **changes: Any) -> State:
    """Rules §B3 step 1: after each tile the drawer may stop; at 3 tiles, with an empty bag,
    or when one more tile would make a lot nobody could load, the auction starts.

    `changes` (the drawn tile's effect) are applied together with the next phase: one new
    state per move, because folding speed counts."""
    size = len(changes["lot"])
    bag_size = changes["bag_size"]
    if size >= MAX_LOT or bag_size == 0 or size + 1 > lot_limit(state):
        return _start_auction(state, **changes)
    return replace(state, phase=DECIDE, current=state.drawer, **changes)


def _start_auction(state: State, **changes: Any) -> State:
    """Rules §B3 step 2: once around clockwise from the drawer's left, the drawer last;
    full ships take no part."""
    n = len(state.rules.players)
    return _auction_step(state, (NO_BID,) * n, 0, -1, None, **changes)


def _auction_step(
    state: State,
    bids: tuple[int, ...],
    high_bid: int,
    high_bidder: int,
    after: int | None,
    **changes: Any,
) -> State:
    """Rules §B3 step 2: the auction goes on with the next player after `after` (None: from
    the start), in
    the order that ends with the drawer, whose ship is not full and who has not yet bid or
    passed; the lot is resolved when there is none."""
    n = len(state.rules.players)
    drawer = state.drawer
    # Places in the bidding order: 1 (the drawer's left) .. n (the drawer).
    place = 0 if after is None else (after - drawer) % n or n
    spaces = state.rules.spaces
    ships = state.ships
    for step in range(place + 1, n + 1):
        seat = (drawer + step) % n
        if bids[seat] == NO_BID and len(ships[seat]) < spaces:
            return replace(
                state,
                phase=BID,
                current=seat,
                bids=bids,
                high_bid=high_bid,
                high_bidder=high_bidder,
                **changes,
            )
    return _resolve(
        replace(state, bids=bids, high_bid=high_bid, high_bidder=high_bidder, **changes)
    )


def _resolve(state: State) -> State:
    """Rules §B3 step 3, §B4: the high bidder pays and loads the lot; if all pass the lot is
    discarded. Then the day ends when all ships but one are full (the last one is filled
    free) or the bag is empty; otherwise the next non-full player to the left draws."""
    winner = state.high_bidder
    n = len(state.rules.players)
    ships = state.ships
    florins = state.florins
    paid = state.paid
    discarded = state.discarded
    if winner >= 0:
        price = state.high_bid
        ships = (*ships[:winner], (*ships[winner], *state.lot), *ships[winner + 1 :])
        florins = (*florins[:winner], florins[winner] - price, *florins[winner + 1 :])
        paid = (*paid[:winner], paid[winner] + price, *paid[winner + 1 :])
    else:
        discarded = discarded + state.lot
    spaces = state.rules.spaces
    open_seats = [s for s in range(n) if len(ships[s]) < spaces]
    phase, seat = DRAW, -1
    if len(open_seats) <= 1:
        if open_seats and state.bag_size > 0:
            phase, seat = FILL, open_seats[0]
    elif state.bag_size > 0:
        seat = next(
            (state.drawer + step) % n
            for step in range(1, n + 1)
            if len(ships[(state.drawer + step) % n]) < spaces
        )
    after = replace(
        state,
        ships=ships,
        florins=florins,
        paid=paid,
        discarded=discarded,
        lot=(),
        bids=(NO_BID,) * n,
        high_bid=0,
        high_bidder=-1,
        phase=phase,
        current=max(seat, 0),
        drawer=max(seat, 0) if seat >= 0 else state.drawer,
    )
    if seat < 0:
        return _end_day(after)
    return after


def score_ships(rules: Rules, values: Sequence[int]) -> list[int]:
    """Rules §B5 step 1, §B6: ship values ranked and paid by player count; tied places are
    pooled and split in whole florins, rounded down; the lowest ship gets nothing."""
    return ranked_shares(values, rules.ship_rewards, unit=1)


def score_pyramids(
    rules: Rules, levels: Sequence[Sequence[int]]
) -> list[tuple[list[int], list[int]]]:
    """Rules §B5 step 2, §B6, G-B5: per good, 10/5 (10/0 with 2 players) by pyramid position,
    players without the good included, ties pooled and rounded down; and the bonus of the
    marker's level (5/10/20 on the top three), never shared. Returns (awards, bonuses)."""
    n = len(levels)
    out: list[tuple[list[int], list[int]]] = []
    for g in range(len(GOODS)):
        heights = [levels[s][g] for s in range(n)]
        out.append(
            (ranked_shares(heights, rules.pyramid_rewards, unit=1), [BONUS[h] for h in heights])
        )
    return out


def _end_day(state: State) -> State:
    """Rules §B5 (ships, then each pyramid), §B7 (three days), §B2 (the poorest starts the
    next day; a tie is a chance move)."""
    rules = state.rules
    kinds = rules.tiles.kinds
    n = len(rules.players)
    values = [ship_value(state, s) for s in range(n)]
    levels = [list(row) for row in state.levels]
    for s in range(n):
        for k in state.ships[s]:
            good = kinds[k].good
            if good >= 0 and levels[s][good] < TOP_LEVEL:
                levels[s][good] += 1
    d = state.day
    florins, payouts = pay_period(
        state,
        d,
        score_ships(rules, values),
        score_pyramids(rules, levels),
        ("pyramid", "bonus"),
    )
    scored = replace(
        state, levels=tuple(tuple(row) for row in levels), florins=florins, payouts=payouts
    )
    if d == DAYS:
        return replace(scored, phase=OVER)
    return start_next_period(replace(scored, day=d + 1), START, _begin_day)


# --- moves ------------------------------------------------------------------------------------


def check_bounds(state: State, move: MediciMove) -> None:
    """Rules §B1: a tile named by `move` is a tile of this game, checked before the move is
    formatted or applied (a hostile name is refused, not echoed in full)."""
    action = move.WhichOneof("action")
    name = move.draw.tile if action == "draw" else move.remove.tile if action == "remove" else ""
    if name:
        _kind(state, name)


def apply(state: State, move: MediciMove) -> State:
    """Rules §B2-B4 (and §B2, §B6 for the start player): dispatch `move` to its rule after
    checking that the game is in the phase that move belongs to (a drawer's decision, a bid,
    or one of the table's chance moves)."""
    action = move.WhichOneof("action")
    phase = state.phase
    if phase == OVER:
        raise GameOver()
    if action == "bid":
        _expect(state, BID)
        return bid(state, move.bid.florins)
    if action == "pass_bid":
        _expect(state, BID)
        return pass_bid(state)
    if action == "draw":
        if phase not in (DRAW, FILL):
            _expect(state, DRAW)
        return draw(state, move.draw.tile)
    if action == "draw_more":
        _expect(state, DECIDE)
        return draw_more(state)
    if action == "close_lot":
        _expect(state, DECIDE)
        return _start_auction(state)
    if action == "remove":
        _expect(state, REMOVE)
        return remove(state, move.remove.tile)
    if action == "start_player":
        _expect(state, START)
        return choose_start(state, move.start_player.seat)
    raise IllegalMove("EMPTY_MOVE", "The move names no action.")


_WAITING = {
    DRAW: ("DRAW_PENDING", "The table must first record the tile drawn from the bag."),
    FILL: ("DRAW_PENDING", "The table must first record the tile drawn for the last ship."),
    DECIDE: ("DRAWER_DECIDING", "The drawer must first say `draw` (one more) or `auction`."),
    BID: ("AUCTION_UNDER_WAY", "The lot is being auctioned: bid or pass."),
    REMOVE: ("REMOVAL_PENDING", "The day's setup must first remove its tiles unseen."),
    START: start_pending("day"),
}


def _expect(state: State, phase: int) -> None:
    if state.phase != phase:
        if state.phase == FILL:
            _refuse_during_free_fill(state)
        if state.phase == BID and phase in (DRAW, DECIDE):
            _refuse_closed_lot(state)
        code, message = _WAITING[state.phase]
        raise IllegalMove(code, message)


def _refuse_during_free_fill(state: State) -> None:
    """Rules §B4, G-B6: with one ship left the day's trading has stopped; the table only
    records the tiles drawn into it, for free."""
    name = state.rules.players[state.current]
    free = free_space(state, state.current)
    raise IllegalMove(
        "DRAW_PENDING",
        f"Only {name}'s ship has room: the day's trading has stopped and {name} draws into it "
        f"for free until it is full ({free} space{'s' if free != 1 else ''} left) or the bag is "
        "empty (RULES.md §B4). Record the tile drawn: `draw <tile>`.",
    )


def _refuse_closed_lot(state: State) -> None:
    """Rules §B3 step 1, G-B3: a draw once the lot has closed by rule names that rule."""
    size = len(state.lot)
    why = ""
    if size >= MAX_LOT:
        code, why = "LOT_LIMIT", f"a lot has at most {MAX_LOT} tiles"
    elif state.bag_size == 0:
        code, why = "BAG_EMPTY", "the bag is empty"
    elif size + 1 > lot_limit(state):
        code = "LOT_TOO_BIG"
        why = f"a lot of {size + 1} would fit no ship: the most free space is {lot_limit(state)}"
    if why:
        raise IllegalMove(
            code,
            f"The lot closed at {size} tile{'s' if size != 1 else ''}: {why} "
            "(RULES.md §B3 step 1). It is being auctioned: bid or pass.",
        )


def _kind(state: State, name: str) -> int:
    k = state.rules.tiles.by_name.get(name, -1)
    if k < 0:
        raise IllegalMove("UNKNOWN_TILE", f"There is no tile {quoted(name)} in this game.")
    return k


def draw(state: State, name: str) -> State:
    """Rules §B3 step 1 (into the lot) and §B4 (free fill of the last ship): a tile nobody
    has seen today; the bag size bounds the draws."""
    k = _kind(state, name)
    left = state.unseen[k]
    if left == 0:
        raise IllegalMove(
            "TILE_NOT_IN_BAG",
            f"No {name} can be in the bag: all {state.rules.tiles.counts[k]} are out.",
        )
    unseen = (*state.unseen[:k], left - 1, *state.unseen[k + 1 :])
    if state.phase == FILL:
        seat = state.current
        ships = state.ships
        ship = (*ships[seat], k)
        filled = replace(
            state,
            unseen=unseen,
            bag_size=state.bag_size - 1,
            ships=(*ships[:seat], ship, *ships[seat + 1 :]),
        )
        if len(ship) >= state.rules.spaces or filled.bag_size == 0:
            return _end_day(filled)
        return filled
    return _after_draw(state, unseen=unseen, bag_size=state.bag_size - 1, lot=(*state.lot, k))


def draw_more(state: State) -> State:
    """Rules §B3 step 1, G-B3: at most 3 tiles, and never a lot nobody could load."""
    size = len(state.lot)
    if size >= MAX_LOT:
        raise IllegalMove("LOT_LIMIT", f"A lot has at most {MAX_LOT} tiles.")
    if state.bag_size == 0:
        raise IllegalMove("BAG_EMPTY", "The bag is empty: auction the lot.")
    limit = lot_limit(state)
    if size + 1 > limit:
        raise IllegalMove(
            "LOT_TOO_BIG",
            f"A lot of {size + 1} would fit no ship: the most free space is {limit}.",
        )
    return replace(state, phase=DRAW)


def bid(state: State, florins: int) -> State:
    """Rules §B3 step 2, G-B7: at least 1, above the high bid, no more than you have, and
    only for a lot that fits your free spaces."""
    seat = state.current
    space = free_space(state, seat)
    if len(state.lot) > space:
        raise IllegalMove(
            "LOT_DOES_NOT_FIT",
            f"The lot has {len(state.lot)} tiles and your ship has "
            f"{counted(space, 'free space')}: pass.",
        )
    if florins < 1:
        raise IllegalMove("BID_TOO_LOW", "The lowest bid is 1 florin.")
    if florins <= state.high_bid:
        raise IllegalMove(
            "BID_NOT_HIGHER",
            f"A bid must beat the high bid of {state.high_bid}; {florins} does not.",
        )
    have = state.florins[seat]
    if florins > have:
        raise IllegalMove("BID_OVER_MONEY", f"You have {have} florins and cannot bid {florins}.")
    bids = state.bids
    return _auction_step(state, (*bids[:seat], florins, *bids[seat + 1 :]), florins, seat, seat)


def pass_bid(state: State) -> State:
    """Rules §B3 step 2: each player bids once or passes."""
    seat = state.current
    bids = state.bids
    return _auction_step(
        state, (*bids[:seat], PASSED, *bids[seat + 1 :]), state.high_bid, state.high_bidder, seat
    )


def remove(state: State, name: str) -> State:
    """Rules §B2 (dealt mode): one tile removed unseen at the day's setup."""
    k = _kind(state, name)
    left = state.unseen[k]
    if left == 0:
        raise IllegalMove(
            "TILE_NOT_IN_BAG",
            f"No {name} can be in the bag: all {state.rules.tiles.counts[k]} are out.",
        )
    after = replace(
        state,
        unseen=(*state.unseen[:k], left - 1, *state.unseen[k + 1 :]),
        removed=(*state.removed, k),
    )
    if len(after.removed) >= state.rules.removed_per_day:
        return _begin_turn(after, state.start)
    return after


def choose_start(state: State, seat: int) -> State:
    """Rules §B2, §B6: the poorest player starts days 2 and 3; a tie is broken at random."""
    check_start(seat, state.tied, state.rules.players, "day")
    return _begin_day(state, seat)


# --- move builders ----------------------------------------------------------------------------


def draw_more_move() -> MediciMove:
    return MediciMove(draw_more=MediciDrawMore())


def close_move() -> MediciMove:
    return MediciMove(close_lot=MediciCloseLot())


def draw_move(tile: str) -> MediciMove:
    return MediciMove(draw=MediciDraw(tile=tile))


def remove_move(tile: str) -> MediciMove:
    return MediciMove(remove=MediciRemove(tile=tile))


def bid_move(florins: int) -> MediciMove:
    return MediciMove(bid=MediciBid(florins=florins))


def pass_move() -> MediciMove:
    return MediciMove(pass_bid=MediciPass())


def start_move(seat: int) -> MediciMove:
    return MediciMove(start_player=MediciStartPlayer(seat=seat))


# --- enumerations -----------------------------------------------------------------------------


def to_move(state: State) -> int:
    """Rules §B2-B4: the table (CHANCE) while a tile is drawn or removed or a tied start
    player is picked; otherwise the drawer deciding or the current bidder."""
    phase = state.phase
    if phase in CHANCE_PHASES:
        return CHANCE
    if phase == OVER:
        return TERMINAL
    return state.current


def legal_moves(state: State) -> list[MediciMove]:
    """Rules §B3: a bid or a pass while auctioning, `draw`/`auction` while the drawer
    decides; in a chance phase, every chance outcome."""
    phase = state.phase
    if phase == BID:
        return [pass_move(), *(bid_move(b) for b in bid_range(state))]
    if phase == DECIDE:
        moves = [close_move()]
        if can_draw_more(state):
            moves.insert(0, draw_more_move())
        return moves
    if phase == OVER:
        return []
    return [move for move, _ in chance_outcomes(state)]


def chance_outcomes(state: State) -> list[tuple[MediciMove, int]]:
    """Rules §B2-B4: each tile kind drawn or removed, weighted by its unseen copies; each
    seat tied for fewest florins as the day's start player, weighted 1."""
    phase = state.phase
    kinds = state.rules.tiles.kinds
    if phase in (DRAW, FILL):
        return [(draw_move(kinds[k].name), c) for k, c in tile_weights(state)]
    if phase == REMOVE:
        return [(remove_move(kinds[k].name), c) for k, c in tile_weights(state)]
    if phase == START:
        return [(start_move(s), 1) for s in state.tied]
    return []


def can_draw_more(state: State) -> bool:
    """Rules §B3 step 1, G-B3: whether the drawer may draw one more tile (the conditions of
    `draw_more`: fewer than 3 tiles, a bag not empty, and a bigger lot some ship can load)."""
    size = len(state.lot)
    return (
        state.phase == DECIDE
        and size < MAX_LOT
        and state.bag_size > 0
        and size + 1 <= lot_limit(state)
    )


def bid_range(state: State) -> range:
    """Rules §B3 step 2, G-B7: the bids open to the current bidder, from one above the high
    bid up to their florins; empty when they can only pass (no money, or a lot that does not
    fit their free spaces)."""
    seat = state.current
    if state.phase != BID or len(state.lot) > free_space(state, seat):
        return range(0)
    return range(state.high_bid + 1, state.florins[seat] + 1)


def tile_weights(state: State) -> list[tuple[int, int]]:
    """Rules §B2-B4: (kind, copies nobody has seen today) for the next tile drawn or removed
    unseen; each piece in the bag is equally likely."""
    return [(k, c) for k, c in enumerate(state.unseen) if c > 0]


def visible_to(move: MediciMove, state: State, viewer: int | None) -> bool:
    """Rules §B2: the tiles removed at each day's setup are removed unseen, so a `remove`
    (dealt mode) is seen by nobody but the full view (viewer None); every other move (draws
    into the lot or the last ship, bids, passes, the start player) is public (§B3-B4)."""
    return viewer is None or move.WhichOneof("action") != "remove"
