"""Splendor insights on the golden playthroughs, against counts made independently from
the playthrough text (the `take` and `reserve` lines) and its expected results."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE
from tablelog.replay.insights import insights_of
from tablelog.v1.splendor_pb2 import SplendorOptions
from tests.games.splendor.test_splendor_playthroughs import FILES, headers
from tests.support.play import new_position, play

LETTERS = {"w": "white", "u": "blue", "g": "green", "r": "red", "k": "black"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_playthrough_insights_match_the_text(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = headers(lines)
    options = SplendorOptions(
        first_player=int(meta["first_player"]),
        allow_take_fewer_anytime=meta["allow_take_fewer_anytime"] == "true",
    )
    mode = TABLE if meta["mode"] == "table" else DEALT
    position = new_position("splendor", int(meta["players"]), options, mode)
    typed = [line.split("#", 1)[0].strip() for line in lines]
    typed = [text for text in typed if text]
    for text in typed:
        position = play(position, text)
    found = insights_of(folding.end(position, position.game.result(position.state)))
    taken: Counter[str] = Counter()
    for text in typed:
        words = text.split()
        if words[0] == "take":
            for word in words[1:]:
                taken[LETTERS[word]] += 1
    for colour in LETTERS.values():
        assert sum(f[f"gems_taken_{colour}"] for f in found.seats) == taken[colour]
    reserves = [t for t in typed if t.startswith("reserve ")]
    assert sum(f["reserves"] for f in found.seats) == len(reserves)
    assert sum(f["blind_reserves"] for f in found.seats) == sum(
        1 for t in reserves if t.endswith(".deck")
    )
    bought = [int(n) for n in meta["expect cards bought"].split()]
    assert [f["purchases"] for f in found.seats] == bought
    assert sum(f["purchases"] for f in found.seats) == sum(1 for t in typed if t.startswith("buy "))
    scores = [int(s.split("=")[0]) for s in meta["expect scores"].split()]
    assert [f["prestige"] for f in found.seats] == scores
    for figures in found.seats:
        assert figures["points_per_turn"] == round(figures["prestige"] / figures["turns"], 3)
        assert figures["first_purchase_turn"] >= 1
    passes = sum(1 for t in typed if t == "pass")
    assert sum(f["passes"] for f in found.seats) == passes
