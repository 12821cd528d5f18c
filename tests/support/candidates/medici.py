"""Candidate Medici moves: every action kind, every tile kind of the tile file (and names
that are none), every bid from 0 past the richest purse, every seat and one past them."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from tablelog.replay.core import Game
from tablelog.v1 import medici_pb2 as pb
from tests.support.candidates.fields import Ranges, around, every_combination, exact, full_view

CENSUS_STATES = 1_000
"""Few candidates per state: the census visits every state of its games (far fewer)."""


def ranges(game: Game[Any, Any], state: Any, legal: Sequence[pb.MediciMove]) -> Ranges:
    view = full_view(game, state, pb.MediciView)
    tiles = ["", "nothing", *(u.tile for u in view.unseen)]
    richest = max(seat.florins for seat in view.seats)
    return {
        "draw_more": {},
        "close_lot": {},
        "draw": {"tile": tiles},
        "bid": {"florins": around(range(richest + 1))},
        "pass_bid": {},
        "remove": {"tile": tiles},
        "start_player": {"seat": around(range(len(view.seats)))},
    }


def candidates(
    game: Game[Any, Any], state: Any, ranges: Ranges, legal: Sequence[Any]
) -> Iterator[pb.MediciMove]:
    for action, fields in ranges.items():
        yield from every_combination(pb.MediciMove, action, fields)


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.MediciMove], Hashable]:
    """Medici notation documents no alternative spelling of a move."""
    return _meaning


def _meaning(move: pb.MediciMove) -> Hashable:
    return exact(move)
