"""Golden playthroughs: whole games in notation with their expected final florins.

`#!` lines hold the players, options (protobuf text format), final florins and winners;
other `#` text is commentary with the florins after each day (day 1 of two_players_2016.txt
was checked by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.v1.medici_pb2 import MediciOptions
from tests.support.play import (
    fenced_blocks,
    new_position,
    play_all,
    replay_golden,
)

PLAYTHROUGHS = sorted((Path(__file__).parent / "playthroughs").glob("*.txt"))


def test_there_are_golden_playthroughs() -> None:
    assert len(PLAYTHROUGHS) >= 2


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=lambda p: p.stem)
def test_golden_playthrough(path: Path) -> None:
    position, meta = replay_golden("medici", path, MediciOptions())
    assert list(position.state.florins) == [int(f) for f in meta["final florins"].split()]


DOC = Path(__file__).resolve().parents[3] / "docs" / "notation" / "medici.md"


def test_the_documented_examples_play() -> None:
    example, _lot = fenced_blocks(DOC.read_text(encoding="utf-8"))
    position = play_all(new_position("medici", ["Ann", "Bob"]), example)
    assert position.state.day == 2
    assert position.state.florins == (51, 76)
    assert position.state.paid == (14, 9)
    # The lot example needs the seed's ships: test_seed_examples replays it on them.
