"""The request bounds of `tablelog.service.bounds` refuse nothing a real game needs: every legal
move along random games of every game, each game's default options and component files."""

from __future__ import annotations

import random

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL
from tablelog.replay.registry import all_games, find_game
from tablelog.service.bounds import (
    MAX_COMPONENT_DIGITS,
    MAX_COMPONENT_NESTING,
    check_component_files,
    check_move,
    check_record_tags,
)
from tablelog.service.errors import InvalidRequest
from tablelog.service.limits import MAX_RECORD_TAG_VALUE, MAX_RECORD_TAGS
from tablelog.v1 import events_pb2, game_pb2
from tests.support.play import choose, new_position

GAMES = sorted(all_games())


@pytest.mark.parametrize("name", GAMES)
def test_every_legal_move_of_random_games_is_within_bounds(name: str) -> None:
    game = find_game(name)
    for seed in range(2):
        rng = random.Random(seed)
        players = min(game.max_players, max(game.min_players, 2) + seed)
        position = new_position(name, players)
        for _ply in range(3000):
            if position.to_move() == TERMINAL:
                break
            for move in game.legal_moves(position.state):
                check_move("move", position.table.wrap(move))
            inner = choose(game, position.state, rng)
            position = folding.record(position, position.table.wrap(inner), "")


@pytest.mark.parametrize("name", GAMES)
def test_default_component_files_are_within_bounds(name: str) -> None:
    check_component_files("components", list(find_game(name).default_components()))


def component(content: bytes) -> list[game_pb2.ComponentFile]:
    return [game_pb2.ComponentFile(name="board", content=content)]


def test_long_numbers_and_deep_nesting_are_refused_outside_strings_only() -> None:
    digits = b"9" * (MAX_COMPONENT_DIGITS + 1)
    deep = b"[" * (MAX_COMPONENT_NESTING + 1) + b"]" * (MAX_COMPONENT_NESTING + 1)
    for hostile in (b'{"n": ' + digits + b"}", b"name,count\nfur," + digits, deep):
        with pytest.raises(InvalidRequest) as refused:
            check_component_files("components", component(hostile))
        assert refused.value.field_name == "components[0].content"
    fine = b'{"note": "' + digits + b' [[[[[[[[[[[[[[[[[[[[ \\" ]"}'
    check_component_files("components", component(fine))
    shallow = b"[" * MAX_COMPONENT_NESTING + b"]" * MAX_COMPONENT_NESTING
    check_component_files("components", component(shallow * 3))


def test_a_move_past_the_bounds_names_its_field() -> None:
    move = game_pb2.Move()
    move.splendor.returned.red = 4_294_967_295
    with pytest.raises(InvalidRequest) as refused:
        check_move("move", move)
    assert refused.value.field_name == "move.splendor.returned.red"
    assert "4294967295" in refused.value.message


def test_record_tags_are_bounded_and_each_one_the_record_writes_back() -> None:
    def tags(*pairs: tuple[str, str]) -> list[events_pb2.RecordTag]:
        return [events_pb2.RecordTag(name=name, value=value) for name, value in pairs]

    check_record_tags("record_tags", tags(("Event", "Club night"), ("Annotator", "Bob")))
    refused_cases = [
        (tags(*((f"Tag{n}", "x") for n in range(MAX_RECORD_TAGS + 1))), "record_tags"),
        (tags(("Game", "splendor")), "record_tags[0].name"),
        (tags(("Event", "a"), ("Event", "b")), "record_tags[1].name"),
        (tags(("two words", "x")), "record_tags[0].name"),
        (tags(("Event", "line\nbreak")), "record_tags[0].value"),
        (tags(("Event", "x" * (MAX_RECORD_TAG_VALUE + 1))), "record_tags[0].value"),
    ]
    for refused_tags, field_name in refused_cases:
        with pytest.raises(InvalidRequest) as refused:
            check_record_tags("record_tags", refused_tags)
        assert refused.value.field_name == field_name
