"""The picture of a Medici: The Card Game view: the face-down deck, the market row (the last
three cards, those a player may take, numbered 1-3 from its end), each player's ship with its
hold and money, and the warehouses as five goods tracks with every player's marker. The deck's
placeholder counts and unsourced ship rewards (G-A1, G-A2) are marked approximate."""

from __future__ import annotations

import xml.etree.ElementTree as ET

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
from tablelog.v1.medici_card_game_pb2 import (
    MediciCardGameCard,
    MediciCardGameMove,
    MediciCardGameSeatView,
    MediciCardGameView,
)

CARD_WIDTH = 58
CARD_HEIGHT = 80
MARKET_LEFT = 110
MARKET_TOP = 80
TAKE_WINDOW = 3
"""RULES.md §A3 step 2: the last card placed and the two before it can be taken."""
SEAT_TOP = 220
SEAT_HEIGHT = 64
SHIP_LEFT = 170
SHIP_CARD_WIDTH = 38
SHIP_CARD_HEIGHT = 52
TRACKS_LEFT = 630
LOWEST_TRACK_TOP = 9
"""The warehouse tracks show at least levels 0-9, more when a warehouse holds more."""
FLAG = "#3a9d5d"
GREEN_NEUTRAL = ("#4f8f5f", "green")
BLACK_NEUTRAL = ("#2b2b2b", "black")
"""RULES.md §A1: the neutral cards, of no good: a green 2 (green flag) and a black 7."""


def card_title(card: MediciCardGameCard) -> str:
    words = f"{card.good} {card.value}" if card.good else f"{card.name}"
    if card.icons != 1 and card.good:
        words += f", {card.icons} icons"
    if card.green_flag:
        words += ", green flag"
    return words


def draw_card(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    width: float,
    height: float,
    card: MediciCardGameCard,
    where: str = "",
) -> ET.Element:
    """A card face up; its goods icons as dots along the top, a green flag as a pennant;
    `where` (a market position) starts its title."""
    face = piece(
        drawn,
        parent,
        x,
        y,
        width,
        height,
        good=card.good,
        value=card.value,
        cls="card",
        title=where + card_title(card),
        neutral=GREEN_NEUTRAL if card.green_flag else BLACK_NEUTRAL,
    )
    for icon in range(min(card.icons, 4) if card.good else 0):
        drawn.circle(face, x + 7 + icon * 8, y + 7, 3, fill=PAPER, stroke=INK, cls="icon")
    if card.green_flag:
        drawn.polygon(
            face,
            [(x + width - 12, y + 4), (x + width - 3, y + 8), (x + width - 12, y + 12)],
            fill=FLAG,
            stroke=INK,
            cls="green-flag",
        )
    return face


def status(view: MediciCardGameView) -> str:
    if view.game_over:
        return "Game over. " + winners_line(
            [seat.name for seat in view.seats], [seat.florins for seat in view.seats]
        )
    if view.pending_reveal:
        return f"The table records {view.pending_reveal}."
    final = " (final turn of the round)" if view.final_turn else ""
    return (
        f"{view.seats[view.current_player].name} to {view.awaiting}{final}; "
        f"revealed this turn: {view.revealed_this_turn}"
    )


def move_words(move: MediciCardGameMove, view: MediciCardGameView) -> str:
    action = move.WhichOneof("action")
    if action == "flip":
        return "turns over a card"
    if action == "reveal":
        return f"revealed {move.reveal.card}"
    if action == "take":
        return "took position " + ", ".join(str(p) for p in move.take.positions)
    if action == "start_player":
        seat = move.start_player.seat
        name = view.seats[seat].name if seat < len(view.seats) else f"seat {seat + 1}"
        return f"{name} starts the round"
    return "none"


def taker(view: MediciCardGameView) -> int | None:
    """The seat that made the take leading to this view, when the view tells it: the turn
    passes to the next seat whose ship is not full (RULES.md §A3), so the taker is the
    nearest seat before the one to move unless full ships sit between them; None when full
    ships make that ambiguous or the round ended."""
    if view.game_over or view.final_turn or view.pending_reveal.startswith("who starts"):
        return None
    seats = view.seats
    before = (view.current_player - 1) % len(seats)
    if before == view.current_player or seats[before].full or not seats[before].ship:
        return None
    return before


