"""Medici: The Card Game insights on the golden playthroughs, against counts made
independently from the playthrough text: every `flip` and `take` line names its player."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.insights import insights_of
from tablelog.v1.medici_card_game_pb2 import MediciCardGameOptions
from tests.games.medici_card_game.test_playthroughs import PLAYTHROUGHS
from tests.support.play import replay_golden


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=lambda p: p.stem)
def test_playthrough_insights_match_the_text(path: Path) -> None:
    position, meta = replay_golden("medici-card-game", path, MediciCardGameOptions())
    players = meta["players"].split()
    found = insights_of(folding.end(position, position.game.result(position.state)))
    flips: Counter[str] = Counter()
    takes: Counter[str] = Counter()
    cards: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        text, _, comment = line.partition("#")
        words = text.split()
        if words and words[0] == "flip":
            flips[comment.strip()] += 1
        elif words and words[0] == "take":
            takes[comment.strip()] += 1
            cards[comment.strip()] += len(words) - 1
    for seat, name in enumerate(players):
        figures = found.seats[seat]
        assert (figures["flips"], figures["takes"]) == (flips[name], takes[name]), name
        assert figures["cards_taken"] == cards[name], name
    florins = [int(f) for f in meta["final florins"].split()]
    assert [f["florins"] for f in found.seats] == florins
    taken = sum(cards.values())
    assert found.table["cards_per_take"] == round(taken / sum(takes.values()), 3)
