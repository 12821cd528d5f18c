"""Mercado de Lisboa insights on the golden playthroughs, against counts made independently
from the playthrough text (`stand`, `customer`, `restaurant` lines) and its `# stands:` and
`# expect:` headers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.insights import insights_of
from tests.games.mercado_de_lisboa.test_golden import (
    GOLDEN,
    MULTIPLAYER,
    _header,
    _options,
    _replay,
)


@pytest.mark.parametrize("name", MULTIPLAYER)
def test_playthrough_insights_match_the_text(name: str) -> None:
    path: Path = GOLDEN / name
    header = _header(path)
    position = _replay(path, _options(header.get("options", "")))
    found = insights_of(folding.end(position, position.game.result(position.state)))
    players = header["players"].split()
    stands = dict(pair.split() for pair in header["stands"].split(", "))
    for seat, player in enumerate(players):
        assert found.seats[seat]["stands"] == int(stands[player]), player
    typed = [line.split("#", 1)[0].split() for line in path.read_text().splitlines()]
    customers = [words for words in typed if words and words[0] == "customer"]
    assert sum(f["customer_tiles"] for f in found.seats) == len(customers)
    assert found.table["customers"] == sum(int(words[1]) for words in customers)
    restaurants = sum(1 for words in typed if words and words[0] == "restaurant")
    assert sum(f["restaurants"] for f in found.seats) == restaurants
    for seat in range(len(players)):
        figures = found.seats[seat]
        assert figures["money"] == position.state.money(seat)
        assert figures["restaurant_income"] == figures["restaurants"]
