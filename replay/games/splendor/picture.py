"""Splendor's picture: the SVG of a view (issue 13), drawn with `tablelog.replay.picture`.

Left, the nobles on offer above the market (level 3 at the top, as on the table), each level's
deck face down with its count beside its four slots; in the middle, the bank's six piles;
right, one panel per player: prestige (cards + nobles), tokens, card bonuses, reserved cards
(another player's blind reserve face down, RULES.md §4C, E13) and nobles. Drawn from the view
only: what the viewer may not see is not in it. The last move is framed where it shows: the
bank piles it took from or returned to, the market slot or deck it reserved or bought from, the
card a reveal turned up, the noble it took.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Final

from tablelog.replay.games.splendor.components import GEMS, LETTERS
from tablelog.replay.picture import (
    INK,
    MUTED,
    PAPER,
    PHONE,
    PHONE_WIDTH,
    TOUCH_UNITS,
    Picture,
    check_layout,
    fitted,
)
from tablelog.v1.splendor_pb2 import (
    SplendorCard,
    SplendorMove,
    SplendorNoble,
    SplendorPlayerView,
    SplendorTokens,
    SplendorView,
)

COLOURS: Final = (*GEMS, "gold")
"""Token colours in the view's field order (SplendorTokens: white ... black, gold)."""
FILL: Final = {
    "white": "#f4f1ea",
    "blue": "#2f5fb3",
    "green": "#2e8b57",
    "red": "#c0392b",
    "black": "#3a3a3a",
    "gold": "#d9b23a",
}
ON_LIGHT: Final = frozenset({"white", "gold"})
"""Colours light enough that their numbers are written in ink rather than in paper colour."""

WIDTH: Final = 880
CARD_W: Final = 70
CARD_H: Final = 96
GAP: Final = 10
MARKET_X: Final = 10
NOBLES_Y: Final = 34
NOBLE_SIZE: Final = 58
MARKET_Y: Final = NOBLES_Y + NOBLE_SIZE + 16
BANK_X: Final = MARKET_X + 5 * (CARD_W + GAP) + 16
TOKEN_R: Final = 17
PANEL_X: Final = BANK_X + 2 * TOKEN_R + 28
PANEL_W: Final = WIDTH - PANEL_X - 10
PANEL_H: Final = 118
MINI_W: Final = 40
MINI_H: Final = 62


def _ink(colour: str) -> str:
    return INK if colour in ON_LIGHT else PAPER


def _counts(tokens: SplendorTokens) -> tuple[int, ...]:
    return tuple(getattr(tokens, colour) for colour in COLOURS)


def _colour_of(gem: int) -> str:
    """A SplendorGem value (1 white ... 6 gold) as a colour name; 0 (unset) as gold's neighbour
    would mislead, so it reads "unknown"."""
    return COLOURS[gem - 1] if 1 <= gem <= len(COLOURS) else "unknown"


def _cost_words(tokens: SplendorTokens) -> str:
    return ", ".join(f"{n} {c}" for c, n in zip(COLOURS, _counts(tokens), strict=True) if n)


def _card_title(card: SplendorCard) -> str:
    points = f"{card.points} point{'s' if card.points != 1 else ''}" if card.points else "no points"
    return (
        f"level {card.level} card: {_colour_of(card.bonus)} bonus, {points}; "
        f"costs {_cost_words(card.cost) or 'nothing'}"
    )


def _card(
    drawn: Picture, parent: ET.Element, x: float, y: float, card: SplendorCard, title: str = ""
) -> ET.Element:
    """A face-up card: its bonus colour along the top with its points, its cost below."""
    colour = _colour_of(card.bonus)
    face = drawn.group(parent, cls=f"card level-{card.level}", title=title + _card_title(card))
    drawn.rect(face, x, y, CARD_W, CARD_H, fill=PAPER, stroke=INK, radius=5)
    drawn.rect(face, x, y, CARD_W, 26, fill=FILL.get(colour, MUTED), stroke=INK, radius=5)
    if card.points:
        drawn.text(face, x + 6, y + 20, str(card.points), size=18, bold=True, fill=_ink(colour))
    drawn.text(face, x + CARD_W - 5, y + 19, colour, size=10, anchor="end", fill=_ink(colour))
    row = 0
    for name, count in zip(COLOURS, _counts(card.cost), strict=True):
        if not count:
            continue
        cy = y + CARD_H - 12 - 16 * row
        drawn.circle(face, x + 13, cy, 7, fill=FILL[name], stroke=INK, cls="cost")
        drawn.text(face, x + 13, cy + 4, str(count), size=10, anchor="middle", fill=_ink(name))
        row += 1
    return face


