"""Move notation (docs/notation/mercado-de-lisboa.md).

Canonical forms (lowercase, single spaces):
    stand fish b3 take grape     stand fish b3 refresh     stand fish b3 (display empty)
    customer 2 fish+flower w3    restaurant sushi c4       coin      swap      take grape
    draw meat                    flip pizza                reveal 3 fish+meat
Input is lenient: any case and spacing, goods and restaurants by synonyms or abbreviations,
goods in any order, the customer count or a lone stand tile's good may be left out when only
one tile fits (otherwise AmbiguousNotation lists the candidates).

One line may stand for several moves (`split`): a refresh or swap with the tiles drawn
(`stand fish b3 refresh meat fish grape take meat`, `swap fish meat grape`), and several
draws (`draw fish grape flower`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import combinations
from typing import Final

from tablelog.replay.core import AmbiguousNotation, NotationError
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import (
    ENTRANCE_NAMES,
    GOODS,
    SPACE_NAMES,
    TILES_PER_SIZE,
)

RESTAURANT_WORDS: Final = ("sushi", "tea", "pizza", "burger", "wine", "pub")

GOOD_SYNONYMS: Final = {
    **{g: i for i, g in enumerate(GOODS)},
    "fi": 0,
    "fishes": 0,
    "sardine": 0,
    "sardines": 0,
    "fl": 1,
    "flowers": 1,
    "to": 2,
    "tomatoes": 2,
    "tom": 2,
    "me": 3,
    "meats": 3,
    "gr": 4,
    "grapes": 4,
    "wine grape": 4,
}
RESTAURANT_SYNONYMS: Final = {
    "sushi": 0,
    "sushibar": 0,
    "sushi bar": 0,
    "tea": 1,
    "teahouse": 1,
    "tea house": 1,
    "pizza": 2,
    "pizzeria": 2,
    "burger": 3,
    "burgerjoint": 3,
    "burger joint": 3,
    "burgers": 3,
    "wine": 4,
    "winebar": 4,
    "wine bar": 4,
    "pub": 5,
}
VERBS: Final = {
    "stand": "stand",
    "s": "stand",
    "place": "stand",
    "open": "stand",
    "customer": "customer",
    "customers": "customer",
    "c": "customer",
    "bring": "customer",
    "restaurant": "restaurant",
    "r": "restaurant",
    "coin": "coin",
    "take1": "coin",
    "swap": "swap",
    "take": "take",
    "t": "take",
    "draw": "draw",
    "d": "draw",
    "flip": "flip",
    "f": "flip",
    "reveal": "reveal",
}
SPACE_RE: Final = re.compile(r"^([a-e])([1-5])$")
ENTRANCE_RE: Final = re.compile(r"^([nswe])([1-5])$")


_TWO_WORDS: Final = re.compile(r"\b(?:sushi bar|tea house|burger joint|wine bar|wine grapes?)\b")
"""The restaurants named in two words, and the two-word good of GOOD_SYNONYMS: each read
as one word (one pattern: a move is read in a single pass)."""


def _one_word(found: re.Match[str]) -> str:
    words = found.group()
    return "grape" if words.startswith("wine g") else words.replace(" ", "")


_LAST_TOKENS: list[tuple[str, tuple[str, ...]]] = [("", ())]
"""The last line's words: a line is split (`split`), then the same line read (`parse`).
One entry, replaced whole (safe across threads)."""


def _tokens(text: str) -> tuple[str, ...]:
    last, words = _LAST_TOKENS[0]
    if last == text:
        return words
    cleaned = text.lower().replace("_", " ").replace("-", " ").replace("+", " ").replace(",", " ")
    # Every two-word name starts with one of these words; most moves have none.
    if "sushi" in cleaned or "tea" in cleaned or "burger" in cleaned or "wine" in cleaned:
        cleaned = _TWO_WORDS.sub(_one_word, cleaned)
    words = tuple(cleaned.split())
    _LAST_TOKENS[0] = (text, words)
    return words


def _space(token: str, text: str) -> int:
    found = SPACE_RE.match(token)
    if not found:
        raise NotationError(f"{token!r} is not a space (a1..e5).", text)
    return (int(found.group(2)) - 1) * 5 + "abcde".index(found.group(1))


def _entrance(token: str, text: str) -> int:
    found = ENTRANCE_RE.match(token)
    if not found:
        raise NotationError(f"{token!r} is not an entrance (n1..n5, s1..s5, w1..w5, e1..e5).", text)
    return "nswe".index(found.group(1)) * 5 + int(found.group(2)) - 1


def _good(token: str, text: str) -> int:
    if token not in GOOD_SYNONYMS:
        raise NotationError(f"{token!r} is not a good ({', '.join(GOODS)}).", text)
    return GOOD_SYNONYMS[token]


def _restaurant(token: str, text: str) -> int:
    if token not in RESTAURANT_SYNONYMS:
        raise NotationError(f"{token!r} is not a restaurant ({', '.join(RESTAURANT_WORDS)}).", text)
    return RESTAURANT_SYNONYMS[token]


def _count(token: str, text: str) -> int:
    if token not in ("1", "2", "3", "4"):
        raise NotationError(f"{token!r} is not a number of customers (1..4).", text)
    return int(token)


def _goods_text(goods: tuple[int, ...] | list[int]) -> str:
    return "+".join(GOODS[g] for g in sorted(goods))


REFRESH_WORDS: Final = ("refresh", "swap")


def split(text: str, state: rl.State) -> tuple[str, ...]:
    """The moves a line stands for, so that one table event is one line (§4.5):

    - `stand fish b3 refresh meat fish grape [take meat]`: the stand with the refresh, the
      table's three draws for the new display, and the tile then taken from it;
    - `swap fish meat grape`: the swap and the table's three draws for the new hand;
    - `draw fish grape flower`: one draw per good named.

    Any other line is one move (the long forms stay as they are)."""
    if text in CANONICAL:
        return (text,)
    tokens = _tokens(text)
    if not tokens:
        return (text,)
    verb = VERBS.get(tokens[0])
    if verb == "draw" and len(tokens) > 2:
        return tuple(f"draw {good}" for good in tokens[1:])
    if verb == "swap" and len(tokens) > 1:
        return ("swap", *(f"draw {good}" for good in tokens[1:]))
    if verb == "stand" and ("refresh" in tokens or "swap" in tokens):  # REFRESH_WORDS
        at = next(i for i, t in enumerate(tokens) if t in REFRESH_WORDS)
        if at + 1 < len(tokens):
            drawn = tokens[at + 1 :]
            taken: tuple[str, ...] = ()
            if "take" in drawn or "t" in drawn:
                cut = drawn.index("take") if "take" in drawn else drawn.index("t")
                drawn, taken = drawn[:cut], drawn[cut:]
            lines = [" ".join(tokens[: at + 1]), *(f"draw {good}" for good in drawn)]
            return (*lines, " ".join(taken)) if taken else tuple(lines)
    return (text,)


def parse(text: str, state: rl.State) -> rl.Move:
    """Read a move typed by a recorder (see the module docstring)."""
    if not isinstance(text, str):
        raise NotationError("A move is text.", str(text))
    build = CANONICAL.get(text)
    if build is not None:
        return build()
    return parse_words(text, state)


def _canonical() -> dict[str, Callable[[], rl.Move]]:
    """The canonical text of every move that reads the same in every state (all but the
    customer tiles, whose reading depends on the game's tiles), with what builds its move:
    as `parse_words` reads it, without its words taken apart (most moves of a record)."""
    goods = range(len(GOODS))
    spaces = range(len(SPACE_NAMES))
    restaurants = range(len(RESTAURANT_WORDS))
    table: dict[str, Callable[[], rl.Move]] = {"coin": lambda: rl.COIN, "swap": lambda: rl.SWAP}
    for good in goods:
        table[f"draw {GOODS[good]}"] = partial(rl.chance_move, "draw", good, ())
        table[f"take {GOODS[good]}"] = partial(rl.take_move, good)
        for space in spaces:
            stand = f"stand {GOODS[good]} {SPACE_NAMES[space]}"
            table[stand] = partial(rl.stand_move, good, space)
            table[f"{stand} refresh"] = partial(rl.stand_move, good, space, -1, True)
            for take in goods:
                table[f"{stand} take {GOODS[take]}"] = partial(rl.stand_move, good, space, take)
    for restaurant in restaurants:
        word = RESTAURANT_WORDS[restaurant]
        table[f"flip {word}"] = partial(rl.chance_move, "flip", restaurant, ())
        for space in spaces:
            table[f"restaurant {word} {SPACE_NAMES[space]}"] = partial(
                rl.restaurant_move, restaurant, space
            )
    tiles = [(good,) for good in goods] + list(combinations(goods, 2))
    for customers in range(1, len(TILES_PER_SIZE) + 1):
        for tile in tiles:
            table[f"reveal {customers} {_goods_text(tile)}"] = partial(
                rl.chance_move, "reveal", customers, tile
            )
    return table


CANONICAL: Final = _canonical()
"""Canonical move text -> its move (see `_canonical`)."""


def parse_words(text: str, state: rl.State) -> rl.Move:
    """`parse` of any text: its words taken apart and read one by one."""
    tokens = _tokens(text)
    if not tokens:
        raise NotationError("Empty move.", text)
    verb = VERBS.get(tokens[0])
    if verb is None:
        raise NotationError(
            f"{tokens[0]!r} is not a move; moves start with stand, customer, restaurant, coin, "
            "swap, take, draw, flip or reveal.",
            text,
        )
    rest = tokens[1:]
    if verb == "coin" or verb == "swap":
        if rest and not (verb == "coin" and rest in (("1",), ("1", "coin"))):
            raise NotationError(f"{verb} takes nothing after it.", text)
        return rl.COIN if verb == "coin" else rl.SWAP
    if verb == "take":
        if rest in (("1", "coin"), ("coin",), ("1",)):
            return rl.COIN
        if len(rest) != 1:
            raise NotationError("take names one good of the display: take grape.", text)
        return rl.take_move(_good(rest[0], text))
    if verb == "draw":
        if len(rest) != 1:
            raise NotationError("draw names one good: draw meat.", text)
        return rl.chance_move("draw", _good(rest[0], text), ())
    if verb == "flip":
        if len(rest) != 1:
            raise NotationError("flip names one restaurant: flip pizza.", text)
        return rl.chance_move("flip", _restaurant(rest[0], text), ())
    if verb == "reveal":
        if len(rest) not in (2, 3):
            raise NotationError("reveal names a tile: reveal 3 fish+meat.", text)
        n = _count(rest[0], text)
        goods = tuple(sorted(_good(t, text) for t in rest[1:]))
        return rl.chance_move("reveal", n, goods)
    if verb == "restaurant":
        if len(rest) != 2:
            raise NotationError("restaurant names a type and a space: restaurant sushi c4.", text)
        return rl.restaurant_move(_restaurant(rest[0], text), _space(rest[1], text))
    if verb == "stand":
        return _parse_stand(rest, text, state)
    return _parse_customer(rest, text, state)


def _parse_stand(rest: tuple[str, ...], text: str, state: rl.State) -> rl.Move:
    good = -1
    if rest and not SPACE_RE.match(rest[0]):
        good = _good(rest[0], text)
        rest = rest[1:]
    if not rest:
        raise NotationError("stand names a space: stand fish b3 take grape.", text)
    space = _space(rest[0], text)
    rest = rest[1:]
    take = -1
    refresh = False
    if rest and rest[0] in ("take", "t"):
        if len(rest) != 2:
            raise NotationError("take names one good of the display: take grape.", text)
        take = _good(rest[1], text)
    elif rest and rest[0] in ("refresh", "swap"):
        if len(rest) != 1:
            raise NotationError("refresh takes nothing after it.", text)
        refresh = True
    elif len(rest) == 1 and rest[0] in GOOD_SYNONYMS:
        take = _good(rest[0], text)
    elif rest:
        raise NotationError(f"Unexpected {' '.join(rest)!r} after the stand's space.", text)
    if good < 0:
        options = sorted(set(state.hands[state.seat])) if state.seat < len(state.hands) else []
        if len(options) == 1:
            good = options[0]
        elif not options:
            raise NotationError("Name the stand tile's good: you hold none.", text)
        else:
            candidates = [
                format_move(rl.stand_move(g, space, take, refresh), state) for g in options
            ]
            raise AmbiguousNotation("Which stand tile?", text, candidates)
    return rl.stand_move(good, space, take, refresh)


def _parse_customer(rest: tuple[str, ...], text: str, state: rl.State) -> rl.Move:
    if not rest:
        raise NotationError(
            "customer names a tile and an entrance: customer 2 fish+flower w3.", text
        )
    entrance = _entrance(rest[-1], text)
    rest = rest[:-1]
    n = 0
    if rest and rest[0].isdigit():
        n = _count(rest[0], text)
        rest = rest[1:]
    if len(rest) > 2:
        raise NotationError("A customer tile shows one or two goods.", text)
    goods = tuple(sorted(_good(t, text) for t in rest))
    if n and len(goods) in (1, 2) and state.rules.kind_of(n, goods) >= 0:
        return rl.customer_move(n, goods, entrance)
    kinds = state.rules.board.kinds
    offered = sorted({k for size in state.offers for k in size})
    matches = [
        k
        for k in offered
        if (not n or kinds[k][0] == n)
        and all(g in kinds[k][1] for g in goods)
        and (len(goods) == len(kinds[k][1]) or len(goods) < 2)
    ]
    if len(matches) == 1 and (goods or n):
        k = matches[0]
        return rl.customer_move(kinds[k][0], kinds[k][1], entrance)
    if n and len(goods) in (1, 2):
        return rl.customer_move(n, goods, entrance)
    if not matches:
        raise NotationError("No available customer tile fits that description.", text)
    candidates = [
        f"customer {kinds[k][0]} {_goods_text(kinds[k][1])} {ENTRANCE_NAMES[entrance]}"
        for k in matches
    ]
    raise AmbiguousNotation("Which customer tile?", text, candidates)


def format_move(move: rl.Move, state: rl.State) -> str:
    """The canonical text of `move`."""
    text = CANONICAL_TEXT.get(move.SerializeToString())
    if text is not None:
        return text
    return format_fields(move, state)


CANONICAL_TEXT: Final = {build().SerializeToString(): text for text, build in CANONICAL.items()}
"""The moves of `CANONICAL` (by their bytes: the same bytes, the same fields) -> their text."""


def format_fields(move: rl.Move, state: rl.State) -> str:
    """`format_move` of any move: its text written field by field."""
    action = move.WhichOneof("action")
    if action == "draw":
        return f"draw {_name(GOOD_WORDS, move.draw.good)}"
    if action == "stand":
        m = move.stand
        text = f"stand {_name(GOOD_WORDS, m.good)} {_name(SPACE_WORDS, m.space)}"
        if m.refresh_display:
            return text + " refresh"
        if m.take:
            return text + f" take {_name(GOOD_WORDS, m.take)}"
        return text
    if action == "customer" or action == "reveal":
        rl.check_bounds(state, move)  # the only actions with anything to bound
    if action == "reveal":
        v = move.reveal
        return f"reveal {v.customers} {_goods_words(v.goods)}"
    if action == "customer":
        c = move.customer
        return f"customer {c.customers} {_goods_words(c.goods)} {_name(ENTRANCE_WORDS, c.entrance)}"
    if action == "flip":
        return f"flip {_name(RESTAURANT_NAMES, move.flip.restaurant)}"
    if action == "restaurant":
        r = move.restaurant
        return f"restaurant {_name(RESTAURANT_NAMES, r.restaurant)} {_name(SPACE_WORDS, r.space)}"
    if action == "coin":
        return "coin"
    if action == "swap":
        return "swap"
    if action == "take":
        return f"take {_name(GOOD_WORDS, move.take.good)}"
    raise NotationError("An empty move has no notation.")


# The words of the enums' values (protobuf values: the index plus one), for `format_move`.
GOOD_WORDS: Final = dict(enumerate(GOODS, 1))
SPACE_WORDS: Final = dict(enumerate(SPACE_NAMES, 1))
ENTRANCE_WORDS: Final = dict(enumerate(ENTRANCE_NAMES, 1))
RESTAURANT_NAMES: Final = dict(enumerate(RESTAURANT_WORDS, 1))


def _goods_words(goods: Sequence[int]) -> str:
    """`fish+meat`: a tile's goods in the canonical order."""
    if len(goods) == 2:  # the tiles of the game; no list built
        first, second = goods
        if first > second:
            first, second = second, first
        return f"{_name(GOOD_WORDS, first)}+{_name(GOOD_WORDS, second)}"
    return "+".join([_name(GOOD_WORDS, g) for g in sorted(goods)])


def _name(names: Mapping[int, str], value: int) -> str:
    word = names.get(value)
    if word is None:
        raise NotationError(f"No name for value {value}.")
    return word
