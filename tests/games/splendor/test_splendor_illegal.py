"""The catalogue of illegal moves: one case per rule, each refused with its own reason code
and a message in a player's words (STYLE.md principle 8)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE, GameOver, IllegalMove, NotYourTurn
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.rules import State, gem_value, tokens_message
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import (
    SplendorBuy,
    SplendorDiscard,
    SplendorGem,
    SplendorMove,
    SplendorNobleChoice,
    SplendorReserve,
    SplendorRevealCard,
    SplendorRevealNoble,
    SplendorTakeDifferent,
    SplendorTakeSame,
)
from tests.games.splendor.support import (
    apply_text,
    fresh,
    moves,
    setup_lines,
    tweak,
    tweak_player,
)
from tests.support.illegal import refused
from tests.support.play import new_position, play_all

# The fixed setup (support.fresh): level 1 = cards 1-4 (1w0:u1g1r1k1, 1w0:u1g2r1k1,
# 1w0:u2g2k1, 1w0:w3u1k1), level 2 = 41-44, level 3 = 71-74; nobles w4u4, w4k4, u4g4.


def start() -> State:
    state: State = fresh(2).state
    return state


def rich(state: State, seat: int = 0, tokens: tuple[int, ...] = (2, 2, 2, 2, 2, 0)) -> State:
    """Give `seat` tokens taken from the bank (so tokens stay conserved)."""
    bank = tuple(b - t for b, t in zip(state.bank, tokens, strict=True))
    return tweak_player(tweak(state, bank=bank), seat, tokens=tokens)


def bonuses(
    state: State, seat: int, counts: tuple[int, ...], purchased: tuple[int, ...] = ()
) -> State:
    return tweak_player(state, seat, bonuses=counts, purchased=purchased)


def over_ten() -> State:
    """Seat 1 holds 9 tokens and takes 3: 12, so 2 must go back."""
    state = rich(start(), 0, (2, 2, 2, 2, 1, 0))
    return GAME.apply(state, GAME.parse("take w u g", state))


def three_nobles() -> State:
    """Seat 1's bonuses meet w4u4, w4k4 and u4g4 at once (so they must choose)."""
    return bonuses(start(), 0, (4, 4, 4, 0, 4))


def msg(text: str) -> Callable[[State], SplendorMove]:
    return lambda state: GAME.parse(text, state)


def gems(*numbers: int) -> list[SplendorGem.ValueType]:
    return [gem_value(n) for n in numbers]


def raw(move: SplendorMove) -> Callable[[State], SplendorMove]:
    return lambda _state: move


@dataclass(frozen=True)
class Case:
    code: str
    state: Callable[[], State]
    move: Callable[[State], SplendorMove]
    words: str
    """A fragment the message must contain (the rule's numbers or words)."""


def blind_table() -> State:
    return apply_text(start(), "reserve 2.deck")


