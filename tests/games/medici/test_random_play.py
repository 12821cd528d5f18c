"""Seeded random games through the fold, with the rules' invariants after every move."""

from __future__ import annotations

from typing import Any

import pytest

from replay.core import DEALT, FULL, SPECTATOR, TERMINAL
from replay.games.medici import GAME, rules
from replay.games.medici_common.world import poorest
from tablelog.v1.medici_pb2 import MEDICI_EDITION_2016, MediciOptions
from tests.support.play import assert_round_trip, random_game

GAMES_PER_COUNT = 500


def check(before: Any, after: Any) -> None:
    """Tiles conserved, ship limits, lots no ship could load never drawn, money never
    negative and equal to the start minus bids plus the itemised payouts, pyramid levels
    capped and never falling."""
    assert isinstance(after, rules.State)
    r = after.rules
    on_ships = sum(len(ship) for ship in after.ships)
    seen = len(after.lot) + len(after.discarded) + on_ships + len(after.removed)
    assert sum(after.unseen) + seen == r.tiles.total
    assert sum(after.unseen) == after.bag_size + r.removed_per_day - len(after.removed)
    assert after.bag_size >= 0
    assert len(after.lot) <= rules.MAX_LOT
    if after.phase in (rules.DECIDE, rules.BID):
        assert 1 <= len(after.lot) <= rules.lot_limit(after)
    for seat in range(len(r.players)):
        assert len(after.ships[seat]) <= r.spaces
        assert after.florins[seat] >= 0
        paid_out = sum(f for _, _, f in after.payouts[seat])
        assert after.florins[seat] == r.start_florins - after.paid[seat] + paid_out
        for g, level in enumerate(after.levels[seat]):
            assert before.levels[seat][g] <= level <= rules.TOP_LEVEL
    if after.phase == rules.BID:
        assert rules.free_space(after, after.current) > 0
        if after.high_bidder >= 0:
            assert after.high_bid <= after.florins[after.high_bidder]
    if after.phase == rules.START:
        assert len(after.tied) > 1
        assert after.tied == poorest(after.florins)
    if after.phase == rules.OVER:
        result = GAME.result(after)
        for score in result.scores:
            assert score.total == sum(item.value for item in score.items)
            assert score.total == after.florins[score.seat]


OPTIONS = {
    2: MediciOptions(edition=MEDICI_EDITION_2016),
    3: MediciOptions(),
    4: MediciOptions(),
    5: MediciOptions(),
    6: MediciOptions(),
}


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_random_games_keep_the_invariants(players: int) -> None:
    for seed in range(GAMES_PER_COUNT):
        played = random_game(
            "medici", players, seed, options=OPTIONS[players], check=check, keep_states=True
        )
        # Every move played reads back from its canonical text.
        for move, text, state in zip(played.moves, played.notations, played.states, strict=False):
            assert GAME.parse(text, state) == getattr(move, GAME.oneof_field)
        assert GAME.to_move(played.position.state) == TERMINAL
        assert played.position.state.day == rules.DAYS


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_dealt_games_record_the_removed_tiles_and_hide_them(players: int) -> None:
    states: list[Any] = []
    for seed in range(25):
        played = random_game(
            "medici",
            players,
            seed,
            options=OPTIONS[players],
            mode=DEALT,
            check=check,
            keep_states=seed == 0,
        )
        removals = sum(1 for n in played.notations if n.startswith("remove "))
        assert removals == 3 * played.position.state.rules.removed_per_day
        states.extend(played.states)
    checked = 0
    for state in states:
        if not state.removed:
            continue
        checked += 1
        full = GAME.view(state, FULL)
        assert [t.name for t in full.removed] == [
            state.rules.tiles.kinds[k].name for k in state.removed
        ]
        for viewer in (SPECTATOR, *range(players)):
            hidden = GAME.view(state, viewer)
            assert not hidden.removed
            assert hidden.removed_count == state.rules.removed_per_day
            # The public unseen counts include the removed tiles: nothing leaks through them.
            assert sum(u.count for u in hidden.unseen) == state.bag_size + hidden.removed_count
            assert "(hidden)" in GAME.render(hidden)
            assert "(hidden)" not in GAME.render(full)
    assert checked > 0 or players == 6


def test_the_other_lot_limit_reading() -> None:
    """G-B3 option: only the other non-full players with money bound the lot."""
    options = MediciOptions(lot_limit_others_with_money=True)
    for seed in range(40):
        random_game("medici", 4, seed, options=options, check=check)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_notation_round_trip_for_every_legal_move_visited(players: int) -> None:
    for seed in range(6):
        played = random_game(
            "medici", players, 1000 + seed, options=OPTIONS[players], keep_states=True
        )
        for state in played.states:
            assert_round_trip(GAME, state)


def test_tied_start_players_are_a_chance_move() -> None:
    seen = 0
    for seed in range(100):
        played = random_game("medici", 3, seed)
        seen += sum(1 for n in played.notations if n.startswith("start "))
    assert seen > 0
