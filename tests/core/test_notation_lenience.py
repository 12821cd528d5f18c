"""Card and tile text is as lenient as each game's notation document says (issue 16, item
4): every documented spelling of every legal move, in states of seeded random games, reads
as that very move. The forms are taken from the "lenient input" paragraphs and the tables of
docs/notation/*.md; each case names the document's words it holds."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tablelog.replay.core import RulesError
from tests.support.play import random_game

Respell = Callable[[str], str]


def swap_edge_cells(text: str) -> str:
    return re.sub(r"\b([a-z0-9]+)\|([a-z0-9]+)\b", r"\2|\1", text)


def separated_cost(separator: str) -> Respell:
    """A Splendor card's cost parts separated (`2g1:w2, u3, r3`), which the notation ignores."""

    def respell(text: str) -> str:
        return re.sub(
            r":((?:[wugrk]\d)+)",
            lambda m: ":" + separator.join(re.findall(r"..", m[1])),
            text,
        )

    return respell


def reversed_cost(text: str) -> str:
    """A Splendor card's cost parts in reverse order ("costs in any order")."""
    return re.sub(
        r":((?:[wugrk]\d)+)", lambda m: ":" + "".join(reversed(re.findall(r"..", m[1]))), text
    )


GOOD = r"\b(cloth|fur|grain|dye|spice)(\d)"
MERCADO_GOODS = r"\b(fish|flower|tomato|meat|grape)\b"
TWO_LETTERS = {"fish": "fi", "flower": "fl", "tomato": "to", "meat": "me", "grape": "gr"}
PLURALS = {"fish": "fishes", "flower": "flowers", "tomato": "tomatoes", "meat": "meats"}
RESTAURANTS = {"sushi": "sushi bar", "tea": "tea house", "pizza": "pizzeria"}

