"""Rules scenarios: setup, each action, the end-of-turn steps, the end and the result
(RULES.md; the seed's facts: take 2 needs 4+, 10-token limit with gold, one noble a turn,
the round is finished, fewest cards breaks a tie)."""

from __future__ import annotations

from collections import Counter

import pytest

from tablelog.replay.core import CHANCE, DEALT, TABLE, TERMINAL, IllegalMove, InvalidSetup
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.components import default_components, parse_components
from tablelog.replay.games.splendor.rules import (
    COMPLETED,
    DEADLOCK,
    DISCARD,
    NOBLE,
    State,
    legal_moves,
)
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import SplendorOptions
from tests.games.splendor.support import apply_text, fresh, moves, tweak, tweak_player
from tests.support.play import new_position


def start(players: int = 2, first_player: int = 0, allow_take_fewer_anytime: bool = False) -> State:
    options = SplendorOptions(
        first_player=first_player, allow_take_fewer_anytime=allow_take_fewer_anytime
    )
    state: State = fresh(players, options=options).state
    return state


def texts(state: State) -> list[str]:
    return [GAME.format(m, state) for m in legal_moves(state)]


def give(state: State, seat: int, tokens: tuple[int, ...]) -> State:
    bank = tuple(
        b - t + h for b, t, h in zip(state.bank, tokens, state.players[seat].tokens, strict=True)
    )
    return tweak_player(tweak(state, bank=bank), seat, tokens=tokens)


# --- components (RULES.md §1) -------------------------------------------------------------


def test_the_card_data_has_the_published_profile() -> None:
    files = {f.name: f.content for f in default_components()}
    comps = parse_components(files["splendor_cards.csv"], files["splendor_nobles.csv"])
    cards = [c for c in comps.cards if c is not None]
    assert [len(ids) for ids in comps.levels] == [40, 30, 20]
    assert sum(c.points for c in cards) == 140
    assert Counter(c.points for c in cards if c.level == 1) == {0: 35, 1: 5}
    assert Counter(c.points for c in cards if c.level == 2) == {1: 10, 2: 15, 3: 5}
    assert Counter(c.points for c in cards if c.level == 3) == {3: 5, 4: 10, 5: 5}
    assert Counter(sum(c.cost) for c in cards if c.level == 3) == {7: 5, 10: 5, 12: 5, 14: 5}
    assert len({c.text for c in cards}) == 90
    assert comps.card(1).text == "1w0:u1g1r1k1"
    assert len(comps.nobles) == 10
    assert all(n.points == 3 for n in comps.nobles.values())
    assert comps.nobles[1].text == "w4u4"
    assert comps.nobles[10].text == "g3r3k3"


def test_replacement_component_files_are_validated() -> None:
    bad = game_pb2.ComponentFile(name="splendor_cards.csv", content=b"id,level\n1,1\n")
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup(["a", "b"], None, TABLE, {"splendor_cards.csv": bad})
    assert refused.value.code == "COMPONENTS"
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b"], None, TABLE, {"dice.csv": bad})
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b"], SplendorOptions(first_player=2), TABLE, {})


# --- setup (RULES.md §2) ------------------------------------------------------------------


@pytest.mark.parametrize(("players", "gems"), [(2, 4), (3, 5), (4, 7)])
def test_setup_by_player_count(players: int, gems: int) -> None:
    position = new_position("splendor", players)
    state = position.state
    assert state.bank == (gems,) * 5 + (5,)
    assert GAME.to_move(state) == CHANCE
    assert state.nobles_due == players + 1
    ready = fresh(players).state
    assert GAME.to_move(ready) == 0
    assert len(ready.nobles) == players + 1
    assert all(all(row) for row in ready.market)
    assert ready.decks == (36, 26, 16)


def test_the_layout_can_be_revealed_in_any_order() -> None:
    position = new_position("splendor", 2)
    position = moves(position, "reveal noble w4u4", "reveal 3.4 3u4:w7", "reveal 1.2 1u0:k3")
    assert position.state.market[2][3]
    assert position.state.market[0][1]
    assert GAME.to_move(position.state) == CHANCE
    outcomes = GAME.chance_outcomes(position.state)
    assert all(m.reveal_card.level == 1 and m.reveal_card.slot == 1 for m, _ in outcomes)
    assert sum(w for _, w in outcomes) == 39


def test_first_player_option() -> None:
    state = start(3, first_player=2)
    assert GAME.to_move(state) == 2
    assert state.rules.last_seat == 1