CASES = [
    Case(
        "TAKE_TWO_NEEDS_FOUR",
        lambda: rich(start(), 1, (0, 0, 0, 1, 0, 0)),
        msg("take r r"),
        "at least 4 red tokens in the bank; there are 3",
    ),
    Case("TAKE_GOLD", start, msg("take w u y"), "only by reserving"),
    Case(
        "TAKE_DIFFERENT_REPEATS",
        start,
        raw(
            SplendorMove(
                take_different=SplendorTakeDifferent(gems=[gem_value(g) for g in (1, 1, 2)])
            )
        ),
        "one token of each",
    ),
    Case(
        "TAKE_DIFFERENT_COUNT",
        start,
        raw(
            SplendorMove(
                take_different=SplendorTakeDifferent(gems=[gem_value(g) for g in (1, 2, 3, 4)])
            )
        ),
        "not 4",
    ),
    Case(
        "TAKE_EMPTY_PILE",
        lambda: rich(start(), 1, (4, 0, 0, 0, 0, 0)),
        msg("take w u g"),
        "no white tokens",
    ),
    Case("TAKE_FEWER_THAN_AVAILABLE", start, msg("take w u"), "Take 3 different colours"),
    Case(
        "UNKNOWN_GEM",
        start,
        raw(SplendorMove(take_same=SplendorTakeSame(gem=gem_value(0)))),
        "Name a gem colour",
    ),
    Case(
        "RESERVE_LIMIT",
        lambda: tweak_player(start(), 0, reserved=((5, 1, False), (6, 1, False), (7, 1, False))),
        msg("reserve 2.1"),
        "at most 3 reserved cards",
    ),
    Case(
        "RESERVE_EMPTY_DECK",
        lambda: tweak(
            start(), decks=(0, 26, 16), unseen=start().unseen & ~sum(1 << i for i in range(5, 41))
        ),
        msg("reserve 1.deck"),
        "level-1 deck is empty",
    ),
    Case(
        "EMPTY_SLOT",
        lambda: tweak(start(), market=((0, 2, 3, 4), *start().market[1:]), decks=(0, 26, 16)),
        msg("reserve 1.1"),
        "slot 1 is empty",
    ),
    Case(
        "NO_SUCH_LEVEL",
        start,
        raw(SplendorMove(reserve=SplendorReserve(level=4, slot=1))),
        "not 4",
    ),
    Case(
        "NO_SUCH_SLOT",
        start,
        raw(SplendorMove(buy=SplendorBuy(level=1, slot=5))),
        "not 5",
    ),
    Case(
        "BUY_UNAFFORDABLE",
        lambda: rich(start(), 0, (0, 1, 1, 0, 0, 0)),
        msg("buy 1.1"),
        "you are 2 short and hold 0 gold",
    ),
    Case(
        "BUY_OTHERS_RESERVE",
        lambda: apply_text(apply_text(start(), "reserve 1.1"), "reveal 1.1 1w0:r2k1"),
        msg("buy 1w0:u1g1r1k1"),
        "reserved by p1",
    ),
    Case("NO_SUCH_RESERVE", start, msg("buy h2"), "no reserved card 2"),
    Case(
        "BUY_TWO_PLACES",
        lambda: rich(start(), 0),
        raw(SplendorMove(buy=SplendorBuy(level=1, slot=1, reserved=1))),
        "not both",
    ),
    Case(
        "BUY_UNNAMED_CARD",
        lambda: apply_text(blind_table(), "take w u g"),
        raw(SplendorMove(buy=SplendorBuy(reserved=1))),
        "name the card you buy",
    ),
    Case(
        "BUY_WRONG_LEVEL",
        lambda: apply_text(blind_table(), "take w u g"),
        msg("buy h1 1u0:k3"),
        "level-2 deck",
    ),
    Case(
        "CARD_ALREADY_SEEN",
        lambda: apply_text(blind_table(), "take w u g"),
        msg("buy h1 2w1:g3r2k2"),
        "it is in the market (level 2, slot 1)",
    ),
    Case(
        "BUY_CARD_MISMATCH",
        lambda: rich(start(), 0),
        msg("buy 1.1 1w0:u1g2r1k1"),
        "holds 1w0:u1g1r1k1",
    ),
    Case(
        "BUY_CARD_NOT_AVAILABLE",
        lambda: rich(start(), 0),
        msg("buy 1u0:k3"),
        "neither in the market nor among your reserved",
    ),
    Case("BUY_NO_CARD", start, raw(SplendorMove(buy=SplendorBuy())), "Say which card"),
    Case(
        "PAY_NOT_HELD",
        lambda: rich(start(), 0),
        msg("buy 1.1 pay u1 g1 r1 y1"),
        "pay 1 gold but hold only 0",
    ),
    Case(
        "PAY_TOO_MUCH",
        lambda: rich(start(), 0, (2, 2, 2, 2, 2, 1)),
        msg("buy 1.1 pay u2 g1 r1"),
        "needs only 1 blue",
    ),
    Case(
        "PAY_WRONG_GOLD",
        lambda: rich(start(), 0, (2, 2, 2, 2, 2, 1)),
        msg("buy 1.1 pay u1 g1 r1"),
        "the gold must cover 1, not 0",
    ),
    Case("PASS_NOT_ALLOWED", start, msg("pass"), "only when no action"),
    Case(
        "DISCARD_WRONG_COUNT",
        lambda: rich(start(), 0, (2, 2, 2, 2, 1, 0)),
        msg("take w u g return w"),
        "must return exactly 2, not 1",
    ),
    Case("DISCARD_NOT_HELD", over_ten, msg("return y y"), "return 2 gold but hold only 0"),
    Case("DISCARD_NOT_NEEDED", start, msg("take w u g return w"), "you hold 3"),
    Case("DISCARD_PENDING", over_ten, msg("take r k w"), "return 2 before anything"),
    Case(
        "DISCARD_TWICE",
        over_ten,
        raw(
            SplendorMove(
                discard=SplendorDiscard(tokens=tokens_message((1, 1, 0, 0, 0, 0))),
                returned=tokens_message((1, 0, 0, 0, 0, 0)),
            )
        ),
        "no `return` tail",
    ),
    Case(
        "NOBLE_BEFORE_DISCARD",
        lambda: bonuses(rich(start(), 0, (2, 2, 2, 2, 1, 0)), 0, (4, 4, 0, 0, 0)),
        msg("take w u g noble w4u4"),
        "before the noble visit",
    ),
    Case("NOBLE_NOT_EARNED", start, msg("take w u g noble w4u4"), "meet no noble"),
    Case(
        "NOBLE_NOT_ON_TABLE",
        lambda: bonuses(start(), 0, (4, 4, 0, 0, 4)),
        msg("take w u g noble g4r4"),
        "not on the table",
    ),
    Case(
        "NOBLE_NOT_QUALIFIED",
        lambda: bonuses(start(), 0, (4, 4, 0, 0, 4)),
        msg("take w u g noble u4g4"),
        "do not meet u4g4",
    ),
    Case(
        "NOBLE_CHOICE_PENDING",
        lambda: apply_text(three_nobles(), "take w u g"),
        msg("take r k w"),
        "choose which one",
    ),
    Case(
        "NOBLE_TWICE",
        lambda: apply_text(three_nobles(), "take w u g"),
        raw(SplendorMove(choose_noble=SplendorNobleChoice(noble=1), noble=2)),
        "no tails",
    ),
    Case(
        "NOBLE_NOT_NAMED",
        lambda: apply_text(three_nobles(), "take w u g"),
        raw(SplendorMove(choose_noble=SplendorNobleChoice(noble=0))),
        "Name the noble",
    ),
    Case("NO_NOBLE_CHOICE", start, msg("noble w4u4"), "No noble choice is pending"),
    Case(
        "REVEAL_WITH_TAIL",
        lambda: apply_text(start(), "reserve 1.1"),
        raw(SplendorMove(reveal_card=SplendorRevealCard(level=1, slot=1, card=5), noble=1)),
        "on a player's turn",
    ),
    Case(
        "REVEAL_WRONG_LEVEL",
        lambda: apply_text(start(), "reserve 1.1"),
        raw(SplendorMove(reveal_card=SplendorRevealCard(level=1, slot=1, card=45))),
        "is a level-2 card",
    ),
    Case(
        "REVEAL_WRONG_SLOT",
        lambda: apply_text(start(), "reserve 1.1"),
        msg("reveal 1.2 1w0:r2k1"),
        "goes to level 1, slot 1",
    ),
    Case(
        "NO_SUCH_CARD",
        lambda: apply_text(start(), "reserve 1.1"),
        raw(SplendorMove(reveal_card=SplendorRevealCard(level=1, slot=1, card=999))),
        "no card with id 999",
    ),
    Case(
        "REVEAL_PENDING",
        lambda: apply_text(start(), "reserve 1.1"),
        msg("take w u g"),
        "must first record what was revealed",
    ),
    Case("NO_REVEAL_PENDING", start, msg("reveal 1.1 1w0:r2k1"), "Nothing is waiting"),
    Case(
        "NO_BLIND_DEAL",
        lambda: apply_text(start(), "reserve 1.1"),
        raw(SplendorMove(reveal_card=SplendorRevealCard(level=1, slot=0, card=5))),
        "No card drawn blind",
    ),
    Case(
        "NO_NOBLE_REVEAL",
        lambda: apply_text(start(), "reserve 1.1"),
        raw(SplendorMove(reveal_noble=SplendorRevealNoble(noble=4))),
        "already revealed",
    ),
    Case("NO_ACTION", start, raw(SplendorMove()), "must say what is done"),
]


