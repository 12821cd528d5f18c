"""Golden playthroughs: whole games in notation, replayed through the fold, with the final
itemised scores and winners they must produce (RULES.md §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay import fold
from tablelog.replay.core import DEALT, TABLE, TERMINAL
from tests.support import play

HERE = Path(__file__).parent / "playthroughs"
FILES = sorted(HERE.glob("*.txt"))
LABELS = ["land", "ducats", "mission", "largest", "second", "towers"]


def _header(lines: list[str], key: str) -> str:
    prefix = f"# {key}:"
    return next(line[len(prefix) :].strip() for line in lines if line.startswith(prefix))


def test_there_are_at_least_two_playthroughs() -> None:
    assert len(FILES) >= 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_playthrough_replays_to_its_scores(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    players = int(_header(lines, "players"))
    mode = DEALT if _header(lines, "mode") == "dealt" else TABLE
    position = play.play_all(play.new_position("castello-methoni", players, mode=mode), lines)
    assert position.game.to_move(position.state) == TERMINAL
    result = position.game.result(position.state)
    expected = {
        line.split(":")[0].removeprefix("# expect "): line.split(":", 1)[1].split()
        for line in lines
        if line.startswith("# expect ")
    }
    assert len(expected) == players
    for score in result.scores:
        fields = dict(part.split("=") for part in expected[f"p{score.seat + 1}"])
        assert score.total == int(fields["total"])
        assert [item.value for item in score.items] == [int(fields[k]) for k in LABELS]
    winners = _header(lines, "winners").split()
    assert [f"p{w + 1}" for w in result.winners] == winners
    # The recorded events fold back to the same result.
    events = play.events_of(
        position.table.created,
        [a.move for a in position.moves()],
        [a.notation for a in position.moves()],
    )
    again = fold.fold(events)
    assert again.game.result(again.state) == result