# --- actions (RULES.md §4) ----------------------------------------------------------------


def test_take_three_and_take_two() -> None:
    state = apply_text(start(), "take w u g")
    assert state.players[0].tokens == (1, 1, 1, 0, 0, 0)
    assert state.bank == (3, 3, 3, 4, 4, 5)
    state = apply_text(state, "take r r")  # exactly 4 before taking is enough
    assert state.bank[3] == 2
    assert state.players[1].tokens[3] == 2
    assert "take r r" not in texts(state)


def test_fewer_colours_only_when_fewer_are_available() -> None:
    state = tweak(start(), bank=(0, 0, 0, 1, 2, 5))
    state = tweak_player(state, 1, tokens=(4, 4, 4, 3, 2, 0))
    assert [t for t in texts(state) if t.startswith("take")] == ["take r k"]
    loose = tweak(start(allow_take_fewer_anytime=True), bank=(0, 0, 0, 1, 2, 5))
    loose = tweak_player(loose, 1, tokens=(4, 4, 4, 3, 2, 0))
    assert [t for t in texts(loose) if t.startswith("take")] == ["take r", "take k", "take r k"]
    anytime = start(allow_take_fewer_anytime=True)
    assert "take w" in texts(anytime)
    assert "take w u" in texts(anytime)
    assert apply_text(anytime, "take w").players[0].tokens[0] == 1


def test_reserve_takes_gold_while_there_is_any() -> None:
    state = apply_text(start(), "reserve 2.1")
    assert state.players[0].tokens[5] == 1
    assert state.bank[5] == 4
    assert GAME.to_move(state) == CHANCE
    assert state.refill == (2, 1)
    no_gold = tweak(start(), bank=(4, 4, 4, 4, 4, 0))
    no_gold = tweak_player(no_gold, 1, tokens=(0, 0, 0, 0, 0, 5))
    after = apply_text(no_gold, "reserve 1.deck")
    assert after.players[0].tokens[5] == 0
    assert after.players[0].reserved == ((0, 1, True),)
    assert GAME.to_move(after) == 1  # table mode: nothing to reveal for a blind reserve


def test_reserving_with_ten_tokens_then_returning_one() -> None:
    state = give(start(), 0, (2, 2, 2, 2, 2, 0))
    state = apply_text(state, "reserve 3.2")
    state = apply_text(state, "reveal 3.2 3u4:w7")
    assert GAME.to_move(state) == 0
    assert state.phase == DISCARD
    assert len(legal_moves(state)) == 6
    state = apply_text(state, "return y")
    assert GAME.to_move(state) == 1
    assert sum(state.players[0].tokens) == 10
    tail = apply_text(give(start(), 0, (2, 2, 2, 2, 2, 0)), "reserve 3.2 return w")
    assert tail.players[0].tokens == (1, 2, 2, 2, 2, 1)


def test_taking_over_ten_may_return_what_was_just_taken() -> None:
    state = give(start(), 0, (2, 2, 2, 2, 1, 0))
    state = apply_text(state, "take w u g")
    assert state.phase == DISCARD
    assert "return w w" in texts(state)
    state = apply_text(state, "return w w")
    assert state.players[0].tokens == (1, 3, 3, 2, 1, 0)


def test_buying_uses_bonuses_and_canonical_payment() -> None:
    state = give(start(), 0, (0, 1, 1, 0, 1, 1))
    state = tweak_player(state, 0, bonuses=(0, 0, 0, 1, 0), purchased=(21,))
    state = apply_text(state, "buy 1.1")  # 1w0:u1g1r1k1 with a red bonus
    assert state.players[0].tokens == (0, 0, 0, 0, 0, 1)
    assert state.players[0].bonuses == (1, 0, 0, 1, 0)
    assert state.refill == (1, 1)


def test_gold_covers_the_shortfall_and_can_be_spent_by_choice() -> None:
    state = give(start(), 0, (0, 1, 1, 0, 0, 3))
    after = apply_text(state, "buy 1.1")
    assert after.players[0].tokens == (0, 0, 0, 0, 0, 1)
    assert after.bank[5] == 4
    options = [t for t in texts(state) if t.startswith("buy 1.1")]
    assert options[0] == "buy 1.1"
    assert "buy 1.1 pay g1 y3" in options
    assert "buy 1.1 pay u1 y3" in options
    chosen = apply_text(state, "buy 1.1 pay u1 y3")
    assert chosen.players[0].tokens == (0, 0, 1, 0, 0, 0)