def _mini_card(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    card: SplendorCard,
    cls: str = "reserved-card",
    title: str = "",
) -> ET.Element:
    """A reserved card at a smaller size: its bonus colour, points and cost as text."""
    colour = _colour_of(card.bonus)
    face = drawn.group(
        parent, cls=f"card {cls} level-{card.level}", title=title + _card_title(card)
    )
    drawn.rect(face, x, y, MINI_W, MINI_H, fill=PAPER, stroke=INK, radius=3)
    drawn.rect(face, x, y, MINI_W, 16, fill=FILL.get(colour, MUTED), stroke=INK, radius=3)
    if card.points:
        drawn.text(face, x + 4, y + 12, str(card.points), size=11, bold=True, fill=_ink(colour))
    line = 0
    for name, count in zip(COLOURS, _counts(card.cost), strict=True):
        if count:
            drawn.text(face, x + 5, y + 27 + 9 * line, f"{count} {name}", size=8)
            line += 1
    return face


def _noble(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    noble: SplendorNoble,
    touch: str = "",
) -> None:
    title = f"noble: {noble.points} points for card bonuses of {_cost_words(noble.requires)}"
    tile = drawn.group(parent, cls="noble", title=title)
    if touch:
        drawn.touch(tile, touch)
    drawn.rect(tile, x, y, NOBLE_SIZE, NOBLE_SIZE, fill="#efe3c8", stroke=INK, radius=4)
    drawn.text(tile, x + 6, y + 18, str(noble.points), size=16, bold=True)
    row = 0
    for name, count in zip(COLOURS, _counts(noble.requires), strict=True):
        if count:
            drawn.rect(
                tile,
                x + NOBLE_SIZE - 22,
                y + 4 + 13 * row,
                18,
                12,
                fill=FILL[name],
                stroke=INK,
                cls="requirement",
            )
            drawn.text(
                tile,
                x + NOBLE_SIZE - 13,
                y + 14 + 13 * row,
                str(count),
                size=10,
                anchor="middle",
                fill=_ink(name),
            )
            row += 1


def _token(
    drawn: Picture,
    parent: ET.Element,
    cx: float,
    cy: float,
    r: float,
    colour: str,
    count: int,
    owner: str,
    touch: str,
) -> None:
    title = f"{owner}: {count} {colour}"
    drawn.touch(
        drawn.circle(
            parent, cx, cy, r, fill=FILL[colour], stroke=INK, cls=f"token {colour}", title=title
        ),
        touch,
    )
    drawn.text(
        parent, cx, cy + r * 0.35, str(count), size=r, anchor="middle", bold=True, fill=_ink(colour)
    )


def _status(view: SplendorView) -> str:
    if view.game_over:
        return "game over"
    if view.pending_reveal:
        return f"the table must {view.pending_reveal}"
    seat = view.current_player
    name = view.players[seat].name if seat < len(view.players) else "?"
    ending = "; final round" if view.final_round else ""
    return f"{name} to play ({view.awaiting or 'action'}){ending}"


def _mover(view: SplendorView) -> int:
    """The seat that made a buy from its hand, the last move: its turn continues only while a
    noble choice is pending (a buy adds no token to return), else the turn passed on."""
    players = len(view.players)
    if view.awaiting == "noble" and not view.pending_reveal:
        return view.current_player
    return (view.current_player - 1) % players if players else 0


