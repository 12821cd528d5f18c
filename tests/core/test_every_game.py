"""What every registered game must satisfy, whatever its rules (STYLE.md: one surface,
golden playthroughs for every game, random play over every registered game)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay import fold as folding
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    FULL,
    SPECTATOR,
    TABLE,
    TERMINAL,
    Game,
    InvalidSetup,
    NotationError,
)
from tablelog.replay.registry import all_games, describe, find_game
from tablelog.v1 import events_pb2, game_pb2
from tests.support.play import created, events_of, new_position, random_game

ROOT = Path(__file__).resolve().parents[2]
GAMES = sorted(all_games())


def test_the_registry_knows_games() -> None:
    assert "splendor" in GAMES


@pytest.mark.parametrize("name", GAMES)
def test_metadata_is_complete(name: str) -> None:
    game = find_game(name)
    info = describe(game)
    assert info.name == name
    assert info.title
    assert 1 <= game.min_players <= game.max_players
    assert set(game.modes) <= {TABLE, DEALT}
    assert TABLE in game.modes
    assert game.rules_version
    assert game.oneof_field in game_pb2.Move.DESCRIPTOR.fields_by_name
    assert game.oneof_field in game_pb2.GameOptions.DESCRIPTOR.fields_by_name
    assert game.oneof_field in game_pb2.GameView.DESCRIPTOR.fields_by_name
    assert find_game(name.upper().replace("-", "_")) is game


@pytest.mark.parametrize("name", GAMES)
def test_documents_and_playthroughs_exist(name: str) -> None:
    package = name.replace("-", "_")
    assert (ROOT / "docs" / "notation" / f"{name}.md").is_file()
    assert (ROOT / "replay" / "games" / package / "RULES.md").is_file()
    playthroughs = ROOT / "tests" / "games" / package / "playthroughs"
    assert playthroughs.is_dir()
    assert any(playthroughs.iterdir()), "no golden playthrough"


def _check_generic(game: Game[Any, Any], position: folding.Position) -> None:
    state = position.state
    who = game.to_move(state)
    players = len(position.table.players)
    assert who in (CHANCE, TERMINAL) or 0 <= who < players
    if who == CHANCE:
        outcomes = game.chance_outcomes(state)
        assert outcomes
        assert all(weight > 0 for _, weight in outcomes)
        assert all(game.is_chance(move) for move, _ in outcomes)
    elif who != TERMINAL:
        assert game.legal_moves(state), "a player to move must have a legal move"
    for viewer in (FULL, SPECTATOR, *range(players)):
        view = game.view(state, viewer)
        assert isinstance(view, game.view_type)
        assert isinstance(game.render(view), str)


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_random_games_end_and_fold_back(name: str, mode: game_pb2.Mode.ValueType) -> None:
    game = find_game(name)
    if mode not in game.modes:
        pytest.skip(f"{name} has no such mode")
    for players in range(game.min_players, game.max_players + 1):
        played = random_game(name, players, seed=players, mode=mode)
        end = played.position
        assert game.to_move(end.state) == TERMINAL
        result = game.result(end.state)
        assert result.termination in (
            game_pb2.TERMINATION_COMPLETED,
            game_pb2.TERMINATION_DEADLOCK,
        )
        assert result.winners
        assert {s.seat for s in result.scores} == set(range(players))
        for score in result.scores:
            if score.items:
                assert sum(item.value for item in score.items) == score.total, score
        # The same game, stored as serialized events and read back, folds to the same state.
        body = created(name, players, mode=mode)
        stored = [
            events_pb2.Event.FromString(e.SerializeToString())
            for e in events_of(body, played.moves, played.notations)
        ]
        assert folding.fold(stored).state == end.state
        middle = len(stored) // 2
        assert folding.fold(stored, until_revision=middle).move_count == middle - 1
        _check_generic(game, end)


def _check_every_legal_move_applies(game: Game[Any, Any], state: Any) -> None:
    """Every listed move is accepted by `apply`, and `apply` never changes its input."""
    before = copy.deepcopy(state)
    moves: Sequence[Message] = (
        [move for move, _ in game.chance_outcomes(state)]
        if game.to_move(state) == CHANCE
        else game.legal_moves(state)
    )
    for move in moves:
        game.apply(state, move)
    assert state == before, "apply changed the state it was given"


@pytest.mark.parametrize("name", GAMES)
def test_generic_properties_along_a_game(name: str) -> None:
    game = find_game(name)
    played = random_game(name, game.max_players, seed=7)
    position = new_position(name, game.max_players)
    for move, notation in zip(played.moves, played.notations, strict=True):
        _check_generic(game, position)
        _check_every_legal_move_applies(game, position.state)
        inner = position.table.unwrap(move)
        assert game.visible_to(inner, position.state, FULL)
        if not game.is_chance(inner):  # players' decisions are made in front of everyone
            players = range(game.max_players)
            assert all(game.visible_to(inner, position.state, v) for v in (SPECTATOR, *players))
        position = folding.record(position, move, notation)
    assert position.state == played.position.state


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40))
def test_garbage_notation_only_raises_notation_error(name: str, text: str) -> None:
    game = find_game(name)
    position = new_position(name, game.min_players)
    with contextlib.suppress(NotationError):
        game.parse(text, position.state)


@pytest.mark.parametrize("name", GAMES)
def test_hostile_component_files_are_refused_as_invalid_setup(name: str) -> None:
    """Whatever a creator uploads (deep nesting, a huge field, bytes that are not text), a
    game refuses it with InvalidSetup, never another exception."""
    game = find_game(name)
    hostile = [b"[" * 200_000 + b"]" * 200_000, b'"' + b"x" * 200_000, b"\xff\xfe\x00"]
    for component in game.default_components():
        for content in hostile:
            bad = game_pb2.ComponentFile()
            bad.CopyFrom(component)
            bad.content = content
            files = {c.name: c for c in game.default_components()} | {bad.name: bad}
            with pytest.raises(InvalidSetup):
                game.setup([f"p{i}" for i in range(game.max_players)], None, TABLE, files)
