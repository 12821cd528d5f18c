"""Castello Methoni insights on the golden playthroughs, against counts made independently
from the playthrough text (`build`, `merge`, `trade`, `redraw` lines) and the final board."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE
from tablelog.replay.insights import insights_of
from tests.games.castello_methoni.test_playthroughs import FILES, _header
from tests.support import play


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_playthrough_insights_match_the_text(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    players = int(_header(lines, "players"))
    mode = DEALT if _header(lines, "mode") == "dealt" else TABLE
    position = play.play_all(play.new_position("castello-methoni", players, mode=mode), lines)
    found = insights_of(folding.end(position, position.game.result(position.state)))
    typed = [line.split("#", 1)[0].split() for line in lines]
    kinds = [words[0] for words in typed if words]

    def total(name: str) -> float:
        return sum(f[name] for f in found.seats)

    assert total("walls") == found.table["walls_built"] == kinds.count("build")
    assert total("merges") == kinds.count("merge")
    assert total("trades") == kinds.count("trade")
    assert total("redraws") == kinds.count("redraw")
    edges = [words[2].split("|") for words in typed if words and words[0] == "build"]
    assert total("sea_walls") == sum(1 for edge in edges if "sea" in edge)
    state = position.state
    assert total("castles_founded") == len(state.castles)
    assert found.table["castles_at_end"] == sum(1 for c in state.castles if c is not None)
    for seat, figures in enumerate(found.seats):
        assert figures["ducats"] == state.ducats[seat]
        own = [len(c.cells) for c in state.castles if c is not None and c.owner == seat]
        assert figures["largest_castle"] == max(own, default=0)
        assert figures["castles"] == len(own)
    if path.stem == "table_3p_merges":
        assert total("merges") >= 1
