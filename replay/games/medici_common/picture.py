"""What the pictures of both Medici games draw alike: goods tiles and cards coloured by their
good, the seats' colours and money, face-down piles with their counts, the goods tracks
(Medici's pyramids, the card game's warehouses) with one marker per seat, and the header and
last-move caption. Each game's `picture.py` lays these out from its own view."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Final

from tablelog.replay.games.medici_common.components import GOODS
from tablelog.replay.picture import INK, MUTED, PAPER, Picture, fitted

WIDTH: Final = 900
"""Every Medici picture is this wide: readable from 600 to 900 pixels."""
MARGIN: Final = 16

GOOD_COLOURS: Final[Mapping[str, str]] = {
    "cloth": "#4f7cc4",
    "fur": "#8a5a34",
    "grain": "#c9b458",
    "dye": "#9a3d86",
    "spice": "#d9652b",
}
GOLD: Final = "#f2c230"
NEUTRAL: Final = "#9a9a9a"
DARK_GOODS: Final = frozenset({"cloth", "fur", "dye", "spice"})
"""Goods whose colour is dark enough that their value is written in white."""
SEAT_COLOURS: Final = ("#d1495b", "#2e86ab", "#3a9d5d", "#f0a202", "#7a4ea3", "#3d3d3d")
"""One colour per seat (both games seat at most 6), for its disc and its track markers."""


def good_colour(good: str, *, gold: bool = False) -> str:
    """The fill of a tile or card of `good` ("" is gold in Medici, neutral in the card game)."""
    if good in GOOD_COLOURS:
        return GOOD_COLOURS[good]
    return GOLD if gold else NEUTRAL


def seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def header(drawn: Picture, title: str, status: str) -> None:
    """The game's name and period along the top, what happens next under it."""
    top = drawn.group(cls="header", title=f"{title}. {status}")
    drawn.text(top, MARGIN, 26, title, size=18, bold=True)
    drawn.text(top, MARGIN, 46, status, size=13, fill=MUTED, cls="status")


PHONE_MARGIN: Final = 6
PHONE_HEADER: Final = 74
"""A phone picture's header: the title, the status and the last move, a line each."""


def phone_header(drawn: Picture, title: str, status: str, last_move: str) -> None:
    """`header` and `last_move_caption` for a phone's width (issue 25): a line each, cut
    to the width (the whole words in the titles)."""
    room = drawn.width - 2 * PHONE_MARGIN
    top = drawn.group(cls="header", title=f"{title}. {status}")
    drawn.text(top, PHONE_MARGIN, 20, fitted(title, room, 15), size=15, bold=True)
    drawn.text(top, PHONE_MARGIN, 40, fitted(status, room, 12), size=12, fill=MUTED, cls="status")
    if last_move:
        caption = drawn.group(cls="last-move-caption", title=f"Last move: {last_move}")
        words = fitted(f"Last move: {last_move}", room, 12)
        drawn.text(caption, PHONE_MARGIN, 60, words, size=12)


def last_move_caption(drawn: Picture, words: str) -> None:
    """The last move in words, top right: it says what happened even where nothing left on
    the table shows it (a pass, a lot bought at the end of a day)."""
    caption = drawn.group(cls="last-move-caption", title=f"Last move: {words}")
    drawn.text(caption, WIDTH - MARGIN, 26, f"Last move: {words}", size=12, anchor="end")


def piece(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    width: float,
    height: float,
    *,
    good: str,
    value: int,
    cls: str,
    title: str,
    gold: bool = False,
    neutral: tuple[str, str] | None = None,
) -> ET.Element:
    """A tile or card face up: coloured by its good, its value large in the middle and the
    good's name small along the bottom (so colour is never the only clue). A card of no
    good is drawn in the `neutral` colour and label given, or grey."""
    drawn_piece = drawn.group(parent, cls=cls, title=title)
    fill = neutral[0] if neutral and not good else good_colour(good, gold=gold)
    drawn.rect(drawn_piece, x, y, width, height, fill=fill, stroke=INK, radius=4)
    ink = PAPER if good in DARK_GOODS or (neutral and not good) else INK
    drawn.text(
        drawn_piece,
        x + width / 2,
        y + height * 0.52,
        str(value),
        size=min(width, height) * 0.42,
        fill=ink,
        anchor="middle",
        bold=True,
    )
    label = good or ("gold" if gold else neutral[1] if neutral else "")
    if label and width >= 30:
        drawn.text(
            drawn_piece,
            x + width / 2,
            y + height - 5,
            label,
            size=min(9, width / 4),
            fill=ink,
            anchor="middle",
        )
    return drawn_piece


