"""The worked examples of the seed rules text (seeds/001), exactly, on hand-made boards.

Players sit Jerry (red, seat 0), Andrew (yellow, seat 1), Evan (purple, seat 2): play goes
clockwise, so Jerry's left neighbour is Andrew and his right neighbour is Evan.
"""

from __future__ import annotations

import pytest

from tablelog.replay.core import IllegalMove
from tablelog.replay.games.castello_methoni.rules import MERGE, PLAY, State, merge_targets
from tests.games.castello_methoni.boards import board_data, moves, start

JERRY, ANDREW, EVAN = 0, 1, 2


def cell(state: State, name: str) -> int:
    return state.board.lookup[name]


def castle_at(state: State, name: str) -> int:
    return state.cell_castle[cell(state, name)]


# m (mountain): one sea edge and an edge to f; f (field): two sea edges.
PAIR = board_data(
    {"m": "mountain", "f": "field"},
    [("m", "f"), ("m", "SEA"), ("f", "SEA"), ("f", "SEA")],
)


def test_jerrys_mountain_wall_puts_his_house_and_andrews_on_either_side() -> None:
    """Seed: Jerry plays a mountain card, walls an edge of a mountain, puts his own house on
    one side and Andrew's on the other."""
    position = moves(start(PAIR), "build mountain m|f own f left m")
    state: State = position.state
    assert state.houses[cell(state, "f")] == (1, 0, 0)
    assert state.houses[cell(state, "m")] == (0, 1, 0)
    assert state.houses_left == (14, 14, 15)
    assert state.wall_supply == 29
    assert not any(state.cell_castle)


def test_jerry_pays_one_to_the_bank_and_one_to_andrew() -> None:
    """Seed: to own the castle Jerry pays 1 ducat land to the supply and 1 ducat to Andrew
    for his house; his own house costs nothing."""
    position = moves(start(PAIR), "build mountain m|f own f left m")
    before: State = position.state
    position = moves(position, "build sea m|sea own m")
    state: State = position.state
    assert state.ducats == (before.ducats[0] - 2, before.ducats[1] + 1, before.ducats[2])
    assert state.bank == before.bank + 1
    castle = state.castle(castle_at(state, "m"))
    assert castle.owner == JERRY
    assert castle.cells == {cell(state, "m")}
    assert castle.houses == (1, 1, 0)
    assert castle.villas == (0, 0, 0)
    assert state.towers_left == (3, 4, 4)


def test_jerrys_castle_of_his_own_houses_upgrades_three_houses_to_a_villa() -> None:
    """Seed: Jerry pays only 1 ducat land (all houses are his); three houses of one colour
    become a villa, the houses go back to him; then his tower marks the castle."""
    island = board_data(
        {"k": "mountain", "s": "hill"},
        [("k", "SEA"), ("k", "SEA"), ("k", "SEA"), ("s", "SEA"), ("s", "SEA")],
    )
    position = moves(
        start(island),
        "build sea k|sea own k",
        "build mountain k|sea own k",
        "build hill s|sea own s",  # Andrew
        "end",
        "build hill s|sea own s",  # Evan
        "end",
    )
    before: State = position.state
    assert before.houses[cell(before, "k")] == (2, 0, 0)
    position = moves(position, "build sea k|sea own k")
    state: State = position.state
    castle = state.castle(castle_at(state, "k"))
    assert (castle.owner, castle.houses, castle.villas) == (JERRY, (0, 0, 0), (1, 0, 0))
    assert state.ducats[JERRY] == before.ducats[JERRY] - 1
    assert state.bank == before.bank + 1
    assert state.houses_left[JERRY] == before.houses_left[JERRY] - 1 + 3
    assert state.villas_left[JERRY] == 4
    assert state.towers_left[JERRY] == 3


# The merge example: j (Jerry's castle), a (the mountain market Andrew encloses), e1 + e2
# (Evan's castle) and a spare island x.
CHAIN = board_data(
    {
        "j": "mountain",
        "a": ("mountain", True),
        "e1": "field",
        "e2": "forest",
        "x": "hill",
    },
    [
        ("j", "SEA"),
        ("j", "SEA"),
        ("j", "a"),
        ("a", "e1"),
        ("a", "SEA"),
        ("e1", "e2"),
        ("e1", "SEA"),
        ("e2", "SEA"),
        ("e2", "SEA"),
        ("e2", "SEA"),
        ("e2", "SEA"),
        ("x", "SEA"),
        ("x", "SEA"),
    ],
    markets=[{"cell": "a", "terrain": "mountain", "starting_ducats": 1}],
)

CHAIN_SETUP = (
    "build mountain j|sea own j",  # Jerry
    "build mountain j|sea own j",
    "build sea e2|sea own e2",  # Andrew
    "build forest e2|sea own e2",
    "build field e1|sea own e1",  # Evan
    "end",
    "build forest e2|sea own e2",  # Jerry
    "build forest e2|sea own e2",
    "build hill x|sea own x",  # Andrew
    "end",
    # Evan closes e1+e2: 2 red, 2 yellow, 2 purple houses; he pays 2 land, 2 Jerry, 2 Andrew.
    "build field e1|a own e1 right a",
    "end",
    # Jerry closes j with his house on a and Evan's on j: j holds 2 red + 1 purple.
    "build mountain j|a own a right j",
    "end",
)


