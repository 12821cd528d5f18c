"""Mercado de Lisboa as a picture (issue 13 item 1): the 5 x 5 market with its stands,
restaurants and restaurant marks, the customer tiles at the 20 entrances, the stand display,
the customer tiles on offer with their piles, the bag, and every player's coins, stand tiles
and restaurants; in a solo game the stage and the campaign. Drawn from the view alone, so a
seat's hidden coins (rules §2 step 8) are drawn face down, as are the restaurants nobody has
turned over yet (§2 step 2)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tablelog.replay.games.mercado_de_lisboa.components import (
    ENTRANCES,
    GOODS,
    MARKS,
    RESTAURANT_COPIES,
    RESTAURANTS,
    SIZE,
    SPACES,
)
from tablelog.replay.picture import (
    HIGHLIGHT,
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
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

WIDTH = 900
CELL = 64
ENTRANCE_DEPTH = 56
TILE_W, TILE_H = 50, 44
"""A customer tile, the same size at an entrance and on offer."""
BOARD_X, BOARD_Y = 16, 58
GRID_X, GRID_Y = BOARD_X + ENTRANCE_DEPTH, BOARD_Y + ENTRANCE_DEPTH
PANEL_X = GRID_X + SIZE * CELL + ENTRANCE_DEPTH + 28
PLAYERS_Y = GRID_Y + SIZE * CELL + ENTRANCE_DEPTH + 20
PLAYER_H = 62
LINE_H = 16

MAX_PLAYERS = 4
MAX_DISPLAY = 3
MAX_OFFER_TILES = 3
MAX_HAND_TILES = 8
"""Stand tiles in front of a player are bounded by the wooden stands (§1: 8 per colour)."""
MAX_DEAD_TILES = 12
MAX_HELD = MARKS + 1
MAX_RULES_TEXT = 600
NOTE_CHARACTERS = 140
"""What the approximate note's one line holds at 11 px across the picture's width."""
RULES_LINE_CHARACTERS = 135
"""A line of a solo stage's rules at 11 px across the picture's width."""
FACE_DOWN_RESTAURANT = pb.MERCADO_DE_LISBOA_RESTAURANT_UNSPECIFIED
"""How a view gives a restaurant whose type nobody has seen yet."""

GOOD_COLOURS = ("#2f6fb5", "#c8509a", "#d23c2a", "#8a4b2a", "#6b3f98")
UNKNOWN_COLOUR = "#b8b2a4"
RESTAURANT_LABELS = ("sushi", "tea", "pizza", "burger", "wine", "pub")
PUB_COLOUR = "#c9962b"
SEAT_COLOURS = ("#f08a24", "#2a9d8f", "#e9c93a", "#f4f4f4")
COIN_GOLD = "#e3b93f"
MARKET_FLOOR = "#eee4cf"
TILE_PAPER = "#fffaf0"

Place = tuple[float, float, float, float]
TRAY_PER_ROW = (WIDTH - 2 * BOARD_X) // (TILE_W + 6)


def tile_id(tile: pb.MercadoDeLisboaCustomerTile) -> str:
    """A customer tile kind as a touch id: `2-fish+flower` (goods in the canonical order)."""
    return f"{tile.customers}-" + "+".join(_good_name(g) for g in sorted(tile.goods))


def _good_name(good: int) -> str:
    return GOODS[good - 1] if 1 <= good <= len(GOODS) else "unknown good"


def _good_colour(good: int) -> str:
    return GOOD_COLOURS[good - 1] if 1 <= good <= len(GOODS) else UNKNOWN_COLOUR


def _restaurant_name(restaurant: int) -> str:
    if not 1 <= restaurant <= len(RESTAURANTS):
        return "unknown restaurant"
    name = RESTAURANTS[restaurant - 1].replace("_", " ")
    if restaurant == len(RESTAURANTS):
        return f"{name} (every good)"
    return f"{name} ({GOODS[restaurant - 1]})"


def _restaurant_colour(restaurant: int) -> str:
    if restaurant == len(RESTAURANTS):
        return PUB_COLOUR
    return _good_colour(restaurant)


def _player_name(view: pb.MercadoDeLisboaView, seat: int) -> str:
    if 0 <= seat < min(len(view.players), MAX_PLAYERS):
        return view.players[seat].name[:40] or f"seat {seat + 1}"
    return f"seat {seat + 1}"


def _seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat] if 0 <= seat < len(SEAT_COLOURS) else UNKNOWN_COLOUR


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _shortened(words: str, characters: int) -> str:
    return words if len(words) <= characters else words[: characters - 1].rstrip() + "…"


def _wrapped(words: str, width: int) -> list[str]:
    """`words` cut into lines of at most `width` characters, at spaces."""
    lines: list[str] = []
    line = ""
    for word in words.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def _solo_rules_lines(
    view: pb.MercadoDeLisboaView, characters: int = RULES_LINE_CHARACTERS
) -> list[str]:
    return _wrapped(view.solo.rules[:MAX_RULES_TEXT], characters)


def _solo_height(view: pb.MercadoDeLisboaView) -> float:
    return 64 + len(_solo_rules_lines(view)) * LINE_H + 8


class _Drawing:
    """One picture being drawn, with where each place a move can touch was drawn."""

    def __init__(
        self,
        view: pb.MercadoDeLisboaView,
        height: float,
        width: float = WIDTH,
        *,
        entrance: float = 0,
    ) -> None:
        self.view = view
        self.drawn = Picture(width, height, "Mercado de Lisboa")
        self.places: dict[str, Place] = {}
        self.place_groups: dict[str, ET.Element] = {}
        """The group a place was drawn in, when not the picture's own (a phone's market is
        drawn in a group of its own, scaled): the last move's frame goes in it too."""
        # The market's geometry: the wide layout's, or with square entrance tiles of side
        # `entrance` (a phone's, drawn at the origin and scaled into place).
        self.tile_w: float = entrance or TILE_W
        self.tile_h: float = entrance or TILE_H
        self.depth = entrance + 2 if entrance else ENTRANCE_DEPTH
        self.board_x, self.board_y = (0, 0) if entrance else (BOARD_X, BOARD_Y)
        self.grid_x, self.grid_y = self.board_x + self.depth, self.board_y + self.depth

    # ------------------------------------------------------------------ small components

    def stand_tile(
        self, parent: ET.Element, x: float, y: float, size: float, good: int, *, cls: str
    ) -> ET.Element:
        tile = self.drawn.group(parent, cls=cls, title=f"{_good_name(good)} stand tile")
        self.drawn.rect(tile, x, y, size, size, fill=_good_colour(good), stroke=INK, radius=3)
        label = _good_name(good) if size >= 40 else _good_name(good)[:2]
        self.drawn.text(
            tile, x + size / 2, y + size / 2 + 4, label, size=10, fill=PAPER, anchor="middle"
        )
        return tile

    def wooden_stand(
        self, parent: ET.Element, x: float, y: float, seat: int, *, numbered: bool = True
    ) -> None:
        """A player's wooden stand: a little roof in the seat's colour, numbered with the
        seat on the market (in front of the player it is plainly theirs)."""
        roof = ((x, y + 6), (x + 8, y), (x + 16, y + 6), (x + 16, y + 14), (x, y + 14))
        self.drawn.polygon(parent, roof, fill=_seat_colour(seat), stroke=INK, cls="wooden-stand")
        if numbered:
            self.drawn.text(parent, x + 8, y + 12.5, str(seat + 1), size=8, anchor="middle")

    def restaurant(
        self, parent: ET.Element, cx: float, cy: float, r: float, restaurant: int, where: str
    ) -> ET.Element:
        if restaurant == FACE_DOWN_RESTAURANT:
            holder = self.drawn.group(parent, cls="restaurant")
            self.drawn.face_down(
                holder,
                cx - r,
                cy - r,
                2 * r,
                2 * r,
                radius=r,
                title=f"a face-down restaurant {where} (its type not yet seen)",
            )
            return holder
        name = _restaurant_name(restaurant)
        disc = self.drawn.group(parent, cls="restaurant", title=f"{name} {where}")
        colour = _restaurant_colour(restaurant)
        self.drawn.circle(disc, cx, cy, r, fill=TILE_PAPER, stroke=colour, stroke_width=4)
        label = RESTAURANT_LABELS[restaurant - 1] if restaurant <= len(RESTAURANTS) else "?"
        self.drawn.text(disc, cx, cy + 3.5, label, size=10 if r >= 20 else 8, anchor="middle")
        return disc

    def customer_tile(
        self,
        parent: ET.Element,
        x: float,
        y: float,
        tile: pb.MercadoDeLisboaCustomerTile,
        where: str,
        *,
        cls: str = "customer-tile",
        size: tuple[float, float] = (TILE_W, TILE_H),
    ) -> ET.Element:
        customers = min(tile.customers, 4)
        tile_w, tile_h = size
        goods = list(tile.goods[: len(GOODS)])
        wanted = " and ".join(_good_name(g) for g in goods) or "no good"
        title = f"{_plural(customers, 'customer')} wanting {wanted} {where}"
        card = self.drawn.group(parent, cls=cls, title=title)
        self.drawn.rect(card, x, y, tile_w, tile_h, fill=TILE_PAPER, stroke=INK, radius=4)
        people = f"{customers} {'•' * customers}"
        self.drawn.text(card, x + 6, y + 17, people, size=13, bold=True)
        swatch = (tile_w - 8) / max(len(goods), 1)
        for index, good in enumerate(goods):
            left = x + 4 + index * swatch
            self.drawn.rect(card, left, y + 24, swatch - 2, 15, fill=_good_colour(good), radius=2)
            self.drawn.text(
                card,
                left + swatch / 2 - 1,
                y + 35,
                _good_name(good)[:2],
                size=9,
                fill=PAPER,
                anchor="middle",
            )
        return card

    # ------------------------------------------------------------------ the market

    def market(self, parent: ET.Element | None = None) -> None:
        view = self.view
        board = self.drawn.group(
            parent, cls="market", title="the market: 5 x 5 spaces, 20 entrances"
        )
        if parent is not None:
            self.place_groups["market"] = board
        self.drawn.rect(
            board,
            self.grid_x - 4,
            self.grid_y - 4,
            SIZE * CELL + 8,
            SIZE * CELL + 8,
            fill=INK,
            radius=4,
        )
        mark_title = "restaurant mark" + (" (position approximate)" if view.approximate else "")
        for index, space in enumerate(view.spaces[:SPACES]):
            row, column = divmod(index, SIZE)
            x, y = self.grid_x + column * CELL, self.grid_y + row * CELL
            self.places[f"space {index}"] = (x, y, CELL, CELL)
            name = space.name[:4] or f"{'abcde'[column]}{row + 1}"
            # The market has hundreds of components: the spaces and empty entrances are
            # shapes titled themselves rather than groups, which keeps the picture fast.
            self.drawn.touch(
                self.drawn.rect(
                    board,
                    x + 1,
                    y + 1,
                    CELL - 2,
                    CELL - 2,
                    fill=MARKET_FLOOR,
                    cls="space",
                    title=f"space {name}",
                ),
                f"space-{name}",
            )
            self.drawn.text(board, x + 4, y + 11, name, size=8, fill=MUTED)
            middle_x, middle_y = x + CELL / 2, y + CELL / 2
            kind = space.kind
            if kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_STAND:
                owner = _player_name(view, space.owner)
                stand = self.drawn.group(
                    board, cls="stand", title=f"{_good_name(space.good)} stand of {owner} on {name}"
                )
                self.stand_tile(stand, x + 10, y + 12, 44, space.good, cls="stand-tile")
                self.wooden_stand(stand, x + CELL - 20, y + CELL - 18, space.owner)
            elif kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_RESTAURANT:
                self.restaurant(board, middle_x, middle_y + 2, 24, space.restaurant, f"on {name}")
            elif kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_FACE_DOWN_RESTAURANT:
                self.restaurant(
                    board, middle_x, middle_y + 2, 24, FACE_DOWN_RESTAURANT, f"on {name}"
                )
            elif space.restaurant_mark:
                self.drawn.rect(
                    board,
                    middle_x - 8,
                    middle_y - 6,
                    16,
                    16,
                    fill="none",
                    stroke=MUTED,
                    stroke_width=2,
                    cls="restaurant-mark",
                    title=mark_title,
                )
        for index, entrance in enumerate(view.entrances[:ENTRANCES]):
            left, top = self.entrance_place(index)
            self.places[f"entrance {index}"] = (left, top, self.tile_w, self.tile_h)
            name = entrance.name[:4]
            if entrance.empty:
                empty = self.drawn.rect(
                    board,
                    left,
                    top,
                    self.tile_w,
                    self.tile_h,
                    fill=PAPER,
                    stroke=MUTED,
                    radius=4,
                    cls="entrance",
                    title=f"entrance {name}, empty",
                )
                self.drawn.touch(empty, f"entrance-{name}")
                self.drawn.text(
                    board,
                    left + self.tile_w / 2,
                    top + self.tile_h / 2 + 4,
                    name,
                    size=11,
                    fill=MUTED,
                    anchor="middle",
                )
            else:
                self.drawn.touch(
                    self.customer_tile(
                        board,
                        left,
                        top,
                        entrance.tile,
                        f"at entrance {name}",
                        cls="customer-tile entrance",
                        size=(self.tile_w, self.tile_h),
                    ),
                    f"entrance-{name}",
                )

    def entrance_place(self, index: int) -> tuple[float, float]:
        """Entrances n1..n5, s1..s5, w1..w5, e1..e5 in the view's (and the proto's) order."""
        side, line = divmod(index, SIZE)
        across = (CELL - self.tile_w) / 2 if side < 2 else (CELL - self.tile_h) / 2
        gap = (self.depth - (self.tile_h if side < 2 else self.tile_w)) / 2
        if side == 0:
            return self.grid_x + line * CELL + across, self.board_y + gap
        if side == 1:
            return self.grid_x + line * CELL + across, self.grid_y + SIZE * CELL + gap
        if side == 2:
            return self.board_x + gap, self.grid_y + line * CELL + across
        return self.grid_x + SIZE * CELL + gap, self.grid_y + line * CELL + across

    # ------------------------------------------------------------------ the supply

    def supply(self) -> None:
        view = self.view
        x, y = PANEL_X, BOARD_Y
        display = self.drawn.group(cls="display", title="the stand display")
        self.drawn.text(display, x, y + 10, "Stand display", size=12, bold=True)
        if view.choosing_display_tile:
            self.drawn.text(display, x + 100, y + 10, "(a tile to choose)", size=11, fill=MUTED)
        marked: set[str] = set()
        for slot in range(MAX_DISPLAY):
            left = x + slot * 48
            if slot < len(view.display):
                tile = self.stand_tile(
                    display, left, y + 18, 42, view.display[slot], cls="stand-tile"
                )
                # Two tiles of a good are one choice: the first carries the touch.
                self.mark_once(tile, f"display-{_good_name(view.display[slot])}", marked)
            else:
                self.drawn.rect(display, left, y + 18, 42, 42, fill="none", stroke=MUTED, radius=3)
        self.places["display"] = (x, y + 18, 3 * 48 - 6, 42)

        y += 80
        offers = self.drawn.group(cls="customers", title="customer tiles on offer")
        self.drawn.text(offers, x, y + 10, "Customers on offer", size=12, bold=True)
        for index, offer in enumerate(view.customers[:4]):
            top = y + 18 + index * (TILE_H + 8)
            size = min(offer.customers, 4)
            row = self.drawn.group(offers, cls="customer-offer", title=f"{size}-customer tiles")
            self.drawn.text(row, x, top + TILE_H / 2 + 4, f"{size}", size=14, bold=True)
            for slot, offered in enumerate(offer.available[:MAX_OFFER_TILES]):
                left = x + 20 + slot * (TILE_W + 6)
                drawn_tile = self.customer_tile(row, left, top, offered, "on offer")
                self.mark_once(drawn_tile, f"offer-{tile_id(offered)}", marked)
            pile_x = x + 20 + MAX_OFFER_TILES * (TILE_W + 6) + 8
            if offer.pile:
                self.drawn.face_down(
                    row,
                    pile_x,
                    top,
                    TILE_W,
                    TILE_H,
                    title=f"{_plural(offer.pile, 'tile')} left in the {size}-customer pile",
                )
            self.drawn.text(row, pile_x + TILE_W + 6, top + TILE_H / 2 + 4, f"pile {offer.pile}")
            self.places[f"offer {size}"] = (x + 14, top, pile_x + TILE_W - x - 14, TILE_H)

        y += 18 + 4 * (TILE_H + 8) + 8
        bag = self.drawn.group(cls="bag", title="stand tiles in the bag")
        self.drawn.text(bag, x, y + 10, "Bag", size=12, bold=True)
        for index, count in enumerate(view.bag[: len(GOODS)]):
            left = x + 34 + index * 74
            pile = self.drawn.group(bag, cls="bag-good", title=f"bag: {count} {GOODS[index]}")
            self.drawn.rect(pile, left - 2, y - 3, 72, 20, fill=TILE_PAPER, radius=3)
            self.drawn.rect(pile, left, y, 14, 14, fill=GOOD_COLOURS[index], radius=2)
            self.drawn.text(pile, left + 17, y + 11, f"{GOODS[index]} {count}", size=10)
            self.drawn.touch(pile, f"bag-{GOODS[index]}")
        self.places["bag"] = (x, y - 2, 34 + len(GOODS) * 74, 18)

        y += 30
        unseen = self.drawn.group(
            cls="unseen-restaurants", title="face-down restaurants not yet turned over, by type"
        )
        self.drawn.text(unseen, x, y + 10, "Not yet turned over", size=12, bold=True)
        for index, count in enumerate(view.unseen_restaurants[: len(RESTAURANTS)]):
            left = x + index * 68
            restaurant = index + 1
            kind = self.drawn.group(
                unseen, cls="unseen-restaurant", title=f"{_restaurant_name(restaurant)}: {count}"
            )
            self.drawn.rect(kind, left, y + 18, 64, 24, fill=PAPER, radius=3)
            self.drawn.circle(
                kind,
                left + 10,
                y + 30,
                9,
                fill=TILE_PAPER,
                stroke=_restaurant_colour(restaurant),
                stroke_width=3,
            )
            label = f"{RESTAURANT_LABELS[index]} {min(count, RESTAURANT_COPIES)}"
            self.drawn.text(kind, left + 22, y + 34, label, size=10)
            self.drawn.touch(kind, f"unseen-{RESTAURANT_LABELS[index]}")
        self.places["unseen restaurants"] = (x, y + 18, len(RESTAURANTS) * 68, 24)
        self.controls(x, y + 50)

    def mark_once(self, element: ET.Element, touch_id: str, marked: set[str]) -> None:
        """Touch-mark `element` unless an equal component already carries `touch_id`."""
        if touch_id not in marked:
            marked.add(touch_id)
            self.drawn.touch(element, touch_id)

    def controls(self, x: float, y: float) -> None:
        """Issue 25: the choices that are no component, as buttons: put back three
        identical stand tiles in front of you, or three identical display tiles (§4.5)."""
        view = self.view
        group = self.drawn.group(cls="controls", title="controls")
        if len(view.display) == 3 and len(set(view.display)) == 1:
            self.drawn.button(group, x, y, "refresh the display", "refresh")
        seat = view.to_move
        if 0 <= seat < len(view.players):
            tiles = list(view.players[seat].stand_tiles)
            if any(tiles.count(good) >= 3 for good in set(tiles)):
                self.drawn.button(group, x + 170, y, "swap my 3 tiles", "swap")

    # ------------------------------------------------------------------ the players

    def players(self) -> None:
        view = self.view
        for seat, player in enumerate(view.players[:MAX_PLAYERS]):
            top = PLAYERS_Y + seat * PLAYER_H
            name = _player_name(view, seat)
            moving = view.to_move == seat and not view.over
            title = f"{name}, seat {seat + 1}" + (", to move" if moving else "")
            row = self.drawn.group(cls="player", title=title)
            self.drawn.rect(
                row,
                BOARD_X,
                top,
                WIDTH - 2 * BOARD_X,
                PLAYER_H - 6,
                fill="#f4efe3",
                stroke=HIGHLIGHT if moving else MUTED,
                stroke_width=2 if moving else 1,
                radius=6,
            )
            self.wooden_stand(row, BOARD_X + 8, top + 10, seat)
            self.drawn.text(row, BOARD_X + 30, top + 22, name, size=13, bold=True)
            if moving:
                self.drawn.text(row, BOARD_X + 30, top + 40, "to move", size=11, fill=MUTED)
            self.coins(row, BOARD_X + 190, top + PLAYER_H / 2 - 3, player, name, seat)
            left = BOARD_X + 226
            marked: set[str] = set()
            for good in player.stand_tiles[:MAX_HAND_TILES]:
                tile = self.stand_tile(row, left, top + 10, 34, good, cls="stand-tile")
                self.mark_once(tile, f"p{seat + 1}-stand-{_good_name(good)}", marked)
                self.wooden_stand(tile, left + 22, top + 32, seat, numbered=False)
                left += 40
            for good in player.dead_tiles[:MAX_DEAD_TILES]:
                dead = self.drawn.group(
                    row, cls="dead-tile", title=f"{_good_name(good)} stand tile without a stand"
                )
                self.drawn.rect(dead, left, top + 16, 24, 24, fill=_good_colour(good), radius=3)
                self.drawn.line(
                    dead, left, top + 16, left + 24, top + 40, stroke=PAPER, stroke_width=2
                )
                left += 28
            left += 8
            for restaurant in player.restaurants[:MAX_HELD]:
                disc = self.restaurant(
                    row, left + 16, top + PLAYER_H / 2 - 3, 16, restaurant, f"held by {name}"
                )
                if restaurant != FACE_DOWN_RESTAURANT and restaurant <= len(RESTAURANTS):
                    label = RESTAURANT_LABELS[restaurant - 1]
                    self.mark_once(disc, f"p{seat + 1}-restaurant-{label}", marked)
                left += 38
            counts = (
                f"{player.stands_on_market} on the market, "
                f"{_plural(player.wooden_stands_left, 'wooden stand')} left"
            )
            self.drawn.text(
                row, WIDTH - BOARD_X - 10, top + PLAYER_H - 14, counts, size=11, anchor="end"
            )

    def coins(
        self,
        parent: ET.Element,
        cx: float,
        cy: float,
        player: pb.MercadoDeLisboaPlayerView,
        name: str,
        seat: int,
        r: float = 17,
    ) -> None:
        purse = self.drawn.group(parent, cls="coins")
        # Issue 25: a seat takes 1 coin (§4.4) by tapping its purse.
        self.drawn.touch(purse, f"p{seat + 1}-coins")
        if not player.money_visible:
            self.drawn.face_down(
                purse,
                cx - r,
                cy - r,
                2 * r,
                2 * r,
                radius=r,
                title=f"{name}'s coins, hidden behind the screen",
            )
            return
        ET.SubElement(purse, "title").text = f"{name}'s coins: {player.money}"
        self.drawn.circle(purse, cx, cy, r, fill=COIN_GOLD, stroke=INK)
        self.drawn.text(purse, cx, cy + 5, str(player.money), size=14, bold=True, anchor="middle")

    # ------------------------------------------------------------------ status and solo

    def status(self) -> None:
        view = self.view
        words = ["money " + ("hidden" if view.money_hidden else "open")]
        if view.over:
            words.insert(0, "game over")
        elif view.pending_reveal:
            words.insert(0, "the table: " + view.pending_reveal[:120])
        elif view.choosing_display_tile:
            words.insert(0, f"{_player_name(view, view.to_move)} takes a tile from the display")
        elif 0 <= view.to_move < len(view.players):
            words.insert(0, f"{_player_name(view, view.to_move)} to move")
        if view.end_triggered and not view.over:
            words.append(f"end triggered: {_plural(view.turns_left, 'turn')} left")
        status = self.drawn.group(cls="status", title="whose turn and the end of the game")
        self.drawn.text(status, BOARD_X, 24, "Mercado de Lisboa", size=18, bold=True)
        self.drawn.text(status, BOARD_X, 46, " · ".join(words), size=12)
        streak = self.drawn.group(cls="coin-streak", title="Take-1-Coin turns in a row")
        self.drawn.text(
            streak,
            WIDTH - BOARD_X,
            26,
            f"coin turns in a row: {view.coin_streak}",
            size=12,
            fill=MUTED,
            anchor="end",
        )
        self.places["coin streak"] = (WIDTH - BOARD_X - 140, 12, 140, 20)

    def tray(self, top: float) -> None:
        """Issue 25, rules §4.2 step 2: each customer tile the table may reveal, a tap."""
        tray = self.drawn.group(cls="tray", title="the tray: the customer tile revealed")
        self.drawn.text(tray, BOARD_X, top + 18, "may be revealed:", size=12, fill=MUTED)
        for index, tile in enumerate(self.view.revealable):
            x = BOARD_X + index % TRAY_PER_ROW * (TILE_W + 6)
            y = top + 26 + index // TRAY_PER_ROW * (TILE_H + 6)
            drawn_tile = self.customer_tile(tray, x, y, tile, "to reveal", cls="tray-tile")
            self.drawn.touch(drawn_tile, f"tray-{tile_id(tile)}")

    def solo(self, top: float) -> None:
        solo = self.view.solo
        stage = self.drawn.group(cls="solo-stage", title="the solo stage and the campaign")
        self.drawn.rect(
            stage,
            BOARD_X,
            top,
            WIDTH - 2 * BOARD_X,
            _solo_height(self.view) - 10,
            fill="#f4efe3",
            stroke=MUTED,
            radius=6,
        )
        x = BOARD_X + 12
        heading = f"Solo stage {solo.stage}: {solo.stage_name[:60]}"
        self.drawn.text(stage, x, top + 22, heading, size=14, bold=True)
        money = self.view.players[0].money if self.view.players else 0
        visible = bool(self.view.players) and self.view.players[0].money_visible
        for index, threshold in enumerate(solo.fame_thresholds[:3]):
            reached = visible and money >= threshold
            left = x + 360 + index * 92
            fame = self.drawn.group(
                stage,
                cls="fame",
                title=f"{index + 1} fame at {threshold} coins" + (" (reached)" if reached else ""),
            )
            self.drawn.rect(
                fame,
                left,
                top + 8,
                84,
                22,
                fill=COIN_GOLD if reached else TILE_PAPER,
                stroke=INK,
                radius=4,
            )
            self.drawn.text(
                fame,
                left + 42,
                top + 23,
                f"{'★' * (index + 1)} {threshold}",
                size=12,
                anchor="middle",
            )
        facts = [
            f"campaign fame so far {solo.campaign_fame}",
            "master stroke " + ("used" if solo.master_stroke_used else "still open"),
            f"best single action {solo.best_action}",
        ]
        if solo.stage == 1:
            good = _good_name(solo.stage1_good) if solo.stage1_good else "not fixed yet"
            facts.append(f"earning good {good}")
        if solo.stage == 2:
            facts.append(f"money from 4-customer tiles {solo.money_from_four}")
        if solo.stage == 5:
            facts.append(f"4-customer tiles placed {solo.four_tiles_placed}")
        campaign = self.drawn.group(stage, cls="campaign", title="the campaign so far")
        self.drawn.text(campaign, x, top + 44, " · ".join(facts), size=12)
        rules = self.drawn.group(stage, cls="stage-rules", title="the stage's own rules")
        for number, line in enumerate(_solo_rules_lines(self.view)):
            self.drawn.text(rules, x, top + 64 + number * LINE_H, line, size=11, fill=MUTED)

    # ------------------------------------------------------------------ a phone's layout

    def phone_status(self) -> None:
        """`status` in three lines across a phone's width."""
        view = self.view
        words = ["money " + ("hidden" if view.money_hidden else "open")]
        if view.over:
            words.insert(0, "game over")
        elif view.pending_reveal:
            words.insert(0, "the table: " + view.pending_reveal[:120])
        elif view.choosing_display_tile:
            words.insert(0, f"{_player_name(view, view.to_move)} takes a tile from the display")
        elif 0 <= view.to_move < len(view.players):
            words.insert(0, f"{_player_name(view, view.to_move)} to move")
        if view.end_triggered and not view.over:
            words.append(f"end triggered: {_plural(view.turns_left, 'turn')} left")
        room = PHONE_WIDTH - 2 * PHONE_MARGIN
        status = self.drawn.group(cls="status", title="whose turn and the end of the game")
        self.drawn.text(status, PHONE_MARGIN, 20, "Mercado de Lisboa", size=15, bold=True)
        self.drawn.text(status, PHONE_MARGIN, 38, fitted(" · ".join(words), room, 12), size=12)
        streak = self.drawn.group(cls="coin-streak", title="Take-1-Coin turns in a row")
        words_streak = f"coin turns in a row: {view.coin_streak}"
        self.drawn.text(streak, PHONE_MARGIN, 56, words_streak, size=12, fill=MUTED)
        self.places["coin streak"] = (PHONE_MARGIN, 44, 150, 16)

    def phone_supply(self, top: float) -> float:
        """The display, the customers on offer, the bag and the unseen restaurants, one
        under the other across a phone's width, each touchable a finger wide; the controls
        under them. Returns where the next part goes."""
        view = self.view
        x: float = PHONE_MARGIN
        y: float = top
        display = self.drawn.group(cls="display", title="the stand display")
        self.drawn.text(display, x, y + 12, "Stand display", size=12, bold=True)
        if view.choosing_display_tile:
            self.drawn.text(display, x + 100, y + 12, "(a tile to choose)", size=11, fill=MUTED)
        marked: set[str] = set()
        side = TOUCH_UNITS + 2
        for slot in range(MAX_DISPLAY):
            left = x + slot * (side + 6)
            if slot < len(view.display):
                tile = self.stand_tile(
                    display, left, y + 18, side, view.display[slot], cls="stand-tile"
                )
                self.mark_once(tile, f"display-{_good_name(view.display[slot])}", marked)
            else:
                self.drawn.rect(
                    display, left, y + 18, side, side, fill="none", stroke=MUTED, radius=3
                )
        self.places["display"] = (x, y + 18, 3 * (side + 6) - 6, side)
        y += 18 + side + 14
        offers = self.drawn.group(cls="customers", title="customer tiles on offer")
        self.drawn.text(offers, x, y + 12, "Customers on offer", size=12, bold=True)
        shape = PHONE_TILE
        for index, offer in enumerate(view.customers[:4]):
            row_top = y + 18 + index * (shape[1] + 8)
            size = min(offer.customers, 4)
            row = self.drawn.group(offers, cls="customer-offer", title=f"{size}-customer tiles")
            self.drawn.text(row, x, row_top + shape[1] / 2 + 5, f"{size}", size=14, bold=True)
            for slot, offered in enumerate(offer.available[:MAX_OFFER_TILES]):
                left = x + 16 + slot * (shape[0] + 6)
                drawn_tile = self.customer_tile(row, left, row_top, offered, "on offer", size=shape)
                self.mark_once(drawn_tile, f"offer-{tile_id(offered)}", marked)
            pile_x = x + 16 + MAX_OFFER_TILES * (shape[0] + 6)
            if offer.pile:
                self.drawn.face_down(
                    row,
                    pile_x,
                    row_top,
                    shape[0] * 0.8,
                    shape[1],
                    title=f"{_plural(offer.pile, 'tile')} left in the {size}-customer pile",
                )
            self.drawn.text(
                row, pile_x + shape[0] * 0.8 + 4, row_top + shape[1] / 2 + 4, f"pile {offer.pile}"
            )
            self.places[f"offer {size}"] = (
                x + 12,
                row_top,
                pile_x + shape[0] * 0.8 - x - 12,
                shape[1],
            )
        y += 18 + 4 * (shape[1] + 8) + 6
        bag = self.drawn.group(cls="bag", title="stand tiles in the bag")
        self.drawn.text(bag, x, y + 12, "Bag", size=12, bold=True)
        width = (PHONE_WIDTH - 2 * PHONE_MARGIN + 6) / len(GOODS) - 6
        for index, count in enumerate(view.bag[: len(GOODS)]):
            left = x + index * (width + 6)
            pile = self.drawn.group(bag, cls="bag-good", title=f"bag: {count} {GOODS[index]}")
            self.drawn.rect(pile, left, y + 18, width, TOUCH_UNITS, fill=TILE_PAPER, radius=3)
            self.drawn.rect(pile, left + 5, y + 24, 14, 14, fill=GOOD_COLOURS[index], radius=2)
            self.drawn.text(pile, left + 24, y + 36, str(count), size=13, bold=True)
            self.drawn.text(pile, left + 5, y + 18 + TOUCH_UNITS - 5, GOODS[index], size=10)
            self.drawn.touch(pile, f"bag-{GOODS[index]}")
        self.places["bag"] = (x, y + 18, PHONE_WIDTH - 2 * PHONE_MARGIN, TOUCH_UNITS)
        y += 18 + TOUCH_UNITS + 10
        unseen = self.drawn.group(
            cls="unseen-restaurants", title="face-down restaurants not yet turned over, by type"
        )
        self.drawn.text(unseen, x, y + 12, "Not yet turned over", size=12, bold=True)
        width = (PHONE_WIDTH - 2 * PHONE_MARGIN + 6) / 3 - 6
        for index, count in enumerate(view.unseen_restaurants[: len(RESTAURANTS)]):
            left = x + index % 3 * (width + 6)
            kind_top = y + 18 + index // 3 * (TOUCH_UNITS + 6)
            restaurant = index + 1
            kind = self.drawn.group(
                unseen, cls="unseen-restaurant", title=f"{_restaurant_name(restaurant)}: {count}"
            )
            self.drawn.rect(kind, left, kind_top, width, TOUCH_UNITS, fill=TILE_PAPER, radius=3)
            self.drawn.circle(
                kind,
                left + 14,
                kind_top + TOUCH_UNITS / 2,
                9,
                fill=TILE_PAPER,
                stroke=_restaurant_colour(restaurant),
                stroke_width=3,
            )
            label = f"{RESTAURANT_LABELS[index]} {min(count, RESTAURANT_COPIES)}"
            self.drawn.text(kind, left + 28, kind_top + TOUCH_UNITS / 2 + 4, label, size=11)
            self.drawn.touch(kind, f"unseen-{RESTAURANT_LABELS[index]}")
        rows = 2 * (TOUCH_UNITS + 6)
        self.places["unseen restaurants"] = (x, y + 18, PHONE_WIDTH - 2 * PHONE_MARGIN, rows - 6)
        y += 18 + rows + 4
        if self.phone_controls(x, y):
            y += TOUCH_UNITS + 10
        return y

    def phone_controls(self, x: float, y: float) -> bool:
        """`controls`, a finger high; whether there were any."""
        view = self.view
        refresh = len(view.display) == 3 and len(set(view.display)) == 1
        seat = view.to_move
        tiles = list(view.players[seat].stand_tiles) if 0 <= seat < len(view.players) else []
        swap = any(tiles.count(good) >= 3 for good in set(tiles))
        if not refresh and not swap:
            return False
        group = self.drawn.group(cls="controls", title="controls")
        if refresh:
            self.drawn.button(group, x, y, "refresh the display", "refresh", height=TOUCH_UNITS)
        if swap:
            self.drawn.button(group, x + 170, y, "swap my 3 tiles", "swap", height=TOUCH_UNITS)
        return True

    def phone_player_height(self, player: pb.MercadoDeLisboaPlayerView) -> float:
        dead = 30 if player.dead_tiles else 0
        return 10 + 3 * (TOUCH_UNITS + 6) + dead + 22

    def phone_players(self, top: float) -> float:
        """Each player's panel across a phone's width: the name and coins, then the stand
        tiles (one of each good, with how many), then the restaurants (one of each kind);
        the same touch ids and names as the wide layout's rows. Returns where they end."""
        view = self.view
        x, width = PHONE_MARGIN, PHONE_WIDTH - 2 * PHONE_MARGIN
        for seat, player in enumerate(view.players[:MAX_PLAYERS]):
            height = self.phone_player_height(player)
            name = _player_name(view, seat)
            moving = view.to_move == seat and not view.over
            title = f"{name}, seat {seat + 1}" + (", to move" if moving else "")
            row = self.drawn.group(cls="player", title=title)
            self.drawn.rect(
                row,
                x,
                top,
                width,
                height - 6,
                fill="#f4efe3",
                stroke=HIGHLIGHT if moving else MUTED,
                stroke_width=2 if moving else 1,
                radius=6,
            )
            self.wooden_stand(row, x + 8, top + 12, seat)
            self.drawn.text(row, x + 30, top + 24, fitted(name, 200, 13), size=13, bold=True)
            if moving:
                self.drawn.text(row, x + 30, top + 42, "to move", size=11, fill=MUTED)
            r = TOUCH_UNITS / 2
            self.coins(row, x + width - 10 - r, top + 8 + r, player, name, seat, r)
            line = top + 10 + TOUCH_UNITS + 6
            marked: set[str] = set()
            tiles = list(player.stand_tiles[:MAX_HAND_TILES])
            left: float = x + 8
            for good in dict.fromkeys(tiles):
                tile = self.stand_tile(row, left, line, TOUCH_UNITS, good, cls="stand-tile")
                self.mark_once(tile, f"p{seat + 1}-stand-{_good_name(good)}", marked)
                self.wooden_stand(
                    tile, left + TOUCH_UNITS - 18, line + TOUCH_UNITS - 16, seat, numbered=False
                )
                if tiles.count(good) > 1:
                    self.drawn.text(
                        row, left + 4, line + 12, f"×{tiles.count(good)}", size=11, fill=PAPER
                    )
                left += TOUCH_UNITS + 6
            line += TOUCH_UNITS + 6
            left = x + 8
            held = list(player.restaurants[:MAX_HELD])
            kinds = dict.fromkeys(held)
            # Six kinds and a face-down one are seven discs: they touch, never leave the panel.
            step = min(TOUCH_UNITS + 1, (width - 12 - TOUCH_UNITS) / max(len(kinds) - 1, 1))
            for restaurant in kinds:
                disc = self.restaurant(row, left + r, line + r, r, restaurant, f"held by {name}")
                if restaurant != FACE_DOWN_RESTAURANT and restaurant <= len(RESTAURANTS):
                    label = RESTAURANT_LABELS[restaurant - 1]
                    self.mark_once(disc, f"p{seat + 1}-restaurant-{label}", marked)
                if held.count(restaurant) > 1:
                    self.drawn.text(
                        row, left + 2 * r, line + 10, f"×{held.count(restaurant)}", size=11,
                        anchor="end",
                    )  # fmt: skip
                left += step
            line += TOUCH_UNITS + 6
            left = x + 8
            for good in player.dead_tiles[:MAX_DEAD_TILES]:
                dead = self.drawn.group(
                    row, cls="dead-tile", title=f"{_good_name(good)} stand tile without a stand"
                )
                self.drawn.rect(dead, left, line, 24, 24, fill=_good_colour(good), radius=3)
                self.drawn.line(
                    dead, left, line, left + 24, line + 24, stroke=PAPER, stroke_width=2
                )
                left += 26
            counts = (
                f"{player.stands_on_market} on the market, "
                f"{_plural(player.wooden_stands_left, 'wooden stand')} left"
            )
            self.drawn.text(row, x + width - 10, top + height - 14, counts, size=11, anchor="end")
            top += height
        return top

    def phone_tray(self, top: float) -> None:
        """`tray` across a phone's width, the tiles a finger wide."""
        tray = self.drawn.group(cls="tray", title="the tray: the customer tile revealed")
        self.drawn.text(tray, PHONE_MARGIN, top + 18, "may be revealed:", size=12, fill=MUTED)
        tile = PHONE_TILE
        for index, revealable in enumerate(self.view.revealable):
            x = PHONE_MARGIN + index % PHONE_TRAY_PER_ROW * (tile[0] + 6)
            y = top + 26 + index // PHONE_TRAY_PER_ROW * (tile[1] + 6)
            drawn_tile = self.customer_tile(
                tray, x, y, revealable, "to reveal", cls="tray-tile", size=tile
            )
            self.drawn.touch(drawn_tile, f"tray-{tile_id(revealable)}")

    def phone_solo(self, top: float) -> None:
        """`solo` across a phone's width: the heading, the fame thresholds, the campaign and
        the stage's rules, each on lines of their own."""
        solo = self.view.solo
        stage = self.drawn.group(cls="solo-stage", title="the solo stage and the campaign")
        x = PHONE_MARGIN + 8
        room = PHONE_WIDTH - 2 * PHONE_MARGIN - 16
        self.drawn.rect(
            stage,
            PHONE_MARGIN,
            top,
            PHONE_WIDTH - 2 * PHONE_MARGIN,
            _phone_solo_height(self.view) - 10,
            fill="#f4efe3",
            stroke=MUTED,
            radius=6,
        )
        heading = f"Solo stage {solo.stage}: {solo.stage_name[:60]}"
        self.drawn.text(stage, x, top + 22, fitted(heading, room, 14), size=14, bold=True)
        money = self.view.players[0].money if self.view.players else 0
        visible = bool(self.view.players) and self.view.players[0].money_visible
        for index, threshold in enumerate(solo.fame_thresholds[:3]):
            reached = visible and money >= threshold
            left = x + index * 92
            fame = self.drawn.group(
                stage,
                cls="fame",
                title=f"{index + 1} fame at {threshold} coins" + (" (reached)" if reached else ""),
            )
            self.drawn.rect(
                fame, left, top + 32, 84, 22, fill=COIN_GOLD if reached else TILE_PAPER,
                stroke=INK, radius=4,
            )  # fmt: skip
            self.drawn.text(
                fame, left + 42, top + 47, f"{'★' * (index + 1)} {threshold}", size=12,
                anchor="middle",
            )  # fmt: skip
        campaign = self.drawn.group(stage, cls="campaign", title="the campaign so far")
        for number, line in enumerate(_phone_solo_facts(self.view)):
            self.drawn.text(campaign, x, top + 72 + number * LINE_H, line, size=12)
        rules = self.drawn.group(stage, cls="stage-rules", title="the stage's own rules")
        below = top + 72 + len(_phone_solo_facts(self.view)) * LINE_H
        for number, line in enumerate(_solo_rules_lines(self.view, PHONE_RULES_CHARACTERS)):
            self.drawn.text(rules, x, below + number * LINE_H, line, size=11, fill=MUTED)

    # ------------------------------------------------------------------ the last move

    def last_move(self, move: pb.MercadoDeLisboaMove) -> None:
        """Frame where the move shows: the space a stand or restaurant went to, the entrance
        customers came to, the display a tile was taken from, the bag a tile was drawn from
        or tiles went back to, the restaurants still to turn over, the customer row a tile
        was revealed in, the count of coin turns."""
        action = move.WhichOneof("action")
        key = ""
        if action == "stand":
            key = f"space {move.stand.space - 1}"
        elif action == "restaurant":
            key = f"space {move.restaurant.space - 1}"
        elif action == "customer":
            key = f"entrance {move.customer.entrance - 1}"
        elif action == "take":
            key = "display"
        elif action in ("draw", "swap"):
            key = "bag"
        elif action == "flip":
            key = "unseen restaurants"
        elif action == "reveal":
            key = f"offer {move.reveal.customers}"
        elif action == "coin":
            key = "coin streak"
        place = self.places.get(key)
        if place is not None:
            inside = self.place_groups.get(
                "market" if key.startswith(("space", "entrance")) else ""
            )
            frame = self.drawn.group(inside, cls="last-move-frame", title="the last move")
            self.drawn.highlight(frame, *place)


