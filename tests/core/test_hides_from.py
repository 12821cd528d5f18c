"""`Game.hides_from` agrees with `Game.view`: whenever a viewer's view leaves out something
the full view shows, the state is said to hide something from it (so ListLegalMoves never
lists another's decision to a viewer whose view is missing something), and the full view is
hidden nothing. Random games of every game, in both recording modes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE, TERMINAL, Viewer
from tablelog.replay.registry import all_games
from tablelog.v1 import game_pb2
from tests.support.play import choose, new_position

PLAYERS = {
    "splendor": 3,
    "medici": 3,
    "medici-card-game": 3,
    "mercado-de-lisboa": 2,
    "castello-methoni": 3,
}


FLAGS = frozenset({"viewer", "hidden", "hand_hidden", "mission_hidden", "money_visible"})
"""Fields that say who looks or that something is kept back, rather than what there is."""

TRAYS = frozenset({"unseen_cards", "unseen_nobles", "missions_to_reveal", "revealable"})
"""The trays a recorder taps a table's reveal on (issue 25): in dealt mode only the full view
lists them (the server deals; nobody else records a reveal), which hides nothing of the game."""


def comparable(view: Message) -> Message:
    """The view's content: a copy without the FLAGS, however deeply nested."""
    copy = type(view)()
    copy.CopyFrom(view)
    strip(copy)
    return copy


def strip(message: Message) -> None:
    for descriptor, value in message.ListFields():
        if descriptor.name in FLAGS or descriptor.name in TRAYS:
            message.ClearField(descriptor.name)
        elif descriptor.message_type is not None:
            for item in value if descriptor.is_repeated else [value]:
                if isinstance(item, Message):
                    strip(item)


def public_anyway(name: str, state: Any) -> bool:
    """States whose views keep back what the record has already made public, so that a list
    of moves can tell nothing more: Castello's missions recorded at the final scoring (table
    mode) before the game is over, and Mercado's coins once the final scoring shows them."""
    view: Any = all_games()[name].view(state, FULL)
    if name == "castello-methoni":
        return bool(view.phase == "missions")
    if name == "mercado-de-lisboa":
        return bool(view.over)
    return False


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_a_view_that_leaves_something_out_is_said_to(
    name: str, mode: game_pb2.Mode.ValueType
) -> None:
    game = all_games()[name]
    hidden_seen = 0
    for seed in range(3):
        rng = random.Random(seed)
        position = new_position(name, PLAYERS[name], mode=mode)
        viewers: list[Viewer] = [*range(PLAYERS[name]), SPECTATOR]
        for _ in range(400):
            state = position.state
            assert not game.hides_from(state, FULL)
            full = comparable(game.view(state, FULL))
            for viewer in viewers:
                differs = comparable(game.view(state, viewer)) != full
                if differs and not public_anyway(name, state):
                    assert game.hides_from(state, viewer), (seed, position.revision, viewer)
                hidden_seen += game.hides_from(state, viewer)
            if game.to_move(state) == TERMINAL:
                break
            inner = choose(game, state, rng)
            position = folding.record(position, position.table.wrap(inner), "")
    if mode == DEALT and name != "medici-card-game":
        assert hidden_seen, f"{name}: random play never met a secret"
