"""benchmarks/club_night.py, shortened: a smoke test of the scenario (issue 29), not a timed
assertion. Two tables of the first two games (one dealt, one in table mode), two watchers
each and a picture stepper (in the spectators' process of their own), a second per
condition against a `tablelog serve` it starts: the night must complete with every watcher
update delivered once (none missed, none duplicated, no call failed) and print its table."""

from __future__ import annotations

import pytest

from benchmarks import club_night

pytestmark = pytest.mark.slow


def test_a_short_club_night_completes_with_every_update_delivered_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    held = club_night.main(
        ["--backends", "embedded", "--tables", "2", "--watchers", "2", "--window", "1",
         "--move-seconds", "0.1", "--step-seconds", "0.1", "--durability", "fast"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "| (a) recorders only |" in printed
    assert "| (c) + watchers, pictures |" in printed
    assert "missed 0 (gaps in a watch's sequence), unread 0 " in printed
    assert "duplicated 0 (all three must be 0)" in printed
    assert "error:" not in printed
    assert "the spectators' process(es) (1)" in printed
    assert held == 0
    rows = {
        cells[0]: cells[1:]
        for line in printed.splitlines()
        if line.startswith("| (")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    }
    assert list(rows) == ["(a) recorders only", "(b) + watchers", "(c) + watchers, pictures"]
    assert all(int(row[1]) > 0 for row in rows.values()), rows  # moves in every condition
    assert rows["(a) recorders only"][2] == "- / -"  # no watcher in (a)
    assert rows["(b) + watchers"][2] != "- / -", rows  # the watchers had updates
    assert rows["(c) + watchers, pictures"][3] != "- / -", rows  # and blocks were drawn