class _Marks:
    """Where the last move shows, worked out from the move alone (and the view for who made a
    buy from the hand): what `picture` frames as it draws."""

    def __init__(self, view: SplendorView, move: SplendorMove | None) -> None:
        self.bank: set[str] = set()
        self.slot: tuple[int, int] | None = None
        self.deck = 0
        self.noble = 0
        self.card = 0
        self.purchased_by: int | None = None
        if move is None:
            return
        action = move.WhichOneof("action")
        if action == "take_different":
            self.bank.update(_colour_of(g) for g in move.take_different.gems)
        elif action == "take_same":
            self.bank.add(_colour_of(move.take_same.gem))
        elif action == "discard":
            self.bank.update(
                c for c, n in zip(COLOURS, _counts(move.discard.tokens), strict=True) if n
            )
        elif action == "reserve":
            if move.reserve.slot:
                self.slot = (move.reserve.level, move.reserve.slot)
            else:
                self.deck = move.reserve.level
        elif action == "buy":
            if move.buy.level:
                self.slot = (move.buy.level, move.buy.slot)
            elif move.buy.card:
                self.card = move.buy.card
            else:
                self.purchased_by = _mover(view)
        elif action == "reveal_card":
            if move.reveal_card.slot:
                self.slot = (move.reveal_card.level, move.reveal_card.slot)
            else:
                self.card = move.reveal_card.card
        elif action == "reveal_noble":
            self.noble = move.reveal_noble.noble
        elif action == "choose_noble":
            self.noble = move.choose_noble.noble
        self.bank.update(c for c, n in zip(COLOURS, _counts(move.returned), strict=True) if n)
        self.noble = self.noble or move.noble
        self.bank.discard("unknown")


def _market(
    drawn: Picture, view: SplendorView, marks: _Marks, parent: ET.Element | None = None
) -> None:
    market = drawn.group(parent, cls="market", title="the market")
    for row_index, row in enumerate(sorted(view.market, key=lambda r: -r.level)):
        y = MARKET_Y + row_index * (CARD_H + GAP)
        level = drawn.group(market, cls=f"level level-{row.level}", title=f"level {row.level}")
        deck_title = f"level {row.level} deck: {_cards(row.deck_size)}"
        if row.deck_size:
            deck = drawn.face_down(level, MARKET_X, y, CARD_W, CARD_H, title=deck_title)
            deck.set("class", "face-down deck")
        else:
            deck = drawn.group(level, cls="deck empty", title=deck_title)
            drawn.rect(deck, MARKET_X, y, CARD_W, CARD_H, fill="none", stroke=MUTED, radius=4)
        drawn.touch(deck, f"deck-{row.level}")
        drawn.text(
            deck,
            MARKET_X + CARD_W / 2,
            y + CARD_H / 2 + 6,
            str(row.deck_size),
            size=18,
            anchor="middle",
            bold=True,
            fill=PAPER if row.deck_size else MUTED,
        )
        if marks.deck == row.level:
            drawn.highlight(level, MARKET_X, y, CARD_W, CARD_H)
        for slot_index, card in enumerate(row.slots, start=1):
            x = MARKET_X + slot_index * (CARD_W + GAP)
            where = f"slot {row.level}.{slot_index}"
            if card.id:
                face = _card(drawn, level, x, y, card, f"{where}: ")
            else:
                face = drawn.group(level, cls="empty-slot", title=f"{where}: empty")
                drawn.rect(face, x, y, CARD_W, CARD_H, fill="none", stroke=MUTED, radius=5)
            drawn.touch(face, f"slot-{row.level}.{slot_index}")
            if marks.slot == (row.level, slot_index):
                drawn.highlight(level, x, y, CARD_W, CARD_H)


def _nobles(
    drawn: Picture, view: SplendorView, marks: _Marks, parent: ET.Element | None = None
) -> None:
    offer = drawn.group(parent, cls="nobles", title="the nobles on offer")
    for index, noble in enumerate(view.nobles):
        x = MARKET_X + index * (NOBLE_SIZE + GAP)
        _noble(drawn, offer, x, NOBLES_Y, noble, f"noble-{noble.id}")
        if marks.noble == noble.id:
            drawn.highlight(offer, x, NOBLES_Y, NOBLE_SIZE, NOBLE_SIZE)
    if view.nobles_to_reveal:
        drawn.text(
            offer,
            MARKET_X + len(view.nobles) * (NOBLE_SIZE + GAP),
            NOBLES_Y + 34,
            f"{view.nobles_to_reveal} to reveal",
            size=12,
            fill=MUTED,
        )


