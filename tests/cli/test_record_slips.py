"""Recording without slips (issue 26, item 1): a piped or scripted record stops at its
first refused line, `FILE:LINE: ` before the refusal, so no later line lands on the wrong
player's turn; `--keep-going` reads on but records only lines that name their mover; `#`
comments and blank lines are skipped; and a line may name its mover (`Cleo: take u g k`),
which the server checks for every client (the shell, a pipe, `tablelog move`, the web
app's text box all send notation)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import refused

pytestmark = pytest.mark.slow

LAYOUT = """\
# the table's layout, as docs/notation/splendor.md writes it
reveal 1.1 1w0:u1g2r1k1          # table
reveal 1.2 1g0:u1r2k2            # table
reveal 1.3 1w0:u2g2k1            # table
reveal 1.4 1k0:w1u2g1r1          # table
reveal 2.1 2g3:g6                # table
reveal 2.2 2u3:u6                # table
reveal 2.3 2u1:u2g3k3            # table
reveal 2.4 2g2:u5g3              # table

reveal 3.1 3w3:u3g3r5k3          # table
reveal 3.2 3w5:w3k7              # table
reveal 3.3 3g5:u7g3              # table
reveal 3.4 3u4:w6u3k3            # table
reveal noble g3r3k3              # table
reveal noble r4k4                # table
reveal noble u3g3r3              # table
"""


def moves_of(client: Client, game_id: str) -> list[str]:
    return list(client.state(game_id).moves)


def test_a_piped_record_stops_at_its_refused_line(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    script = "# Ann and Bob, first round\n\ntake w u g   # Ann\ntake w w\ntake r r\n"
    done = tablelog(server, "record", game_id, stdin=script, ok=False)
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert errors[0] == (
        "<stdin>:4: error: Take 2 needs at least 4 white tokens in the bank; there are 3."
    )
    assert errors[-1].startswith("<stdin>:4: stopped at this line: the lines after it")
    # The line written for Ann's next turn was never read, so never recorded for Bob.
    assert "Bob> take r r" not in done.stdout
    assert moves_of(client, game_id)[-1] == "take w u g"
    assert client.get_game(game_id).version == 17


def test_a_file_of_moves_with_comments_names_its_line(
    server: BackgroundServer, client: Client, tmp_path: Path
) -> None:
    game_id = new_game(server)  # table mode: the layout is typed in
    moves = tmp_path / "night.txt"
    moves.write_text(LAYOUT + "take g r k   # Ann\nBob: take u u\nquit\ntake w w\n")
    done = tablelog(server, "record", game_id, "--from", str(moves), ok=False)
    assert done.returncode == 0, done.stderr
    assert "Bob: take u u  (revision 18)" in done.stdout
    assert "take w w" not in done.stdout  # after quit: never read
    moves.write_text("Bob: take u w k\n")
    done = tablelog(server, "record", game_id, "--from", str(moves), ok=False)
    assert done.returncode == 1
    assert done.stderr.startswith(f"{moves}:1: error: It is Ann's turn, not Bob's.\n")
    assert client.get_game(game_id).version == 18


def test_keep_going_reads_on_but_records_only_lines_that_name_their_mover(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    script = "\n".join(
        [
            "take w u g",  # Ann
            "take w w",  # Bob: refused (3 white left)
            "take r r",  # written for Ann: not sent, it would be Bob's
            "undo",  # would undo Ann's move, not the refused one: not sent
            "Ann: take r r",  # named: the server says it is Bob's turn
            "Bob: take k k",  # named and Bob's: recorded
            "show",
        ]
    )
    done = tablelog(server, "record", game_id, "--keep-going", stdin=script + "\n", ok=False)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if not line.startswith("  (")]
    assert errors == [
        "<stdin>:2: error: Take 2 needs at least 4 white tokens in the bank; there are 3.",
        "<stdin>:3: not sent: after a refused line, a move is recorded only when it names "
        "its mover (`Name: move`), so that it cannot land on another player's turn",
        "<stdin>:4: not sent: `undo` after a refused line would change another move than meant",
        "<stdin>:5: error: It is Bob's turn, not Ann's.",
    ]
    assert "(FAILED_PRECONDITION: NOT_YOUR_TURN rule=NOT_YOUR_TURN)" in done.stderr
    assert "Bob: take k k  (revision 18)" in done.stdout
    assert moves_of(client, game_id)[-2:] == ["take w u g", "take k k"]


def test_a_named_mover_is_checked_by_the_server_for_every_client(
    server: BackgroundServer, client: Client
) -> None:
    game = client.create_game("splendor", ["Ann", "Bob", "Cleo"])
    game_id = game.game_id
    # The table is to reveal: a player's line is not the table's.
    error = refused(lambda: client.record(game_id, "Ann: take w u g"))
    assert (error.code, error.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    assert error.message == "It is not Ann's turn: the table must reveal first."
    for line in [*LAYOUT.splitlines(), "reveal noble w4u4"]:  # three players: 4 nobles
        if line.startswith("reveal"):
            client.record(game_id, "table: " + line.split("#")[0].strip())
    # A colon inside a move is part of it, not a name.
    assert moves_of(client, game_id)[0] == "reveal 1.1 1w0:u1g2r1k1"
    error = refused(lambda: client.record(game_id, "Cleo: take u g k"))
    assert error.reason == "NOT_YOUR_TURN"
    assert error.message == "It is Ann's turn, not Cleo's."
    error = refused(lambda: client.record(game_id, "table: reveal 1.1 1w0:u1g2r1k1"))
    assert error.message == "It is Ann's turn, not the table's."
    error = refused(lambda: client.record(game_id, "Zed: take u g k"))
    assert (error.reason, error.metadata["rule"]) == ("ILLEGAL_MOVE", "UNKNOWN_PLAYER")
    assert error.message.startswith("Zed is not a player of this game: the players are Ann")
    error = refused(lambda: client.record(game_id, "Ann: take u g k", seat=1))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert client.get_game(game_id).version == 17  # nothing refused was recorded
    recorded = client.record(game_id, "ann: take u g k")  # a name in any case
    assert [e.move_recorded.notation for e in recorded.events] == ["take u g k"]
    # `tablelog move` and the shell send the line as typed: the same check.
    by_move = tablelog(server, "move", game_id, "Cleo: take w r k", ok=False)
    assert by_move.returncode == 1
    assert "It is Bob's turn, not Cleo's." in by_move.stderr
    shell = tablelog(server, "record", game_id, stdin="Bob: take w r k\n")
    assert "Bob: take w r k  (revision 19)" in shell.stdout
