"""Scenario tests of the rules beyond the seed's worked examples (§2, §4-§8)."""

from __future__ import annotations

from dataclasses import replace

from tablelog.replay.core import CHANCE, TERMINAL
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import PUB, SPACE_NAMES
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import new_position, play_all

from .positions import COMPONENTS, build, good, play


def _coins(state: rl.State, times: int) -> rl.State:
    for _ in range(times):
        state = play(state, "coin")
    return state


def test_consecutive_coins_end_the_game_at_once() -> None:
    three = _coins(build(3), 2)
    assert not three.over
    assert _coins(three, 1).over  # every one of 3 players took a coin in a row
    two = _coins(build(2), 3)
    assert not two.over  # 2 players: each must take it twice in a row
    assert _coins(two, 1).over


def test_another_action_breaks_the_coin_streak() -> None:
    state = _coins(build(2, held=[[], ["pub"]]), 1)
    state = play(state, "restaurant pub a1")
    assert state.streak == 0
    assert state.money(1) == 2
    assert not _coins(state, 3).over


def test_four_player_last_seat_gets_the_pub() -> None:
    state = GAME.setup(
        ["a", "b", "c", "d"], pb.MercadoDeLisboaOptions(first_player=1), 1, COMPONENTS
    )
    assert state.held == ((PUB,), (), (), ())
    assert GAME.setup(["a", "b", "c"], None, 1, COMPONENTS).held == ((), (), ())


def test_setup_leaves_every_draw_to_the_table() -> None:
    position = new_position("mercado-de-lisboa", 2)
    state = position.state
    assert GAME.to_move(state) == CHANCE
    assert sum(1 for c in state.board if c == rl.FACE_DOWN) == 11
    kinds = [item[0] for item in state.pending]
    assert kinds == [rl.DRAW_DISPLAY] * 3 + [rl.DRAW_HAND] * 6 + [rl.REVEAL_OFFER] * 12
    # Dealt mode draws with weights = unseen copies.
    assert sorted(w for _, w in GAME.chance_outcomes(state)) == [7, 7, 7, 7, 7]


def test_face_down_restaurant_is_revealed_only_when_taken() -> None:
    state = build(face_down=["b2", "d4"])
    view = GAME.view(state, None)
    assert view.spaces[SPACE_NAMES.index("b2")].restaurant == 0
    state = play(state, "stand fish b2 take grape")
    assert state.held[0] == (-1,)
    assert GAME.to_move(state) == CHANCE
    outcomes = {GAME.format(m, state): w for m, w in GAME.chance_outcomes(state)}
    assert outcomes == {
        "flip sushi": 2,
        "flip tea": 2,
        "flip pizza": 2,
        "flip burger": 2,
        "flip wine": 2,
        "flip pub": 1,
    }
    state = play(state, "flip pizza")
    assert state.held[0] == (2,)
    assert state.unseen_restaurants[2] == 1


def test_restaurant_gains_one_coin_and_captures() -> None:
    state = build(face_down=["c3"], held=[["sushi"], []], money=[0, 0])
    state = play(state, "restaurant sushi c3")
    assert state.money(0) == 1
    assert state.held[0] == (-1,)
    assert state.board[SPACE_NAMES.index("c3")] == rl.RESTAURANT_BASE + 0


def test_restaurant_does_not_trigger_customer_earnings() -> None:
    state = build(
        stands={"a1": ("fish", 0)},
        customers={"w1": "1 fish+meat"},
        held=[["sushi"], []],
        money=[0, 0],
    )
    assert play(state, "restaurant sushi b1").money(0) == 1


def test_stand_triggers_end_and_every_other_player_gets_one_turn() -> None:
    filled = {f"{c}{r}": ("meat", 1) for c in "abcde" for r in "12345"}
    for name in ("a1", "b1", "c1", "d1", "e1"):
        del filled[name]
    state = build(3, stands=filled, money=[30, 30, 30], display=["fish"])
    state = play(state, "stand fish a1 take fish")
    assert state.trigger_seat == 0
    assert state.turns_left == 2
    assert not state.over
    state = replace(state, pending=())
    state = play(state, "coin")
    assert not state.over
    state = play(state, "coin")
    assert state.over
    assert GAME.to_move(state) == TERMINAL


