"""Candidate Castello Methoni moves: every action kind over the cards, cells, seats and
missions of the board file. A build is tried on every ordered pair of cells (and each cell
with the sea) with the card of either side, the builder's house on one side and the next
seat's on the other; the other cards, seats and placements come from the mutations of the
listed builds (tests/games/castello_methoni/test_random_play.py tries them all on open edges)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from tablelog.replay.core import Game
from tablelog.v1 import castello_methoni_pb2 as pb
from tests.support.candidates.fields import (
    Ranges,
    around,
    every_combination,
    exact,
    full_view,
    make,
)

SEA = "sea"
HAND_SIZE = 5
"""The hand a stuck player reveals (RULES.md §4)."""


def ranges(game: Game[Any, Any], state: Any, legal: Sequence[pb.CastelloMethoniMove]) -> Ranges:
    view = full_view(game, state, pb.CastelloMethoniView)
    cells = [cell.id for cell in view.cells]
    cards = [*view.terrains, SEA]
    words = ["", "nowhere"]
    seats = around(range(len(view.seats)))
    missions = {seat.mission for seat in view.seats if seat.mission}
    missions |= {m.mission.mission for m, _ in game.chance_outcomes(state) if m.HasField("mission")}
    # Other builds' placements (and none): a listed build mutated gets another edge's houses
    # or another owner's; each house's seat is also varied in `candidates`.
    houses: list[Any] = [[]]
    for move in legal:
        if move.HasField("build") and list(move.build.houses) not in houses:
            houses.append(list(move.build.houses))
    hands = [
        list(hand)
        for size in (0, HAND_SIZE - 1, HAND_SIZE)
        for hand in itertools.combinations_with_replacement(cards, size)
    ]
    return {
        "build": {
            "card": [*cards, *words],
            "cell": [*cells, SEA, *words],
            "other": [*cells, SEA, *words],
            "houses": houses,
        },
        "trade": {"card": [*cards, *words]},
        "merge": {"cell": [*cells, *words]},
        "stop_merging": {},
        "end_turn": {},
        "redraw": {"revealed": hands},
        "first_player": {"seat": seats},
        "mission": {"seat": seats, "mission": [*sorted(missions), *words]},
        "draw": {"card": [*cards, *words]},
    }


def candidates(
    game: Game[Any, Any], state: Any, ranges: Ranges, legal: Sequence[pb.CastelloMethoniMove]
) -> Iterator[pb.CastelloMethoniMove]:
    for action, fields in ranges.items():
        if action != "build":
            yield from every_combination(pb.CastelloMethoniMove, action, fields)
    view = full_view(game, state, pb.CastelloMethoniView)
    terrain = {cell.id: cell.terrain for cell in view.cells}
    seats = range(len(view.seats))
    mover = max(view.current_player, 0)
    neighbour = (mover + 1) % len(view.seats)
    for cell, other in itertools.product(terrain, [*terrain, SEA]):
        if cell == other:
            continue
        houses = [pb.CastelloMethoniHouse(seat=mover, cell=cell)]
        if other != SEA:
            houses.append(pb.CastelloMethoniHouse(seat=neighbour, cell=other))
        for card in {terrain[cell], terrain.get(other, SEA)}:
            yield make(
                pb.CastelloMethoniMove,
                "build",
                {"card": card, "cell": cell, "other": other, "houses": houses},
            )
    for move in legal:
        if not move.HasField("build"):
            continue
        for index, seat in itertools.product(range(len(move.build.houses)), seats):
            changed = pb.CastelloMethoniMove()
            changed.CopyFrom(move)
            changed.build.houses[index].seat = seat
            yield changed


def spelling(game: Game[Any, Any], state: Any) -> Callable[[pb.CastelloMethoniMove], Hashable]:
    """A build names an edge from either side and its houses in any order; a merge names
    the castle by any of its cells; a redraw reveals the hand in any order."""
    castle_of = {
        cell: castle.id
        for castle in full_view(game, state, pb.CastelloMethoniView).castles
        for cell in castle.cells
    }

    def meaning(move: pb.CastelloMethoniMove) -> Hashable:
        if move.HasField("merge"):
            return ("merge", castle_of.get(move.merge.cell, move.merge.cell))
        return _meaning(move)

    return meaning


def _meaning(move: pb.CastelloMethoniMove) -> Hashable:
    if move.HasField("build"):
        build = move.build
        houses = sorted((h.seat, h.cell) for h in build.houses)
        return ("build", build.card, frozenset((build.cell, build.other)), tuple(houses))
    if move.HasField("redraw"):
        return ("redraw", tuple(sorted(move.redraw.revealed)))
    return exact(move)
