"""Seats are named, not numbered from 0, in what the rules say (issue 16, item 4): an
unknown seat lists the players, a pending draw names whom it is for."""

from __future__ import annotations

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import SPECTATOR, IllegalMove, InvalidSetup, seats_named
from tablelog.replay.games.splendor.rules import pass_move
from tablelog.v1 import castello_methoni_pb2 as castello
from tablelog.v1 import game_pb2, splendor_pb2
from tests.support.play import created, new_position, play_all


def test_seats_named_lists_each_player_with_their_seat() -> None:
    assert seats_named(["Ann"]) == "Ann (seat 0)"
    assert seats_named(["Ann", "Bob", "Cy"]) == "Ann (seat 0), Bob (seat 1) and Cy (seat 2)"


def test_a_move_for_a_seat_past_the_players_names_them() -> None:
    position = new_position("splendor", ["Ann", "Bob"])
    move = game_pb2.Move(seat=2, splendor=pass_move())
    with pytest.raises(IllegalMove) as refused:
        folding.check_move(position, move)
    assert refused.value.code == "UNKNOWN_SEAT"
    assert refused.value.message == (
        "There is no seat 2: the players are Ann (seat 0) and Bob (seat 1)."
    )


def test_a_first_player_past_the_players_names_them() -> None:
    body = created("splendor", ["Ann", "Bob"], splendor_pb2.SplendorOptions(first_player=3))
    with pytest.raises(InvalidSetup) as refused:
        folding.start(body)
    assert refused.value.message == (
        "first_player is seat 3, but the players are Ann (seat 0) and Bob (seat 1)."
    )


def test_castello_names_its_players_as_its_notation_numbers_them() -> None:
    position = new_position("castello-methoni", ["Ann", "Bob", "Cy"])
    first = castello.CastelloMethoniMove(first_player=castello.CastelloMethoniFirstPlayer(seat=4))
    with pytest.raises(IllegalMove) as refused:
        position.game.apply(position.state, first)
    assert refused.value.message == "There is no p5: the players are p1 Ann, p2 Bob, p3 Cy."


def test_mercado_says_whose_draw_the_table_records() -> None:
    position = play_all(
        new_position("mercado-de-lisboa", ["Ann", "Bob"]), ["draw fish", "draw grape", "draw meat"]
    )
    rendered = position.game.render(position.game.view(position.state, SPECTATOR))
    assert rendered.splitlines()[-1] == "table: draw a stand tile from the bag for Ann"
