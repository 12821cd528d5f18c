"""`tablelog standings`, `player`, `stats`, `seasons` and `projections rebuild` as a user
types them, against a club that recorded a few games: text, CSV and the projections' lag."""

from __future__ import annotations

import csv
import io
import time

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli_members import tablelog
from tests.service.test_club_memory import play
from tests.service.test_players import _club

pytestmark = pytest.mark.slow


def test_standings_player_stats_and_rebuild(server: BackgroundServer) -> None:
    _club_id, token = _club(server)
    with Client(server.target, token=token) as owner:
        for seed in (11, 12, 13):
            play(owner, "splendor", ["Ann", "Bob"], seed)
        deadline = time.monotonic() + 20
        while owner.standings("splendor").lag.projected_games < 3:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        expected = {r.display_name: r for r in owner.standings("splendor").rows}
    year = str(time.gmtime().tm_year)
    shown = tablelog(server.target, "standings", "splendor", "--season", year, token=token).stdout
    first_line = shown.splitlines()[0]
    assert first_line.startswith(f"splendor, season {year} ({year}-01-01 to ")
    assert "3 games; up to date (3 ended games)" in first_line
    assert {line.split()[1] for line in shown.splitlines()[2:]} == {"Ann", "Bob"}
    exported = tablelog(server.target, "standings", "splendor", "--csv", token=token).stdout
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert {r["player"]: int(r["games"]) for r in rows} == {"Ann": 3, "Bob": 3}
    assert {r["player"]: int(r["points"]) for r in rows} == {
        name: row.points for name, row in expected.items()
    }
    assert sum(float(r["wins"]) for r in rows) == 3
    player = tablelog(server.target, "player", "ann", token=token).stdout
    assert player.splitlines()[0].startswith("Ann, overall; up to date")
    assert "splendor: 3 games, " in player
    assert "Bob: " in player
    history = tablelog(server.target, "player", "Ann", "--csv", token=token).stdout
    assert len(history.splitlines()) == 1 + 3
    stats = tablelog(server.target, "stats", "splendor", token=token).stdout
    assert "wins by seat order (1 = first player): 1: " in stats
    tablelog(server.target, "seasons", "Spring", "2026-03-01", "2026-05-31", token=token)
    assert (
        "season Spring (2026-03-01 to 2026-06-01"
        in tablelog(server.target, "seasons", token=token).stdout
    )
    rebuilt = tablelog(server.target, "projections", "rebuild", token=token).stdout
    assert rebuilt.startswith("rebuilt from the games' streams: 3 ended games")
    assert ", 0 games folded from their events, the others from their sealed" in rebuilt
    refolded = tablelog(server.target, "projections", "rebuild", "--refold", token=token).stdout
    assert refolded.startswith("rebuilt from the games' streams: 3 ended games")
    assert ", 3 games folded from their events" in refolded
    refused = tablelog(
        server.target, "standings", "splendor", "--season", "Autumn", token=token, ok=False
    )
    assert refused.returncode != 0
    assert "There is no season 'Autumn'" in refused.stderr
