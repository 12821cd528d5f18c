"""A move that deals hidden information (here, Splendor's blind reserve in dealt mode) is
shown only to the seat it goes to: replays, live watching and move lists keep its place in
the history but not its content for everyone else."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.recording.views import HIDDEN_MOVE
from tablelog.v1 import service_pb2
from tablelog_client import Client
from tests.service.helpers import OWNER_TOKEN
from tests.service.support import tablelog_command

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


def test_watchers_of_each_seat_see_only_their_own_secret(client: Client) -> None:
    """Watchers of one game share a tail and its renders, one per viewer kind: the seat
    the blind reserve is dealt to (and the full view) sees the card, the other seat and
    spectators see only that a card was dealt."""
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    kinds: dict[str, service_pb2.Viewer] = {
        "seat 0": service_pb2.Viewer(seat=0),
        "seat 1": service_pb2.Viewer(seat=1),
        "spectator": service_pb2.Viewer(spectator=True),
        "full": service_pb2.Viewer(full=True),
    }
    seen: dict[str, list[service_pb2.ReplayGameResponse]] = {name: [] for name in kinds}
    streams = {
        name: client.stub.WatchGame(
            # From what comes next: a watcher that joins late still gets the deal.
            service_pb2.WatchGameRequest(
                game_id=game.game_id, from_revision=game.version + 1, viewer=viewer
            ),
            timeout=30,
        )
        for name, viewer in kinds.items()
    }

    def follow(name: str) -> None:
        for item in streams[name]:
            if item.WhichOneof("item") == "update":
                seen[name].append(item.update)
                if item.update.event.move_recorded.dealt:
                    return

    readers = [threading.Thread(target=follow, args=(name,)) for name in kinds]
    for reader in readers:
        reader.start()
    response = client.record(game.game_id, "reserve 1.deck", expected_version=game.version)
    secret = next(e for e in response.events if e.move_recorded.dealt).move_recorded.notation
    for reader in readers:
        reader.join(30)
    for stream in streams.values():
        stream.cancel()

    def dealt(name: str) -> tuple[str, bool, bool, str]:
        update = seen[name][-1]
        shown = update.event.move_recorded
        return shown.notation, shown.hidden, shown.HasField("move"), update.state.moves[-1]

    assert dealt("seat 0") == (secret, False, True, secret)
    assert dealt("full") == (secret, False, True, secret)
    assert dealt("seat 1") == (HIDDEN_MOVE, True, False, HIDDEN_MOVE)
    assert dealt("spectator") == (HIDDEN_MOVE, True, False, HIDDEN_MOVE)
    assert secret not in seen["seat 1"][-1].SerializeToString().decode("utf-8", "replace")
    assert secret not in seen["spectator"][-1].state.text


def test_the_cli_names_the_deal_without_showing_it_to_other_seats(
    client: Client, server: BackgroundServer
) -> None:
    """The CLI's replay says who moved and that a card was dealt; only the seat it went to
    (and the full view) sees which card."""
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    response = client.record(game.game_id, "reserve 1.deck", expected_version=game.version)
    secret = next(e for e in response.events if e.move_recorded.dealt).move_recorded.notation
    env = dict(os.environ, TABLELOG_ADDRESS=server.target, TABLELOG_TOKEN=OWNER_TOKEN)

    def replayed(*viewer: str) -> str:
        done = subprocess.run(
            [*tablelog_command(), "replay", game.game_id, "--all", *viewer],
            capture_output=True, text=True, env=env, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout

    assert "Ann: reserve 1.deck" in replayed("--seat", "1")
    hidden_from: list[tuple[str, ...]] = [(), ("--seat", "1")]
    for viewer in hidden_from:
        shown = replayed(*viewer)
        assert f"the server dealt {HIDDEN_MOVE}" in shown
        assert secret not in shown
    for viewer in (("--seat", "0"), ("--full",)):
        assert f"the server dealt {secret}" in replayed(*viewer)
