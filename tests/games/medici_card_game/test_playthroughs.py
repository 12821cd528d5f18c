"""Golden playthroughs: whole games in notation with their expected final florins.

`#!` lines hold the players, options (protobuf text format), final florins and winners;
other `#` text is commentary (the florins after each round were checked by hand for round 1
of three_players.txt: Jeho 30 + cloth 10 + fur 5 + spice 10 = 55)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.v1.medici_card_game_pb2 import MediciCardGameOptions
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
    position, meta = replay_golden("medici-card-game", path, MediciCardGameOptions())
    assert list(position.state.florins) == [int(f) for f in meta["final florins"].split()]


DOC = Path(__file__).resolve().parents[3] / "docs" / "notation" / "medici-card-game.md"


def test_the_documented_examples_play() -> None:
    example, turn = fenced_blocks(DOC.read_text(encoding="utf-8"))
    position = play_all(new_position("medici-card-game", ["Juhee", "Minji", "Jeho"]), example)
    assert position.state.round == 2
    assert position.state.florins == (15, 35, 55)
    assert [a.notation for a in position.moves()] == [
        line.split("#", 1)[0].strip() for line in example if line.split("#", 1)[0].strip()
    ]
    position = play_all(new_position("medici-card-game", 3), turn)
    assert [len(ship) for ship in position.state.ships] == [2, 2, 1]
