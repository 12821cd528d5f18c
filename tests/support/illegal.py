"""The one check of every game's catalogue of illegal moves (STYLE.md principle 8: one case
per rule, each refused with its own stable code and a message in a player's words)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.message import Message

from tablelog.replay.core import Game, IllegalMove


def refused(game: Game[Any, Any], state: Any, move: Message | str, code: str) -> str:
    """Apply `move` (a typed move, or a line of notation the game reads in `state`) and
    return the refusal's message, after checking that `apply` raised `IllegalMove` with
    `code`, a message that says something, and that the refused move changed nothing."""
    typed = game.parse(move, state) if isinstance(move, str) else move
    before = repr(state)
    with pytest.raises(IllegalMove) as raised:
        game.apply(state, typed)
    assert raised.value.code == code, raised.value.message
    assert raised.value.message.strip(), f"{code} has no message"
    assert repr(state) == before, "a refused move changed the state"
    return raised.value.message