def test_a_free_card_can_be_bought() -> None:
    state = tweak_player(start(), 0, bonuses=(0, 1, 1, 1, 1), purchased=(9, 10, 11, 12))
    assert "buy 1.1" in texts(state)
    assert apply_text(state, "buy 1.1").players[0].tokens == (0,) * 6


def test_a_reserved_card_is_bought_from_the_hand() -> None:
    state = apply_text(give(start(), 0, (0, 3, 0, 0, 0, 0)), "reserve 1.4")
    state = moves_state(state, "reveal 1.4 1u0:k3", "take w u g")
    state = give(state, 0, (3, 1, 0, 0, 1, 1))
    after = apply_text(state, "buy h1")
    assert after.players[0].reserved == ()
    assert after.players[0].purchased == (4,)
    assert GAME.to_move(after) == 1  # no refill for a reserved card (E5)


def moves_state(state: State, *lines: str) -> State:
    for line in lines:
        state = apply_text(state, line)
    return state


def test_table_mode_blind_reserve_is_named_when_bought() -> None:
    state = moves_state(start(), "reserve 1.deck", "take w u g")
    state = give(state, 0, (0, 0, 0, 0, 3, 1))
    options = [t for t in texts(state) if t.startswith("buy h1")]
    assert "buy h1 1u0:k3" in options
    after = apply_text(state, "buy h1 1u0:k3")
    assert after.players[0].purchased == (15,)
    assert not after.unseen >> 15 & 1
    with pytest.raises(IllegalMove):
        apply_text(moves_state(after, "take w u g"), "reveal 1.1 1u0:k3")


def test_dealt_mode_deals_the_blind_card() -> None:
    position = moves(fresh(2, mode=DEALT), "reserve 2.deck")
    state = position.state
    assert GAME.to_move(state) == CHANCE
    outcomes = GAME.chance_outcomes(state)
    assert len(outcomes) == 26
    assert {w for _, w in outcomes} == {1}
    assert all(m.reveal_card.slot == 0 and m.reveal_card.level == 2 for m, _ in outcomes)
    state = apply_text(state, "reveal 2.deck 2u1:u2g2r3")
    assert state.players[0].reserved == ((47, 2, True),)
    assert GAME.to_move(state) == 1


# --- nobles (RULES.md §7) -----------------------------------------------------------------


def test_one_qualifying_noble_visits_without_being_named() -> None:
    state = tweak_player(start(), 0, bonuses=(4, 4, 0, 0, 0))
    after = apply_text(state, "take w u g")
    assert after.players[0].nobles == (1,)
    assert after.players[0].noble_points == 3
    assert after.nobles == (2, 3)


def test_the_player_chooses_among_several_nobles_one_per_turn() -> None:
    state = tweak_player(start(), 0, bonuses=(4, 4, 4, 0, 4))
    pending = apply_text(state, "take w u g")
    assert pending.phase == NOBLE
    assert GAME.to_move(pending) == 0
    assert texts(pending) == ["noble w4u4", "noble w4k4", "noble u4g4"]
    chosen = apply_text(pending, "noble w4k4")
    assert chosen.players[0].nobles == (2,)
    assert GAME.to_move(chosen) == 1
    # Next turn the player still qualifies for two and chooses again.
    later = apply_text(chosen, "take w u g")
    assert apply_text(later, "take r k w").phase == NOBLE
    with_tail = apply_text(state, "take w u g noble u4g4")
    assert with_tail.players[0].nobles == (3,)
    assert with_tail.nobles == (1, 2)


# --- end of the game (RULES.md §8, E7) ----------------------------------------------------


def test_the_round_is_played_out_after_fifteen() -> None:
    state = tweak_player(start(3), 0, card_points=15)
    state = apply_text(state, "take w u g")
    assert state.triggered
    assert GAME.to_move(state) == 1
    state = apply_text(state, "take w u g")
    assert GAME.to_move(state) == 2
    state = apply_text(state, "take w u g")
    assert GAME.to_move(state) == TERMINAL
    assert state.over == COMPLETED


def test_reaching_fifteen_on_the_last_seat_ends_at_once() -> None:
    state = moves_state(start(2), "take w u g")
    state = tweak_player(state, 1, card_points=16)
    state = apply_text(state, "take r k w")
    assert state.over == COMPLETED
    result = GAME.result(state)
    assert list(result.winners) == [1]
    assert result.scores[1].total == 16
    assert [(i.label, i.value) for i in result.scores[1].items] == [("cards", 16), ("nobles", 0)]