def approximate_words(view: MediciCardGameView, approximate: str) -> str:
    """What the picture marks approximate: the view's own notes and the caller's."""
    notes = []
    if view.deck_unverified:
        notes.append("deck copy counts are unverified placeholders (G-A1)")
    if view.ship_rewards_approximate:
        rewards = "/".join(str(r) for r in view.ship_rewards)
        notes.append(f"ship rewards {rewards} unsourced for {len(view.seats)} players (G-A2)")
    if approximate:
        notes.append(approximate)
    return "; ".join(notes)


def picture(
    view: MediciCardGameView,
    last_move: MediciCardGameMove | None = None,
    approximate: str = "",
    layout: str = "wide",
) -> str:
    """RULES.md §A2-A4 as a picture: the table as every viewer sees it (only the deck's
    order is hidden); `layout` "phone" in one column (`phone_picture`)."""
    check_layout(layout)
    if layout == PHONE:
        return phone_picture(view, last_move, approximate)
    seats = view.seats
    height = SEAT_TOP + max(SEAT_HEIGHT * len(seats), 250) + 30
    tray = tray_kinds(view)
    tray_top = height - 20
    if tray:
        height += 30 + -(-len(tray) // TRAY_PER_ROW) * (TRAY_HEIGHT + 6)
    drawn = Picture(WIDTH, height, f"Medici: The Card Game, round {view.round} of 3")
    header(drawn, f"Medici: The Card Game - round {view.round} of 3", status(view))
    action = last_move.WhichOneof("action") if last_move is not None else None
    if last_move is not None:
        last_move_caption(drawn, move_words(last_move, view))

    deck = drawn.group(cls="deck", title=f"the deck: {_cards(view.deck_size)} face down")
    drawn.text(deck, MARGIN, MARGIN + 56, "Deck", size=12, fill=MUTED)
    stack = pile(
        drawn,
        deck,
        MARGIN,
        MARKET_TOP,
        CARD_WIDTH,
        CARD_HEIGHT,
        count=view.deck_size,
        title=f"the deck: {_cards(view.deck_size)}",
    )
    drawn.touch(stack, "deck")
    if action == "flip":
        drawn.highlight(deck, MARGIN, MARKET_TOP, CARD_WIDTH, CARD_HEIGHT)
    if view.boxed:
        boxed = drawn.group(deck, cls="boxed", title=f"{_cards(view.boxed)} returned to the box")
        drawn.text(boxed, MARGIN, MARKET_TOP + CARD_HEIGHT + 34, f"boxed {view.boxed}", size=11)

    draw_market(drawn, view, last_move)
    for seat, seat_view in enumerate(seats):
        draw_seat(drawn, view, seat, seat_view, SEAT_TOP + seat * SEAT_HEIGHT, last_move)
    goods_tracks(
        drawn,
        TRACKS_LEFT,
        SEAT_TOP - 10,
        WIDTH - MARGIN - TRACKS_LEFT,
        max(250, SEAT_HEIGHT * len(seats)),
        names=[seat.name for seat in seats],
        levels=[{count.good: count.icons for count in seat.warehouse} for seat in seats],
        top=max(LOWEST_TRACK_TOP, *(count.icons for seat in seats for count in seat.warehouse)),
        marks={},
        what="warehouse",
    )
    if tray:
        draw_tray(drawn, tray, tray_top)
    marked = approximate_words(view, approximate)
    if marked:
        drawn.approximate_note(marked)
    return drawn.svg()


TRAY_PER_ROW = 12
TRAY_WIDTH = (WIDTH - 2 * MARGIN) / TRAY_PER_ROW - 6
TRAY_HEIGHT = 36


def tray_kinds(view: MediciCardGameView) -> list[tuple[str, int]]:
    """Issue 25, RULES.md §A3 step 1: while the table must record the card turned over,
    every kind of card (with its unseen copies): naming it is a tap on the tray. A kind
    with no copy left is drawn too, greyed: a lenient table recording may still name it."""
    # The start player's draw (§A5) is the other pending decision; its words differ.
    if not view.pending_reveal.startswith("the card "):
        return []
    return [(unseen.card, unseen.count) for unseen in view.unseen]


def draw_tray(
    drawn: Picture,
    kinds: list[tuple[str, int]],
    top: float,
    *,
    left: float = MARGIN,
    per_row: int = TRAY_PER_ROW,
    width: float = TRAY_WIDTH,
    height: float = TRAY_HEIGHT,
) -> None:
    tray = drawn.group(cls="tray", title="the tray: the card the table turned over")
    drawn.text(tray, left, top + 18, "turned over:", size=12, fill=MUTED)
    below = (height - TRAY_HEIGHT) / 2
    for index, (name, count) in enumerate(kinds):
        x = left + index % per_row * (width + 6)
        y = top + 26 + index // per_row * (height + 6)
        item = drawn.group(tray, cls="tray-card", title=f"tray: {name}, {count} unseen")
        drawn.rect(item, x, y, width, height, fill=PAPER, stroke=INK if count else MUTED)
        drawn.text(item, x + width / 2, y + 16 + below, name, size=12, anchor="middle", bold=True)
        drawn.text(
            item, x + width / 2, y + 30 + below, f"×{count}", size=10, anchor="middle", fill=MUTED
        )
        drawn.touch(item, f"tray-{name}")


def draw_market(
    drawn: Picture, view: MediciCardGameView, last_move: MediciCardGameMove | None
) -> None:
    """The market row, first placed on the left; cards overlap when the row outgrows the
    picture, the last three (the ones within reach) always whole and numbered."""
    market = drawn.group(cls="market", title=f"the market: {_cards(len(view.market))}")
    drawn.text(
        market, MARKET_LEFT, MARGIN + 56, "Market (take from the right)", size=12, fill=MUTED
    )
    room = WIDTH - MARGIN - MARKET_LEFT - CARD_WIDTH
    step = min(CARD_WIDTH + 6, room / max(1, len(view.market) - 1))
    size = len(view.market)
    for i, card in enumerate(view.market):
        x = MARKET_LEFT + i * step
        position = size - i
        where = f"market {position}: " if position <= TAKE_WINDOW else ""
        face = draw_card(drawn, market, x, MARKET_TOP, CARD_WIDTH, CARD_HEIGHT, card, where)
        if position <= TAKE_WINDOW:
            drawn.touch(face, f"market-{position}")
            drawn.text(
                market, x + CARD_WIDTH / 2, MARKET_TOP + CARD_HEIGHT + 16, str(position),
                size=12, anchor="middle", bold=True, cls="position",
            )  # fmt: skip
    if not view.market:
        drawn.rect(
            market, MARKET_LEFT, MARKET_TOP, CARD_WIDTH, CARD_HEIGHT, fill="none",
            stroke=MUTED, radius=4,
        )  # fmt: skip
    if (
        last_move is not None
        and last_move.WhichOneof("action") == "reveal"
        and view.market
        and view.market[-1].name == last_move.reveal.card
    ):
        drawn.highlight(
            market, MARKET_LEFT + (size - 1) * step, MARKET_TOP, CARD_WIDTH, CARD_HEIGHT
        )


def draw_seat(
    drawn: Picture,
    view: MediciCardGameView,
    seat: int,
    seat_view: MediciCardGameSeatView,
    y: float,
    last_move: MediciCardGameMove | None,
    *,
    left: float = MARGIN,
    ship_left: float = SHIP_LEFT,
    ship_right: float = TRACKS_LEFT - 80,
    hit: tuple[float, float] = (0, 0),
    ship_top: float = 4,
) -> None:
    """One player's row: name and money, the ship's cards, its hold and value (the ship
    between `ship_left` and `ship_right`, `ship_top` below `y`; `hit`, the seat's touch
    area on a phone)."""
    ship_y = y + ship_top
    row = drawn.group(cls="seat", title=f"{seat_view.name}'s ship and money")
    deciding = not view.game_over and not view.pending_reveal and seat == view.current_player
    seat_label(
        drawn,
        row,
        left,
        y,
        seat=seat,
        name=seat_view.name,
        florins=seat_view.florins,
        to_move=deciding,
        hit=hit,
    )
    ship = drawn.group(
        row,
        cls="ship",
        title=f"{seat_view.name}'s ship: hold {seat_view.hold_used} of "
        f"{seat_view.hold_capacity}, value {seat_view.ship_value}"
        + (", full" if seat_view.full else ""),
    )
    cards = len(seat_view.ship)
    # Green-flag cards take no hold space: the empty spaces are what the hold has left.
    slots = cards + max(seat_view.hold_capacity - seat_view.hold_used, 0)
    room = ship_right - ship_left
    step = min(SHIP_CARD_WIDTH + 4, (room - SHIP_CARD_WIDTH) / max(1, slots - 1))
    for slot in range(slots):
        x = ship_left + slot * step
        if slot < cards:
            draw_card(
                drawn, ship, x, ship_y, SHIP_CARD_WIDTH, SHIP_CARD_HEIGHT, seat_view.ship[slot]
            )
        else:
            drawn.rect(
                ship, x, ship_y, SHIP_CARD_WIDTH, SHIP_CARD_HEIGHT, fill=PAPER, stroke=MUTED,
                radius=4,
            )  # fmt: skip
    after = ship_left + max(slots - 1, 0) * step + SHIP_CARD_WIDTH + 6
    drawn.text(
        ship, after, ship_y + 16, f"hold {seat_view.hold_used}/{seat_view.hold_capacity}", size=12
    )
    drawn.text(ship, after, ship_y + 32, f"value {seat_view.ship_value}", size=12)
    if seat_view.full:
        drawn.text(ship, after, ship_y + 48, "full", size=11, fill=MUTED)
    action = last_move.WhichOneof("action") if last_move is not None else None
    if action == "take" and last_move is not None and taker(view) == seat:
        taken = min(len(last_move.take.positions), cards)
        first = cards - taken
        drawn.highlight(
            ship,
            ship_left + first * step,
            ship_y,
            (taken - 1) * step + SHIP_CARD_WIDTH,
            SHIP_CARD_HEIGHT,
        )
    if action == "start_player" and last_move is not None and last_move.start_player.seat == seat:
        width = hit[0] if hit[0] else ship_left - left - 8
        drawn.highlight(row, left, y, width, hit[1] if hit[0] else SEAT_HEIGHT - 6)


def _cards(count: int) -> str:
    """ "1 card", "2 cards" (issue 26: "1 cards")."""
    return f"{count} card{'' if count == 1 else 's'}"


# ---------------------------------------------------------------------- the phone layout

PHONE_MARKET_LEFT = PHONE_MARGIN + CARD_WIDTH + 10
PHONE_SEAT_HEIGHT = TOUCH_UNITS + 4 + SHIP_CARD_HEIGHT + 10
PHONE_TRAY_PER_ROW = 4
PHONE_TRAY_WIDTH = (PHONE_WIDTH - 2 * PHONE_MARGIN) / PHONE_TRAY_PER_ROW - 6
PHONE_TRACKS_HEIGHT = 250


def phone_market(
    drawn: Picture, view: MediciCardGameView, last_move: MediciCardGameMove | None, top: float
) -> None:
    """`draw_market` across a phone's width: the three cards within reach whole at the
    right, a finger wide each, the earlier ones overlapping to their left."""
    market = drawn.group(cls="market", title=f"the market: {_cards(len(view.market))}")
    drawn.text(
        market, PHONE_MARKET_LEFT, top - 8, "Market (take from the right)", size=12, fill=MUTED
    )
    size = len(view.market)
    whole = CARD_WIDTH + 4
    reach_left = PHONE_WIDTH - PHONE_MARGIN - TAKE_WINDOW * whole + 4
    earlier = max(size - TAKE_WINDOW, 0)
    room = reach_left - PHONE_MARKET_LEFT - 4
    step = min(whole, room / max(1, earlier)) if earlier else whole
    places: list[float] = []
    for i in range(size):
        position = size - i
        if position <= TAKE_WINDOW:
            places.append(reach_left + (TAKE_WINDOW - position) * whole)
        else:
            places.append(PHONE_MARKET_LEFT + i * step)
    for i, card in enumerate(view.market):
        x = places[i]
        position = size - i
        where = f"market {position}: " if position <= TAKE_WINDOW else ""
        face = draw_card(drawn, market, x, top, CARD_WIDTH, CARD_HEIGHT, card, where)
        if position <= TAKE_WINDOW:
            drawn.touch(face, f"market-{position}")
            drawn.text(
                market, x + CARD_WIDTH / 2, top + CARD_HEIGHT + 16, str(position),
                size=12, anchor="middle", bold=True, cls="position",
            )  # fmt: skip
    if not view.market:
        drawn.rect(
            market, reach_left, top, CARD_WIDTH, CARD_HEIGHT, fill="none", stroke=MUTED, radius=4
        )
    if (
        last_move is not None
        and last_move.WhichOneof("action") == "reveal"
        and view.market
        and view.market[-1].name == last_move.reveal.card
    ):
        drawn.highlight(market, places[-1], top, CARD_WIDTH, CARD_HEIGHT)


def phone_picture(
    view: MediciCardGameView, last_move: MediciCardGameMove | None = None, approximate: str = ""
) -> str:
    """`picture` laid out for a phone in portrait (issue 25): PHONE_WIDTH units wide, the
    deck and the market, each seat's row, the warehouses under them, then the tray; every
    touchable at least TOUCH_UNITS a side (44 CSS px fit to a 360-430 px screen)."""
    seats = view.seats
    market_top = PHONE_HEADER + 20
    seats_top = market_top + CARD_HEIGHT + 30
    tracks_top = seats_top + PHONE_SEAT_HEIGHT * len(seats) + 10
    height = tracks_top + PHONE_TRACKS_HEIGHT + 16
    tray = tray_kinds(view)
    tray_top = height - 20
    if tray:
        height += 30 + -(-len(tray) // PHONE_TRAY_PER_ROW) * (TOUCH_UNITS + 6)
    drawn = Picture(PHONE_WIDTH, height, f"Medici: The Card Game, round {view.round} of 3")
    phone_header(
        drawn,
        f"Medici: The Card Game - round {view.round} of 3",
        status(view),
        move_words(last_move, view) if last_move is not None else "",
    )
    action = last_move.WhichOneof("action") if last_move is not None else None
    deck = drawn.group(cls="deck", title=f"the deck: {_cards(view.deck_size)} face down")
    drawn.text(deck, PHONE_MARGIN, market_top - 8, "Deck", size=12, fill=MUTED)
    stack = pile(
        drawn,
        deck,
        PHONE_MARGIN,
        market_top,
        CARD_WIDTH,
        CARD_HEIGHT,
        count=view.deck_size,
        title=f"the deck: {_cards(view.deck_size)}",
    )
    drawn.touch(stack, "deck")
    if action == "flip":
        drawn.highlight(deck, PHONE_MARGIN, market_top, CARD_WIDTH, CARD_HEIGHT)
    if view.boxed:
        boxed = drawn.group(deck, cls="boxed", title=f"{_cards(view.boxed)} returned to the box")
        drawn.text(
            boxed, PHONE_MARGIN + CARD_WIDTH, market_top + CARD_HEIGHT + 14,
            f"boxed {view.boxed}", size=11, anchor="end",
        )  # fmt: skip
    phone_market(drawn, view, last_move, market_top)
    for seat, seat_view in enumerate(seats):
        draw_seat(
            drawn,
            view,
            seat,
            seat_view,
            seats_top + seat * PHONE_SEAT_HEIGHT,
            last_move,
            left=PHONE_MARGIN,
            ship_left=PHONE_MARGIN,
            ship_right=PHONE_WIDTH - 70,
            hit=(180, TOUCH_UNITS),
            ship_top=TOUCH_UNITS + 4,
        )
    goods_tracks(
        drawn,
        PHONE_MARGIN + 14,
        tracks_top,
        PHONE_WIDTH - 2 * PHONE_MARGIN - 14,
        PHONE_TRACKS_HEIGHT,
        names=[seat.name for seat in seats],
        levels=[{count.good: count.icons for count in seat.warehouse} for seat in seats],
        top=max(LOWEST_TRACK_TOP, *(count.icons for seat in seats for count in seat.warehouse)),
        marks={},
        what="warehouse",
    )
    if tray:
        draw_tray(
            drawn,
            tray,
            tray_top,
            left=PHONE_MARGIN,
            per_row=PHONE_TRAY_PER_ROW,
            width=PHONE_TRAY_WIDTH,
            height=TOUCH_UNITS,
        )
    marked = approximate_words(view, approximate)
    if marked:
        drawn.approximate_note(marked)
    return drawn.svg()
