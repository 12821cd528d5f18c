"""Golden playthroughs: whole games in notation with their expected final florins.

`#!` lines hold the players, options (protobuf text format), final florins and winners;
other `#` text is commentary with the florins after each day (day 1 of two_players_2016.txt
was checked by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from replay import fold as folding
from replay.core import TERMINAL
from replay.games.medici import GAME
from tablelog.v1.medici_pb2 import MediciOptions
from tests.support.play import created, events_of, new_position, play_all

PLAYTHROUGHS = sorted((Path(__file__).parent / "playthroughs").glob("*.txt"))


def _directives(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        if line.startswith("#!"):
            key, _, value = line[2:].partition(":")
            found[key.strip()] = value.strip()
    return found


def test_there_are_golden_playthroughs() -> None:
    assert len(PLAYTHROUGHS) >= 2


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=lambda p: p.stem)
def test_golden_playthrough(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = _directives(lines)
    players = meta["players"].split()
    options = text_format.Parse(meta.get("options", ""), MediciOptions())
    position = play_all(new_position("medici", players, options), lines)
    state = position.state
    assert GAME.to_move(state) == TERMINAL
    assert list(state.florins) == [int(f) for f in meta["final florins"].split()]
    result = GAME.result(state)
    assert [players[w] for w in result.winners] == meta["winners"].split()
    for score in result.scores:
        assert score.total == sum(item.value for item in score.items)
    # Each recorded line is canonical, and the events fold back to the same state.
    recorded = [a.notation for a in position.moves()]
    typed = [line.split("#", 1)[0].strip() for line in lines]
    assert recorded == [t for t in typed if t]
    events = events_of(created("medici", players, options), [a.move for a in position.moves()])
    assert folding.fold(events).state == state


DOC = Path(__file__).resolve().parents[3] / "docs" / "notation" / "medici.md"


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_the_documented_examples_play() -> None:
    example, _lot = _blocks(DOC.read_text(encoding="utf-8"))
    position = play_all(new_position("medici", ["Ann", "Bob"]), example)
    assert position.state.day == 2
    assert position.state.florins == (51, 76)
    assert position.state.paid == (14, 9)
    # The lot example needs the seed's ships: test_seed_examples replays it on them.