def test_customer_trigger_on_four_empty_entrances() -> None:
    state = build(
        2,
        stands={"a1": ("fish", 0)},
        offers=["1 fish+meat"],
        customers=dict.fromkeys(
            [
                "n1",
                "n2",
                "n3",
                "n4",
                "n5",
                "s1",
                "s2",
                "s3",
                "s4",
                "s5",
                "w2",
                "w3",
                "w4",
                "e2",
                "e3",
            ],
            "4 tomato+meat",
        ),
    )
    state = play(state, "customer 1 fish+meat w1")
    assert state.trigger_seat == 0
    assert state.turns_left == 1


def test_solo_end_is_immediate() -> None:
    filled = {f"{c}{r}": ("meat", 0) for c in "abcde" for r in "12345"}
    for name in ("a1", "b1", "c1", "d1", "e1"):
        del filled[name]
    state = build(1, stands=filled, money=[30], display=["fish"])
    assert play(state, "stand fish a1 take fish").over


def test_restaurant_penalty_and_clamp() -> None:
    state = replace(build(2, held=[["pub", "sushi"], []], money=[1, 0]), over=True)
    result = GAME.result(state)
    assert result.scores[0].total == -1
    clamped = GAME.setup(
        ["a", "b"], pb.MercadoDeLisboaOptions(clamp_penalty_at_zero=True), 1, COMPONENTS
    )
    state = replace(state, rules=clamped.rules)
    assert GAME.result(state).scores[0].total == 0


def test_tie_breaks_most_stands_then_shared() -> None:
    state = replace(build(2, stands={"a1": ("fish", 1)}, money=[3, 3]), over=True)
    result = GAME.result(state)
    assert list(result.winners) == [1]
    assert result.tiebreak == "most stands on the market"
    state = replace(build(2, money=[3, 3]), over=True)
    result = GAME.result(state)
    assert list(result.winners) == [0, 1]
    assert "shared" in result.tiebreak


def test_hidden_money_shows_only_own_coins() -> None:
    state = build(3, money=[4, 5, 6])
    view = GAME.view(state, 1)
    assert [p.money_visible for p in view.players] == [False, True, False]
    assert [p.money for p in view.players] == [0, 5, 0]
    assert "hidden" in GAME.render(GAME.view(state, -1))
    assert [p.money for p in GAME.view(state, None).players] == [4, 5, 6]
    opened = GAME.setup(
        ["a", "b", "c"],
        pb.MercadoDeLisboaOptions(money=pb.MERCADO_DE_LISBOA_MONEY_OPEN),
        1,
        COMPONENTS,
    )
    assert [p.money for p in GAME.view(replace(state, rules=opened.rules), -1).players] == [4, 5, 6]


def test_triplet_swap_returns_and_redraws() -> None:
    state = play(build(hands=[["fish", "fish", "fish"], ["meat"]]), "swap")
    assert state.hands[0] == ()
    assert state.bag[good("fish")] == 10
    state = play(play(play(state, "draw meat"), "draw grape"), "draw fish")
    assert state.hands[0] == (0, 3, 4)
    assert GAME.to_move(state) == 0


def test_no_wooden_stand_left_makes_a_dead_tile() -> None:
    stands = {f"{c}1": ("meat", 0) for c in "abcde"}
    stands.update({"a5": ("meat", 0), "b5": ("meat", 0)})
    state = build(2, stands=stands, hands=[["fish"], ["meat"]], money=[20, 0])
    state = play(state, "stand fish c3 take grape")
    assert state.stands[0] == 8
    assert state.hands[0] == ()
    assert state.dead[0] == (good("grape"),)


def test_empty_bag_leaves_the_display_slot_empty() -> None:
    state = replace(build(), bag=(0, 0, 0, 0, 0))
    state = play(state, "stand fish b2 take grape")
    assert not state.pending
    assert state.display == (good("fish"), good("meat"))


def test_render_shows_grid_and_approximate_note() -> None:
    position = new_position("mercado-de-lisboa", 2)
    text = GAME.render(GAME.view(position.state, None))
    assert "approximate" in text
    assert "n1" in text
    assert "w5" in text
    assert "(?)" in text


def test_full_game_by_notation() -> None:
    position = new_position("mercado-de-lisboa", ["ana", "ben"])
    position = play_all(
        position,
        [
            "draw fish",
            "draw fish",
            "draw meat",
            "draw fish",
            "draw tomato",
            "draw grape",
            "draw flower",
            "draw flower",
            "draw meat",
        ],
    )
    assert GAME.to_move(position.state) == CHANCE
    assert position.state.hands == ((0, 2, 4), (1, 1, 3))
