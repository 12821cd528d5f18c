"""What a viewer sees (rules §2 step 8: hidden money) and its terminal rendering."""

from __future__ import annotations

from dataclasses import replace

from tablelog.replay.core import Viewer, counted
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import (
    ENTRANCE_NAMES,
    ENTRANCES,
    GOODS,
    RESTAURANTS,
    SPACE_NAMES,
    SPACES,
)
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

GOOD_SHORT = ("fi", "fl", "to", "me", "gr")
RESTAURANT_SHORT = ("SUSHI", "TEA", "PIZZA", "BURGR", "WINE", "PUB")


def _tile(rules: rl.Rules, kind: int) -> pb.MercadoDeLisboaCustomerTile:
    n, goods = rules.board.kinds[kind]
    return pb.MercadoDeLisboaCustomerTile(
        customers=n, goods=rl.goods_enum(goods), text=rl.tile_text(rules, kind)
    )


def view(state: rl.State, viewer: Viewer) -> pb.MercadoDeLisboaView:
    """The state as `viewer` may see it: with hidden money only the viewer's own coins (all
    of them for FULL) are shown; face-down restaurants never show their type."""
    rules = state.rules
    names = rules.names
    marks = set(rules.board.marks)
    spaces = []
    for s in range(SPACES):
        cell = state.board[s]
        space = pb.MercadoDeLisboaSpaceView(name=SPACE_NAMES[s], restaurant_mark=s in marks)
        if cell == rl.EMPTY:
            space.kind = pb.MERCADO_DE_LISBOA_SPACE_KIND_EMPTY
        elif cell == rl.FACE_DOWN:
            space.kind = pb.MERCADO_DE_LISBOA_SPACE_KIND_FACE_DOWN_RESTAURANT
        elif cell < rl.STAND_BASE:
            space.kind = pb.MERCADO_DE_LISBOA_SPACE_KIND_RESTAURANT
            space.restaurant = rl.restaurant_enum(cell - rl.RESTAURANT_BASE)
        else:
            owner, good = divmod(cell - rl.STAND_BASE, 5)
            space.kind = pb.MERCADO_DE_LISBOA_SPACE_KIND_STAND
            space.good = rl.good_enum(good)
            space.owner = owner
        spaces.append(space)
    entrances = []
    for e in range(ENTRANCES):
        k = state.entrances[e]
        entrance = pb.MercadoDeLisboaEntranceView(name=ENTRANCE_NAMES[e], empty=k < 0)
        if k >= 0:
            entrance.tile.CopyFrom(_tile(rules, k))
        entrances.append(entrance)
    players = []
    for seat in range(rules.players):
        visible = not rules.money_hidden or viewer is None or viewer == seat
        players.append(
            pb.MercadoDeLisboaPlayerView(
                name=names[seat] if seat < len(names) else f"seat {seat}",
                money_visible=visible,
                money=state.money(seat) if visible else 0,
                stand_tiles=rl.goods_enum(state.hands[seat]),
                dead_tiles=rl.goods_enum(state.dead[seat]),
                restaurants=[rl.restaurant_enum(t) for t in state.held[seat]],
                stands_on_market=state.stands[seat],
                wooden_stands_left=rl.MAX_STANDS - state.stands[seat] - len(state.hands[seat]),
            )
        )
    offers = [
        pb.MercadoDeLisboaCustomerOffer(
            customers=size + 1,
            available=[_tile(rules, k) for k in state.offers[size]],
            pile=state.piles[size],
        )
        for size in range(4)
    ]
    result = pb.MercadoDeLisboaView(
        spaces=spaces,
        entrances=entrances,
        display=rl.goods_enum(state.display),
        customers=offers,
        bag=list(state.bag),
        players=players,
        unseen_restaurants=list(state.unseen_restaurants),
        to_move=rl.to_move(state),
        pending_reveal=rl.pending_text(state),
        end_triggered=state.trigger_seat >= 0,
        turns_left=state.turns_left if state.trigger_seat >= 0 else 0,
        coin_streak=state.streak,
        money_hidden=rules.money_hidden,
        approximate=rules.board.approximate,
        approximate_note=rules.board.approximate_note,
        choosing_display_tile=state.phase == rl.TAKE and not state.pending,
        over=state.over,
        revealable=[
            pb.MercadoDeLisboaCustomerTile(
                customers=size,
                goods=rl.goods_enum(goods),
                text=f"{size} " + "+".join(GOODS[g] for g in goods),
            )
            for kind, size, goods, _weight in rl.chance_draws(state)
            if kind == "reveal"
        ],
    )
    stage = rl.stage_of(rules)
    if rules.solo:
        result.solo.CopyFrom(
            pb.MercadoDeLisboaSoloView(
                stage=rules.stage,
                stage_name=stage.name if stage else "solo game without a stage",
                fame_thresholds=list(stage.thresholds) if stage else [],
                campaign_fame=rules.campaign_fame,
                master_stroke_used=rules.master_stroke_used,
                best_action=state.best_action,
                stage1_good=rl.good_enum(state.locked_good),
                money_from_four=state.from_four,
                four_tiles_placed=state.fours_placed,
                rules=stage.rules if stage else "",
            )
        )
    return result


def _cell(space: pb.MercadoDeLisboaSpaceView) -> str:
    if space.kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_STAND:
        return f"{GOOD_SHORT[space.good - 1]}:{space.owner + 1}"
    if space.kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_RESTAURANT:
        return RESTAURANT_SHORT[space.restaurant - 1]
    if space.kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_FACE_DOWN_RESTAURANT:
        return "(?)"
    return "·" if space.restaurant_mark else ""


