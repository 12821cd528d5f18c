"""The picture of a Medici view: the bag, the lot on offer with the high bid, the tiles
removed unseen today (face down unless the view shows them) and those discarded, each
player's ship, money and bid, and the five goods pyramids with every player's marker."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from tablelog.replay.games.medici_common.picture import (
    MARGIN,
    PHONE_HEADER,
    PHONE_MARGIN,
    WIDTH,
    goods_tracks,
    header,
    last_move_caption,
    phone_header,
    piece,
    pile,
    seat_label,
)
from tablelog.replay.games.medici_common.views import winners_line
from tablelog.replay.picture import (
    INK,
    MUTED,
    PAPER,
    PHONE,
    PHONE_WIDTH,
    TOUCH_UNITS,
    Picture,
    check_layout,
)
from tablelog.v1.medici_pb2 import (
    MEDICI_EDITION_2016,
    MediciMove,
    MediciSeatView,
    MediciTile,
    MediciView,
)

TILE = 46
"""The side of a tile on offer or in a ship."""
SMALL = 26
"""The side of a tile removed or discarded (a day can set aside up to 18)."""
SEAT_HEIGHT = 58
REMOVED_PER_ROW = 11
DISCARDED_PER_ROW = 9
SHIP_LEFT = 170
TRACKS_LEFT = 610
PYRAMID_TOP = 7
BONUS_MARKS = {5: "+5", 6: "+10", 7: "+20"}
"""RULES.md §B5: the bonus for reaching the top three levels of a pyramid."""


def tile_title(tile: MediciTile) -> str:
    return f"{tile.good} {tile.value}" if tile.good else f"gold {tile.value}"


def draw_tile(
    drawn: Picture, parent: ET.Element, x: float, y: float, side: float, tile: MediciTile
) -> ET.Element:
    return piece(
        drawn,
        parent,
        x,
        y,
        side,
        side,
        good=tile.good,
        value=tile.value,
        cls="tile",
        title=tile_title(tile),
        gold=True,
    )


def small_tiles(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    per_row: int,
    tiles: Sequence[MediciTile],
    hidden: int,
    what: str,
) -> None:
    """Small tiles in rows of `per_row`: `tiles` face up, then `hidden` more face down."""
    for i in range(len(tiles) + hidden):
        left = x + (i % per_row) * (SMALL + 3)
        top = y + (i // per_row) * (SMALL + 3)
        if i < len(tiles):
            draw_tile(drawn, parent, left, top, SMALL, tiles[i])
        else:
            drawn.face_down(parent, left, top, SMALL, SMALL, title=f"a tile {what}", radius=3)


def status(view: MediciView) -> str:
    if view.game_over:
        return "Game over. " + winners_line(
            [seat.name for seat in view.seats], [seat.florins for seat in view.seats]
        )
    if view.pending_draw:
        return f"The table records {view.pending_draw}."
    return f"{view.seats[view.current_player].name} to {view.awaiting}."


def move_words(move: MediciMove, view: MediciView) -> str:
    action = move.WhichOneof("action")
    if action == "draw":
        return f"drew {move.draw.tile}"
    if action == "draw_more":
        return "draws another tile"
    if action == "close_lot":
        return "the lot goes to auction"
    if action == "bid":
        return f"bid {move.bid.florins}"
    if action == "pass_bid":
        return "pass"
    if action == "remove":
        return "a tile removed unseen"
    if action == "start_player":
        seat = move.start_player.seat
        name = view.seats[seat].name if seat < len(view.seats) else f"seat {seat + 1}"
        return f"{name} starts the day"
    return "none"


def picture(
    view: MediciView,
    last_move: MediciMove | None = None,
    approximate: str = "",
    layout: str = "wide",
) -> str:
    """RULES.md §B1-B5 as a picture: what is on the table for the view's viewer; `layout`
    "phone" in one column (`phone_picture`)."""
    check_layout(layout)
    if layout == PHONE:
        return phone_picture(view, last_move, approximate)
    seats = view.seats
    rows = max(
        -(-max(view.removed_count, len(view.removed)) // REMOVED_PER_ROW),
        -(-len(view.discarded) // DISCARDED_PER_ROW),
    )
    seat_top = 80 + max(TILE + 30, rows * (SMALL + 3)) + 30
    height: float = seat_top + max(SEAT_HEIGHT * len(seats), 250) + 30
    controls_top = height - 20
    height += controls_height(view)
    drawn = Picture(WIDTH, height, f"Medici, day {view.day} of 3")
    edition = "2016 edition" if view.edition == MEDICI_EDITION_2016 else "classic"
    header(drawn, f"Medici ({edition}) - day {view.day} of 3", status(view))
    action = last_move.WhichOneof("action") if last_move is not None else None
    if last_move is not None:
        last_move_caption(drawn, move_words(last_move, view))

    supply = drawn.group(cls="supply", title="the bag, the lot and the tiles set aside")
    bag = drawn.group(supply, cls="bag", title=f"the bag: {view.bag_size} tiles")
    drawn.text(bag, MARGIN, 72, "Bag", size=12, fill=MUTED)
    stack = pile(
        drawn,
        bag,
        MARGIN,
        80,
        TILE,
        TILE,
        count=view.bag_size,
        title=f"the bag: {view.bag_size} tiles",
    )
    drawn.touch(stack, "bag")
    if action == "draw_more":
        drawn.highlight(bag, MARGIN, 80, TILE, TILE)

    lot = drawn.group(supply, cls="lot", title=f"the lot on offer: {len(view.lot)} tiles")
    drawn.text(lot, 90, 72, "Lot on offer", size=12, fill=MUTED)
    for i, tile in enumerate(view.lot):
        draw_tile(drawn, lot, 90 + i * (TILE + 6), 80, TILE, tile)
    if not view.lot:
        drawn.rect(lot, 90, 80, TILE, TILE, fill="none", stroke=MUTED, radius=4)
    if view.high_bid:
        bidder = seats[view.high_bidder].name if view.high_bidder < len(seats) else "?"
        bid = drawn.group(lot, cls="high-bid", title=f"high bid {view.high_bid} by {bidder}")
        drawn.text(bid, 90, 146, f"high bid {view.high_bid} by {bidder}", size=12, bold=True)
    drew = last_move.draw.tile if last_move is not None and action == "draw" else ""
    if drew and view.lot and view.lot[-1].name == drew:
        drawn.highlight(lot, 90 + (len(view.lot) - 1) * (TILE + 6), 80, TILE, TILE)
    elif action == "close_lot" and view.lot:
        drawn.highlight(lot, 90, 80, len(view.lot) * (TILE + 6) - 6, TILE)

    # The table sets the day's removed tiles aside unseen; only the full view of a dealt
    # game knows them, and until all are recorded the rest are still to be removed.
    hidden = max(view.removed_count - len(view.removed), 0)
    removed = drawn.group(
        supply, cls="removed", title=f"{view.removed_count} tiles removed unseen today"
    )
    drawn.text(removed, 270, 72, f"Removed unseen today: {view.removed_count}", size=12, fill=MUTED)
    small_tiles(drawn, removed, 270, 80, REMOVED_PER_ROW, view.removed, hidden, "removed unseen")
    if action == "remove" and view.removed:
        last = len(view.removed) - 1
        drawn.highlight(
            removed,
            270 + (last % REMOVED_PER_ROW) * (SMALL + 3),
            80 + (last // REMOVED_PER_ROW) * (SMALL + 3),
            SMALL,
            SMALL,
        )
    elif action == "remove" and view.removed_count:
        # Which of the face-down tiles is the new one is itself hidden: frame them all.
        shown = min(view.removed_count, REMOVED_PER_ROW)
        rows = -(-view.removed_count // REMOVED_PER_ROW)
        drawn.highlight(removed, 270, 80, shown * (SMALL + 3) - 3, rows * (SMALL + 3) - 3)

    discarded = drawn.group(
        supply, cls="discarded", title=f"{len(view.discarded)} tiles discarded today"
    )
    drawn.text(discarded, 600, 72, f"Discarded today: {len(view.discarded)}", size=12, fill=MUTED)
    small_tiles(drawn, discarded, 600, 80, DISCARDED_PER_ROW, view.discarded, 0, "discarded")

    for seat, seat_view in enumerate(seats):
        draw_seat(drawn, view, seat, seat_view, seat_top + seat * SEAT_HEIGHT, last_move)
    goods_tracks(
        drawn,
        TRACKS_LEFT,
        seat_top - 10,
        WIDTH - MARGIN - TRACKS_LEFT,
        max(250, SEAT_HEIGHT * len(seats)),
        names=[seat.name for seat in seats],
        levels=[{level.good: level.level for level in seat.levels} for seat in seats],
        top=PYRAMID_TOP,
        marks=BONUS_MARKS,
        what="pyramid",
    )
    draw_controls(drawn, view, controls_top)
    if approximate:
        drawn.approximate_note(approximate)
    return drawn.svg()


TRAY_PER_ROW = 12
TRAY_WIDTH = (WIDTH - 2 * MARGIN) / TRAY_PER_ROW - 6
KEY = 44
"""A bid key's side: the smallest comfortable touch target (WCAG 2.5.5)."""