def _bank(drawn: Picture, view: SplendorView, marks: _Marks) -> None:
    bank = drawn.group(cls="bank", title="the bank")
    cx = BANK_X + TOKEN_R
    drawn.text(bank, cx, MARKET_Y - 4, "bank", size=12, anchor="middle", fill=MUTED)
    for index, (colour, count) in enumerate(zip(COLOURS, _counts(view.bank), strict=True)):
        cy = MARKET_Y + TOKEN_R + 4 + index * (2 * TOKEN_R + 12)
        _token(drawn, bank, cx, cy, TOKEN_R, colour, count, "bank", f"bank-{LETTERS[index]}")
        if colour in marks.bank:
            drawn.highlight(bank, cx - TOKEN_R, cy - TOKEN_R, 2 * TOKEN_R, 2 * TOKEN_R)


def _player(
    drawn: Picture, view: SplendorView, seat: int, player: SplendorPlayerView, marks: _Marks
) -> None:
    y = NOBLES_Y + seat * (PANEL_H + 8)
    turn = seat == view.current_player and not view.game_over and not view.pending_reveal
    panel = drawn.group(cls="player", title=f"{player.name}: {player.prestige} prestige")
    drawn.rect(
        panel,
        PANEL_X,
        y,
        PANEL_W,
        PANEL_H,
        fill="#ffffff" if turn else PAPER,
        stroke=INK,
        stroke_width=2.5 if turn else 1,
        radius=6,
    )
    first = " (first)" if seat == view.first_player else ""
    drawn.text(
        panel, PANEL_X + 8, y + 18, f"{player.name}{first}", size=14, bold=True, cls="player-name"
    )
    points = drawn.group(
        panel,
        cls="prestige",
        title=f"{player.prestige} prestige: {player.card_points} from cards, "
        f"{player.noble_points} from nobles",
    )
    drawn.text(
        points,
        PANEL_X + 8,
        y + 36,
        f"{player.prestige} prestige · {_cards(len(player.purchased))}",
        size=11,
        fill=MUTED,
    )
    tokens = drawn.group(panel, cls="tokens", title=f"{player.name}'s tokens")
    for index, (colour, count) in enumerate(zip(COLOURS, _counts(player.tokens), strict=True)):
        _token(
            drawn,
            tokens,
            PANEL_X + 20 + index * 28,
            y + 56,
            12,
            colour,
            count,
            player.name,
            f"p{seat + 1}-tokens-{LETTERS[index]}",
        )
    bonuses = drawn.group(panel, cls="bonuses", title=f"{player.name}'s card bonuses")
    drawn.touch(bonuses, f"p{seat + 1}-bonuses")
    for index, (colour, count) in enumerate(
        zip(COLOURS[:5], _counts(player.bonuses)[:5], strict=True)
    ):
        bx = PANEL_X + 9 + index * 28
        title = f"{count} {colour} bonus"
        drawn.rect(
            bonuses,
            bx,
            y + 78,
            22,
            28,
            fill=FILL[colour],
            stroke=INK,
            radius=2,
            cls=f"bonus {colour}",
            title=title,
        )
        drawn.text(
            bonuses,
            bx + 11,
            y + 97,
            str(count),
            size=13,
            anchor="middle",
            bold=True,
            fill=_ink(colour),
        )
    if marks.purchased_by == seat or (
        marks.card and any(c.id == marks.card for c in player.purchased)
    ):
        drawn.highlight(panel, PANEL_X + 9, y + 78, 5 * 28 - 6, 28)
    hand = drawn.group(panel, cls="reserved", title=f"{player.name}'s reserved cards")
    drawn.touch(hand, f"p{seat + 1}-reserved")
    rx = PANEL_X + 180
    # The reserve's own target: the cards' group holds no area of its own while it is empty.
    area = drawn.rect(hand, rx - 4, y + 4, 3 * (MINI_W + 6) + 2, MINI_H + 20, fill=PAPER, radius=3)
    area.set("fill-opacity", "0")
    for index, held in enumerate(player.reserved):
        x = rx + index * (MINI_W + 6)
        ry = y + 8
        mine = f"p{seat + 1}-hand-{index + 1}"
        if held.card.id:
            drawn.touch(
                _mini_card(drawn, hand, x, ry, held.card, title=f"reserved card {index + 1}: "),
                mine,
            )
        elif held.hidden:
            back = drawn.face_down(
                hand,
                x,
                ry,
                MINI_W,
                MINI_H,
                title=f"a level-{held.level} card reserved blind",
                radius=3,
            )
            drawn.touch(back, mine)
        else:
            unnamed = drawn.group(
                hand,
                cls="unknown-card",
                title=f"a level-{held.level} card reserved blind, not yet named",
            )
            drawn.touch(unnamed, mine)
            drawn.rect(unnamed, x, ry, MINI_W, MINI_H, fill="none", stroke=MUTED, radius=3)
            drawn.text(
                unnamed,
                x + MINI_W / 2,
                ry + MINI_H / 2 + 4,
                "?",
                size=14,
                anchor="middle",
                fill=MUTED,
            )
        drawn.text(
            hand,
            x + MINI_W / 2,
            ry + MINI_H + 11,
            f"L{held.level}",
            size=9,
            anchor="middle",
            fill=MUTED,
        )
        if marks.card and held.card.id == marks.card:
            drawn.highlight(hand, x, ry, MINI_W, MINI_H)
    owned = drawn.group(panel, cls="player-nobles", title=f"{player.name}'s nobles")
    for index, noble in enumerate(player.nobles):
        nx = rx + 3 * (MINI_W + 6) + 4 + index // 4 * 24
        ny = y + 8 + index % 4 * 24
        tile = drawn.group(
            owned,
            cls="noble owned",
            title=f"noble: {noble.points} points ({_cost_words(noble.requires)})",
        )
        drawn.rect(tile, nx, ny, 20, 20, fill="#efe3c8", stroke=INK, radius=2)
        drawn.text(tile, nx + 10, ny + 14, str(noble.points), size=11, anchor="middle")
        if marks.noble == noble.id:
            drawn.highlight(owned, nx, ny, 20, 20)