CASES: list[tuple[str, int, str, Respell]] = [
    # docs/notation/splendor.md, "Lenient input"
    ("splendor", 3, "case-insensitive", str.upper),
    ("splendor", 3, "extra spaces are ignored", lambda t: "  " + t.replace(" ", "   ")),
    ("splendor", 3, "commas are ignored", lambda t: t.replace(" ", ", ")),
    ("splendor", 3, "semicolons are ignored", lambda t: t.replace(" ", "; ")),
    ("splendor", 3, "commas inside a card", separated_cost(", ")),
    ("splendor", 3, "spaces inside a card", separated_cost(" ")),
    ("splendor", 3, "spaces around a card's colon", lambda t: t.replace(":", " : ")),
    ("splendor", 3, "costs in any order", reversed_cost),
    ("splendor", 3, "places 2-3", lambda t: re.sub(r"\b(\d)\.(\d)\b", r"\1-\2", t)),
    ("splendor", 3, "places 2/3", lambda t: re.sub(r"\b(\d)\.(\d)\b", r"\1/\2", t)),
    ("splendor", 3, "places 2.d", lambda t: t.replace(".deck", ".d")),
    # docs/notation/medici.md: "lenient about case, spaces and plurals"
    ("medici", 3, "case", str.upper),
    ("medici", 3, "spaces", lambda t: re.sub(GOOD, r"\1 \2", t)),
    ("medici", 3, "plurals", lambda t: re.sub(GOOD, r"\1s\2", t)),
    ("medici", 3, "`d cloth3`, `d`", lambda t: re.sub(r"^draw\b", "d", t)),
    ("medici", 3, "`cloth3` alone", lambda t: re.sub(r"^draw (?=\w)", "", t)),
    ("medici", 3, "`stop`, `a`", lambda t: {"auction": "stop"}.get(t, t)),
    ("medici", 3, "`b 7`, `p`", lambda t: {"pass": "p"}.get(t, re.sub(r"^bid ", "b ", t))),
    # docs/notation/medici-card-game.md
    ("medici-card-game", 3, "case", str.upper),
    ("medici-card-game", 3, "spaces", lambda t: re.sub(GOOD, r"\1 \2", t)),
    ("medici-card-game", 3, "plurals", lambda t: re.sub(GOOD, r"\1s\2", t)),
    ("medici-card-game", 3, "`dye flag`", lambda t: re.sub(r"\b(\w+)flag\b", r"\1 flag", t)),
    ("medici-card-game", 3, "`flag dye`", lambda t: re.sub(r"\b(\w+)flag\b", r"flag \1", t)),
    ("medici-card-game", 3, "`green`, `black`", lambda t: re.sub(r"\b(green|black)\d", r"\1", t)),
    ("medici-card-game", 3, "`fur3` alone", lambda t: re.sub(r"^reveal ", "", t)),
    ("medici-card-game", 3, "`flip` as `f`", lambda t: {"flip": "f"}.get(t, t)),
    # docs/notation/mercado-de-lisboa.md, the lenient input list
    ("mercado-de-lisboa", 2, "any case and spacing", lambda t: " " + t.upper().replace(" ", "  ")),
    ("mercado-de-lisboa", 2, "`_` separates words", lambda t: t.replace(" ", "_")),
    ("mercado-de-lisboa", 2, "`-` separates words", lambda t: t.replace("+", "-")),
    ("mercado-de-lisboa", 2, "`,` separates words", lambda t: t.replace("+", ", ")),
    ("mercado-de-lisboa", 2, "`+` with spaces", lambda t: t.replace("+", " + ")),
    (
        "mercado-de-lisboa",
        2,
        "goods in any order",
        lambda t: re.sub(r"\b([a-z]+)\+([a-z]+)\b", r"\2+\1", t),
    ),
    (
        "mercado-de-lisboa",
        2,
        "two-letter goods",
        lambda t: re.sub(MERCADO_GOODS, lambda m: TWO_LETTERS[m[1]], t),
    ),
    (
        "mercado-de-lisboa",
        2,
        "plurals",
        lambda t: re.sub(MERCADO_GOODS, lambda m: PLURALS.get(m[1], m[1]), t),
    ),
    ("mercado-de-lisboa", 2, "wine grape", lambda t: re.sub(r"\bgrape\b", "wine grape", t)),
    (
        "mercado-de-lisboa",
        2,
        "full restaurant names",
        lambda t: re.sub(r"\b(sushi|tea|pizza)\b", lambda m: RESTAURANTS[m[1]], t),
    ),
    ("mercado-de-lisboa", 2, "`t` for take", lambda t: re.sub(r"(^| )take ", r"\1t ", t)),
    ("mercado-de-lisboa", 2, "`take` left out", lambda t: t.replace(" take ", " ")),
    ("mercado-de-lisboa", 2, "`s` for stand", lambda t: re.sub(r"^stand ", "s ", t)),
    ("mercado-de-lisboa", 2, "`c` for customer", lambda t: re.sub(r"^customer ", "c ", t)),
    ("mercado-de-lisboa", 2, "`take 1 coin`", lambda t: {"coin": "take 1 coin"}.get(t, t)),
    # docs/notation/castello-methoni.md
    ("castello-methoni", 3, "case", str.upper),
    ("castello-methoni", 3, "spacing", lambda t: "  " + t.replace(" ", "  ")),
    ("castello-methoni", 3, "edge cells in any order", swap_edge_cells),
    (
        "castello-methoni",
        3,
        "`market` read as `sea`",
        lambda t: re.sub(r"^(build|trade) sea\b", r"\1 market", t),
    ),
]


@pytest.mark.parametrize(
    ("game", "players", "doc", "respell"), CASES, ids=[f"{c[0]}: {c[2]}" for c in CASES]
)
def test_every_documented_spelling_reads_as_the_same_move(
    game: str, players: int, doc: str, respell: Respell
) -> None:
    tried = 0
    for seed in range(2):
        played = random_game(game, players, seed=seed, keep_states=True)
        rules = played.position.game
        for state in played.states[::3]:
            for move in list(rules.legal_moves(state))[:60]:
                canonical = rules.format(move, state)
                text = respell(canonical)
                if text == canonical:
                    continue
                tried += 1
                try:
                    read = rules.parse(text, state)
                except RulesError as refused:
                    pytest.fail(f"{text!r} ({doc}) for {canonical!r}: {refused.message}")
                assert read == move, f"{text!r} ({doc}) read as {rules.format(read, state)!r}"
    assert tried, f"no legal move in these games has a spelling for {doc!r}"