def _setup_reveals(count: int) -> State:
    position = new_position("splendor", 2)
    for line in setup_lines(position.state)[:count]:
        position = moves(position, line)
    state: State = position.state
    return state


SETUP_CASES = [
    Case(
        "NOBLE_ALREADY_SEEN",
        lambda: _setup_reveals(13),
        msg("reveal noble w4u4"),
        "already on the table",
    ),
    Case(
        "NO_SUCH_NOBLE",
        lambda: _setup_reveals(12),
        raw(SplendorMove(reveal_noble=SplendorRevealNoble(noble=11))),
        "no noble with id 11",
    ),
]


@pytest.mark.parametrize("case", CASES + SETUP_CASES, ids=lambda c: c.code)
def test_each_rule_refuses_with_its_own_code(case: Case) -> None:
    state = case.state()
    message = refused(GAME, state, case.move(state), case.code)
    assert case.words in message, message
    assert message.endswith((".", "?"))


def test_the_catalogue_has_one_distinct_code_per_rule() -> None:
    codes = [case.code for case in CASES + SETUP_CASES]
    assert len(codes) == len(set(codes))
    assert len(codes) >= 30


def test_a_card_already_seen_cannot_be_revealed() -> None:
    state = apply_text(start(), "reserve 1.1")
    with pytest.raises(IllegalMove) as refused:
        apply_text(state, "reveal 1.1 1w0:u1g2r1k1")
    assert refused.value.code == "CARD_ALREADY_SEEN"
    assert "in the market (level 1, slot 2)" in refused.value.message
    with pytest.raises(IllegalMove) as reserved:
        apply_text(state, "reveal 1.1 1w0:u1g1r1k1")
    assert "p1 has it reserved" in reserved.value.message