TRAY_PER_ROW: Final = (WIDTH - 20) // (MINI_W + 6)


def _tray_height(view: SplendorView) -> float:
    items = len(view.unseen_cards) + len(view.unseen_nobles)
    rows = -(-items // TRAY_PER_ROW)
    return 24 + rows * (MINI_H + 8) if items else 0


def _tray(
    drawn: Picture,
    view: SplendorView,
    top: float,
    parent: ET.Element | None = None,
    per_row: int = TRAY_PER_ROW,
) -> None:
    """Issue 25: what the table may turn up (or the seat to move may name), each a tap."""
    tray = drawn.group(parent, cls="tray", title="the tray: what may still be unseen")
    drawn.text(tray, 10, top + 16, "may be turned up:", size=12, fill=MUTED)
    for index, card in enumerate(view.unseen_cards):
        x = 10 + index % per_row * (MINI_W + 6)
        y = top + 24 + index // per_row * (MINI_H + 8)
        face = _mini_card(drawn, tray, x, y, card, cls="tray-card", title="tray: ")
        drawn.touch(face, f"tray-card-{card.id}")
    for offset, noble in enumerate(view.unseen_nobles):
        index = len(view.unseen_cards) + offset
        x = 10 + index % per_row * (MINI_W + 6)
        y = top + 24 + index // per_row * (MINI_H + 8)
        title = f"tray: noble, {noble.points} points for {_cost_words(noble.requires)}"
        tile = drawn.group(tray, cls="noble tray-noble", title=title)
        drawn.rect(tile, x, y, MINI_W, MINI_H, fill="#efe3c8", stroke=INK, radius=3)
        drawn.text(tile, x + 5, y + 14, str(noble.points), size=12, bold=True)
        line = 0
        for name, count in zip(COLOURS, _counts(noble.requires), strict=True):
            if count:
                drawn.text(tile, x + 5, y + 27 + 9 * line, f"{count} {name}", size=8)
                line += 1
        drawn.touch(tile, f"tray-noble-{noble.id}")


def picture(
    view: SplendorView,
    last_move: SplendorMove | None = None,
    approximate: str = "",
    layout: str = "wide",
) -> str:
    """The picture of `view`; `last_move` framed where it shows; `approximate` noted;
    `layout` "phone" lays it out in one column (`phone_picture`)."""
    check_layout(layout)
    if layout == PHONE:
        return phone_picture(view, last_move, approximate)
    marks = _Marks(view, last_move)
    players_height = NOBLES_Y + len(view.players) * (PANEL_H + 8)
    market_height = MARKET_Y + 3 * (CARD_H + GAP) + (40 if view.awaiting == "action" else 0)
    tray_top = max(players_height, market_height)
    height = tray_top + _tray_height(view) + (24 if approximate else 8)
    drawn = Picture(WIDTH, height, f"Splendor: {_status(view)}")
    drawn.text(drawn.root, 10, 22, f"Splendor: {_status(view)}", size=15, bold=True, cls="status")
    _nobles(drawn, view, marks)
    _market(drawn, view, marks)
    _bank(drawn, view, marks)
    for seat, player in enumerate(view.players):
        _player(drawn, view, seat, player, marks)
    if view.awaiting == "action":
        # RULES.md E7: a seat that can do nothing else passes.
        controls = drawn.group(cls="controls", title="controls")
        drawn.button(controls, BANK_X - 5, MARKET_Y + 3 * (CARD_H + GAP) + 4, "pass", "pass")
    if view.unseen_cards or view.unseen_nobles:
        _tray(drawn, view, tray_top)
    if approximate:
        drawn.approximate_note(approximate)
    return drawn.svg()


def _cards(count: int) -> str:
    """ "1 card", "2 cards" (issue 26: "1 cards")."""
    return f"{count} card{'' if count == 1 else 's'}"


# ---------------------------------------------------------------------- the phone layout

PHONE_MARGIN: Final = 6
PHONE_MARKET: Final = (PHONE_WIDTH - 2 * PHONE_MARGIN) / (5 * (CARD_W + GAP) - GAP)
"""The market's scale on a phone: its five columns (the deck and four slots) across the
picture, a card 57 x 79 units (56 x 77 CSS px on a 360 px phone)."""
PHONE_TOKEN_R: Final = TOUCH_UNITS / 2
PHONE_STEP: Final = (PHONE_WIDTH - 2 * PHONE_MARGIN) / 6
"""Six piles across the picture (the bank's, a seat's tokens)."""
PHONE_MINI: Final = TOUCH_UNITS / MINI_W + 0.1
"""A reserved or tray card on a phone: 48 x 74 units."""
PHONE_TRAY_PER_ROW: Final = 6
PHONE_PANEL_H: Final = 56 + 2 * (TOUCH_UNITS + 8) + MINI_H * PHONE_MINI + 22


def _phone_bank(drawn: Picture, view: SplendorView, marks: _Marks, top: float) -> None:
    """The bank's six piles in a row, each a finger wide."""
    bank = drawn.group(cls="bank", title="the bank")
    drawn.text(bank, PHONE_MARGIN, top + 12, "bank", size=12, fill=MUTED)
    cy = top + 18 + PHONE_TOKEN_R
    for index, (colour, count) in enumerate(zip(COLOURS, _counts(view.bank), strict=True)):
        cx = PHONE_MARGIN + PHONE_STEP * (index + 0.5)
        r = PHONE_TOKEN_R
        _token(drawn, bank, cx, cy, r, colour, count, "bank", f"bank-{LETTERS[index]}")
        if colour in marks.bank:
            drawn.highlight(bank, cx - r, cy - r, 2 * r, 2 * r)


def _phone_player(
    drawn: Picture,
    view: SplendorView,
    seat: int,
    player: SplendorPlayerView,
    marks: _Marks,
    y: float,
) -> None:
    """A seat's panel across the picture, below the board: its tokens and bonuses in rows of
    a finger's size, its reserved cards and nobles under them (the same ids and names as
    the wide layout's panel)."""
    x, width = PHONE_MARGIN, PHONE_WIDTH - 2 * PHONE_MARGIN
    turn = seat == view.current_player and not view.game_over and not view.pending_reveal
    panel = drawn.group(cls="player", title=f"{player.name}: {player.prestige} prestige")
    drawn.rect(
        panel,
        x,
        y,
        width,
        PHONE_PANEL_H,
        fill="#ffffff" if turn else PAPER,
        stroke=INK,
        stroke_width=2.5 if turn else 1,
        radius=6,
    )
    first = " (first)" if seat == view.first_player else ""
    name = fitted(f"{player.name}{first}", width / 2, 14)
    drawn.text(panel, x + 8, y + 18, name, size=14, bold=True, cls="player-name")
    points = drawn.group(
        panel,
        cls="prestige",
        title=f"{player.prestige} prestige: {player.card_points} from cards, "
        f"{player.noble_points} from nobles",
    )
    drawn.text(
        points,
        x + 8,
        y + 36,
        f"{player.prestige} prestige · {_cards(len(player.purchased))}",
        size=11,
        fill=MUTED,
    )
    tokens = drawn.group(panel, cls="tokens", title=f"{player.name}'s tokens")
    row = y + 44
    for index, (colour, count) in enumerate(zip(COLOURS, _counts(player.tokens), strict=True)):
        _token(
            drawn,
            tokens,
            x + PHONE_STEP * (index + 0.5),
            row + PHONE_TOKEN_R,
            PHONE_TOKEN_R,
            colour,
            count,
            player.name,
            f"p{seat + 1}-tokens-{LETTERS[index]}",
        )
    row += TOUCH_UNITS + 8
    bonuses = drawn.group(panel, cls="bonuses", title=f"{player.name}'s card bonuses")
    drawn.touch(bonuses, f"p{seat + 1}-bonuses")
    for index, (colour, count) in enumerate(
        zip(COLOURS[:5], _counts(player.bonuses)[:5], strict=True)
    ):
        bx = x + PHONE_STEP * index + 4
        drawn.rect(
            bonuses,
            bx,
            row,
            PHONE_STEP - 8,
            TOUCH_UNITS,
            fill=FILL[colour],
            stroke=INK,
            radius=2,
            cls=f"bonus {colour}",
            title=f"{count} {colour} bonus",
        )
        drawn.text(
            bonuses,
            bx + (PHONE_STEP - 8) / 2,
            row + TOUCH_UNITS / 2 + 6,
            str(count),
            size=16,
            anchor="middle",
            bold=True,
            fill=_ink(colour),
        )
    if marks.purchased_by == seat or (
        marks.card and any(c.id == marks.card for c in player.purchased)
    ):
        drawn.highlight(panel, x + 4, row, 5 * PHONE_STEP - 8, TOUCH_UNITS)
    row += TOUCH_UNITS + 8
    hand = drawn.group(panel, cls="reserved", title=f"{player.name}'s reserved cards")
    drawn.touch(hand, f"p{seat + 1}-reserved")
    mini_w, mini_h = MINI_W * PHONE_MINI, MINI_H * PHONE_MINI
    area = drawn.rect(hand, x + 4, row - 2, 3 * (mini_w + 8) + 4, mini_h + 16, fill=PAPER, radius=3)
    area.set("fill-opacity", "0")
    for index, held in enumerate(player.reserved):
        left = x + 8 + index * (mini_w + 8)
        place = drawn.group(hand, cls="place", x=left, y=row, scale=PHONE_MINI)
        mine = f"p{seat + 1}-hand-{index + 1}"
        if held.card.id:
            drawn.touch(
                _mini_card(drawn, place, 0, 0, held.card, title=f"reserved card {index + 1}: "),
                mine,
            )
        elif held.hidden:
            back = drawn.face_down(
                place,
                0,
                0,
                MINI_W,
                MINI_H,
                title=f"a level-{held.level} card reserved blind",
                radius=3,
            )
            drawn.touch(back, mine)
        else:
            unnamed = drawn.group(
                place,
                cls="unknown-card",
                title=f"a level-{held.level} card reserved blind, not yet named",
            )
            drawn.touch(unnamed, mine)
            drawn.rect(unnamed, 0, 0, MINI_W, MINI_H, fill="none", stroke=MUTED, radius=3)
            drawn.text(
                unnamed, MINI_W / 2, MINI_H / 2 + 4, "?", size=14, anchor="middle", fill=MUTED
            )
        drawn.text(
            hand,
            left + mini_w / 2,
            row + mini_h + 11,
            f"L{held.level}",
            size=9,
            anchor="middle",
            fill=MUTED,
        )
        if marks.card and held.card.id == marks.card:
            drawn.highlight(hand, left, row, mini_w, mini_h)
    owned = drawn.group(panel, cls="player-nobles", title=f"{player.name}'s nobles")
    for index, noble in enumerate(player.nobles):
        nx = x + 8 + 3 * (mini_w + 8) + 8 + index // 3 * 28
        ny = row + index % 3 * 26
        tile = drawn.group(
            owned,
            cls="noble owned",
            title=f"noble: {noble.points} points ({_cost_words(noble.requires)})",
        )
        drawn.rect(tile, nx, ny, 22, 22, fill="#efe3c8", stroke=INK, radius=2)
        drawn.text(tile, nx + 11, ny + 15, str(noble.points), size=11, anchor="middle")
        if marks.noble == noble.id:
            drawn.highlight(owned, nx, ny, 22, 22)


def phone_picture(
    view: SplendorView, last_move: SplendorMove | None = None, approximate: str = ""
) -> str:
    """`picture` laid out for a phone in portrait (issue 25): PHONE_WIDTH units wide, the
    nobles, the market (its five columns across), the bank in a row and pass, then each
    seat's panel, then the tray; every touchable at least TOUCH_UNITS a side, so fit to a
    360-430 px screen it is at least 44 CSS px (WCAG 2.5.5)."""
    marks = _Marks(view, last_move)
    top = 30.0
    nobles_top = top
    top += NOBLE_SIZE + 12
    market_top = top
    top += (3 * (CARD_H + GAP) - GAP) * PHONE_MARKET + 12
    bank_top = top
    top += 18 + TOUCH_UNITS + 10
    pass_top = top
    if view.awaiting == "action":
        top += TOUCH_UNITS + 10
    players_top = top
    top += len(view.players) * (PHONE_PANEL_H + 8)
    tray_top = top
    items = len(view.unseen_cards) + len(view.unseen_nobles)
    if items:
        rows = -(-items // PHONE_TRAY_PER_ROW)
        top += (24 + rows * (MINI_H + 8)) * PHONE_MINI
    height = top + (24 if approximate else 8)
    drawn = Picture(PHONE_WIDTH, height, f"Splendor: {_status(view)}")
    status = fitted(f"Splendor: {_status(view)}", PHONE_WIDTH - 2 * PHONE_MARGIN, 14)
    drawn.text(drawn.root, PHONE_MARGIN, 20, status, size=14, bold=True, cls="status")
    # The wide layout's nobles, market and tray, moved (and the market scaled) into place.
    nobles = drawn.group(cls="place", x=PHONE_MARGIN - MARKET_X, y=nobles_top - NOBLES_Y)
    _nobles(drawn, view, marks, nobles)
    market = drawn.group(
        cls="place",
        x=PHONE_MARGIN - MARKET_X * PHONE_MARKET,
        y=market_top - MARKET_Y * PHONE_MARKET,
        scale=PHONE_MARKET,
    )
    _market(drawn, view, marks, market)
    _phone_bank(drawn, view, marks, bank_top)
    if view.awaiting == "action":
        # RULES.md E7: a seat that can do nothing else passes.
        controls = drawn.group(cls="controls", title="controls")
        drawn.button(controls, PHONE_MARGIN, pass_top, "pass", "pass", width=96, height=TOUCH_UNITS)
    for seat, player in enumerate(view.players):
        _phone_player(drawn, view, seat, player, marks, players_top + seat * (PHONE_PANEL_H + 8))
    if items:
        tray = drawn.group(
            cls="place",
            x=PHONE_MARGIN - 10 * PHONE_MINI,
            y=tray_top - tray_top * PHONE_MINI,
            scale=PHONE_MINI,
        )
        _tray(drawn, view, tray_top, tray, PHONE_TRAY_PER_ROW)
    if approximate:
        drawn.approximate_note(approximate)
    return drawn.svg()
