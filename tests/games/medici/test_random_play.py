"""Seeded random games through the fold, with the rules' invariants after every move."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE, TERMINAL, IllegalMove
from tablelog.replay.games.medici import GAME, rules
from tablelog.replay.games.medici_common.rules import poorest
from tablelog.v1.medici_pb2 import MEDICI_EDITION_2016, MediciOptions
from tests.support import play
from tests.support.play import assert_round_trip, random_game

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}

GAMES_PER_COUNT = play.random_games(100)
ROUND_TRIP_EVERY = 10


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
        if seed % ROUND_TRIP_EVERY == 0:
            # A sample of the games: every legal move of every state visited round-trips.
            for state in played.states:
                assert_round_trip(GAME, state)
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
    for state in states:
        assert_round_trip(GAME, state)  # `remove` moves included
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


def _g_b3_position(others_with_money: bool, ships: tuple[int, ...], money: tuple[int, ...]) -> Any:
    """Three players (classic: 5 spaces), seat 1 drawing, with `ships[s]` tiles already
    loaded on seat s's ship and `money[s]` florins; one tile (fur3) in the lot, the drawer
    deciding whether to draw another."""
    options = MediciOptions(lot_limit_others_with_money=others_with_money)
    state = GAME.setup(["Ann", "Bo", "Cy"], options, TABLE, RECORDED)
    names = iter(["cloth1", "cloth2", "cloth3", "cloth4", "dye1", "dye2", "dye3", "dye4"])
    loaded = tuple(tuple(state.rules.tiles.by_name[next(names)] for _ in range(n)) for n in ships)
    return replace(
        state,
        ships=loaded,
        florins=money,
        lot=(state.rules.tiles.by_name["fur3"],),
        bag_size=state.bag_size - sum(ships) - 1,
        phase=rules.DECIDE,
    )


@pytest.mark.parametrize(
    ("ships", "money"),
    [
        # Only the drawer has room for 2: the default counts the drawer, the option does not.
        ((0, 4, 4), (40, 40, 40)),
        # Only Cy, who has no money, has room for 2: counted by the default only.
        ((4, 4, 0), (40, 40, 0)),
    ],
)
def test_the_two_lot_limit_readings_differ(ships: tuple[int, ...], money: tuple[int, ...]) -> None:
    """G-B3: Bo (1 free space, money) is the only other non-full player with money, so under
    the option a lot of 2 fits nobody who counts; the default reading (all non-full players,
    the drawer included) still has a ship with room for it."""
    default = _g_b3_position(False, ships, money)
    draw_more = GAME.parse("draw", default)
    assert draw_more in GAME.legal_moves(default)
    assert GAME.apply(default, draw_more).phase == rules.DRAW
    other = _g_b3_position(True, ships, money)
    assert draw_more not in GAME.legal_moves(other)
    with pytest.raises(IllegalMove) as refused:
        GAME.apply(other, draw_more)
    assert refused.value.code == "LOT_TOO_BIG"
    assert refused.value.message == "A lot of 2 would fit no ship: the most free space is 1."
    # Played from the draw itself: the option sends the lot of 1 straight to auction.
    drawing = replace(other, lot=(), phase=rules.DRAW)
    after = GAME.apply(drawing, GAME.parse("draw fur3", drawing))
    assert after.phase == rules.BID
    drawing = replace(default, lot=(), phase=rules.DRAW)
    assert GAME.apply(drawing, GAME.parse("draw fur3", drawing)).phase == rules.DECIDE


def _others_with_money_limit(state: rules.State) -> int:
    """G-B3, the option's reading, written out independently of `rules.lot_limit`."""
    free = [state.rules.spaces - len(ship) for ship in state.ships]
    others = [
        free[s]
        for s in range(len(free))
        if s != state.drawer and state.florins[s] > 0 and free[s] > 0
    ]
    return max(others) if others else free[state.drawer]


def test_the_other_lot_limit_reading_in_play() -> None:
    """G-B3 option over random games: no lot outgrows the largest free space among the other
    non-full players with money, and the option does refuse draws the default would allow."""
    options = MediciOptions(lot_limit_others_with_money=True)
    differ = 0
    for seed in range(40):
        played = random_game("medici", 4, seed, options=options, check=check, keep_states=True)
        for state in played.states:
            if state.phase in (rules.DECIDE, rules.BID):
                assert len(state.lot) <= _others_with_money_limit(state)
        for move, before, after in zip(
            played.moves, played.states, played.states[1:], strict=False
        ):
            if before.phase == rules.DRAW and after.phase == rules.BID:
                # The draw closed the lot; would the default reading have let the drawer go on?
                default = replace(
                    before, rules=replace(before.rules, limit_others_with_money=False)
                )
                tile = getattr(move, GAME.oneof_field)
                differ += GAME.apply(default, tile).phase == rules.DECIDE
    assert differ > 0


def test_tied_start_players_are_a_chance_move() -> None:
    seen = 0
    for seed in range(100):
        played = random_game("medici", 3, seed)
        seen += sum(1 for n in played.notations if n.startswith("start "))
    assert seen > 0
