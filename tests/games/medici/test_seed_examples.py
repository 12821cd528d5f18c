"""The worked examples of seed-ZH (../seeds/002_*.txt, RULES.md §B3-B6), exactly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tablelog.replay.core import TABLE, IllegalMove
from tablelog.replay.games.medici import GAME, rules
from tablelog.replay.games.medici.components import default_components
from tablelog.v1.medici_pb2 import MEDICI_EDITION_2016, MediciOptions

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}

NAMES = ["Adam", "Barbara", "Charles", "Diana"]


def _rules(players: int, edition: int = 0) -> rules.Rules:
    return rules.make_rules(
        [f"p{i}" for i in range(players)],
        MediciOptions(edition=edition),  # type: ignore[arg-type]
        1,
        {"tiles": default_components()[0]},
    )


def _play(state: rules.State, *texts: str) -> rules.State:
    for text in texts:
        state = GAME.apply(state, GAME.parse(text, state))
    return state


def _example_table() -> rules.State:
    """Adam has 2 tiles, Barbara 3, Charles 4, Diana 2; Adam is about to draw."""
    state = GAME.setup(NAMES, None, TABLE, RECORDED)
    by_name = state.rules.tiles.by_name
    ships = [
        ["cloth0", "fur1"],
        ["grain1", "grain2", "dye1"],
        ["spice2", "spice3", "cloth1", "fur0"],
        ["dye2", "dye3"],
    ]
    unseen = list(state.unseen)
    for name in [n for ship in ships for n in ship]:
        unseen[by_name[name]] -= 1
    return replace(
        state,
        ships=tuple(tuple(by_name[n] for n in ship) for ship in ships),
        unseen=tuple(unseen),
        bag_size=state.bag_size - 11,
    )


def test_the_lot_example() -> None:
    """Adam draws a lot of three. Barbara (3 tiles) and Charles (4) must pass; Diana (2) bids
    7; Adam passes; Diana loads the lot and pays 7. A later lot of three fits only Adam, who
    buys it for 1 florin as the last bidder."""
    state = _example_table()
    assert GAME.to_move(state) == -1  # the table records Adam's first tile
    state = _play(state, "draw cloth3", "draw", "draw fur2", "draw", "draw grain4")
    assert GAME.to_move(state) == 1  # three tiles: the auction starts at Adam's left
    assert [GAME.format(m, state) for m in GAME.legal_moves(state)] == ["pass"]
    with pytest.raises(IllegalMove) as refused:
        _play(state, "bid 1")
    assert refused.value.code == "LOT_DOES_NOT_FIT"
    state = _play(state, "pass")
    assert GAME.to_move(state) == 2
    assert [GAME.format(m, state) for m in GAME.legal_moves(state)] == ["pass"]
    state = _play(state, "pass", "bid 7")
    assert GAME.to_move(state) == 0  # the drawer bids last
    state = _play(state, "pass")
    assert state.florins == (40, 40, 40, 33)
    assert len(state.ships[3]) == 5
    assert rules.free_space(state, 3) == 0
    kinds = state.rules.tiles.kinds
    assert [kinds[k].name for k in state.ships[3]][2:] == ["cloth3", "fur2", "grain4"]
    # Barbara and Charles draw single tiles nobody buys (Diana is full and takes no part).
    assert GAME.to_move(state) == -1
    assert state.drawer == 1
    state = _play(state, "draw spice1", "auction", "pass", "pass", "pass")
    assert [kinds[k].name for k in state.discarded] == ["spice1"]
    state = _play(state, "draw dye0", "auction", "pass", "pass", "pass")
    # Diana's ship is full: Adam draws next, a lot of three that only he can load.
    assert state.drawer == 0
    state = _play(state, "draw spice5", "draw", "draw fur4", "draw", "draw gold")
    assert GAME.to_move(state) == 1
    state = _play(state, "pass", "pass")
    assert GAME.to_move(state) == 0
    assert [GAME.format(m, state) for m in GAME.legal_moves(state)][:2] == ["pass", "bid 1"]
    state = _play(state, "bid 1")
    assert state.florins == (39, 40, 40, 33)
    assert len(state.ships[0]) == 5


def test_a_lot_never_outgrows_every_ship() -> None:
    """§B3 step 1, G-B3: with at most 2 free spaces anywhere, a third tile may not be drawn."""
    state = _example_table()
    by_name = state.rules.tiles.by_name
    state = replace(
        state,
        ships=(
            (*state.ships[0], by_name["spice0"]),
            state.ships[1],
            state.ships[2],
            (*state.ships[3], by_name["spice1"]),
        ),
    )
    state = _play(state, "draw fur3", "draw", "draw fur4")
    assert GAME.to_move(state) == 1  # the lot of 2 went to auction by itself


def test_ship_payments_round_down_whole_florins() -> None:
    """§B6: the rulebook's five-player example 30/20/7/7/0, and the 2-player tie 10/10."""
    assert rules.score_ships(_rules(5), [20, 15, 10, 10, 3]) == [30, 20, 7, 7, 0]
    assert rules.score_ships(_rules(2, MEDICI_EDITION_2016), [12, 12]) == [10, 10]
    assert rules.score_ships(_rules(6), [6, 5, 4, 3, 2, 1]) == [30, 20, 15, 10, 5, 0]
    assert rules.score_ships(_rules(3), [9, 9, 1]) == [22, 22, 0]


def test_pyramid_awards_and_bonus_levels() -> None:
    """§B5-B6: 10/5 by position (players without the good included), ties pooled and rounded
    down (two first: 7 each; one first, three second: 1 each); bonuses 5/10/20 unshared."""
    four = _rules(4)
    awards, bonuses = rules.score_pyramids(four, [(3,) * 5, (3,) * 5, (1,) * 5, (0,) * 5])[0]
    assert awards == [7, 7, 0, 0]
    awards, _ = rules.score_pyramids(four, [(4,) * 5, (0,) * 5, (0,) * 5, (0,) * 5])[0]
    assert awards == [10, 1, 1, 1]
    awards, bonuses = rules.score_pyramids(four, [(7,) * 5, (7,) * 5, (6,) * 5, (5,) * 5])[0]
    assert awards == [7, 7, 0, 0]
    assert bonuses == [20, 20, 10, 5]
    two = _rules(2, MEDICI_EDITION_2016)
    awards, _ = rules.score_pyramids(two, [(3,) * 5, (1,) * 5])[0]
    assert awards == [10, 0]


def test_setup_by_player_count() -> None:
    """§B2: tiles per day, removed unseen, florins and ship spaces."""
    expected = {2: (18, 40, 7), 3: (18, 40, 5), 4: (12, 40, 5), 5: (6, 30, 5), 6: (0, 30, 5)}
    for players, (removed, florins, spaces) in expected.items():
        r = _rules(players, MEDICI_EDITION_2016 if players == 2 else 0)
        assert (r.removed_per_day, r.start_florins, r.spaces) == (removed, florins, spaces)
        state = rules.initial_state(r, 0)
        assert state.bag_size == 36 - removed
        assert state.florins == (florins,) * players


def test_the_documented_lot_example() -> None:
    """docs/notation/medici.md records the same lot; it plays on the seed's ships."""
    doc = Path(__file__).resolve().parents[3] / "docs" / "notation" / "medici.md"
    text = doc.read_text(encoding="utf-8")
    block = text.split("The seed's lot example", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    state = _play(_example_table(), *[line for line in lines if line])
    assert state.florins == (40, 40, 40, 33)
    assert rules.free_space(state, 3) == 0