def test_tie_break_fewest_cards_then_shared_win() -> None:
    state = tweak_player(start(2), 0, card_points=15, purchased=(1, 2, 3))
    state = tweak_player(state, 1, card_points=12, noble_points=3, purchased=(5, 6))
    ended = moves_state(state, "take w u g", "take w u g")
    result = GAME.result(ended)
    assert list(result.winners) == [1]
    assert result.tiebreak == "fewest development cards purchased"
    state = tweak_player(state, 1, purchased=(5, 6, 7))
    shared = GAME.result(moves_state(state, "take w u g", "take w u g"))
    assert list(shared.winners) == [0, 1]
    assert "shared" in shared.tiebreak


def stuck() -> State:
    """E7: no gems in the bank, three reserves each, nothing affordable: only `pass`."""
    state = start(2)
    comps = state.rules.components
    hands = ((4, 0, 0, 4, 2, 0), (0, 4, 4, 0, 2, 0))
    dear = [
        c
        for c in comps.levels[2]
        if all(any(comps.card(c).cost[g] > hand[g] for g in range(5)) for hand in hands)
    ]
    state = tweak(state, bank=(0, 0, 0, 0, 0, 5), market=((0,) * 4, (0,) * 4, tuple(dear[:4])))
    for seat in (0, 1):
        reserved = tuple((c, 3, False) for c in dear[4 + 3 * seat : 7 + 3 * seat])
        state = tweak_player(state, seat, tokens=hands[seat], reserved=reserved)
    return tweak(state, decks=(0, 0, 0))


def test_pass_only_when_nothing_else_and_a_round_of_passes_ends() -> None:
    state = stuck()
    assert texts(state) == ["pass"]
    with pytest.raises(IllegalMove) as refused:
        apply_text(tweak(state, bank=(0, 0, 0, 0, 1, 5)), "pass")
    assert refused.value.code == "PASS_NOT_ALLOWED"
    after = apply_text(state, "pass")
    assert after.passes == 1
    assert GAME.to_move(after) == 1
    assert texts(after) == ["pass"]
    ended = apply_text(after, "pass")
    assert ended.over == DEADLOCK
    assert GAME.to_move(ended) == TERMINAL
    assert GAME.result(ended).termination == game_pb2.TERMINATION_DEADLOCK


def test_an_unaffordable_unnamed_blind_reserve_does_not_forbid_a_pass() -> None:
    """RULES.md E7 (table mode): the only other action left is buying a blind reserve that
    nobody has named. The record cannot tell whether its owner can pay for the real card, so
    `pass` is accepted and listed beside the possible names; a named reserve still counts."""
    state = stuck()
    comps = state.rules.components
    level_one = comps.levels[0]
    held = state.players[0].reserved
    state = tweak_player(state, 0, reserved=(*held[:2], (0, 1, True)))
    state = tweak(state, unseen=sum(1 << c for c in level_one))
    listed = texts(state)
    assert "pass" in listed
    guesses = [text for text in listed if text != "pass"]
    assert guesses
    assert all(text.startswith("buy h3") for text in guesses)
    after = apply_text(state, "pass")
    assert after.passes == 1
    assert GAME.to_move(after) == 1
    # A reserve whose card the record knows is an action the player has: no pass.
    affordable = next(c for c in level_one if f"buy h3 {comps.card(c).text}" in listed)
    named = tweak_player(state, 0, reserved=(*held[:2], (affordable, 1, True)))
    assert "pass" not in texts(named)
    with pytest.raises(IllegalMove) as refused:
        apply_text(named, "pass")
    assert refused.value.code == "PASS_NOT_ALLOWED"


def test_seed_example_bonuses_reduce_the_cost() -> None:
    """Seed 003 §5: a card costing 2 blue and 1 green, bought with 2 blue bonuses, costs
    only 1 green token."""
    state = tweak(start(), market=((29, 2, 3, 4), *start().market[1:]))
    state = tweak_player(state, 0, bonuses=(0, 2, 0, 0, 0), purchased=(9, 10))
    state = give(state, 0, (0, 0, 1, 0, 0, 0))
    assert GAME.format(GAME.parse("buy 1r0:u2g1", state), state) == "buy 1.1"
    after = apply_text(state, "buy 1.1")
    assert after.players[0].tokens == (0,) * 6
    assert after.bank == (4, 4, 4, 4, 4, 5)