def test_a_card_already_seen_is_refused_as_seen_while_another_slot_waits() -> None:
    """RULES.md §1 (each card exists once), §3.1: the refill waits at 1.1; a bare level-2
    card already in the market, or one of its level typed into the waiting slot, is refused
    as already seen, not as a card of the wrong level or a place nothing waits at."""
    state = apply_text(start(), "reserve 1.1")
    comps = state.rules.components
    seen_level_two = comps.card(state.market[1][0]).text
    for line in (f"reveal {seen_level_two}", f"reveal 1.1 {seen_level_two}"):
        with pytest.raises(IllegalMove) as refusal:
            apply_text(state, line)
        assert refusal.value.code == "CARD_ALREADY_SEEN"
        assert "already seen: it is in the market (level 2, slot 1)" in refusal.value.message
    # At setup: level 1 is laid out, level 2 still waits; a level-1 card shown again.
    position = new_position("splendor", 2, None, TABLE)
    first_row = [comps.card(c).text for c in comps.levels[0][:4]]
    setup = play_all(position, [f"reveal 1.{s + 1} {t}" for s, t in enumerate(first_row)])
    with pytest.raises(IllegalMove) as again:
        apply_text(setup.state, f"reveal {first_row[0]}")
    assert again.value.code == "CARD_ALREADY_SEEN"
    assert "already seen" in again.value.message


def test_moving_out_of_turn_is_refused_by_the_fold() -> None:
    position = fresh(3)
    move = position.table.wrap(GAME.parse("take w u g", position.state), seat=2)
    with pytest.raises(NotYourTurn) as refused:
        folding.record(position, move, "take w u g")
    assert refused.value.code == "NOT_YOUR_TURN"
    assert "p1's turn, not p3's" in refused.value.message
    # The right seat is accepted.
    folding.record(position, position.table.wrap(move.splendor, seat=0), "take w u g")


def test_a_player_cannot_move_while_the_table_must_reveal() -> None:
    position = moves(fresh(2), "reserve 1.1")
    move = position.table.wrap(GAME.parse("take w u g", position.state), seat=1)
    with pytest.raises(NotYourTurn):
        folding.record(position, move, "take w u g")


def test_nothing_is_accepted_once_the_game_is_over() -> None:
    state = tweak(start(), over=game_pb2.TERMINATION_COMPLETED, who=-4)
    with pytest.raises(GameOver):
        apply_text(state, "take w u g")


def test_dealt_blind_reserve_must_be_dealt_from_its_level() -> None:
    position = moves(fresh(2, mode=DEALT), "reserve 2.deck")
    with pytest.raises(IllegalMove) as refused:
        GAME.apply(
            position.state,
            SplendorMove(reveal_card=SplendorRevealCard(level=1, slot=0, card=5)),
        )
    assert refused.value.code == "REVEAL_WRONG_LEVEL"
    with pytest.raises(IllegalMove) as slot:
        GAME.apply(
            position.state,
            SplendorMove(reveal_card=SplendorRevealCard(level=2, slot=1, card=45)),
        )
    assert slot.value.code == "REVEAL_WRONG_SLOT"
