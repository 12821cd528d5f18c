"""After `tablelog use GAME`, the commands that change or share a game need no id either
(issue 26, friction): amend, insert, delete, abandon, share, seat, remove-annotation; an
id given first still names another game."""

from __future__ import annotations

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.v1 import service_pb2
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow


def test_the_current_game_needs_no_id(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    other = new_game(server, "--mode", "dealt")
    tablelog(server, "use", game_id)
    tablelog(server, "record", stdin="take w u g\ntake r r\n")
    assert tablelog(server, "amend", "1.", "take w u k").stdout.startswith(
        "amended 1. Ann's take w u g (revision 17) → take w u k"
    )
    assert "inserted " in tablelog(server, "insert", "2.", "take g g", "--drop-tail").stdout
    deleted = tablelog(server, "delete", "r20").stdout
    assert deleted.startswith("deleted 2. Bob's take g g (revision 20)")
    note = tablelog(server, "annotate", "fine").stdout.split()[1]
    assert tablelog(server, "remove-annotation", note).stdout == f"annotation {note} removed\n"
    assert "read-only link for game " + game_id in tablelog(server, "share").stdout
    player = f"Pia-{game_id}"  # one server for the session: a name no other test adds
    tablelog(server, "members", "add", player, "--role", "player")
    seats = tablelog(server, "seat", "0", player).stdout.splitlines()
    assert seats[0].startswith("seat 0: m_")
    assert seats[1] == "seat 1: nobody"
    # An id given first still names that game.
    tablelog(server, "move", other, "take w u g")
    assert tablelog(server, "delete", other, "1.").stdout.startswith(
        "deleted 1. Ann's take w u g (revision 17)"
    )
    assert list(client.state(other).moves)[-1] != "take w u g"
    tablelog(server, "abandon", "--reason", "closing time")
    assert client.get_game(game_id).status == service_pb2.GAME_STATUS_ABANDONED
    assert client.get_game(other).status == service_pb2.GAME_STATUS_IN_PROGRESS