def _tile_short(tile: pb.MercadoDeLisboaCustomerTile) -> str:
    return f"{tile.customers}" + "".join(GOOD_SHORT[g - 1] for g in tile.goods)


def render(v: pb.MercadoDeLisboaView) -> str:
    """The market as a grid (stands as good:seat, restaurants by name, (?) face down,
    · an empty restaurant mark), the customers at the entrances, the offers and players."""
    width = 7
    lines: list[str] = []
    if v.approximate:
        lines.append("NOTE: approximate data in use. " + v.approximate_note)
    ent = {e.name: ("" if e.empty else _tile_short(e.tile)) for e in v.entrances}
    pad = " " * 11
    lines.append(pad + "".join(f"{'abcde'[c]:^{width + 1}}" for c in range(5)))
    lines.append(pad + "".join(f"{'n' + str(c + 1):^{width + 1}}" for c in range(5)))
    lines.append(pad + "".join(f"{ent['n' + str(c + 1)]:^{width + 1}}" for c in range(5)))
    border = pad[:-1] + "+" + "+".join("-" * width for _ in range(5)) + "+"
    lines.append(border)
    for r in range(5):
        cells = "|".join(f"{_cell(v.spaces[r * 5 + c]):^{width}}" for c in range(5))
        west = ent[f"w{r + 1}"]
        east = ent[f"e{r + 1}"]
        lines.append(f"w{r + 1} {west:>5} {r + 1}|{cells}|{r + 1} {east:<5} e{r + 1}")
        lines.append(border)
    lines.append(pad + "".join(f"{ent['s' + str(c + 1)]:^{width + 1}}" for c in range(5)))
    lines.append(pad + "".join(f"{'s' + str(c + 1):^{width + 1}}" for c in range(5)))
    lines.append(
        "stands good:seat (fi fish, fl flower, to tomato, me meat, gr grape); (?) face-down "
        "restaurant; · empty restaurant mark; customers at entrances as count+goods"
    )
    lines.append("")
    lines.append("display: " + (", ".join(GOODS[g - 1] for g in v.display) or "empty"))
    for offer in v.customers:
        tiles = ", ".join(t.text for t in offer.available) or "none"
        lines.append(f"customers {offer.customers}: {tiles} (pile {offer.pile})")
    lines.append(
        "bag: "
        + ", ".join(f"{GOODS[i]} {n}" for i, n in enumerate(v.bag))
        + " | face-down restaurants unseen: "
        + ", ".join(f"{RESTAURANTS[i]} {n}" for i, n in enumerate(v.unseen_restaurants) if n)
    )
    for i, p in enumerate(v.players):
        money = str(p.money) if p.money_visible else "hidden"
        rests = (
            ", ".join(RESTAURANTS[t - 1] if t else "(not turned over)" for t in p.restaurants)
            or "none"
        )
        tiles = ", ".join(GOODS[g - 1] for g in p.stand_tiles) or "none"
        extra = (
            f"; dead tiles {', '.join(GOODS[g - 1] for g in p.dead_tiles)}" if p.dead_tiles else ""
        )
        marker = ">" if v.to_move == i else " "
        lines.append(
            f"{marker}{i + 1} {p.name}: money {money}; tiles {tiles}{extra}; restaurants {rests}; "
            f"{p.stands_on_market} stands on the market, {p.wooden_stands_left} wooden left"
        )
    if v.HasField("solo"):
        s = v.solo
        lines.append(
            f"solo stage {s.stage} ({s.stage_name}): fame at "
            + "/".join(map(str, s.fame_thresholds))
            + f"; campaign fame so far {s.campaign_fame}; best action {s.best_action}"
        )
        if s.rules:
            lines.append("  " + s.rules)
    if v.over:
        lines.append("game over")
    elif v.pending_reveal:
        lines.append("table: " + v.pending_reveal)
    elif v.choosing_display_tile:
        chooser = v.players[v.to_move].name if v.to_move < len(v.players) else "the player"
        lines.append(f"{chooser} takes a tile from the refreshed display")
    if v.end_triggered and not v.over:
        lines.append(f"end triggered: {counted(v.turns_left, 'turn')} left")
    if v.coin_streak:
        lines.append(f"consecutive coin turns: {v.coin_streak}")
    return "\n".join(lines)


def hides_from(state: rl.State, viewer: Viewer) -> bool:
    """Rules §2 step 8: whether `state` holds something `viewer` may not see: with hidden
    money, another seat's coins until the game is over (what `view` and the running result
    leave out). Face-down restaurants are never recorded before they are turned over."""
    if viewer is None or not state.rules.money_hidden or state.over:
        return False
    return any(seat != viewer for seat in range(state.rules.players))


UNKNOWN_MONEY = 1_000_000
"""What another seat's hidden coins count as when a move is checked against a view: more
than any price, so that no refusal can depend on them."""


def redact(state: rl.State, viewer: Viewer) -> rl.State:
    """Rules §2 step 8: the state as `viewer` may know it: with hidden money, another seat's
    coins (until the game is over) replaced by more than anything costs, so that a move is
    refused for want of money only in the caller's own seat's words."""
    if not hides_from(state, viewer):
        return state
    ledger = tuple(
        row if seat == viewer else (UNKNOWN_MONEY, 0, 0, 0, 0, 0)
        for seat, row in enumerate(state.ledger)
    )
    return replace(state, ledger=ledger)
