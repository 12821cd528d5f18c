"""`legal_moves` lists exactly the moves `apply` accepts, for every registered game: on
states sampled from seeded random play in both modes, every candidate of a generated
superset (tests/support/candidates/) is tried with `apply`, and the accepted ones must be
the listed ones (or spell a listed move differently, with the very same outcome). Every
listed move also survives its canonical text: parse(format(m)) == m."""

from __future__ import annotations

import pytest

from tablelog.replay.core import DEALT, TABLE
from tablelog.replay.registry import all_games, find_game
from tablelog.v1 import game_pb2
from tablelog.v1.medici_pb2 import MediciBid, MediciMove
from tests.support.candidates import GENERATORS, Census
from tests.support.candidates.fields import OUT_OF_RANGE
from tests.support.play import assert_round_trip, new_position, play, play_all, random_game

GAMES = sorted(all_games())
STATES_PER_GAME = 24
"""Sampled states per game and mode, spread over one game at the smallest and one at the
largest player count (the first and last state of each included); a generator with few
candidates per state may ask for more (`CENSUS_STATES`)."""


def test_every_registered_game_has_a_candidate_generator() -> None:
    assert set(GENERATORS) == set(GAMES)


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_apply_accepts_exactly_the_listed_moves(name: str, mode: game_pb2.Mode.ValueType) -> None:
    game = find_game(name)
    if mode not in game.modes:
        pytest.skip(f"{name} has no such mode")
    census = Census()
    counts = sorted({game.min_players, game.max_players})
    for players in counts:
        played = random_game(name, players, seed=players + 11 * mode, mode=mode, keep_states=True)
        states = played.states
        wanted = getattr(GENERATORS[name], "CENSUS_STATES", STATES_PER_GAME) // len(counts)
        step = max(1, (len(states) - 1) // (wanted - 1))
        for state in [*states[:-1:step], states[-1]]:
            census.take(game, state)
            assert_round_trip(game, state)
    print(
        f"{name} {game_pb2.Mode.Name(mode)}: {census.states} states, {census.candidates} "
        f"candidates, {census.listed} listed, {census.aliases} aliases, "
        f"{census.shorthands} shorthands"
    )
    assert census.candidates > 5 * census.listed
    assert not census.refused, "\n".join(census.refused[:20])
    assert not census.missing, "\n".join(census.missing[:20])


def test_the_census_finds_a_move_left_out_and_a_move_listed_wrongly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The census can fail: a `legal_moves` that forgets its last move, or lists a bid
    nobody can pay, is caught on the first state where it matters."""
    game = find_game("medici")
    listed = game.legal_moves
    state = next(
        s for s in random_game("medici", 3, seed=1, keep_states=True).states if len(listed(s)) > 2
    )
    monkeypatch.setattr(game, "legal_moves", lambda s: listed(s)[:-1])
    forgetful = Census()
    forgetful.take(game, state)
    assert len(forgetful.missing) == 1
    assert not forgetful.refused
    too_rich = MediciMove(bid=MediciBid(florins=OUT_OF_RANGE))
    monkeypatch.setattr(game, "legal_moves", lambda s: [*listed(s), too_rich])
    generous = Census()
    generous.take(game, state)
    assert len(generous.refused) == 1
    assert not generous.missing


def test_a_typed_move_must_be_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Golden playthroughs and scenarios (tests/support/play.py) refuse a typed move that
    the rules accept but `legal_moves` does not list."""
    game = find_game("medici")
    position = play_all(new_position("medici", 3), ["draw cloth3"])
    play(position, "draw")
    monkeypatch.setattr(game, "legal_moves", lambda state: [])
    with pytest.raises(AssertionError, match="not among the legal moves listed"):
        play(position, "draw")
