"""The illegal-move catalogue: one refused move per rule, with its stable code."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tablelog.replay.core import GameOver
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import PUB
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.illegal import refused

from .positions import COMPONENTS, build, good, kind, play


def solo(stage: int, **kw: object) -> rl.State:
    return build(1, options=pb.MercadoDeLisboaOptions(stage=stage), **kw)  # type: ignore[arg-type]


def refuse(state: rl.State, move: str | pb.MercadoDeLisboaMove, code: str) -> str:
    return refused(GAME, state, move, code)


def test_stand_tile_not_in_hand() -> None:
    refuse(build(hands=[["fish"], ["meat"]]), "stand grape b2 take meat", "NO_SUCH_STAND_TILE")


def test_stand_on_a_stand() -> None:
    state = build(stands={"b2": ("meat", 1)})
    refuse(state, "stand fish b2 take meat", "SPACE_TAKEN")


def test_stand_on_a_face_up_restaurant() -> None:
    refuse(build(restaurants={"b2": "pizza"}), "stand fish b2 take meat", "SPACE_TAKEN")


def test_stand_whose_earnings_cannot_cover_its_cost() -> None:
    state = build(
        stands={"a1": ("meat", 1), "b1": ("meat", 1)},
        customers={"w1": "1 fish+meat"},
        money=[1, 1],
    )
    message = refuse(state, "stand fish c1 take meat", "CANNOT_AFFORD_STAND")
    assert "costs 3" in message
    assert "you have 1" in message
    assert "earn 1" in message


def test_stand_must_take_from_a_non_empty_display() -> None:
    refuse(build(), "stand fish b2", "TAKE_REQUIRED")


def test_stand_takes_a_tile_the_display_lacks() -> None:
    refuse(build(display=["meat", "meat", "fish"]), "stand fish b2 take grape", "NOT_IN_DISPLAY")


def test_display_refresh_needs_three_identical() -> None:
    refuse(build(display=["meat", "meat", "fish"]), "stand fish b2 refresh", "DISPLAY_NOT_TRIPLET")


def test_display_refresh_cannot_also_take() -> None:
    state = build(display=["meat", "meat", "meat"])
    refuse(state, rl.stand_move(good("fish"), 6, good("meat"), True), "TAKE_AFTER_REFRESH")


def test_take_without_a_refresh() -> None:
    refuse(build(), "take grape", "NOTHING_TO_TAKE")


def test_other_action_while_choosing_from_refreshed_display() -> None:
    state = play(build(display=["meat", "meat", "meat"]), "stand fish b2 refresh")
    for text in ("draw fish", "draw fish", "draw grape"):
        state = play(state, text)
    assert state.phase == rl.TAKE
    refuse(state, "coin", "CHOOSE_DISPLAY_TILE")
    refuse(state, "take flower", "NOT_IN_DISPLAY")
    assert play(state, "take grape").hands[0] == (good("flower"), good("tomato"), good("grape"))


def test_customer_tile_not_available() -> None:
    state = build(stands={"a1": ("fish", 0)}, offers=["1 fish+meat"])
    refuse(state, "customer 1 fish+flower w1", "NO_SUCH_CUSTOMER_TILE")


def test_customer_on_an_occupied_entrance() -> None:
    state = build(
        stands={"a1": ("fish", 0)}, offers=["1 fish+meat"], customers={"w1": "1 fish+tomato"}
    )
    refuse(state, "customer 1 fish+meat w1", "ENTRANCE_TAKEN")


def test_customer_tile_larger_than_its_lines_stand_count() -> None:
    state = build(stands={"a1": ("fish", 0), "b1": ("meat", 1)}, offers=["3 fish+meat"])
    message = refuse(state, "customer 3 fish+meat w1", "LINE_TOO_FEW_STANDS")
    assert "at least 3" in message
    assert "has 2" in message


def test_customer_line_without_the_players_matching_stand() -> None:
    state = build(stands={"a1": ("fish", 1), "b1": ("grape", 0)}, offers=["1 fish+meat"])
    refuse(state, "customer 1 fish+meat w1", "NO_MATCHING_STAND")


def test_restaurant_not_owned() -> None:
    refuse(build(held=[["sushi"], []]), "restaurant pub c3", "NO_SUCH_RESTAURANT")


def test_restaurant_on_a_stand() -> None:
    state = build(stands={"c3": ("fish", 1)}, held=[["sushi"], []])
    refuse(state, "restaurant sushi c3", "SPACE_TAKEN")


def test_swap_needs_three_identical_tiles() -> None:
    refuse(build(hands=[["fish", "fish", "meat"], ["meat"]]), "swap", "SWAP_NOT_TRIPLET")


def test_swap_once_at_the_start_of_the_turn() -> None:
    state = play(build(hands=[["fish", "fish", "fish"], ["meat"]]), "swap")
    for text in ("draw fish", "draw fish", "draw fish"):
        state = play(state, text)
    refuse(state, "swap", "SWAP_ONLY_AT_START")


def test_player_move_while_the_table_must_draw() -> None:
    state = play(build(), "stand fish b2 take grape")
    assert state.pending
    refuse(state, "coin", "REVEAL_PENDING")


def test_chance_move_with_nothing_pending() -> None:
    refuse(build(), "draw fish", "NO_REVEAL_PENDING")


def test_chance_move_of_the_wrong_kind() -> None:
    state = play(build(), "stand fish b2 take grape")
    refuse(state, "flip pizza", "WRONG_CHANCE")


def test_draw_a_good_the_bag_lacks() -> None:
    state = play(build(), "stand fish b2 take grape")
    state = replace(state, bag=(0, 3, 3, 3, 3))
    refuse(state, "draw fish", "NOT_IN_BAG")


def test_flip_a_restaurant_no_longer_face_down() -> None:
    state = play(build(face_down=["b2"]), "stand fish b2 take grape")
    state = replace(state, unseen_restaurants=(0, 2, 2, 2, 2, 1))
    refuse(state, "flip sushi", "NOT_FACE_DOWN")
    assert play(state, "flip pub").held[0] == (PUB,)


def test_reveal_a_tile_already_seen() -> None:
    state = build(stands={"a1": ("fish", 0)}, offers=["1 fish+meat"])
    state = play(state, "customer 1 fish+meat w1")
    seen = list(state.seen)
    seen[kind(state, "1 fish+meat")] = 1
    state = replace(state, seen=tuple(seen))
    refuse(state, "reveal 1 fish+meat", "NOT_UNSEEN")


def test_reveal_from_the_wrong_pile() -> None:
    state = build(stands={"a1": ("fish", 0)}, offers=["1 fish+meat"])
    state = play(state, "customer 1 fish+meat w1")
    refuse(state, "reveal 2 fish+meat", "WRONG_PILE")


def test_malformed_move() -> None:
    refuse(
        build(),
        pb.MercadoDeLisboaMove(stand=pb.MercadoDeLisboaOpenStand(good=rl.good_enum(8), space=3)),
        "MALFORMED_MOVE",
    )
    refuse(build(), pb.MercadoDeLisboaMove(), "MALFORMED_MOVE")


def test_no_move_after_the_end() -> None:
    state = replace(build(), over=True)
    with pytest.raises(GameOver):
        GAME.apply(state, rl.COIN)


# ------------------------------------------------------------------------- solo stages


def test_solo_forbids_take_one_coin() -> None:
    refuse(build(1), "coin", "SOLO_NO_COIN")


def test_stage1_other_goods_earn_nothing() -> None:
    state = solo(
        1,
        stands={"a1": ("fish", 0), "b1": ("meat", 0)},
        offers=["1 fish+meat"],
        customers={},
        money=[10],
    )
    after = play(state, "customer 1 fish+meat w1")
    assert after.locked_good == good("fish")
    assert after.money(0) == 11
    after = replace(after, pending=())
    later = play(
        replace(after, entrances=(-1,) * 20, offers=((kind(after, "1 meat+grape"),), (), (), ())),
        "customer 1 meat+grape n2",
    )
    assert later.money(0) == 11


def test_stage2_fame_counts_only_four_customer_money() -> None:
    state = solo(2, stands={f"{c}1": ("fish", 0) for c in "abcd"}, offers=["4 fish+flower"])
    after = play(state, "customer 4 fish+flower w1")
    assert after.from_four == 16
    assert after.money(0) == 17


def test_stage3_at_most_two_stands_per_line() -> None:
    state = solo(3, stands={"a1": ("fish", 0), "b1": ("meat", 0)}, money=[20])
    refuse(state, "stand fish c1 take meat", "STAGE3_TWO_PER_LINE")
    assert not [
        m
        for m in GAME.legal_moves(state)
        if m.WhichOneof("action") == "customer" and m.customer.customers > 2
    ]


def test_stage4_only_three_customer_tiles() -> None:
    fresh = GAME.setup(["solo"], pb.MercadoDeLisboaOptions(stage=4), 1, COMPONENTS)
    assert fresh.piles == (0, 0, 10, 0)
    assert fresh.ledger[0][rl.L_START] == 4
    assert {item[-1] for item in fresh.pending if item[0] == rl.REVEAL_OFFER} == {3}


def test_stage5_seven_tiles_and_fame_needs_three_fours() -> None:
    fresh = GAME.setup(["solo"], pb.MercadoDeLisboaOptions(stage=5), 1, COMPONENTS)
    assert fresh.piles == (1, 1, 1, 4)
    done = replace(solo(5, money=[60]), over=True, fours_placed=2)
    assert rl.stage_fame(done)[0] == 0
    assert rl.stage_fame(replace(done, fours_placed=3))[0] == 3


def test_stage6_line_must_hold_every_good_of_the_tile() -> None:
    state = solo(6, stands={"a3": ("fish", 0)}, offers=["1 fish+meat"])
    refuse(state, "customer 1 fish+meat w3", "STAGE6_ALL_GOODS")
    ok = solo(6, stands={"a3": ("fish", 0), "b3": ("meat", 0)}, offers=["1 fish+meat"])
    assert play(ok, "customer 1 fish+meat w3").money(0) == 1 + 2


def test_stage7_no_customers_can_be_brought() -> None:
    state = solo(7, stands={"a1": ("fish", 0)}, offers=["1 fish+meat"])
    refuse(state, "customer 1 fish+meat n2", "STAGE7_NO_CUSTOMERS")


def test_stage8_no_stand_or_pub_on_restaurant_spaces() -> None:
    state = solo(8, face_down=["c3"], held=[["pub"]])
    refuse(state, "stand fish c3 take meat", "STAGE8_RESTAURANT_SPACE")
    refuse(state, "restaurant pub c3", "STAGE8_RESTAURANT_SPACE")


def test_stage9_stands_only_in_starting_lines_of_their_goods() -> None:
    state = solo(9, customers={"w1": "1 fish+meat", "w3": "1 flower+tomato", "w5": "1 meat+grape"})
    refuse(state, "stand fish a2 take meat", "STAGE9_LINE")
    refuse(state, "stand fish a3 take meat", "STAGE9_GOOD")
    assert play(state, "stand fish a1 take meat").stands == (1,)


def test_stage9_entrances_between_starting_customers_are_closed() -> None:
    state = solo(
        9,
        stands={"a2": ("fish", 0)},
        offers=["1 fish+meat"],
        customers={"w1": "1 fish+tomato", "w3": "1 flower+tomato", "w5": "1 meat+grape"},
    )
    refuse(state, "customer 1 fish+meat w2", "STAGE9_ENTRANCE_CLOSED")
