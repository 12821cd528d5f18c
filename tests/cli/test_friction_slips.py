"""Smaller friction of issue 26, each a slip a recorder met: `watch --show` shows the table
at once (not only at the next event), and the refusal of an amendment that breaks a later
move names the CLI's flag, `--drop-tail`."""

from __future__ import annotations

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow


def test_watch_show_prints_the_table_at_once(server: BackgroundServer) -> None:
    game_id = new_game(server, "--mode", "dealt")
    watched = tablelog(server, "watch", game_id, "--show", "--timeout", "1").stdout
    lines = watched.splitlines()
    assert lines[0].startswith(f"{game_id}  splendor  Ann, Bob  [dealt]")
    assert lines[1] == "revision 16 · to move: Ann"
    assert lines[-1] == "stopped watching: --timeout 1s reached"


def test_an_amendment_breaking_a_later_move_names_the_flag(server: BackgroundServer) -> None:
    game_id = new_game(server, "--mode", "dealt")
    tablelog(server, "record", game_id, stdin="take w u g\ntake r r\n")
    refused = tablelog(server, "amend", game_id, "1.", "take r u g", ok=False)
    assert refused.returncode == 1
    assert "Drop the tail (--drop-tail; drop_tail in the API) to take it" in refused.stderr
    dropped = tablelog(server, "amend", game_id, "1.", "take r u g", "--drop-tail").stdout
    assert "dropped 1 later move from revision 18" in dropped


def test_replay_shows_the_notes_under_their_move_and_knows_the_arrows(
    server: BackgroundServer,
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    tablelog(server, "record", game_id, stdin="take w u g\ntake r r\n")
    tablelog(server, "annotate", game_id, "--move", "1.", "--glyph", "!?", "a", "bold", "start")
    shown = tablelog(server, "replay", game_id, "--all").stdout.splitlines()
    at = shown.index("== revision 17: 1. Ann: take w u g")
    assert shown[at + 1].startswith("   note: !? a bold start  — ")
    stepped = tablelog(server, "replay", game_id, "--step", stdin="l\nleft\nq\n").stdout
    assert "revision 18/18: annotation on revision 17: !? a bold start" in stepped
    assert "revision 18/18: 2. Bob: take r r" in stepped
