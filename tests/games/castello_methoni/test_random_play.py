"""Seeded random play on the shipped board with invariants after every move (RULES.md §1,
§6): ducats conserved, walls + supply constant, pieces conserved, castles = enclosed
regions, one tower per castle; and the notation round trip on every visited state of every
10th seed. Also: every move that `apply` accepts is listed by `legal_moves` (brute force)."""

from __future__ import annotations

import itertools

import pytest

from tablelog.replay.core import DEALT, TABLE, TERMINAL, IllegalMove
from tablelog.replay.games.castello_methoni.rules import PLAY, State, available_cards, open_edges
from tablelog.replay.registry import find_game
from tablelog.v1 import castello_methoni_pb2 as pb
from tests.games.castello_methoni.invariants import check
from tests.support import play

GAMES_PER_COUNT = play.random_games(40)
ROUND_TRIP_EVERY = 10
"""Every 10th seed (both modes: seeds divisible by 3 are dealt) also checks the notation
round trip on every state it visits."""


def _check_with_round_trip(before: State, after: State) -> None:
    check(before, after)
    game = find_game("castello-methoni")
    play.assert_round_trip(game, before)
    if game.to_move(after) == TERMINAL:
        play.assert_round_trip(game, after)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_random_games_keep_the_invariants(players: int) -> None:
    ended = 0
    round_trips = {TABLE: 0, DEALT: 0}
    for seed in range(GAMES_PER_COUNT):
        mode = DEALT if seed % 3 == 0 else TABLE
        sampled = seed % ROUND_TRIP_EVERY == 0
        played = play.random_game(
            "castello-methoni",
            players,
            seed,
            mode=mode,
            check=_check_with_round_trip if sampled else check,
        )
        round_trips[mode] += sampled
        result = played.position.game.result(played.position.state)
        assert result.winners
        for score in result.scores:
            assert score.total == sum(item.value for item in score.items)
            assert len(score.items) == 6
        ended += 1
    assert ended == GAMES_PER_COUNT
    assert round_trips[TABLE]
    assert round_trips[DEALT]


def _every_build(state: State) -> list[pb.CastelloMethoniMove]:
    """All builds a recorder could type on open edges (any card, any two placements)."""
    board = state.board
    n = state.ctx.n
    found = []
    for a, b, _ in open_edges(state):
        other = "sea" if b < 0 else board.names[b]
        sides = [board.names[a]] + ([] if b < 0 else [board.names[b]])
        spots = [(s, c) for s in range(n) for c in sides]
        combos = [()] + [(p,) for p in spots] + list(itertools.combinations(spots, 2))
        for card in range(len(board.deck)):
            for combo in combos:
                found.append(
                    pb.CastelloMethoniMove(
                        build=pb.CastelloMethoniBuild(
                            card=board.card_name(card),
                            cell=board.names[a],
                            other=other,
                            houses=[pb.CastelloMethoniHouse(seat=s, cell=c) for s, c in combo],
                        )
                    )
                )
    return found


def _key(move: pb.CastelloMethoniMove) -> tuple[object, ...]:
    """A build up to the order of its houses (apply accepts them in any order)."""
    m = move.build
    return (m.card, m.cell, m.other, frozenset((h.seat, h.cell) for h in m.houses))


def test_apply_accepts_exactly_the_listed_builds() -> None:
    game = find_game("castello-methoni")
    for seed, mode in ((7, TABLE), (8, DEALT)):
        played = play.random_game("castello-methoni", 3, seed, mode=mode, keep_states=True)
        for index, state in enumerate(played.states):
            if index % 9 or state.phase != PLAY or state.cards_played >= 2:
                continue
            listed = {_key(m) for m in game.legal_moves(state) if m.WhichOneof("action") == "build"}
            accepted = set()
            for move in _every_build(state):
                try:
                    game.apply(state, move)
                except IllegalMove:
                    continue
                accepted.add(_key(move))
            assert accepted == listed, (seed, index)
            assert available_cards(state)


def test_redraw_is_listed_exactly_when_apply_accepts_it() -> None:
    """The stuck-hand rule (§4) judged two ways: from the listed moves and by `apply`."""
    game = find_game("castello-methoni")
    redraw = pb.CastelloMethoniMove(redraw=pb.CastelloMethoniRedraw())
    checked = 0
    for seed in range(12):
        played = play.random_game(
            "castello-methoni", 3 + seed % 3, seed, mode=DEALT, keep_states=True
        )
        for state in played.states:
            if state.phase != PLAY or state.cards_played or state.redrawn:
                continue
            listed = any(m.WhichOneof("action") == "redraw" for m in game.legal_moves(state))
            try:
                game.apply(state, redraw)
                accepted = True
            except IllegalMove:
                accepted = False
            assert listed == accepted
            checked += 1
    assert checked > 100