def pile(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    width: float,
    height: float,
    *,
    count: int,
    title: str,
) -> ET.Element:
    """A face-down stack (the bag, the deck) with how many it holds written under it."""
    stack = drawn.face_down(parent, x, y, width, height, title=title)
    stack.set("class", "face-down pile")
    drawn.text(stack, x + width / 2, y + height + 14, str(count), size=12, anchor="middle")
    return stack


def seat_label(
    drawn: Picture,
    parent: ET.Element,
    x: float,
    y: float,
    *,
    seat: int,
    name: str,
    florins: int,
    to_move: bool,
    hit: tuple[float, float] = (0, 0),
) -> None:
    """The seat's colour disc, its name (bold with an arrow when it is the seat's decision)
    and its money, which both games keep open on the table. `hit` (width, height), when
    given, is the badge's own touch area from (`x`, `y`): a phone layout's finger-sized
    target (issue 25), drawn transparent under the name."""
    badge = drawn.group(parent, cls="seat-name", title=f"seat {seat + 1}: {name}")
    # Issue 25: a seat is tapped where a move names it (the table's start player).
    drawn.touch(badge, f"p{seat + 1}")
    if hit[0]:
        area = drawn.rect(badge, x, y, hit[0], hit[1], fill=PAPER, radius=4)
        area.set("fill-opacity", "0")
    drawn.circle(badge, x + 7, y + 14, 7, fill=seat_colour(seat), stroke=INK)
    drawn.text(badge, x + 20, y + 19, f"{name} ◀" if to_move else name, size=14, bold=to_move)
    amount = f"{florins} florin{'' if florins == 1 else 's'}"
    money = drawn.group(parent, cls="money", title=f"{name} has {amount}")
    drawn.circle(money, x + 27, y + 36, 7, fill=GOLD, stroke=INK)
    drawn.text(money, x + 40, y + 40, amount, size=12)


def goods_tracks(
    drawn: Picture,
    x: float,
    y: float,
    width: float,
    height: float,
    *,
    names: Sequence[str],
    levels: Sequence[Mapping[str, int]],
    top: int,
    marks: Mapping[int, str],
    what: str,
) -> ET.Element:
    """One column per good, levels 0 (bottom) to `top`, a marker per seat on its level
    (`levels[seat][good]`); `marks` labels special levels ("+20" on a pyramid's top)."""
    panel = drawn.group(cls="goods-tracks", title=f"{what}: each player's marker per good")
    column = width / len(GOODS)
    step = (height - 30) / (top + 1)
    # Markers on one level sit side by side within the column, six seats included.
    span = min(11.0, (column - 8) / max(1, len(names)))
    radius = max(1.5, min(span / 2 - 0.5, step / 2 - 1))
    for g, good in enumerate(GOODS):
        left = x + g * column
        track = drawn.group(panel, cls="goods-track", title=f"{good} {what}")
        drawn.text(track, left + column / 2, y + 12, good, size=12, anchor="middle", bold=True)
        for level in range(top + 1):
            row_y = y + height - (level + 1) * step
            drawn.rect(
                track,
                left + 3,
                row_y,
                column - 6,
                step - 1,
                fill=good_colour(good) if level in marks else PAPER,
                stroke=good_colour(good),
                cls="track-level",
            )
            if g == 0:  # one scale of level numbers, on the left, serves every column
                drawn.text(
                    track, left - 2, row_y + step - 3, str(level), size=9, fill=MUTED, anchor="end"
                )
            if level in marks:
                drawn.text(
                    track, left + column - 5, row_y + step - 3, marks[level], size=8,
                    fill=PAPER, anchor="end",
                )  # fmt: skip
        for level in sorted({seat_levels.get(good, 0) for seat_levels in levels}):
            here = [s for s, seat_levels in enumerate(levels) if seat_levels.get(good, 0) == level]
            row_y = y + height - (min(level, top) + 1) * step
            start = left + column / 2 - span * (len(here) - 1) / 2
            for i, seat in enumerate(here):
                drawn.circle(
                    track,
                    start + i * span,
                    row_y + step / 2,
                    radius,
                    fill=seat_colour(seat),
                    stroke=INK,
                    cls="track-marker",
                    title=f"{names[seat]}: {good} {level}",
                )
    return panel
