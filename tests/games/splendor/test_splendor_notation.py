"""Splendor notation: round trip of every legal move along random play, leniency of input,
ambiguity, and garbage that raises nothing but NotationError (Hypothesis)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablelog.replay.core import DEALT, TABLE, AmbiguousNotation, NotationError
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.rules import State
from tablelog.v1.splendor_pb2 import SplendorMove, SplendorOptions
from tests.games.splendor.support import apply_text, fresh, moves, tweak, tweak_player
from tests.support.play import assert_round_trip, new_position, random_game

ROUND_TRIP_GAMES = 40


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_legal_move_round_trips_along_random_play(players: int) -> None:
    for seed in range(ROUND_TRIP_GAMES):
        played = random_game(
            "splendor",
            players,
            seed=10_000 + seed,
            mode=TABLE if seed % 2 else DEALT,
            options=SplendorOptions(allow_take_fewer_anytime=seed % 3 == 0),
            keep_states=True,
        )
        for state in played.states:
            assert_round_trip(GAME, state)


def canonical(text: str, state: State) -> str:
    return GAME.format(GAME.parse(text, state), state)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("take w u g", "take w u g"),
        ("TAKE  G, W, U", "take w u g"),
        ("take white blue green", "take w u g"),
        ("take diamond sapphire emerald", "take w u g"),
        ("t wug", "take w u g"),
        ("take r r", "take r r"),
        ("take rr", "take r r"),
        ("take 2r", "take r r"),
        ("take r2", "take r r"),
        ("take red red", "take r r"),
        ("reserve 2.3", "reserve 2.3"),
        ("reserve 2-3", "reserve 2.3"),
        ("res 2/deck", "reserve 2.deck"),
        ("reserve 2.d", "reserve 2.deck"),
        ("reserve 2w1:g3r2k2", "reserve 2.1"),
        ("hold 3.4", "reserve 3.4"),
        ("buy 2.1 2w1:g3r2k2", "buy 2.1 2w1:g3r2k2"),
        ("buy 1w0:u1g1r1k1", "buy 1.1"),
        ("buy 1W0:K1R1G1U1", "buy 1.1"),
        ("pass", "pass"),
    ],
)
def test_input_is_lenient_and_output_canonical(typed: str, expected: str) -> None:
    state = fresh(2).state
    assert canonical(typed, state) == expected
    assert canonical(expected, state) == expected


def test_explicit_payment_other_than_canonical_is_kept() -> None:
    state = fresh(2).state
    bank = tuple(b - t for b, t in zip(state.bank, (1, 1, 1, 1, 1, 1), strict=True))
    state = tweak_player(tweak(state, bank=bank), 0, tokens=(1, 1, 1, 1, 1, 1))
    assert canonical("buy 1.1 pay g1 r1 k1 y1", state) == "buy 1.1 pay g1 r1 k1 y1"
    assert canonical("buy 1.1 pay u1, g1, r1, k1", state) == "buy 1.1"
    after = apply_text(state, "buy 1.1 pay g1 r1 k1 y1")
    assert after.players[0].tokens == (1, 1, 0, 0, 0, 0)


def test_tails_and_standalone_decisions() -> None:
    state = fresh(2).state
    state = tweak_player(state, 0, tokens=(2, 2, 2, 2, 1, 0))
    state = tweak(state, bank=(2, 2, 2, 2, 3, 5))
    assert canonical("take w u g return w, u", state) == "take w u g return w u"
    assert canonical("take w u g ret w1 u1", state) == "take w u g return w u"
    assert canonical("return y y", state) == "return y y"
    assert canonical("discard 2g", state) == "return g g"
    with_nobles = tweak_player(fresh(2).state, 0, bonuses=(4, 4, 4, 0, 4))
    assert canonical("take w u g noble 1", with_nobles) == "take w u g noble w4u4"
    assert canonical("take w u g n k4w4", with_nobles) == "take w u g noble w4k4"
    pending = apply_text(with_nobles, "take w u g")
    assert canonical("noble 3", pending) == "noble u4g4"


def test_reveals_by_place_or_by_card_alone() -> None:
    position = new_position("splendor", 2)
    assert canonical("reveal 1.1 1w0:u1g1r1k1", position.state) == "reveal 1.1 1w0:u1g1r1k1"
    assert canonical("1W0:U1G1R1K1", position.state) == "reveal 1.1 1w0:u1g1r1k1"
    assert canonical("reveal 2u1:u2g2r3", position.state) == "reveal 2.1 2u1:u2g2r3"
    assert canonical("noble w4u4", position.state) == "reveal noble w4u4"
    assert canonical("flip noble k4w4", position.state) == "reveal noble w4k4"
    refill = moves(fresh(2), "reserve 1.3")
    assert canonical("1u0:k3", refill.state) == "reveal 1.3 1u0:k3"
    dealt = moves(fresh(2, mode=DEALT), "reserve 2.deck")
    assert canonical("2u1:u2g2r3", dealt.state) == "reveal 2.deck 2u1:u2g2r3"
    assert canonical("deal 2.deck 2u1:u2g2r3", dealt.state) == "reveal 2.deck 2u1:u2g2r3"


def test_ambiguous_input_lists_the_candidates() -> None:
    state = fresh(2).state
    with pytest.raises(AmbiguousNotation) as level_only:
        GAME.parse("reserve 2", state)
    assert level_only.value.candidates == (
        "reserve 2.1",
        "reserve 2.2",
        "reserve 2.3",
        "reserve 2.4",
        "reserve 2.deck",
    )
    two = tweak_player(state, 0, reserved=((5, 1, False), (6, 1, False)))
    with pytest.raises(AmbiguousNotation) as hand:
        GAME.parse("buy h", two)
    assert hand.value.candidates == ("buy h1", "buy h2")
    one = tweak_player(state, 0, reserved=((5, 1, False),))
    assert canonical("buy h", one) == "buy h1"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "jump",
        "take",
        "take w w u",
        "take x",
        "reserve",
        "reserve 4.1",
        "reserve 1.9",
        "reserve 9w9:w1",
        "buy 1.deck",
        "buy",
        "buy 1.1 1.2 1.3",
        "buy 1.1 nonsense",
        "buy 9k9:k9",
        "buy 1.1 pay pay",
        "take w u g pay u1",
        "noble",
        "noble 9",
        "noble y4",
        "noble w9",
        "reveal",
        "reveal 1.1",
        "reveal 1.1 9w9:w1",
        "pass now",
        "return",
    ],
)
def test_bad_text_raises_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        GAME.parse(text, fresh(2).state)


def test_format_never_fails_on_odd_messages() -> None:
    state = fresh(2).state
    assert GAME.format(SplendorMove(), state) == "nothing"
    text = GAME.format(GAME.parse("buy 1.1 pay nothing", state), state)
    assert text == "buy 1.1 pay nothing"


VOCABULARY = [
    "take", "reserve", "buy", "pass", "return", "noble", "reveal", "pay", "w", "u", "g", "r",
    "k", "y", "2r", "r2", "wug", "1.1", "2.3", "3.deck", "h1", "h2", "h", "1w0:u1g1r1k1",
    "2w1:g3r2k2", "w4u4", "u4g4", "1", "2", "#5", "#999", "nothing", ",", "4.4", "1.0",
]  # fmt: skip


def _garbage_states() -> list[State]:
    start = fresh(3).state
    discarding = apply_text(tweak_player(start, 0, tokens=(3, 3, 3, 1, 0, 0)), "take w u g")
    return [
        new_position("splendor", 2).state,
        start,
        discarding,
        moves(fresh(2), "reserve 1.2").state,
    ]


STATES = _garbage_states()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(max_size=40),
        st.lists(st.sampled_from(VOCABULARY), max_size=8).map(" ".join),
    ),
    which=st.integers(0, len(STATES) - 1),
)
def test_garbage_raises_only_notation_error(text: str, which: int) -> None:
    state = STATES[which]
    with contextlib.suppress(NotationError):
        move = GAME.parse(text, state)
        # Whatever parses can be formatted, and reads back as the same move.
        again = GAME.format(move, state)
        assert GAME.parse(again, state) == move
