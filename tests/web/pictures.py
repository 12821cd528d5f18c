"""What a game's picture must hold, checked against the view it was drawn from: one check
per game, component by component (the games' own picture tests check every detail; these
check that what reaches the browser is the whole picture of the right view)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from tablelog.v1 import game_pb2

SVG = "{http://www.w3.org/2000/svg}"


def having(root: ET.Element, name: str) -> list[ET.Element]:
    """The elements whose class list has `name`."""
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def one(root: ET.Element, name: str) -> ET.Element:
    found = having(root, name)
    assert len(found) == 1, f"{len(found)} elements of class {name!r}"
    return found[0]


def title(element: ET.Element) -> str:
    found = element.find(f"{SVG}title")
    return (found.text or "") if found is not None else ""


def _splendor(view: game_pb2.GameView, root: ET.Element) -> None:
    shown = view.splendor
    market = one(root, "market")
    slots = sum(1 for row in shown.market for card in row.slots if card.id)
    assert len(having(market, "card")) == slots
    assert len(having(market, "deck")) == len(shown.market)
    assert len(having(one(root, "nobles"), "noble")) == len(shown.nobles)
    one(root, "bank")
    assert len(having(root, "player")) == len(shown.players)


def _medici_card_game(view: game_pb2.GameView, root: ET.Element) -> None:
    shown = view.medici_card_game
    count = len(shown.market)
    assert title(one(root, "market")) == f"the market: {count} card{'' if count == 1 else 's'}"
    assert title(one(root, "deck")) == f"the deck: {shown.deck_size} cards face down"
    assert len(having(root, "seat")) == len(shown.seats)
    assert len(having(root, "goods-track")) == 5


def _medici(view: game_pb2.GameView, root: ET.Element) -> None:
    shown = view.medici
    assert title(one(root, "lot")) == f"the lot on offer: {len(shown.lot)} tiles"
    assert len(having(root, "seat")) == len(shown.seats)
    assert len(having(root, "goods-track")) == 5


def _castello_methoni(view: game_pb2.GameView, root: ET.Element) -> None:
    shown = view.castello_methoni
    assert len(having(one(root, "cells"), "cell")) == len(shown.cells)
    assert len(having(root, "seat")) == len(shown.seats)


def _mercado_de_lisboa(view: game_pb2.GameView, root: ET.Element) -> None:
    shown = view.mercado_de_lisboa
    assert len(having(root, "space")) == len(shown.spaces)
    assert len(having(root, "player")) == len(shown.players)
    one(root, "display")


COMPONENTS: dict[str, Callable[[game_pb2.GameView, ET.Element], None]] = {
    "splendor": _splendor,
    "medici-card-game": _medici_card_game,
    "medici": _medici,
    "castello-methoni": _castello_methoni,
    "mercado-de-lisboa": _mercado_de_lisboa,
}


def check_picture(game: str, view: game_pb2.GameView, svg: str) -> None:
    """The picture is an SVG with titles that draws every component of `view`."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert next(root.iter(f"{SVG}title"), None) is not None, "no <title> for accessibility"
    COMPONENTS[game](view, root)
