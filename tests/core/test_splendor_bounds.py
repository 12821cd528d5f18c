"""Splendor's `check_bounds` (RULES.md §1, §3-§4) looks only at the parts a move sets: every
count and place a move can set is still held to the game's components, in every part that
can hold it, and a move within them passes."""

from __future__ import annotations

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import IllegalMove
from tablelog.replay.games.splendor.rules import RESERVE_LIMIT, SLOTS, State, check_bounds
from tablelog.v1 import splendor_pb2
from tests.support.play import created


def _state() -> State:
    state: State = folding.start(created("splendor", ["Ann", "Bob"])).state
    return state


def _move(**fields: object) -> splendor_pb2.SplendorMove:
    move = splendor_pb2.SplendorMove()
    for path, value in fields.items():
        *parents, name = path.split("__")
        target = move
        for parent in parents:
            target = getattr(target, parent)
        if isinstance(value, list):
            getattr(target, name).extend(value)
        else:
            setattr(target, name, value)
    return move


REFUSED = [
    ({"returned__white": 5}, "TOO_MANY_TOKENS"),  # 2 players: 4 of each gem
    ({"take_same__gem": 1, "returned__gold": 6}, "TOO_MANY_TOKENS"),
    ({"discard__tokens__red": 5}, "TOO_MANY_TOKENS"),
    ({"buy__level": 1, "buy__payment__black": 5}, "TOO_MANY_TOKENS"),
    ({"take_different__gems": [1, 2, 3, 4, 5, 1]}, "TAKE_DIFFERENT_COUNT"),
    ({"reserve__level": 4}, "NO_SUCH_PLACE"),
    ({"reserve__level": 1, "reserve__slot": SLOTS + 1}, "NO_SUCH_PLACE"),
    ({"buy__level": 4}, "NO_SUCH_PLACE"),
    ({"buy__level": 1, "buy__slot": SLOTS + 1}, "NO_SUCH_PLACE"),
    ({"buy__reserved": RESERVE_LIMIT + 1}, "NO_SUCH_PLACE"),
    ({"reveal_card__level": 4}, "NO_SUCH_PLACE"),
    ({"reveal_card__level": 1, "reveal_card__slot": SLOTS + 1}, "NO_SUCH_PLACE"),
]


@pytest.mark.parametrize(("fields", "code"), REFUSED)
def test_a_count_or_place_past_the_components_is_refused(
    fields: dict[str, object], code: str
) -> None:
    with pytest.raises(IllegalMove) as refused:
        check_bounds(_state(), _move(**fields))
    assert refused.value.code == code


@pytest.mark.parametrize(
    "fields",
    [
        {"returned__white": 4, "take_same__gem": 1},
        {"discard__tokens__gold": 5},
        {"buy__level": 3, "buy__slot": SLOTS, "buy__payment__white": 4},
        {"buy__reserved": RESERVE_LIMIT},
        {"reserve__level": 3, "reserve__slot": SLOTS},
        {"reveal_card__level": 3, "reveal_card__slot": SLOTS},
        {"take_different__gems": [1, 2, 3, 4, 5]},
    ],
)
def test_a_move_within_the_components_passes(fields: dict[str, object]) -> None:
    check_bounds(_state(), _move(**fields))