def picture(
    view: pb.MercadoDeLisboaView,
    last_move: pb.MercadoDeLisboaMove | None = None,
    approximate: str = "",
    layout: str = "wide",
) -> str:
    """The market, the supply and the players (rules §1-§3) as seen in `view`, with the
    solo stage (§9) when solo; `last_move` framed where it shows; `approximate` (or the
    view's own approximate board data) noted along the bottom; `layout` "phone" in one
    column (`phone_picture`)."""
    check_layout(layout)
    if layout == PHONE:
        return phone_picture(view, last_move, approximate)
    players = min(len(view.players), MAX_PLAYERS)
    height: float = PLAYERS_Y + players * PLAYER_H + 6
    tray_top = height
    if view.revealable:
        height += 30 + -(-len(view.revealable) // TRAY_PER_ROW) * (TILE_H + 6)
    solo_top = height
    if view.HasField("solo"):
        height += _solo_height(view)
    notes = [approximate[:300]] if approximate else []
    if view.approximate and view.approximate_note[:300] not in notes:
        notes.append(view.approximate_note[:300])
    if notes:
        height += 20
    drawing = _Drawing(view, height)
    drawing.status()
    drawing.market()
    drawing.supply()
    drawing.players()
    if view.revealable:
        drawing.tray(tray_top)
    if view.HasField("solo"):
        drawing.solo(solo_top)
    if last_move is not None:
        drawing.last_move(last_move)
    if notes:
        words = "; ".join(notes)
        note = drawing.drawn.approximate_note(_shortened(words, NOTE_CHARACTERS))
        # The line along the bottom holds what fits; the title (what a mouse-over or a
        # screen reader gives) keeps the whole note.
        title = note.find("title")
        if title is not None:
            title.text = words
    return drawing.drawn.svg()


# ---------------------------------------------------------------------- the phone layout

PHONE_MARGIN = 6
PHONE_ENTRANCE = 62
"""A phone's entrance tiles are squares of this side, in the market's own units: the
market (7 x 64 units) is drawn at PHONE_MARKET of that, so an entrance tile or a space is
47 units (46 CSS px fit to a 360 px phone)."""
PHONE_MARKET_SIDE = SIZE * CELL + 2 * (PHONE_ENTRANCE + 2)
PHONE_MARKET = (PHONE_WIDTH - 2) / PHONE_MARKET_SIDE
PHONE_TILE = (60.0, 48.0)
"""A customer tile on offer or in the tray, on a phone."""
PHONE_TRAY_PER_ROW = 5
PHONE_RULES_CHARACTERS = 52
"""A solo stage's rules line at 11 px across a phone's picture."""


def _phone_solo_facts(view: pb.MercadoDeLisboaView) -> list[str]:
    solo = view.solo
    facts = [
        f"campaign fame so far {solo.campaign_fame}",
        "master stroke " + ("used" if solo.master_stroke_used else "still open"),
        f"best single action {solo.best_action}",
    ]
    if solo.stage == 1:
        good = _good_name(solo.stage1_good) if solo.stage1_good else "not fixed yet"
        facts.append(f"earning good {good}")
    if solo.stage == 2:
        facts.append(f"money from 4-customer tiles {solo.money_from_four}")
    if solo.stage == 5:
        facts.append(f"4-customer tiles placed {solo.four_tiles_placed}")
    return facts


def _phone_solo_height(view: pb.MercadoDeLisboaView) -> float:
    lines = len(_phone_solo_facts(view)) + len(_solo_rules_lines(view, PHONE_RULES_CHARACTERS))
    return 72 + lines * LINE_H + 8


def phone_picture(
    view: pb.MercadoDeLisboaView,
    last_move: pb.MercadoDeLisboaMove | None = None,
    approximate: str = "",
) -> str:
    """`picture` laid out for a phone in portrait (issue 25): PHONE_WIDTH units wide, the
    market across the width (its entrance tiles square), the supply under it, then the
    players, the tray and the solo stage; every touchable at least TOUCH_UNITS a side (44
    CSS px fit to a 360-430 px screen)."""
    market_top = 66.0
    supply_top = market_top + PHONE_MARKET_SIDE * PHONE_MARKET + 12
    # The supply's height does not depend on the view but for its controls: measured by
    # drawing it on a scratch picture would cost a second drawing, so it is summed here.
    supply_height = (
        18 + TOUCH_UNITS + 2 + 14
        + 18 + 4 * (PHONE_TILE[1] + 8) + 6
        + 18 + TOUCH_UNITS + 10
        + 18 + 2 * (TOUCH_UNITS + 6) + 4
    )  # fmt: skip
    seat = view.to_move
    tiles = list(view.players[seat].stand_tiles) if 0 <= seat < len(view.players) else []
    if (len(view.display) == 3 and len(set(view.display)) == 1) or any(
        tiles.count(good) >= 3 for good in set(tiles)
    ):
        supply_height += TOUCH_UNITS + 10
    players_top = supply_top + supply_height
    scratch = _Drawing(view, 0, PHONE_WIDTH)
    players_height = sum(
        scratch.phone_player_height(player) for player in view.players[:MAX_PLAYERS]
    )
    height = players_top + players_height + 6
    tray_top = height
    if view.revealable:
        height += 30 + -(-len(view.revealable) // PHONE_TRAY_PER_ROW) * (PHONE_TILE[1] + 6)
    solo_top = height
    if view.HasField("solo"):
        height += _phone_solo_height(view)
    notes = [approximate[:300]] if approximate else []
    if view.approximate and view.approximate_note[:300] not in notes:
        notes.append(view.approximate_note[:300])
    if notes:
        height += 20
    drawing = _Drawing(view, height, PHONE_WIDTH, entrance=PHONE_ENTRANCE)
    drawing.phone_status()
    market = drawing.drawn.group(cls="place", x=1, y=market_top, scale=PHONE_MARKET)
    drawing.market(market)
    drawing.phone_supply(supply_top)
    drawing.phone_players(players_top)
    if view.revealable:
        drawing.phone_tray(tray_top)
    if view.HasField("solo"):
        drawing.phone_solo(solo_top)
    if last_move is not None:
        drawing.last_move(last_move)
    if notes:
        words = "; ".join(notes)
        note = drawing.drawn.approximate_note(_shortened(words, NOTE_CHARACTERS * 2 // 5))
        title = note.find("title")
        if title is not None:
            title.text = words
    return drawing.drawn.svg()
