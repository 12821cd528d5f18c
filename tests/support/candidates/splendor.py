"""Candidate Splendor moves: every action kind over the ids, levels, slots, gems and token
counts the component files allow, plus payments varied around the listed ones.

The optional tails of an action (`returned`, `noble`) are not varied: they are shorthand for
the `discard` and `choose_noble` moves that follow (RULES.md §3.2, §7), and those are
enumerated as decisions of their own."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from replay.core import Game
from tablelog.v1 import splendor_pb2 as pb
from tests.support.candidates.fields import (
    OUT_OF_RANGE,
    Ranges,
    around,
    every_combination,
    exact,
    full_view,
    make,
)

GEMS = [1, 2, 3, 4, 5]
GOLD = 6
COLOURS = ("white", "blue", "green", "red", "black", "gold")
GOLD_INDEX = COLOURS.index("gold")


def _ids(game: Game[Any, Any], component: str) -> list[int]:
    files = {c.name: c for c in game.default_components()}
    rows = csv.DictReader(io.StringIO(files[component].content.decode()))
    return [int(row["id"]) for row in rows]


def _tokens(counts: Sequence[int]) -> pb.SplendorTokens:
    return pb.SplendorTokens(**dict(zip(COLOURS, counts, strict=True)))


def _counts(tokens: pb.SplendorTokens) -> list[int]:
    return [getattr(tokens, colour) for colour in COLOURS]


def _small_returns() -> list[pb.SplendorTokens]:
    """Every way to name 0 to 3 tokens (a turn ends at most 3 above the limit of 10)."""
    found = []
    for size in range(4):
        for combo in itertools.combinations_with_replacement(range(6), size):
            found.append(_tokens([combo.count(c) for c in range(6)]))
    return found


def _payments(legal: Sequence[pb.SplendorMove], held: Sequence[int]) -> list[Any]:
    """None (the canonical payment), every listed payment, each with one token moved
    between a colour and gold or one token more or less, and everything the player holds."""
    found: list[Any] = [None, pb.SplendorTokens(), _tokens(held)]
    for move in legal:
        if move.WhichOneof("action") != "buy" or not move.buy.HasField("payment"):
            continue
        paid = _counts(move.buy.payment)
        found.append(move.buy.payment)
        for colour in range(5):
            for delta in (-1, 1):
                swapped = list(paid)
                swapped[colour] += delta
                swapped[GOLD_INDEX] -= delta
                changed = list(paid)
                changed[colour] += delta
                found += [_tokens(v) for v in (swapped, changed) if min(v) >= 0]
    return found


def ranges(game: Game[Any, Any], state: Any, legal: Sequence[pb.SplendorMove]) -> Ranges:
    card_ids = _ids(game, "splendor_cards.csv")
    noble_ids = _ids(game, "splendor_nobles.csv")
    view = full_view(game, state, pb.SplendorView)
    in_play = {c.id for row in view.market for c in row.slots if c.id}
    for player in view.players:
        in_play |= {r.card.id for r in player.reserved if r.card.id}
    elsewhere = next(i for i in card_ids if i not in in_play)
    held = _counts(view.players[view.current_player].tokens) if view.players else [0] * 6
    gem_lists = [
        list(combo) for size in range(4) for combo in itertools.combinations([0, *GEMS, GOLD], size)
    ]
    levels = [0, 1, 2, 3, 4]
    slots = [0, 1, 2, 3, 4, 5]
    return {
        "take_different": {"gems": gem_lists},
        "take_same": {"gem": [0, *GEMS, GOLD, GOLD + 1]},
        "reserve": {"level": levels, "slot": slots},
        "buy": {
            "level": levels,
            "slot": slots,
            "reserved": [0, 1, 2, 3, 4],
            "card": [0, *sorted(in_play), elsewhere, OUT_OF_RANGE],
            "payment": _payments(legal, held),
        },
        "pass": {},
        "discard": {"tokens": _small_returns()},
        "choose_noble": {"noble": around(noble_ids)},
        "reveal_card": {"level": levels, "slot": slots, "card": around(card_ids)},
        "reveal_noble": {"noble": around(noble_ids)},
    }


def candidates(
    game: Game[Any, Any], state: Any, ranges: Ranges, legal: Sequence[Any]
) -> Iterator[pb.SplendorMove]:
    """Every combination, except buys: one at every market place naming no card, each card
    in play, a card elsewhere and an id beyond the file; one for every reserved index with
    every card id (a blind reserve is bought by naming a card of its level). Payments, and
    buys naming both kinds of place, come from the mutations of the listed buys."""
    for action, fields in ranges.items():
        if action == "buy":
            continue
        yield from every_combination(pb.SplendorMove, action, fields)
    buy = ranges["buy"]
    for level, slot, card in itertools.product(buy["level"], buy["slot"], buy["card"]):
        yield make(pb.SplendorMove, "buy", {"level": level, "slot": slot, "card": card})
    for reserved, card in itertools.product(buy["reserved"], ranges["reveal_card"]["card"]):
        yield make(pb.SplendorMove, "buy", {"reserved": reserved, "card": card})


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.SplendorMove], Hashable]:
    """The colours of a take, in any order; a buy names its place (a market level and slot,
    or a reserved card), and may also spell out the card at that place and the payment."""
    return _meaning


def _meaning(move: pb.SplendorMove) -> Hashable:
    if move.HasField("take_different"):
        return ("take_different", frozenset(move.take_different.gems))
    if move.HasField("buy"):
        return ("buy", move.buy.level, move.buy.slot, move.buy.reserved)
    return exact(move)
