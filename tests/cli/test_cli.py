"""The `tablelog` console script, run as a subprocess against a live server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.service.helpers import OWNER_NAME, OWNER_TOKEN, splendor_line
from tests.service.support import tablelog_command

pytestmark = pytest.mark.slow


def tablelog(
    server: BackgroundServer, *args: str, ok: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TABLELOG_ADDRESS=server.target, TABLELOG_TOKEN=OWNER_TOKEN)
    done = subprocess.run(
        [*tablelog_command(), *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=60,
        check=False,
    )
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def new_game(server: BackgroundServer, *extra: str) -> str:
    made = json.loads(tablelog(server, "new", "splendor", "Ann", "Bob", "--json", *extra).stdout)
    game_id: str = made["gameId"]
    return game_id


def test_help_lists_every_command_including_serve_from_the_service() -> None:
    done = subprocess.run(
        [*tablelog_command(), "--help"], capture_output=True, text=True, check=True
    )
    for command in (
        "serve",
        "games",
        "new",
        "move",
        "undo",
        "redo",
        "show",
        "legal",
        "replay",
        "watch",
        "annotate",
        "annotations",
        "audit",
        "verify",
        "export",
        "import",
    ):
        assert command in done.stdout


def test_games_lists_the_game_types(server: BackgroundServer) -> None:
    assert "splendor" in tablelog(server, "games").stdout
    names = {g["name"] for g in json.loads(tablelog(server, "games", "--json").stdout)["games"]}
    assert "splendor" in names


def test_list_filters_by_player(server: BackgroundServer) -> None:
    # Names of this test's own: the server is shared with other tests' games.
    ann = f"Ann {time.monotonic_ns()}"
    made = [
        json.loads(tablelog(server, "new", kind, ann, "Bob", "--json").stdout)["gameId"]
        for kind in ("splendor", "medici")
    ]
    listed = json.loads(tablelog(server, "list", "--player", f" {ann.upper()} ", "--json").stdout)
    assert [game["gameId"] for game in listed["games"]] == made[::-1]
    medici = tablelog(server, "list", "--player", ann, "--game", "medici").stdout
    assert made[1] in medici
    assert made[0] not in medici
    assert tablelog(server, "list", "--player", ann[:-1]).stdout == "no games match\n"
    refused = tablelog(server, "list", "--player", "x" * 65, ok=False)
    assert refused.returncode == 1
    assert "player" in refused.stderr


def test_record_show_undo_redo_annotate_audit_verify(server: BackgroundServer) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=31)
    for notation in line[:10]:
        said = tablelog(server, "move", game_id, notation).stdout.splitlines()[0]
        # A player's move is named after the player; a card turned up is the table's.
        # (A player's move numbered as the text record numbers it, a table event not.)
        movers = ("Ann: ", "Bob: ", "table: ")
        unnumbered = re.sub(r"^\d+\. (?=Ann|Bob)", "", said)
        assert any(unnumbered.startswith(f"{who}{notation}  (revision ") for who in movers), said
    info = json.loads(tablelog(server, "info", game_id, "--json").stdout)
    assert info["version"] == "11"
    assert info["moveCount"] == 10
    shown = tablelog(server, "show", game_id).stdout
    assert shown.startswith("revision 11")
    assert "Ann" in shown
    state = json.loads(tablelog(server, "show", game_id, "--revision", "3", "--json").stdout)
    assert state["revision"] == "3"
    assert len(state["moves"]) == 2
    legal = tablelog(server, "legal", game_id).stdout
    assert "legal moves" in legal
    legal_json = json.loads(tablelog(server, "legal", game_id, "--json").stdout)
    assert legal_json["totalSize"] == len(legal_json["moves"]) > 0
    undone = tablelog(server, "undo", game_id, "--reason", "typo").stdout
    # The tenth move turns up a card: the table's, not a player's.
    assert undone.startswith(f"undid the table's {line[9]} (revision 11) (typo)"), undone
    assert tablelog(server, "redo", game_id).stdout.startswith(f"redid the table's {line[9]}")
    tablelog(server, "undo", game_id)
    tablelog(server, "annotate", game_id, "a", "fine", "move", "--glyph", "!", "--revision", "5")
    notes = json.loads(tablelog(server, "annotations", game_id, "--json").stdout)
    assert [(n["revision"], n["comment"], n["glyph"]) for n in notes["annotations"]] == [
        ("5", "a fine move", "!")
    ]
    audit = tablelog(server, "audit", game_id).stdout
    assert "[undone]" in audit
    assert OWNER_NAME in audit
    assert "tablelog-cli" in audit
    audit_json = json.loads(tablelog(server, "audit", game_id, "--json").stdout)
    assert sum(1 for e in audit_json["entries"] if e.get("undone")) == 1
    assert tablelog(server, "verify", game_id).stdout.startswith("ok:")
    assert json.loads(tablelog(server, "verify", game_id, "--json").stdout)["ok"] is True


def test_refusals_exit_1_with_the_reason(server: BackgroundServer) -> None:
    game_id = new_game(server, "--mode", "dealt")
    bad = tablelog(server, "move", game_id, "no such move", ok=False)
    assert bad.returncode == 1
    assert "INVALID_NOTATION" in bad.stderr
    stale = tablelog(server, "move", game_id, "take w u g", "--expect-version", "1", ok=False)
    assert stale.returncode == 1
    assert "STALE_VERSION" in stale.stderr
    assert "current_version=" in stale.stderr
    missing = tablelog(server, "show", "nosuchgame", ok=False)
    assert missing.returncode == 1
    assert "GAME_NOT_FOUND" in missing.stderr


def test_replay_prints_every_revision(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=32)
    for notation in line[:18]:  # the setup's 15 reveals, then 3 players' moves
        client.record(game_id, notation)
    frames = tablelog(server, "replay", game_id, "--json").stdout.splitlines()
    assert [json.loads(f)["state"]["revision"] for f in frames] == [str(r) for r in range(1, 20)]
    text = tablelog(server, "replay", game_id, "--all").stdout
    # The setup is one step, as `watch` and `history` fold it; the moves are numbered.
    headers = [row for row in text.splitlines() if row.startswith("== ")]
    assert headers[:2] == [
        "== revision 1: game created for Ann, Bob",
        "== revisions 2 to 16: setup: 15 table events",
    ]
    assert line[15:18] == ["reserve 1.2", "reveal 1.2 1k0:w2u2r1", "take u u"]
    assert headers[2:] == [
        "== revision 17: 1. Ann: reserve 1.2 (1u0:k3)",  # the card it took named beside it
        "== revision 18: table: reveal 1.2 1k0:w2u2r1",  # after a move: not the setup's
        "== revision 19: 2. Bob: take u u",
    ]
    # Stepping forward and back with the interactive keys, typed on stdin; a revision
    # inside the setup goes to the setup's step.
    keys = "n\nn\np\n6\nl\nq\n"
    stepped = tablelog(server, "replay", game_id, "--step", stdin=keys).stdout
    screens = stepped.split("\033[2J\033[H")[1:]  # each step clears the screen first
    shown = [screen.split(":")[0] for screen in screens]
    assert shown == [
        "revision 1/19",
        "revisions 2 to 16/19",
        "revision 17/19",
        "revisions 2 to 16/19",
        "revisions 2 to 16/19",
        "revision 19/19",
    ]


def test_watch_prints_moves_recorded_elsewhere(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    env = dict(os.environ, TABLELOG_ADDRESS=server.target, TABLELOG_TOKEN=OWNER_TOKEN)
    watcher = subprocess.Popen(
        [*tablelog_command(), "watch", game_id, "--timeout", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert watcher.stdout is not None
        assert game_id in watcher.stdout.readline()  # the header: watching has begun
        time.sleep(0.5)
        _to_move, legal = client.legal_moves(game_id)
        client.record(game_id, legal[0].notation)
        line = watcher.stdout.readline()
        revision = client.get_game(game_id).version
        assert line.startswith(f"revision {revision}: 1. Ann: {legal[0].notation}"), line
    finally:
        watcher.terminate()
        watcher.communicate(timeout=20)


def test_export_then_import(server: BackgroundServer, tmp_path: Path) -> None:
    game_id = new_game(server)
    for notation in splendor_line(seed=33)[:9]:
        tablelog(server, "move", game_id, notation)
    exported = tablelog(server, "export", game_id).stdout
    lines = exported.splitlines()
    assert len(lines) == 10
    assert json.loads(lines[0])["gameCreated"]["game"] == "splendor"
    path = tmp_path / "game.jsonl"
    tablelog(server, "export", game_id, "-o", str(path))
    assert path.read_text() == exported
    imported = json.loads(tablelog(server, "import", str(path), "--json").stdout)
    assert imported["gameId"] != game_id
    assert imported["version"] == "10"
    from_stdin = tablelog(server, "import", "-", stdin=exported).stdout
    assert from_stdin.startswith("imported as ")
    listed = tablelog(server, "list", "--json").stdout
    assert imported["gameId"] in listed
    # The imported game gives back the archive it came from, byte for byte.
    assert tablelog(server, "export", imported["gameId"], "--original").stdout == exported
    refused = tablelog(server, "export", game_id, "--original", ok=False)
    assert "was not imported" in refused.stderr


def test_move_json_shows_a_receipt_that_verify_checks(
    server: BackgroundServer, tmp_path: Path
) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=33)
    tablelog(server, "move", game_id, line[0])
    printed = tablelog(server, "move", game_id, line[1], "--json").stdout
    receipt = json.loads(printed)["receipt"]
    assert (receipt["gameId"], receipt["revision"], receipt["sequence"]) == (game_id, "3", "3")
    saved = tmp_path / "receipt.json"
    saved.write_text(printed)
    held = tablelog(server, "verify", game_id, "--receipt", str(saved), "--receipt", printed)
    assert "hash chain intact (keyed), 2 receipts held" in held.stdout
    forged = json.dumps({**receipt, "revision": "9"})
    refused = tablelog(server, "verify", game_id, "--receipt", forged, ok=False)
    assert refused.returncode == 1
    assert "receipts[0]" in refused.stderr


def test_an_edited_export_is_refused_at_its_line(server: BackgroundServer, tmp_path: Path) -> None:
    game_id = new_game(server)
    for notation in splendor_line(seed=33)[:4]:
        tablelog(server, "move", game_id, notation)
    lines = tablelog(server, "export", game_id).stdout.splitlines()
    third = json.loads(lines[2])
    third["actor"]["user"] = "mallory"
    lines[2] = json.dumps(third)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n\n".join(lines) + "\n")  # blank lines between: file lines 1, 3, 5, ...
    refused = tablelog(server, "import", str(path), ok=False)
    assert refused.returncode == 1
    assert "INVALID_HISTORY" in refused.stderr
    assert "line=5" in refused.stderr  # the third event, on the file's fifth line
    assert "rule=BROKEN_CHAIN" in refused.stderr


def test_a_move_typed_against_an_old_picture_of_the_table_is_refused(
    server: BackgroundServer,
) -> None:
    """Two recorders at one table: the second terminal's move was typed before it saw the
    first one's, so it is refused rather than recorded for the wrong player."""
    game_id = new_game(server, "--mode", "dealt")
    first = tablelog(server, "move", game_id, "take w u g")
    assert "Ann: take w u g  (revision " in first.stdout
    with Client(server.target, token=OWNER_TOKEN) as other:
        other.record(game_id, "take r k w")  # another recorder, another terminal
        again = tablelog(server, "move", game_id, "take w u g", ok=False)
        assert again.returncode == 1
        assert "STALE_VERSION" in again.stderr
        assert "moved on since this terminal last saw it" in again.stderr
        assert other.get_game(game_id).player_move_count == first_count(first.stdout) + 1
    # Having been told, the recorder looks and records again: now it goes through.
    retried = tablelog(server, "move", game_id, "take w u g")
    assert "Ann: take w u g  (revision " in retried.stdout


