"""`tablelog standings`, `player`, `stats`, `seasons` and `projections rebuild` as a user
types them, against a club that recorded a few games: text, CSV (standings, a player's
rating history, a game type's statistics) and the projections' lag."""

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
        expected_stats = owner.game_type_stats("splendor")
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
    exported = tablelog(server.target, "stats", "splendor", "--csv", token=token).stdout
    assert exported.splitlines()[0] == "statistic,games,value,description"
    statistics = {r["statistic"]: r for r in csv.DictReader(io.StringIO(exported))}
    assert (statistics["games"]["games"], statistics["games"]["value"]) == ("3", "3")
    assert float(statistics["average moves"]["value"]) == round(expected_stats.average_moves, 3)
    seat_orders = {k: r for k, r in statistics.items() if k.startswith("wins of seat order ")}
    assert sorted(seat_orders) == ["wins of seat order 1", "wins of seat order 2"]
    assert sum(float(r["value"]) for r in seat_orders.values()) == 3
    assert {k: int(r["games"]) for k, r in seat_orders.items()} == {
        f"wins of seat order {s.order}": s.games for s in expected_stats.seats
    }
    figures = {f.name: f for f in expected_stats.figures}
    assert figures
    assert set(figures) <= set(statistics)
    for name, figure in figures.items():
        assert int(statistics[name]["games"]) == figure.games
        assert float(statistics[name]["value"]) == pytest.approx(figure.average, rel=1e-5)
        assert statistics[name]["description"] == figure.description
    assert len(statistics) == 2 + len(seat_orders) + len(figures)
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
