"""The board schema, its validator, the shipped approximate board and custom boards."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablelog.replay import fold
from tablelog.replay.core import SPECTATOR, TABLE, InvalidSetup
from tablelog.replay.games.castello_methoni import GAME
from tablelog.replay.games.castello_methoni.components import default_components, load_board
from tests.games.castello_methoni.boards import board_data, component, grid_data, load, start
from tests.support import play


def shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_components()[0].content)
    return data


def test_shipped_board_counts() -> None:
    board = load_board(default_components()[0])
    assert board.approximate
    assert board.name == "approximate 54-cell hexagon"
    assert "Approximate" in board.note
    assert len(board.cell_ids) == 54
    assert len(board.edges) == 72
    assert sum(board.sea_edges) == 18
    assert [board.terrain.count(t) for t in range(6)] == [9] * 6
    assert sorted(board.terrain[c] for c in range(54) if board.market[c]) == list(range(6))
    assert sum(board.market_ducats) == 6
    assert board.deck == (9, 9, 9, 9, 9, 9, 6)
    assert board.names[:2] == ("d1", "c1")  # labels for notation
    assert board.lookup["dm3_m1"] == board.lookup["d1"]  # the file's ids are accepted too
    assert board.walls_by_players == {3: 30, 4: 33, 5: 36}


def test_views_and_render_say_the_board_is_approximate() -> None:
    position = play.new_position("castello-methoni", 3)
    game = GAME
    view = game.view(position.state, SPECTATOR)
    assert view.board_approximate
    assert "approximate" in view.board_note.lower()
    assert "APPROXIMATE BOARD" in game.render(view)
    assert position.table.components["board"].approximate


def test_a_custom_board_given_at_creation_is_used_and_not_marked_approximate() -> None:
    position = start(grid_data(3, 3))
    game = GAME
    assert len(position.state.board.cell_ids) == 9
    view = game.view(position.state, SPECTATOR)
    assert not view.board_approximate
    assert "APPROXIMATE" not in game.render(view)
    # The board travels in the creation event: a fold rebuilds the same board from it.
    created = play.created(
        "castello-methoni", 3, position.table.options, components=[component(grid_data(3, 3))]
    )
    again = fold.fold(play.events_of(created, []))
    assert again.state.board.cell_ids == position.state.board.cell_ids


BAD_BOARDS: list[tuple[str, dict[str, Any]]] = [
    ("BOARD_UNKNOWN_CELL", board_data({"a": "hill"}, [("a", "b"), ("a", "SEA")])),
    (
        "BOARD_DUPLICATE_EDGE",
        board_data(
            {"a": "hill", "b": "hill"}, [("a", "b"), ("b", "a"), ("a", "SEA"), ("b", "SEA")]
        ),
    ),
    ("BOARD_CELL_WITHOUT_EDGES", board_data({"a": "hill", "b": "hill"}, [("a", "SEA")])),
    ("BOARD_UNKNOWN_TERRAIN", board_data({"a": "lava"}, [("a", "SEA")])),
    (
        "BOARD_DUPLICATE_CELL",
        {
            **board_data({"a": "hill"}, [("a", "SEA")]),
            "cells": [{"id": "a", "terrain": "hill"}] * 2,
        },
    ),
    ("BOARD_LANDLOCKED", board_data({"a": "hill", "b": "hill"}, [("a", "b")])),
    ("BOARD_BAD_EDGE", board_data({"a": "hill"}, [("a", "a"), ("a", "SEA")])),
    ("BOARD_BAD_EDGE", board_data({"a": "hill"}, [("SEA", "SEA"), ("a", "SEA")])),
    (
        "BOARD_MARKET_MISMATCH",
        board_data(
            {"a": ("hill", True)}, [("a", "SEA")], markets=[{"cell": "a", "terrain": "marsh"}]
        ),
    ),
    (
        "BOARD_MARKET_MISMATCH",
        board_data({"a": "hill"}, [("a", "SEA")], markets=[{"cell": "a", "terrain": "hill"}]),
    ),
    ("BOARD_NO_TERRAINS", {**board_data({"a": "hill"}, [("a", "SEA")]), "terrain_types": []}),
    (
        "BOARD_BAD_TERRAIN_NAME",
        {**board_data({"a": "hill"}, [("a", "SEA")]), "terrain_types": ["hill", "sea"]},
    ),
    (
        "BOARD_DUPLICATE_TERRAIN",
        {**board_data({"a": "hill"}, [("a", "SEA")]), "terrain_types": ["hill", "Hill"]},
    ),
    ("BOARD_MISSING_CELLS", {"terrain_types": ["hill"], "edges": []}),
    (
        "BOARD_UNKNOWN_TERRAIN",
        board_data(
            {"a": "hill"}, [("a", "SEA")], mission_cards=[{"id": "m1", "terrains": ["lava"]}]
        ),
    ),
    ("BOARD_BAD_DECK", board_data({"a": "hill"}, [("a", "SEA")], land_deck={"per_terrain": -1})),
    ("BOARD_BAD_WALLS", board_data({"a": "hill"}, [("a", "SEA")], walls_by_player_count={"x": 3})),
]


@pytest.mark.parametrize(("code", "data"), BAD_BOARDS, ids=[c for c, _ in BAD_BOARDS])
def test_validator_refuses_with_a_clear_reason(code: str, data: dict[str, Any]) -> None:
    with pytest.raises(InvalidSetup) as refused:
        load(data)
    assert refused.value.code == code
    assert refused.value.message.startswith("Board file: ")


def test_validator_names_the_culprit() -> None:
    with pytest.raises(InvalidSetup, match="unknown cell 'b'"):
        load(board_data({"a": "hill"}, [("a", "b"), ("a", "SEA")]))
    with pytest.raises(InvalidSetup, match="between 'a' and 'b' is listed twice"):
        load(board_data({"a": "hill", "b": "hill"}, [("a", "b"), ("a", "b"), ("a", "SEA")]))
    with pytest.raises(InvalidSetup, match="cell 'b' has no edges"):
        load(board_data({"a": "hill", "b": "hill"}, [("a", "SEA")]))


def test_not_json_and_missing_or_foreign_components_are_refused() -> None:
    game = GAME
    bad = component({})
    bad.content = b"{not json"
    start_with = play.created("castello-methoni", 3, components=[bad])
    with pytest.raises(InvalidSetup) as refused:
        fold.start(start_with)
    assert refused.value.code == "BOARD_NOT_JSON"
    with pytest.raises(InvalidSetup) as missing:
        game.setup(["a", "b", "c"], None, TABLE, {})
    assert missing.value.code == "MISSING_COMPONENT"
    with pytest.raises(InvalidSetup) as foreign:
        game.setup(
            ["a", "b", "c"],
            None,
            1,
            {"board": default_components()[0], "deck": default_components()[0]},
        )
    assert foreign.value.code == "UNKNOWN_COMPONENT"


def test_edge_ids_listed_twice_are_refused_and_a_cell_may_have_several_sea_edges() -> None:
    data = board_data({"a": "hill"}, [("a", "SEA"), ("a", "SEA")])
    assert load(data).sea_edges == (2,)
    data["edges"] = [{"id": "e1", "cells": ["a", "SEA"]}, {"id": "e1", "cells": ["a", "SEA"]}]
    with pytest.raises(InvalidSetup) as refused:
        load(data)
    assert refused.value.code == "BOARD_DUPLICATE_EDGE"


def test_player_counts_outside_3_to_5_are_refused() -> None:
    with pytest.raises(InvalidSetup):
        play.new_position("castello-methoni", 2)
    with pytest.raises(InvalidSetup):
        play.new_position("castello-methoni", 6)
    assert shipped()["walls_by_player_count"] == {"3": 30, "4": 33, "5": 36}
