"""`tablelog show --svg` and `--png`: the picture of a state, to a file or standard output."""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import splendor_line

pytestmark = pytest.mark.slow


def test_show_svg_writes_the_picture_of_the_asked_revision(
    server: BackgroundServer, tmp_path: Path
) -> None:
    game_id = new_game(server)
    for notation in splendor_line(seed=31)[:16]:
        tablelog(server, "move", game_id, notation)
    target = tmp_path / "state.svg"
    said = tablelog(server, "show", game_id, "--svg", "-o", str(target))
    assert said.stdout == ""
    root = ET.fromstring(target.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    words = [e.text for e in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Ann (first)" in words
    assert "Bob" in words
    head = target.read_text()
    earlier = tablelog(server, "show", game_id, "--revision", "3", "--svg").stdout
    assert earlier.startswith("<svg")
    assert earlier != head
    both = tablelog(server, "show", game_id, "--svg", "--png", ok=False)
    assert both.returncode != 0


def test_show_png_converts_the_picture_or_says_what_it_needs(
    server: BackgroundServer, tmp_path: Path
) -> None:
    game_id = new_game(server)
    target = tmp_path / "state.png"
    done = tablelog(server, "show", game_id, "--png", "-o", str(target), ok=False)
    if importlib.util.find_spec("cairosvg") is None:
        assert done.returncode != 0
        assert "tablelog[png]" in done.stderr
        assert not target.exists()
    else:
        assert done.returncode == 0, done.stderr
        assert target.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
