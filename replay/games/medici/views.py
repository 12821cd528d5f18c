"""Views and the terminal rendering of Medici. The tiles removed unseen at a day's setup are
hidden from every view but the full one (viewer None); their number is public."""

from __future__ import annotations

from dataclasses import replace

from tablelog.replay.core import Viewer
from tablelog.replay.games.medici import rules
from tablelog.replay.games.medici.components import TileKind
from tablelog.replay.games.medici_common.components import GOODS
from tablelog.replay.games.medici_common.views import (
    payout_lines,
    table_lines,
    tied_start_text,
    winners_line,
)
from tablelog.v1.medici_pb2 import (
    MEDICI_EDITION_2016,
    MediciLevel,
    MediciPayout,
    MediciSeatView,
    MediciTile,
    MediciUnseen,
    MediciView,
)


def tile_message(kind: TileKind) -> MediciTile:
    return MediciTile(
        name=kind.name, good=GOODS[kind.good] if kind.good >= 0 else "", value=kind.value
    )


def view(state: rules.State, viewer: Viewer) -> MediciView:
    r = state.rules
    kinds = r.tiles.kinds
    phase = state.phase
    out = MediciView(
        edition=r.edition,
        day=state.day,
        bag_size=state.bag_size,
        removed_count=r.removed_per_day,
        lot=[tile_message(kinds[k]) for k in state.lot],
        discarded=[tile_message(kinds[k]) for k in state.discarded],
        start_player=state.start,
        drawer=state.drawer,
        current_player=state.current,
        high_bid=state.high_bid,
        high_bidder=max(state.high_bidder, 0),
        game_over=phase == rules.OVER,
        free_fill=phase == rules.FILL,
    )
    # What nobody has seen today is public: all tiles minus those on ships, in the lot or
    # discarded. The full view knows the removed tiles too (dealt mode).
    public = list(r.tiles.counts)
    for k in (*state.lot, *state.discarded, *(k for ship in state.ships for k in ship)):
        public[k] -= 1
    if viewer is None:
        out.removed.extend(tile_message(kinds[k]) for k in state.removed)
    out.unseen.extend(MediciUnseen(tile=kinds[k].name, count=c) for k, c in enumerate(public) if c)
    if phase == rules.DRAW:
        out.pending_draw = f"the tile {r.players[state.drawer]} draws into the lot"
    elif phase == rules.FILL:
        out.pending_draw = f"the tile drawn free into {r.players[state.current]}'s ship"
    elif phase == rules.REMOVE:
        out.pending_draw = (
            f"a tile removed unseen ({len(state.removed) + 1} of {r.removed_per_day})"
        )
    elif phase == rules.START:
        out.pending_draw = tied_start_text(r.players, state.tied, f"day {state.day}")
    elif phase == rules.DECIDE:
        out.awaiting = "draw or auction"
    elif phase == rules.BID:
        out.awaiting = "bid or pass" if rules.bid_range(state) else "pass"
    for seat, name in enumerate(r.players):
        bid = state.bids[seat]
        out.seats.append(
            MediciSeatView(
                name=name,
                florins=state.florins[seat],
                ship=[tile_message(kinds[k]) for k in state.ships[seat]],
                ship_value=rules.ship_value(state, seat),
                ship_spaces=r.spaces,
                full=rules.free_space(state, seat) == 0,
                levels=[
                    MediciLevel(good=g, level=state.levels[seat][i]) for i, g in enumerate(GOODS)
                ],
                payouts=[
                    MediciPayout(day=d, label=label, florins=f)
                    for d, label, f in state.payouts[seat]
                ],
                paid=state.paid[seat],
                bid=max(bid, 0),
                has_bid=bid > 0,
            )
        )
    return out


def render(v: MediciView) -> str:
    edition = "2016 edition" if v.edition == MEDICI_EDITION_2016 else "classic"
    lines = [f"Medici ({edition}) - day {v.day} of 3" + (" - game over" if v.game_over else "")]
    removed = " ".join(t.name for t in v.removed)
    hidden = f" ({removed})" if removed else " (hidden)" if v.removed_count else ""
    lines.append(f"Bag: {v.bag_size} tiles   Removed unseen today: {v.removed_count}{hidden}")
    lines.append(
        f"Lot (drawn by {v.seats[v.drawer].name}): {' '.join(t.name for t in v.lot) or '-'}"
        + (f"   high bid {v.high_bid} by {v.seats[v.high_bidder].name}" if v.high_bid else "")
    )
    if v.discarded:
        lines.append(f"Discarded today: {' '.join(t.name for t in v.discarded)}")
    lines.append("Pyramid levels (0-7; bonus 5/10/20 on levels 5/6/7) per good:")
    header = ["seat", "florins", "ship", "value", "spaces", *GOODS]
    rows = []
    for i, s in enumerate(v.seats):
        mark = "*" if not v.game_over and not v.pending_draw and i == v.current_player else " "
        ship = " ".join(t.name for t in s.ship) or "-"
        state = f"{len(s.ship)}/{s.ship_spaces}" + (" full" if s.full else "")
        rows.append(
            [
                f"{mark}{i + 1} {s.name}",
                str(s.florins),
                ship,
                str(s.ship_value),
                state,
                *(str(level.level) for level in s.levels),
            ]
        )
    lines.extend(table_lines(header, rows))
    if v.game_over:
        lines.append(winners_line([s.name for s in v.seats], [s.florins for s in v.seats]))
    elif v.pending_draw:
        lines.append(f"The table records {v.pending_draw}.")
    else:
        lines.append(f"{v.seats[v.current_player].name} to {v.awaiting}.")
    lines.extend(
        payout_lines(
            [
                (
                    s.name,
                    [(p.day, p.label, p.florins) for p in s.payouts],
                    f"; lots bought -{s.paid}",
                )
                for s in v.seats
            ],
            "d",
        )
    )
    return "\n".join(lines)


def hides_from(state: rules.State, viewer: Viewer) -> bool:
    """RULES.md §B2: whether `state` holds something `viewer` may not see: the tiles removed
    unseen today (recorded in dealt mode only), which only the full view shows."""
    return viewer is not None and bool(state.removed)


def redact(state: rules.State, viewer: Viewer) -> rules.State:
    """RULES.md §B2: the state as `viewer` may know it: the tiles removed unseen today back
    among the tiles nobody has seen (which they are, to everyone but the full view)."""
    if viewer is None or not state.removed:
        return state
    unseen = list(state.unseen)
    for kind in state.removed:
        unseen[kind] += 1
    return replace(state, unseen=tuple(unseen), removed=())
