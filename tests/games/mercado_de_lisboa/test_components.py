"""The approximate board data: marked as such, replaceable per game, validated."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablelog.replay.core import InvalidSetup
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa.components import COMPONENT_NAME, GOODS
from tablelog.v1 import game_pb2
from tests.support.play import new_position, random_game


def _default() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GAME.default_components()[0].content)
    return data


def _file(data: object, approximate: bool = False) -> game_pb2.ComponentFile:
    return game_pb2.ComponentFile(
        name=COMPONENT_NAME,
        media_type="application/json",
        content=json.dumps(data).encode(),
        approximate=approximate,
    )


def test_default_data_is_marked_approximate() -> None:
    (component,) = GAME.default_components()
    assert component.name == COMPONENT_NAME
    assert component.approximate
    assert "approximate" in component.approximate_note
    view = GAME.view(new_position("mercado-de-lisboa", 2).state, None)
    assert view.approximate
    assert view.approximate_note


def test_replacement_file_is_used_and_not_approximate() -> None:
    data = _default()
    data["restaurant_mark_spaces"] = (
        [[0, c] for c in range(5)] + [[4, c] for c in range(5)] + [[2, 2]]
    )
    # Every 1-customer tile shows fish and flower in this (made-up) corrected file.
    for tile in data["customer_tiles"]:
        if tile["customers"] == 1:
            tile["goods"] = ["flower", "fish"]
    position = new_position("mercado-de-lisboa", 2, components=[_file(data)])
    state = position.state
    assert state.rules.board.marks == (0, 1, 2, 3, 4, 12, 20, 21, 22, 23, 24)
    kind = state.rules.kind_of(1, [0, 1])
    assert state.rules.board.kind_counts[kind] == 10
    view = GAME.view(state, None)
    assert not view.approximate
    assert "approximate" not in GAME.render(view).split("\n")[0]
    played = random_game("mercado-de-lisboa", 2, 3)
    assert played.position.state.over


def _broken(change: str) -> dict[str, Any]:
    data = _default()
    if change == "marks10":
        data["restaurant_mark_spaces"] = data["restaurant_mark_spaces"][:10]
    elif change == "mark_off_board":
        data["restaurant_mark_spaces"][0] = [5, 0]
    elif change == "duplicate_mark":
        data["restaurant_mark_spaces"][1] = data["restaurant_mark_spaces"][0]
    elif change == "unknown_good":
        data["customer_tiles"][0]["goods"] = ["fish", "cheese"]
    elif change == "three_goods":
        data["customer_tiles"][0]["goods"] = list(GOODS[:3])
    elif change == "size_count":
        data["customer_tiles"][0]["customers"] = 2
    elif change == "size_range":
        data["customer_tiles"][0]["customers"] = 5
    elif change == "no_tiles":
        del data["customer_tiles"]
    return data


@pytest.mark.parametrize(
    "change",
    [
        "marks10",
        "mark_off_board",
        "duplicate_mark",
        "unknown_good",
        "three_goods",
        "size_count",
        "size_range",
        "no_tiles",
    ],
)
def test_invalid_replacement_is_refused(change: str) -> None:
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["a", "b"], None, 1, {COMPONENT_NAME: _file(_broken(change))})
    assert error.value.code == "INVALID_COMPONENTS"


def test_not_json_and_unknown_component_are_refused() -> None:
    bad = game_pb2.ComponentFile(name=COMPONENT_NAME, content=b"\xff{")
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b"], None, 1, {COMPONENT_NAME: bad})
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b"], None, 1, {COMPONENT_NAME: _file([1, 2])})
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["a", "b"], None, 1, {"other.json": _file({})})
    assert error.value.code == "UNKNOWN_COMPONENT"


def test_setup_needs_the_recorded_board_file() -> None:
    """The packaged board is only offered to new games: a replay must not depend on it."""
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["a", "b"], None, 1, {})
    assert error.value.code == "MISSING_COMPONENT"
    assert COMPONENT_NAME in error.value.message
