"""Candidate moves of Medici: The Card Game: every action kind, every card kind of the deck
file (and names that are none), every take of up to four positions in any order (repeats
included), every seat and one past them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from tablelog.replay.core import Game
from tablelog.v1 import medici_card_game_pb2 as pb
from tests.support.candidates.fields import (
    OUT_OF_RANGE,
    Ranges,
    around,
    every_combination,
    exact,
    full_view,
)

POSITIONS = [0, 1, 2, 3, 4, OUT_OF_RANGE]


CENSUS_STATES = 1_000
"""Few candidates per state: the census visits every state of its games (far fewer)."""


def ranges(game: Game[Any, Any], state: Any, legal: Sequence[pb.MediciCardGameMove]) -> Ranges:
    view = full_view(game, state, pb.MediciCardGameView)
    # Any order and repeats of up to three positions, and one take of four.
    takes = [list(p) for size in range(4) for p in itertools.product(POSITIONS, repeat=size)]
    return {
        "flip": {},
        "reveal": {"card": ["", "nothing", *(u.card for u in view.unseen)]},
        "take": {"positions": [*takes, [1, 2, 3, 4]]},
        "start_player": {"seat": around(range(len(view.seats)))},
    }


def candidates(
    game: Game[Any, Any], state: Any, ranges: Ranges, legal: Sequence[Any]
) -> Iterator[pb.MediciCardGameMove]:
    for action, fields in ranges.items():
        yield from every_combination(pb.MediciCardGameMove, action, fields)


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.MediciCardGameMove], Hashable]:
    """A take names a set of positions: their order does not matter."""
    return _meaning


def _meaning(move: pb.MediciCardGameMove) -> Hashable:
    if move.HasField("take"):
        return ("take", frozenset(move.take.positions))
    return exact(move)
