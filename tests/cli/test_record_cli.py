"""`tablelog export --format text` and `tablelog import` of a text record, as subprocesses
against a live server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import splendor_line

pytestmark = pytest.mark.slow


def test_games_exported_as_text_import_again_from_a_file(
    server: BackgroundServer, tmp_path: Path
) -> None:
    first, second = new_game(server), new_game(server)
    for notation in splendor_line(seed=33)[:9]:
        tablelog(server, "move", first, notation)
    tablelog(server, "annotate", first, "a", "bold", "take")
    path = tmp_path / "club.txt"
    tablelog(server, "export", first, second, "--format", "text", "-o", str(path))
    text = path.read_text(encoding="utf-8")
    assert text.count('[Game "splendor"]') == 2
    assert "{a bold take}" in text
    imported = tablelog(server, "import", str(path)).stdout
    assert imported.count("imported as ") == 2
    again = json.loads(tablelog(server, "import", "-", "--json", stdin=text).stdout)
    ids = [game["gameId"] for game in again["games"]]
    assert len(ids) == 2
    exported = tablelog(server, "export", *ids, "--format", "text").stdout
    assert exported == text


def test_a_text_record_with_an_illegal_move_is_refused_at_its_line(
    server: BackgroundServer, tmp_path: Path
) -> None:
    game_id = new_game(server)
    for notation in splendor_line(seed=33)[:4]:
        tablelog(server, "move", game_id, notation)
    text = tablelog(server, "export", game_id, "--format", "text").stdout
    lines = text.splitlines()
    lines.append("9. Ann: buy 3.1")
    path = tmp_path / "edited.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused = tablelog(server, "import", str(path), ok=False)
    assert refused.returncode == 1
    assert f"Line {len(lines)}, column 1: 'Ann: buy 3.1'" in refused.stderr
    assert "INVALID_RECORD" in refused.stderr


def test_the_json_archive_holds_one_game(server: BackgroundServer) -> None:
    first, second = new_game(server), new_game(server)
    refused = tablelog(server, "export", first, second, ok=False)
    assert "--format text" in refused.stderr
