"""A move that deals hidden information (here, Splendor's blind reserve in dealt mode) is
shown only to the seat it goes to: replays, live watching and move lists keep its place in
the history but not its content for everyone else."""

from __future__ import annotations

import pytest

from service.views import HIDDEN_MOVE
from tablelog_client import Client

pytestmark = pytest.mark.slow


def test_a_blind_reserve_is_dealt_in_secret(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    response = client.record(game.game_id, "reserve 1.deck", expected_version=game.version)
    dealt = [e for e in response.events if e.move_recorded.dealt]
    assert len(dealt) == 1
    secret = dealt[0].move_recorded.notation
    assert secret.startswith("reveal 1.deck ")
    revision = dealt[0].revision

    assert client.state(game.game_id, seat=0).moves[-1] == secret
    assert client.state(game.game_id, full=True).moves[-1] == secret
    assert client.state(game.game_id, seat=1).moves[-1] == HIDDEN_MOVE
    assert client.state(game.game_id).moves[-1] == HIDDEN_MOVE  # a spectator

    def seen_by(seat: int | None = None, full: bool = False) -> tuple[str, bool, bool]:
        replayed = client.replay(game.game_id, revision, revision, seat=seat, full=full)
        step = next(item for item in replayed if item.event.revision == revision)
        shown = step.event.move_recorded
        return shown.notation, shown.hidden, shown.HasField("move")

    assert seen_by(seat=0) == (secret, False, True)
    assert seen_by(full=True) == (secret, False, True)
    assert seen_by(seat=1) == (HIDDEN_MOVE, True, False)
    # Earlier, public moves are shown to everyone.
    first = next(iter(client.replay(game.game_id, 2, 2, seat=1)))
    assert not first.event.move_recorded.hidden
    assert first.event.move_recorded.notation.startswith("reveal ")
