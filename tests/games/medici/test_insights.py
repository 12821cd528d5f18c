"""Medici insights on the golden playthroughs, against counts made independently from the
playthrough text: every bid and pass line names its bidder in a comment."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.insights import insights_of
from tablelog.v1.medici_pb2 import MediciOptions
from tests.games.medici.test_playthroughs import PLAYTHROUGHS
from tests.support.play import replay_golden


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=lambda p: p.stem)
def test_playthrough_insights_match_the_text(path: Path) -> None:
    position, meta = replay_golden("medici", path, MediciOptions())
    players = meta["players"].split()
    found = insights_of(folding.end(position, position.game.result(position.state)))
    bids: Counter[str] = Counter()
    passes: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        text, _, comment = line.partition("#")
        words = text.split()
        if words and words[0] in ("bid", "pass"):
            (bids if words[0] == "bid" else passes)[comment.strip()] += 1
    for seat, name in enumerate(players):
        assert found.seats[seat]["bids"] == bids[name], name
        assert found.seats[seat]["passes"] == passes[name], name
    florins = [int(f) for f in meta["final florins"].split()]
    assert [f["florins"] for f in found.seats] == florins
    # Each seat paid for its lots what the engine's running total says (it is never reset).
    state = position.state
    assert [f["florins_paid"] for f in found.seats] == list(state.paid)
    won = sum(f["lots_won"] for f in found.seats)
    assert won + found.table["lots_discarded"] == found.table["lots_auctioned"]
    assert sum(f["majorities_won"] for f in found.seats) >= 1
