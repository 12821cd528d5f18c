"""One way to count (issue 26, item 3): the players' moves numbered as the text record
numbers them (`17.`; the table's events are not numbered), with the revision beside them;
`annotate`, `amend`, `insert` and `delete` take `17.`, `17...` or `r45`; annotating or
amending a table event says so."""

from __future__ import annotations

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow


def test_history_numbers_the_players_moves_as_the_text_record_does(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    tablelog(server, "record", game_id, stdin="take w u g\ntake r r\ntake u r k\n")
    history = tablelog(server, "history", game_id).stdout.splitlines()
    assert history == [
        "    * setup: 15 table events  (revisions 2 to 16)",
        "   1. Ann: take w u g  (revision 17)",
        "   2. Bob: take r r  (revision 18)",
        "   3. Ann: take u r k  (revision 19)",
    ]
    # The list's column counts the players' moves, as the record numbers them.
    game = client.get_game(game_id)
    assert (game.move_count, game.player_move_count) == (18, 3)
    listed_game = next(
        line for line in tablelog(server, "list").stdout.splitlines() if line.startswith(game_id)
    )
    assert "  moves 3  " in listed_game
    record = client.export_record([game_id])
    assert "2. Bob: take r r" in record
    assert "3. Ann: take u r k" in record

    for reference in ("2.", "2...", "r18", "18"):
        said = tablelog(server, "annotate", game_id, "--move", reference, "fine").stdout
        assert said.startswith("annotation ")
        assert said.rstrip().endswith("on move 2. (Bob: take r r, revision 18)")
    listed = tablelog(server, "annotations", game_id).stdout.splitlines()
    assert listed[0].startswith("   2. revision   18     fine  — ")

    amended = tablelog(server, "amend", game_id, "1.", "take w u k").stdout
    assert amended.startswith("amended 1. Ann's take w u g (revision 17) → take w u k")
    missing = tablelog(server, "delete", game_id, "9.", ok=False)
    assert missing.returncode == 2
    assert missing.stderr == "error: there is no move 9.: the players have made 3 moves\n"
    wrong = tablelog(server, "insert", game_id, "move-two", "take g g", ok=False)
    assert wrong.returncode == 2
    assert "'move-two' names no move" in wrong.stderr
    shell = tablelog(server, "record", game_id, stdin="delete 3.\nhistory\n").stdout
    assert "deleted 3. Ann's take u r k (revision 19)" in shell
    assert shell.rstrip().endswith("   2. Bob: take r r  (revision 18)")


def test_annotating_or_amending_a_table_event_says_so(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)  # table mode: the recorder types the reveals
    tablelog(server, "move", game_id, "reveal 1.1 1w0:u1g2r1k1")
    tablelog(server, "move", game_id, "reveal 1.2 1g0:u1r2k2")
    said = tablelog(server, "annotate", game_id, "--move", "r2", "a good card")
    assert said.stderr == (
        "annotating a table event, not a player's move: table event (table: reveal 1.1 "
        "1w0:u1g2r1k1, revision 2)\n"
    )
    assert said.stdout.startswith("annotation ")
    assert said.stdout.rstrip().endswith(
        "on table event (table: reveal 1.1 1w0:u1g2r1k1, revision 2)"
    )
    assert tablelog(server, "annotations", game_id).stdout.startswith("    * revision    2")
    amended = tablelog(server, "amend", game_id, "r3", "reveal 1.2 1g0:w1u1r1k1")
    assert amended.stderr.startswith("amending a table event, not a player's move: table event")
    history = tablelog(server, "history", game_id).stdout.splitlines()
    assert history == ["    * setup: 2 table events  (revisions 2 to 4)"]
