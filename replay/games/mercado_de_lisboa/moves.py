"""Protobuf moves in and out of the rules: decoding, applying, listing legal moves."""

from __future__ import annotations

from typing import TypeAlias, cast

from replay.core import CHANCE, TERMINAL, GameOver, IllegalMove
from replay.games.mercado_de_lisboa import rules as rl
from replay.games.mercado_de_lisboa.components import ENTRANCES, GOODS, RESTAURANTS, SPACES
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

Move = pb.MercadoDeLisboaMove
CHANCE_ACTIONS = frozenset({"draw", "flip", "reveal"})


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


def _goods(values: object) -> list[int]:
    goods = [_good(int(v)) for v in values]  # type: ignore[attr-defined]
    if not 1 <= len(goods) <= 2:
        raise _malformed(f"{len(goods)} goods for a customer tile (one or two)")
    return goods


def to_move(state: rl.State) -> int:
    if state.over:
        return TERMINAL
    if state.pending:
        return CHANCE
    return state.seat


def apply(state: rl.State, move: Move) -> rl.State:
    """Decode `move` and apply it (every rule check is in rules.py)."""
    if state.over:
        raise GameOver()
    action = move.WhichOneof("action")
    if action is None:
        raise _malformed("no action")
    if state.pending and action not in CHANCE_ACTIONS:
        raise IllegalMove("REVEAL_PENDING", f"The table must first {rl.pending_text(state)}.")
    if action == "stand":
        m = move.stand
        take = _good(m.take, "display tile") if m.take else -1
        return rl.open_stand(state, _good(m.good), _space(m.space), take, m.refresh_display)
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
        return rl.bring_customers(state, kind, c.entrance - 1)
    if action == "restaurant":
        r = move.restaurant
        if not 1 <= r.restaurant <= len(RESTAURANTS):
            raise _malformed(f"no valid restaurant ({r.restaurant})")
        return rl.open_restaurant(state, r.restaurant - 1, _space(r.space))
    if action == "coin":
        return rl.take_coin(state)
    if action == "swap":
        return rl.swap_hand(state)
    if action == "take":
        return rl.take_tile(state, _good(move.take.good))
    if not state.pending:
        raise IllegalMove("NO_REVEAL_PENDING", "Nothing is waiting to be drawn or revealed.")
    if action == "draw":
        return rl.draw_tile(state, _good(move.draw.good))
    if action == "flip":
        f = move.flip.restaurant
        if not 1 <= f <= len(RESTAURANTS):
            raise _malformed(f"no valid restaurant ({f})")
        return rl.flip_restaurant(state, f - 1)
    v = move.reveal
    return rl.reveal_customers(state, v.customers, _goods(v.goods))


Good: TypeAlias = pb.MercadoDeLisboaGood.ValueType
Restaurant: TypeAlias = pb.MercadoDeLisboaRestaurant.ValueType


def good_enum(good: int) -> Good:
    """The protobuf enum of an internal good index."""
    return cast("Good", good + 1)


def goods_enum(goods: tuple[int, ...] | list[int]) -> list[Good]:
    return [cast("Good", g + 1) for g in goods]


def restaurant_enum(restaurant: int) -> Restaurant:
    return cast("Restaurant", restaurant + 1)


def stand_move(good: int, space: int, take: int = -1, refresh: bool = False) -> Move:
    return Move(
        stand=pb.MercadoDeLisboaOpenStand(
            good=good_enum(good),
            space=space + 1,
            take=good_enum(take),
            refresh_display=refresh,
        )
    )


def customer_move(customers: int, goods: tuple[int, ...], entrance: int) -> Move:
    return Move(
        customer=pb.MercadoDeLisboaBringCustomers(
            customers=customers, goods=goods_enum(goods), entrance=entrance + 1
        )
    )


def restaurant_move(restaurant: int, space: int) -> Move:
    return Move(
        restaurant=pb.MercadoDeLisboaOpenRestaurant(
            restaurant=restaurant_enum(restaurant), space=space + 1
        )
    )


COIN = Move(coin=pb.MercadoDeLisboaTakeCoin())
SWAP = Move(swap=pb.MercadoDeLisboaSwapStandTiles())


def take_move(good: int) -> Move:
    return Move(take=pb.MercadoDeLisboaTakeStandTile(good=good_enum(good)))


def chance_move(kind: str, value: int, goods: tuple[int, ...]) -> Move:
    if kind == "draw":
        return Move(draw=pb.MercadoDeLisboaDrawStandTile(good=good_enum(value)))
    if kind == "flip":
        return Move(flip=pb.MercadoDeLisboaFlipRestaurant(restaurant=restaurant_enum(value)))
    return Move(reveal=pb.MercadoDeLisboaRevealCustomers(customers=value, goods=goods_enum(goods)))


def chance_outcomes(state: rl.State) -> list[tuple[Move, int]]:
    return [(chance_move(k, v, g), w) for k, v, g, w in rl.chance_outcomes(state)]


def legal_moves(state: rl.State) -> list[Move]:
    """Every legal move: the chance outcomes, or the seat's actions (rules §4)."""
    if state.over:
        return []
    if state.pending:
        return [m for m, _ in chance_outcomes(state)]
    seat = state.seat
    if state.phase == rl.TAKE:
        return [take_move(g) for g in sorted(set(state.display))]
    moves: list[Move] = []
    if rl.can_swap(state):
        moves.append(SWAP)
    display = state.display
    takes = sorted(set(display))
    triplet = len(display) == 3 and display[0] == display[2]
    for good in sorted(set(state.hands[seat])):
        for space in range(SPACES):
            if state.board[space] > rl.FACE_DOWN:
                continue
            try:
                rl.check_stand(state, good, space)
            except IllegalMove:
                continue
            if not takes:
                moves.append(stand_move(good, space))
            for take in takes:
                moves.append(stand_move(good, space, take))
            if triplet:
                moves.append(stand_move(good, space, refresh=True))
    rules = state.rules
    for size in range(4):
        for kind in sorted(set(state.offers[size])):
            for entrance in range(ENTRANCES):
                if state.entrances[entrance] >= 0:
                    continue
                try:
                    rl.check_customer(state, kind, entrance)
                except IllegalMove:
                    continue
                moves.append(customer_move(size + 1, rules.board.kinds[kind][1], entrance))
    for restaurant in sorted({t for t in state.held[seat] if t >= 0}):
        for space in range(SPACES):
            if state.board[space] > rl.FACE_DOWN:
                continue
            try:
                rl.check_restaurant(state, restaurant, space)
            except IllegalMove:
                continue
            moves.append(restaurant_move(restaurant, space))
    if not rules.solo:
        moves.append(COIN)
    return moves
