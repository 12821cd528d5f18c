"""`tablelog show` with no viewer named shows what the caller's role may see, as the web app
does (issue 26, smaller friction): the club's owner everything, `--spectator` the public
view."""

from __future__ import annotations

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow


def test_show_defaults_to_all_the_owner_may_see(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    client.record(game_id, "reserve 1.deck")  # dealt face down to Ann
    shown = tablelog(server, "show", game_id).stdout
    assert shown == tablelog(server, "show", game_id, "--full").stdout
    public = tablelog(server, "show", game_id, "--spectator").stdout
    assert public != shown
    hidden = client.state(game_id, full=True).view.splendor.players[0].reserved[0].card.text
    assert f"reserved: h1 {hidden} (blind)" in shown
    assert "reserved: h1 [hidden level-1 card]" in public
