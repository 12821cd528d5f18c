"""The seed's worked examples (rules §4.1, §5.1, §5.2), exactly, on hand-built positions."""

from __future__ import annotations

from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import GOODS, SPACE_NAMES

from .positions import build, play


def test_tomato_stand_costs_three() -> None:
    """Green's tomato stand: 2 other stands in its row, 1 in its column -> cost 3."""
    state = build(
        2,
        stands={"a3": ("fish", 0), "e3": ("meat", 0), "c1": ("grape", 0)},
        hands=[["fish"], ["tomato", "meat", "grape"]],
        money=[0, 5],
        seat=1,
    )
    assert rl.stand_cost(state.board, SPACE_NAMES.index("c3")) == 3
    after = play(state, "stand tomato c3 take grape")
    assert after.money(1) == 2
    assert after.ledger[1][rl.L_COSTS] == 3


def test_purple_flower_fish_tile_pays_four_six_and_two() -> None:
    """Purple's 2-customer flower+fish tile: flower stand A (next to the pub) earns 4, flower
    stand B (pub and tea house) earns 6, green's fish stand C (no restaurant) earns 2."""
    state = build(
        2,
        stands={"a2": ("flower", 0), "c2": ("flower", 0), "d2": ("fish", 1)},
        restaurants={"b2": "pub", "c3": "tea"},
        offers=["2 fish+flower"],
        money=[1, 1],
        seat=0,
    )
    after = play(state, "customer 2 flower+fish w2")
    assert after.money(0) - state.money(0) == 4 + 6
    assert after.money(1) - state.money(1) == 2
    assert after.ledger[0][rl.L_CUSTOMERS] == 10
    assert after.ledger[1][rl.L_CUSTOMERS] == 2


def test_blue_fish_stand_pays_four_and_earns_eight() -> None:
    """Blue's fish stand next to a sushi bar: 1-customer fish tile above (2 x 1), 3-customer
    fish tile to the left (2 x 3): earns 8, costs 4, nets 4."""
    state = build(
        3,
        stands={"a2": ("meat", 0), "b2": ("grape", 1), "e2": ("tomato", 0), "c5": ("tomato", 1)},
        restaurants={"c3": "sushi"},
        customers={"n3": "1 fish+meat", "w2": "3 fish+grape"},
        hands=[["meat"], ["grape"], ["fish", "fish", "flower"]],
        money=[1, 1, 1],
        seat=2,
    )
    space = SPACE_NAMES.index("c2")
    cost, gains, _four, _locked = rl.check_stand(state, GOODS.index("fish"), space)
    assert (cost, gains[2]) == (4, 8)
    after = play(state, "stand fish c2 take grape")
    assert after.money(2) - state.money(2) == 4
    assert after.ledger[2][rl.L_STANDS] == 8
    assert after.ledger[2][rl.L_COSTS] == 4


def test_purple_flower_stand_above_pub_costs_four_earns_sixteen_with_no_money() -> None:
    """Purple's flower stand above the pub: 3 stands already in its column -> cost 4; it
    earns 16, so it may be placed with no money in hand (place-then-pay)."""
    state = build(
        2,
        stands={
            "c1": ("fish", 1),
            "c2": ("grape", 1),
            "c5": ("meat", 1),
            "a3": ("fish", 1),
            "b3": ("meat", 1),
        },
        restaurants={"c4": "pub"},
        customers={"n3": "3 fish+flower", "s3": "3 flower+grape", "w3": "2 flower+meat"},
        hands=[["flower", "meat", "grape"], ["fish"]],
        money=[0, 0],
        seat=0,
    )
    cost, gains, _four, _locked = rl.check_stand(
        state, GOODS.index("flower"), SPACE_NAMES.index("c3")
    )
    assert (cost, gains[0]) == (4, 16)
    after = play(state, "stand flower c3 take meat")
    assert after.money(0) == 12
