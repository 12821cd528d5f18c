"""`tablelog annotate --variation` and `tablelog replay --variation`, as subprocesses
against a live server."""

from __future__ import annotations

import json

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog
from tests.service.test_variations import ANCHOR, LINE, after, alternative_line, before_anchor

pytestmark = pytest.mark.slow


def test_a_variation_typed_at_the_terminal_is_listed_and_replayed(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    for notation in LINE[:ANCHOR]:
        client.record(game_id, notation)
    start = before_anchor()
    line = alternative_line(start, 3, seed=11)
    typed = " ;  ".join(line)
    done = tablelog(
        server, "annotate", game_id, "why", "not", "--revision", str(ANCHOR), "--variation", typed
    )
    assert done.stdout.startswith("annotation ")
    note = client.annotations(game_id)[0]
    assert [m.notation for m in note.variation.moves] == line
    listed = tablelog(server, "annotations", game_id).stdout
    assert f"variation: {' '.join(line)}" in listed
    nested = alternative_line(after(start, line[:1]), 2, seed=12)
    client.annotate(game_id, "deeper", revision=ANCHOR, variation=[*line[:2], nested])
    second = client.annotations(game_id)[1]
    assert (
        f"variation: {line[0]} {line[1]} ({' '.join(nested)})"
        in tablelog(server, "annotations", game_id).stdout
    )
    shown = tablelog(server, "replay", game_id, "--all", "--variation", note.annotation_id).stdout
    assert f"== variation, move 3 (instead of revision {ANCHOR}): " in shown
    assert f"== revision {ANCHOR - 1}: " in shown
    assert f"== revision {ANCHOR}: " not in shown
    branch = tablelog(
        server, "replay", game_id, "--json", "--variation", f"{second.annotation_id}/2.1"
    ).stdout.splitlines()
    steps = [json.loads(frame) for frame in branch if '"variation"' in frame]
    assert [s["event"]["moveRecorded"]["notation"] for s in steps] == nested
    refused = tablelog(
        server, "annotate", game_id, "--revision", str(ANCHOR), "--variation", "no such move",
        ok=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "Move 1 of the variation (no such move)" in refused.stderr