def test_changes_replay_and_audit_name_who_moved(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    dealt = client.get_game(game_id).version  # the server's deal of the opening layout
    said = tablelog(server, "move", game_id, "take w u g").stdout
    assert said.startswith(f"1. Ann: take w u g  (revision {dealt + 1})"), said
    assert tablelog(server, "move", game_id, "take r k w").stdout.startswith("2. Bob: take w r k")
    undone = tablelog(server, "undo", game_id, "--reason", "misread").stdout
    assert undone.startswith(f"undid 2. Bob's take w r k (revision {dealt + 2}) (misread)"), undone
    assert tablelog(server, "redo", game_id).stdout.startswith("redid 2. Bob's take w r k")
    undone = tablelog(server, "undo", game_id).stdout  # takes back the redo: the same move
    assert undone.startswith(f"undid 2. Bob's take w r k (revision {dealt + 2})"), undone
    tablelog(server, "abandon", game_id, "--reason", "dinner")

    replayed = tablelog(server, "replay", game_id, "--all").stdout
    headers = [line for line in replayed.splitlines() if line.startswith("== ")]
    assert headers[0] == "== revision 1: game created for Ann, Bob"
    # The server's deal of the layout is one step (the setup), the moves numbered.
    assert headers[1] == f"== revisions 2 to {dealt}: setup: {dealt - 1} table events"
    assert headers[2:] == [
        f"== revision {dealt + 1}: 1. Ann: take w u g",
        f"== revision {dealt + 2}: 2. Bob: take w r k",
        f"== revision {dealt + 3}: undid 2. Bob's take w r k (revision {dealt + 2}) (misread)",
        f"== revision {dealt + 4}: redid 2. Bob's take w r k (revision {dealt + 2})",
        f"== revision {dealt + 5}: undid 2. Bob's take w r k (revision {dealt + 2})",
        f"== revision {dealt + 6}: game abandoned (dinner)",
    ]
    # Replayed from the middle, the first mover is still named (from the state before).
    bob = str(dealt + 2)
    middle = tablelog(server, "replay", game_id, "--all", "--from", bob, "--to", bob).stdout
    assert middle.startswith(f"== revision {bob}: 2. Bob: take w r k"), middle
    watched = tablelog(server, "watch", game_id, "--from", bob).stdout.splitlines()
    # Watched, as replayed: a recorded move numbered as the text record numbers it.
    assert watched[1:] == [line.removeprefix("== ") for line in headers[3:]]
    audit = [entry.summary for entry in client.audit(game_id)]
    assert audit[dealt] == f"1. Ann: take w u g (recorded by {OWNER_NAME})"
    assert audit[dealt + 2] == (
        f"{OWNER_NAME} undid Bob's take w r k (revision {dealt + 2}) (misread)"
    )
    assert audit[-1] == f"{OWNER_NAME} abandoned the game (dinner)"


def first_count(summary: str) -> int:
    """The players' moves printed in a change's summary line ("... moves 1 ...")."""
    words = summary.split()
    return int(words[words.index("moves") + 1])
