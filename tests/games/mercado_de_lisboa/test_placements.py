"""The placements the seat to move may make (`stand_placements`, `customer_placements`,
`any_placement`) are exactly those the rule checks allow: the placement listings pass over
the spaces and entrances the checks would refuse without asking them (rules §4.1, §4.2,
§9), and must neither drop a legal placement nor keep an illegal one. Compared with every
space and entrance put to the checks themselves, in every state of seeded random games of
each player count and every solo stage."""

from __future__ import annotations

from typing import Any

import pytest

from tablelog.replay.core import IllegalMove
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import ENTRANCES, SPACES
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import random_game

SEEDS = 6


def _allowed(check: Any, state: rl.State, piece: int, place: int) -> bool:
    try:
        check(state, piece, place)
    except IllegalMove:
        return False
    return True


def _every_stand(state: rl.State) -> set[tuple[int, int]]:
    return {
        (good, space)
        for good in set(state.hands[state.seat])
        for space in range(SPACES)
        if _allowed(rl.check_stand, state, good, space)
    }


def _every_customer(state: rl.State) -> set[tuple[int, int, int]]:
    return {
        (size, kind, entrance)
        for size in range(4)
        for kind in set(state.offers[size])
        for entrance in range(ENTRANCES)
        if state.entrances[entrance] < 0 and _allowed(rl.check_customer, state, kind, entrance)
    }


def _every_restaurant(state: rl.State) -> set[tuple[int, int]]:
    return {
        (restaurant, space)
        for restaurant in {t for t in state.held[state.seat] if t >= 0}
        for space in range(SPACES)
        if _allowed(rl.check_restaurant, state, restaurant, space)
    }


def _states(players: int, options: pb.MercadoDeLisboaOptions) -> list[rl.State]:
    """The states of seeded random games in which the seat to move chooses an action."""
    states: list[rl.State] = []
    for seed in range(SEEDS):
        played = random_game("mercado-de-lisboa", players, seed, options, keep_states=True)
        states += [
            s for s in played.states if not s.over and not s.pending and s.phase == rl.ACTION
        ]
    return states


def _assert_exact(states: list[rl.State]) -> None:
    assert states
    refused_somewhere = False
    for state in states:
        stands = _every_stand(state)
        customers = _every_customer(state)
        restaurants = _every_restaurant(state)
        assert set(rl.stand_placements(state)) == stands
        assert set(rl.customer_placements(state)) == customers
        assert set(rl.restaurant_placements(state)) == restaurants
        assert rl.any_placement(state) == bool(stands or customers or restaurants)
        refused_somewhere |= not stands or not customers
    assert refused_somewhere  # the passing over was put to the test


@pytest.mark.parametrize("players", [2, 3, 4])
def test_multiplayer_placements_are_the_checks(players: int) -> None:
    _assert_exact(_states(players, pb.MercadoDeLisboaOptions()))


@pytest.mark.parametrize("stage", range(10))
def test_solo_placements_are_the_checks(stage: int) -> None:
    _assert_exact(_states(1, pb.MercadoDeLisboaOptions(stage=stage)))