def test_evan_and_jerry_castles_before_the_merge() -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP)
    state: State = position.state
    evan = state.castle(castle_at(state, "e1"))
    assert evan.owner == EVAN
    assert len(evan.cells) == 2
    assert evan.houses == (2, 2, 2)
    assert evan.value == 10
    jerry = state.castle(castle_at(state, "j"))
    assert jerry.owner == JERRY
    assert jerry.houses == (2, 0, 1)
    assert jerry.value == 5
    assert state.current == ANDREW
    assert state.phase == PLAY


def test_andrew_merges_jerrys_castle_for_5_and_evans_for_10() -> None:
    """Seed: Andrew takes the castle on the right, then merges Jerry's castle paying Jerry 5
    (land 2, houses 3): three red houses become a villa and Jerry takes his tower back; then
    he merges Evan's castle paying Evan 10 (land 4, houses 6)."""
    position = moves(start(CHAIN), *CHAIN_SETUP)
    before: State = position.state
    position = moves(position, "build mountain a|sea own a")
    made: State = position.state
    assert made.phase == MERGE
    andrew_castle = made.cell_castle[cell(made, "a")]
    assert made.castle(andrew_castle).houses == (1, 2, 0)
    # Ownership: 1 land to the bank, 1 to Jerry for his house; the market's ducat to Andrew.
    assert made.ducats[ANDREW] == before.ducats[ANDREW] - 1 - 1 + 1
    assert made.market_ducats[cell(made, "a")] == 0
    assert sorted(merge_targets(made, andrew_castle)) == sorted(
        [made.cell_castle[cell(made, "j")], made.cell_castle[cell(made, "e1")]]
    )

    position = moves(position, "merge j")
    first: State = position.state
    assert first.ducats[ANDREW] == made.ducats[ANDREW] - 5
    assert first.ducats[JERRY] == made.ducats[JERRY] + 5
    merged = first.castle(andrew_castle)
    assert merged.houses == (0, 2, 1)
    assert merged.villas == (1, 0, 0)
    assert first.villas_left[JERRY] == 4
    assert first.houses_left[JERRY] == made.houses_left[JERRY] + 3
    assert first.towers_left[JERRY] == made.towers_left[JERRY] + 1  # Jerry's tower returned
    assert first.wall_supply == made.wall_supply + 1  # the wall j|a back to the supply
    assert first.phase == MERGE

    position = moves(position, "merge e1")
    second: State = position.state
    assert second.ducats[ANDREW] == first.ducats[ANDREW] - 10
    assert second.ducats[EVAN] == first.ducats[EVAN] + 10
    grown = second.castle(andrew_castle)
    assert grown.owner == ANDREW
    assert len(grown.cells) == 4
    # red 2 (+ villa), yellow 4 -> villa + 1, purple 3 -> villa: the same upgrade rule.
    assert grown.houses == (2, 1, 0)
    assert grown.villas == (1, 1, 1)
    assert second.towers_left[EVAN] == first.towers_left[EVAN] + 1
    assert second.towers_left[ANDREW] == 3
    assert second.phase == PLAY
    assert second.cards_played == 1
    assert second.castles[castle_at(before, "j") - 1] is None


def test_trading_at_the_mountain_market_and_andrews_market_income() -> None:
    """Seed: once the market on a mountain is active, anyone may trade with a Market/Sea or a
    mountain card for 2 ducats from the supply; Andrew, owning one market, takes 2 ducats at
    the start of his turn. The bank is finite: gains are cut to what it holds."""
    position = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a", "stop", "end")
    state: State = position.state
    assert state.current == EVAN
    with pytest.raises(IllegalMove) as refused:
        moves(position, "trade forest")
    assert refused.value.code == "NO_MARKET_FOR_CARD"
    bank = state.bank
    position = moves(position, "trade mountain", "trade sea")  # Evan: 2 cards, turn over
    state = position.state
    # Evan: 20, paid 2 land + 2 Jerry + 2 Andrew, got 1 from Jerry, traded twice: 19.
    assert state.ducats[EVAN] == 20 - 6 + 1 + 4
    assert bank == 8
    assert state.bank == 4
    position = moves(position, "trade sea")  # Jerry
    before: State = position.state
    assert before.bank == 2
    position = moves(position, "end")  # Andrew's turn starts: market income
    state = position.state
    assert state.current == ANDREW
    assert state.ducats[ANDREW] == before.ducats[ANDREW] + 2
    assert state.bank == 0
    position = moves(position, "trade mountain")  # nothing left in the bank
    assert position.state.ducats[ANDREW] == state.ducats[ANDREW]
