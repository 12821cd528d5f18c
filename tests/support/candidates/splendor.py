"""Candidate Splendor moves: every action kind over the ids, levels, slots, gems and token
counts the component files allow, plus payments varied around the listed ones.

The tails (`returned`, `noble`) are shorthand for the `discard` and `choose_noble` moves
that follow an action (RULES.md §3.2, §7; a discard may carry the noble): every listed move
is also tried with each small return and each noble as tails, and `decisions` splits a
shorthand into the listed moves it stands for."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from tablelog.replay.core import Game
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
    step = max(1, len(legal) // TAILED_MOVES)
    for move in legal[::step]:
        for returned in ranges["discard"]["tokens"]:
            tailed = pb.SplendorMove()
            tailed.CopyFrom(move)
            tailed.returned.CopyFrom(returned)
            yield tailed
        for noble in ranges["choose_noble"]["noble"]:
            tailed = pb.SplendorMove()
            tailed.CopyFrom(move)
            tailed.noble = noble
            yield tailed


ACTIONS = ("take_different", "take_same", "reserve", "buy", "pass")
TAILED_MOVES = 30
"""At most this many listed moves (spread over the list) are tried with tails per state."""


def decisions(move: pb.SplendorMove) -> list[tuple[pb.SplendorMove, bool]] | None:
    """The listed moves a move with tails stands for: the action (or discard) without its
    tails, then the return, then the noble; None for a move without tails or one that may
    not carry them. A named noble may have been the only one that qualifies, which visits
    unasked (RULES.md §7): that step may be taken by the rules themselves."""
    kind = move.WhichOneof("action")
    returned = move.HasField("returned") and any(_counts(move.returned))
    if not (returned or move.noble):
        return None
    if kind not in ACTIONS and not (kind == "discard" and not move.HasField("returned")):
        return None
    bare = pb.SplendorMove()
    bare.CopyFrom(move)
    bare.ClearField("returned")
    bare.ClearField("noble")
    steps = [(bare, False)]
    if returned:
        steps.append((pb.SplendorMove(discard=pb.SplendorDiscard(tokens=move.returned)), False))
    if move.noble:
        choice = pb.SplendorNobleChoice(noble=move.noble)
        steps.append((pb.SplendorMove(choose_noble=choice), True))
    return steps


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.SplendorMove], Hashable]:
    """The colours of a take, in any order; a buy names its place (a market level and slot,
    or a reserved card), and may also spell out the card at that place and the payment; an
    empty return (`return nothing`) is no return."""
    return _meaning


def _meaning(move: pb.SplendorMove) -> Hashable:
    if move.HasField("returned") and not any(_counts(move.returned)):
        bare = pb.SplendorMove()
        bare.CopyFrom(move)
        bare.ClearField("returned")
        return _meaning(bare)
    if move.HasField("take_different"):
        return ("take_different", frozenset(move.take_different.gems))
    if move.HasField("buy"):
        return ("buy", move.buy.level, move.buy.slot, move.buy.reserved)
    return exact(move)
