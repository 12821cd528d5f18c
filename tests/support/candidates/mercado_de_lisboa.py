"""Candidate Mercado de Lisboa moves: every action kind over every good, restaurant,
space, entrance and customer tile (every set of goods, 0 to 5 customers) the board allows,
one past each end, and the unset values."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from tablelog.replay.core import Game
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.candidates.fields import Ranges, around, every_combination, exact, full_view

GOODS = [g for g in pb.MercadoDeLisboaGood.values() if g]
RESTAURANTS = [r for r in pb.MercadoDeLisboaRestaurant.values() if r]


def ranges(game: Game[Any, Any], state: Any, legal: Sequence[pb.MercadoDeLisboaMove]) -> Ranges:
    view = full_view(game, state, pb.MercadoDeLisboaView)
    goods = [0, *GOODS, max(GOODS) + 1]
    restaurants = [0, *RESTAURANTS, max(RESTAURANTS) + 1]
    spaces = around(range(1, len(view.spaces) + 1))
    entrances = around(range(1, len(view.entrances) + 1))
    # Goods lists in the canonical order; other orders and repeats come from the mutations.
    good_sets = [
        list(c) for size in range(len(GOODS) + 1) for c in itertools.combinations(GOODS, size)
    ]
    customers = around(range(1, len(view.customers) + 1))
    return {
        "stand": {
            "good": goods,
            "space": spaces,
            "take": goods,
            "refresh_display": [False, True],
        },
        "customer": {"customers": customers, "goods": good_sets, "entrance": entrances},
        "restaurant": {"restaurant": restaurants, "space": spaces},
        "coin": {},
        "swap": {},
        "take": {"good": goods},
        "draw": {"good": goods},
        "flip": {"restaurant": restaurants},
        "reveal": {"customers": customers, "goods": good_sets},
    }


def candidates(
    game: Game[Any, Any], state: Any, ranges: Ranges, legal: Sequence[Any]
) -> Iterator[pb.MercadoDeLisboaMove]:
    for action, fields in ranges.items():
        yield from every_combination(pb.MercadoDeLisboaMove, action, fields)


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.MercadoDeLisboaMove], Hashable]:
    """The goods of a customer tile, in any order."""
    return _meaning


def _meaning(move: pb.MercadoDeLisboaMove) -> Hashable:
    if move.HasField("customer"):
        c = move.customer
        return ("customer", c.customers, tuple(sorted(c.goods)), c.entrance)
    if move.HasField("reveal"):
        return ("reveal", move.reveal.customers, tuple(sorted(move.reveal.goods)))
    return exact(move)
