"""CreateGame's replacement component files: each replaces the default of its name, the
other defaults are stored too (a stored game never depends on later packaged data)."""

from __future__ import annotations

import pytest

from tablelog.replay.registry import find_game
from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client import Client
from tests.games.castello_methoni.boards import component, grid_data
from tests.service.helpers import refused

pytestmark = pytest.mark.slow


def created(client: Client, game_id: str) -> events_pb2.GameCreated:
    return client.export(game_id)[0].game_created


def create(
    client: Client, game: str, players: int, components: list[game_pb2.ComponentFile]
) -> service_pb2.GameSummary:
    return client.create_game(game, [f"P{i}" for i in range(players)], components=components)


def test_one_replaced_file_keeps_the_other_defaults(client: Client) -> None:
    cards, nobles = find_game("splendor").default_components()
    replacement = game_pb2.ComponentFile()
    replacement.CopyFrom(nobles)
    replacement.approximate = True
    replacement.approximate_note = "nobles retyped from a photo"
    game = create(client, "splendor", 2, [replacement])
    assert list(created(client, game.game_id).components) == [cards, replacement]
    assert game.approximate_components
    assert list(game.approximate_notes) == ["nobles retyped from a photo"]


def test_without_files_every_default_is_stored(client: Client) -> None:
    game = create(client, "splendor", 2, [])
    stored = list(created(client, game.game_id).components)
    assert stored == list(find_game("splendor").default_components())
    assert not game.approximate_components


def test_a_replaced_board_is_the_only_board(client: Client) -> None:
    board = component(grid_data(3, 3))
    game = create(client, "castello-methoni", 3, [board])
    assert list(created(client, game.game_id).components) == [board]
    assert not game.approximate_components


def test_a_file_the_game_does_not_know_is_refused_by_the_game(client: Client) -> None:
    stray = game_pb2.ComponentFile(name="expansion.csv", media_type="text/csv", content=b"x")
    error = refused(lambda: create(client, "splendor", 2, [stray]))
    assert error.reason == "INVALID_SETUP"
    assert error.metadata["rule"] == "COMPONENTS"