def tray_tiles(view: MediciView) -> list[tuple[str, int]]:
    """Issue 25, RULES.md §B2-B4: while the table must record a tile drawn (or removed
    unseen), every kind still unseen, each a tap; the start player's draw (§B5) is a seat."""
    if not view.pending_draw.startswith(("the tile", "a tile")):
        return []
    return [(unseen.tile, unseen.count) for unseen in view.unseen]


def bid_tens(view: MediciView) -> range:
    """RULES.md §B3 step 2: the tens of the bids open to the bidder (one above the high bid
    up to their florins), for the bid keypad: a bid is its tens, then its units."""
    if view.awaiting != "bid or pass" or view.current_player >= len(view.seats):
        return range(0)
    florins = view.seats[view.current_player].florins
    return range((view.high_bid + 1) // 10, florins // 10 + 1)


class Keys:
    """Where the controls go: the wide layout's, or a phone's (larger keys, fewer a row)."""

    def __init__(
        self,
        left: float = MARGIN,
        key: float = KEY,
        per_row: int = 10,
        tray_per_row: int = TRAY_PER_ROW,
        tray_width: float = TRAY_WIDTH,
        button: float = 30,
    ) -> None:
        self.left = left
        self.key = key
        self.per_row = per_row
        self.tray_per_row = tray_per_row
        self.tray_width = tray_width
        self.button = button


WIDE_KEYS = Keys()


def controls_height(view: MediciView, keys: Keys = WIDE_KEYS) -> float:
    key = keys.key
    tray = tray_tiles(view)
    if tray:
        return 30 + -(-len(tray) // keys.tray_per_row) * (key + 6)
    if view.awaiting == "bid or pass":
        tens = -(-len(bid_tens(view)) // keys.per_row)
        return keys.button + 50 + (tens + -(-10 // keys.per_row)) * (key + 6)
    if view.awaiting:
        return keys.button + key
    return 0


def draw_controls(drawn: Picture, view: MediciView, top: float, keys: Keys = WIDE_KEYS) -> None:
    """What the seat to move or the table taps (issue 25): the tray of unseen tiles, the bid
    keypad and pass, or draw (the bag) and auction."""
    left, size, per_row = keys.left, keys.key, keys.per_row
    tray = tray_tiles(view)
    if tray:
        width = keys.tray_width
        group = drawn.group(cls="tray", title="the tray: the tile the table draws")
        drawn.text(group, left, top + 18, "drawn:", size=12, fill=MUTED)
        for index, (name, count) in enumerate(tray):
            x = left + index % keys.tray_per_row * (width + 6)
            y = top + 26 + index // keys.tray_per_row * (size + 6)
            item = drawn.group(group, cls="tray-tile", title=f"tray: {name}, {count} unseen")
            drawn.rect(item, x, y, width, size, fill=PAPER, stroke=INK if count else MUTED)
            drawn.text(item, x + width / 2, y + 18, name, size=12, anchor="middle", bold=True)
            drawn.text(
                item, x + width / 2, y + 34, f"×{count}", size=10, anchor="middle", fill=MUTED
            )
            drawn.touch(item, f"tray-{name}")
        return
    group = drawn.group(cls="controls", title="controls")
    high = keys.button
    if view.awaiting == "draw or auction":
        drawn.button(group, left, top + 10, "auction the lot", "auction", height=high)
    elif view.awaiting == "pass":
        drawn.button(group, left, top + 10, "pass", "pass", height=high)
    elif view.awaiting == "bid or pass":
        drawn.button(group, left, top + 10, "pass", "pass", height=high)
        drawn.text(group, left + 104, top + high, "bid: tens, then units", size=12, fill=MUTED)
        keypad = top + high + 20
        for index, tens in enumerate(bid_tens(view)):
            x = left + index % per_row * (size + 6)
            y = keypad + index // per_row * (size + 6)
            key = drawn.group(group, cls="bid-key", title=f"bid {tens * 10} to {tens * 10 + 9}")
            drawn.rect(key, x, y, size, size, fill="#ffffff", stroke=INK, radius=6)
            drawn.text(
                key, x + size / 2, y + size / 2 + 6, f"{tens}·", size=16, anchor="middle", bold=True
            )
            drawn.touch(key, f"bid-tens-{tens}")
        rows = -(-len(bid_tens(view)) // per_row)
        for unit in range(10):
            x = left + unit % per_row * (size + 6)
            y = keypad + (rows + unit // per_row) * (size + 6)
            key = drawn.group(group, cls="bid-key", title=f"bid units {unit}")
            drawn.rect(key, x, y, size, size, fill="#ffffff", stroke=INK, radius=6)
            drawn.text(
                key, x + size / 2, y + size / 2 + 6, f"·{unit}", size=16, anchor="middle", bold=True
            )
            drawn.touch(key, f"bid-unit-{unit}")


def draw_seat(
    drawn: Picture,
    view: MediciView,
    seat: int,
    seat_view: MediciSeatView,
    y: float,
    last_move: MediciMove | None,
) -> None:
    """One player's row: name and money, the ship's spaces with their tiles, its value and
    the player's bid in the auction under way."""
    row = drawn.group(cls="seat", title=f"{seat_view.name}'s ship and money")
    deciding = not view.game_over and not view.pending_draw and seat == view.current_player
    seat_label(
        drawn,
        row,
        MARGIN,
        y,
        seat=seat,
        name=seat_view.name,
        florins=seat_view.florins,
        to_move=deciding,
    )
    ship = drawn.group(
        row,
        cls="ship",
        title=f"{seat_view.name}'s ship: {len(seat_view.ship)} of {seat_view.ship_spaces} "
        f"spaces, value {seat_view.ship_value}" + (", full" if seat_view.full else ""),
    )
    side = TILE - 6
    for space in range(max(seat_view.ship_spaces, len(seat_view.ship))):
        left = SHIP_LEFT + space * (side + 4)
        if space < len(seat_view.ship):
            draw_tile(drawn, ship, left, y + 4, side, seat_view.ship[space])
        else:
            drawn.rect(ship, left, y + 4, side, side, fill=PAPER, stroke=MUTED, radius=4)
    after = SHIP_LEFT + max(seat_view.ship_spaces, len(seat_view.ship)) * (side + 4)
    drawn.text(ship, after + 2, y + 20, f"value {seat_view.ship_value}", size=12)
    if seat_view.full:
        drawn.text(ship, after + 2, y + 36, "full", size=11, fill=MUTED)
    action = last_move.WhichOneof("action") if last_move is not None else None
    if seat_view.has_bid:
        bid = drawn.group(row, cls="bid", title=f"{seat_view.name} bid {seat_view.bid}")
        drawn.rect(bid, after + 2, y + 40, 52, 16, fill=PAPER, stroke=INK, radius=3)
        drawn.text(bid, after + 28, y + 52, f"bid {seat_view.bid}", size=11, anchor="middle")
        if (
            action == "bid"
            and last_move is not None
            and view.high_bid == last_move.bid.florins
            and view.high_bidder == seat
        ):
            drawn.highlight(bid, after + 2, y + 40, 52, 16)
    if (
        action == "draw"
        and last_move is not None
        and view.free_fill
        and seat == view.current_player
        and seat_view.ship
        and seat_view.ship[-1].name == last_move.draw.tile
    ):
        drawn.highlight(ship, SHIP_LEFT + (len(seat_view.ship) - 1) * (side + 4), y + 4, side, side)
    if action == "start_player" and last_move is not None and last_move.start_player.seat == seat:
        drawn.highlight(row, MARGIN, y, SHIP_LEFT - MARGIN - 8, SEAT_HEIGHT - 6)


# ---------------------------------------------------------------------- the phone layout

PHONE_SEAT_HEIGHT = 104
PHONE_KEYS = Keys(
    left=PHONE_MARGIN,
    key=58,
    per_row=5,
    tray_per_row=4,
    tray_width=(PHONE_WIDTH - 2 * PHONE_MARGIN) / 4 - 6,
    button=TOUCH_UNITS,
)
"""A phone's controls: keys 58 units a side, five a row; buttons and tray tiles a finger
high."""
PHONE_TRACKS_HEIGHT = 220
PHONE_SMALL_PER_ROW = 11


def phone_seat(
    drawn: Picture,
    view: MediciView,
    seat: int,
    seat_view: MediciSeatView,
    y: float,
    last_move: MediciMove | None,
) -> None:
    """`draw_seat` for a phone: the name, money and bid on a line, the ship under them."""
    row = drawn.group(cls="seat", title=f"{seat_view.name}'s ship and money")
    deciding = not view.game_over and not view.pending_draw and seat == view.current_player
    seat_label(
        drawn,
        row,
        PHONE_MARGIN,
        y,
        seat=seat,
        name=seat_view.name,
        florins=seat_view.florins,
        to_move=deciding,
        hit=(170, TOUCH_UNITS),
    )
    ship = drawn.group(
        row,
        cls="ship",
        title=f"{seat_view.name}'s ship: {len(seat_view.ship)} of {seat_view.ship_spaces} "
        f"spaces, value {seat_view.ship_value}" + (", full" if seat_view.full else ""),
    )
    side = TILE - 6
    top = y + TOUCH_UNITS + 4
    for space in range(max(seat_view.ship_spaces, len(seat_view.ship))):
        left = PHONE_MARGIN + space * (side + 4)
        if space < len(seat_view.ship):
            draw_tile(drawn, ship, left, top, side, seat_view.ship[space])
        else:
            drawn.rect(ship, left, top, side, side, fill=PAPER, stroke=MUTED, radius=4)
    after = PHONE_MARGIN + max(seat_view.ship_spaces, len(seat_view.ship)) * (side + 4)
    drawn.text(ship, after + 2, top + 16, f"value {seat_view.ship_value}", size=12)
    if seat_view.full:
        drawn.text(ship, after + 2, top + 32, "full", size=11, fill=MUTED)
    action = last_move.WhichOneof("action") if last_move is not None else None
    if seat_view.has_bid:
        bid = drawn.group(row, cls="bid", title=f"{seat_view.name} bid {seat_view.bid}")
        drawn.rect(bid, 190, y + 10, 52, 16, fill=PAPER, stroke=INK, radius=3)
        drawn.text(bid, 216, y + 22, f"bid {seat_view.bid}", size=11, anchor="middle")
        if (
            action == "bid"
            and last_move is not None
            and view.high_bid == last_move.bid.florins
            and view.high_bidder == seat
        ):
            drawn.highlight(bid, 190, y + 10, 52, 16)
    if (
        action == "draw"
        and last_move is not None
        and view.free_fill
        and seat == view.current_player
        and seat_view.ship
        and seat_view.ship[-1].name == last_move.draw.tile
    ):
        last = PHONE_MARGIN + (len(seat_view.ship) - 1) * (side + 4)
        drawn.highlight(ship, last, top, side, side)
    if action == "start_player" and last_move is not None and last_move.start_player.seat == seat:
        drawn.highlight(row, PHONE_MARGIN, y, 170, TOUCH_UNITS)


def phone_picture(
    view: MediciView, last_move: MediciMove | None = None, approximate: str = ""
) -> str:
    """`picture` laid out for a phone in portrait (issue 25): PHONE_WIDTH units wide, the
    bag and the lot, the tiles set aside, the controls, each seat's name and ship, then
    the pyramids; every touchable at least TOUCH_UNITS a side (44 CSS px fit to a 360-430
    px screen)."""
    seats = view.seats
    action = last_move.WhichOneof("action") if last_move is not None else None
    supply_top = PHONE_HEADER + 16
    removed_top = supply_top + TILE + 40
    removed_rows = max(1, -(-max(view.removed_count, len(view.removed)) // PHONE_SMALL_PER_ROW))
    discarded_top = removed_top + 20 + removed_rows * (SMALL + 3)
    discarded_rows = max(1, -(-len(view.discarded) // PHONE_SMALL_PER_ROW))
    controls_top = discarded_top + 10 + discarded_rows * (SMALL + 3)
    seats_top = controls_top + controls_height(view, PHONE_KEYS) + 10
    tracks_top = seats_top + PHONE_SEAT_HEIGHT * len(seats)
    height = tracks_top + PHONE_TRACKS_HEIGHT + 30
    drawn = Picture(PHONE_WIDTH, height, f"Medici, day {view.day} of 3")
    edition = "2016 edition" if view.edition == MEDICI_EDITION_2016 else "classic"
    phone_header(
        drawn,
        f"Medici ({edition}) - day {view.day} of 3",
        status(view),
        move_words(last_move, view) if last_move is not None else "",
    )
    supply = drawn.group(cls="supply", title="the bag, the lot and the tiles set aside")
    bag = drawn.group(supply, cls="bag", title=f"the bag: {view.bag_size} tiles")
    drawn.text(bag, PHONE_MARGIN, supply_top - 8, "Bag", size=12, fill=MUTED)
    stack = pile(
        drawn,
        bag,
        PHONE_MARGIN,
        supply_top,
        TILE,
        TILE,
        count=view.bag_size,
        title=f"the bag: {view.bag_size} tiles",
    )
    drawn.touch(stack, "bag")
    if action == "draw_more":
        drawn.highlight(bag, PHONE_MARGIN, supply_top, TILE, TILE)
    lot_left = PHONE_MARGIN + TILE + 24
    lot = drawn.group(supply, cls="lot", title=f"the lot on offer: {len(view.lot)} tiles")
    drawn.text(lot, lot_left, supply_top - 8, "Lot on offer", size=12, fill=MUTED)
    for i, tile in enumerate(view.lot):
        draw_tile(drawn, lot, lot_left + i * (TILE + 6), supply_top, TILE, tile)
    if not view.lot:
        drawn.rect(lot, lot_left, supply_top, TILE, TILE, fill="none", stroke=MUTED, radius=4)
    if view.high_bid:
        bidder = seats[view.high_bidder].name if view.high_bidder < len(seats) else "?"
        bid = drawn.group(lot, cls="high-bid", title=f"high bid {view.high_bid} by {bidder}")
        drawn.text(
            bid, lot_left, supply_top + TILE + 16, f"high bid {view.high_bid} by {bidder}",
            size=12, bold=True,
        )  # fmt: skip
    drew = last_move.draw.tile if last_move is not None and action == "draw" else ""
    if drew and view.lot and view.lot[-1].name == drew:
        last = lot_left + (len(view.lot) - 1) * (TILE + 6)
        drawn.highlight(lot, last, supply_top, TILE, TILE)
    elif action == "close_lot" and view.lot:
        drawn.highlight(lot, lot_left, supply_top, len(view.lot) * (TILE + 6) - 6, TILE)
    hidden = max(view.removed_count - len(view.removed), 0)
    removed = drawn.group(
        supply, cls="removed", title=f"{view.removed_count} tiles removed unseen today"
    )
    drawn.text(
        removed, PHONE_MARGIN, removed_top + 12, f"Removed unseen today: {view.removed_count}",
        size=12, fill=MUTED,
    )  # fmt: skip
    small_tiles(
        drawn,
        removed,
        PHONE_MARGIN,
        removed_top + 18,
        PHONE_SMALL_PER_ROW,
        view.removed,
        hidden,
        "removed unseen",
    )
    if action == "remove" and view.removed_count:
        shown = min(view.removed_count, PHONE_SMALL_PER_ROW)
        rows = -(-view.removed_count // PHONE_SMALL_PER_ROW)
        drawn.highlight(
            removed, PHONE_MARGIN, removed_top + 18, shown * (SMALL + 3) - 3, rows * (SMALL + 3) - 3
        )
    discarded = drawn.group(
        supply, cls="discarded", title=f"{len(view.discarded)} tiles discarded today"
    )
    drawn.text(
        discarded, PHONE_MARGIN + 190, removed_top + 12,
        f"Discarded today: {len(view.discarded)}", size=12, fill=MUTED,
    )  # fmt: skip
    small_tiles(
        drawn,
        discarded,
        PHONE_MARGIN,
        discarded_top,
        PHONE_SMALL_PER_ROW,
        view.discarded,
        0,
        "discarded",
    )
    draw_controls(drawn, view, controls_top, PHONE_KEYS)
    for seat, seat_view in enumerate(seats):
        phone_seat(drawn, view, seat, seat_view, seats_top + seat * PHONE_SEAT_HEIGHT, last_move)
    goods_tracks(
        drawn,
        PHONE_MARGIN + 14,
        tracks_top,
        PHONE_WIDTH - 2 * PHONE_MARGIN - 14,
        PHONE_TRACKS_HEIGHT,
        names=[seat.name for seat in seats],
        levels=[{level.good: level.level for level in seat.levels} for seat in seats],
        top=PYRAMID_TOP,
        marks=BONUS_MARKS,
        what="pyramid",
    )
    if approximate:
        drawn.approximate_note(approximate)
    return drawn.svg()
