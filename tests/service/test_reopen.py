"""A mistyped final move is corrected like any other in table mode: taking it back reopens
the game; recording the real final move ends it again, with its own GameEnded."""

from __future__ import annotations

import random

import grpc
import pytest

from tablelog.v1 import service_pb2
from tablelog_client import Client
from tests.service.helpers import refused, splendor_line

pytestmark = pytest.mark.slow


def test_taking_back_the_final_move_reopens_a_table_game(client: Client) -> None:
    line = splendor_line(seed=11)
    game = client.create_game("splendor", ["Ann", "Bob"])
    version = game.version
    for notation in line:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    ended = client.get_game(game.game_id)
    assert ended.status == service_pb2.GAME_STATUS_ENDED

    undone = client.undo(game.game_id, expected_version=ended.version, reason="mistyped")
    reopened = undone.game
    assert reopened.status == service_pb2.GAME_STATUS_IN_PROGRESS
    assert reopened.move_count == len(line) - 1
    assert client.state(game.game_id).moves[-1] == line[-2]

    redone = client.redo(game.game_id, expected_version=reopened.version)
    bodies = [event.WhichOneof("body") for event in redone.events]
    assert bodies == ["move_redone", "game_ended"]
    assert redone.game.status == service_pb2.GAME_STATUS_ENDED
    assert client.verify(game.game_id).ok


def test_a_dealt_game_cannot_be_reopened(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    rng = random.Random(3)
    version = game.version
    for _ in range(1_000):
        if client.get_game(game.game_id).status != service_pb2.GAME_STATUS_IN_PROGRESS:
            break
        _to_move, legal = client.legal_moves(game.game_id)
        choice = legal[rng.randrange(len(legal))].notation
        version = client.record(game.game_id, choice, expected_version=version).game.version
    assert client.get_game(game.game_id).status == service_pb2.GAME_STATUS_ENDED
    error = refused(lambda: client.undo(game.game_id, expected_version=version))
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "GAME_OVER"
