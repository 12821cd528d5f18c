"""A catalogue of illegal moves: one per rule, each refused with its own reason code."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE, GameOver, InvalidSetup, NotYourTurn
from tablelog.replay.games.medici_card_game import GAME, rules
from tablelog.replay.games.medici_card_game.components import DECK_FILE, default_components
from tablelog.v1 import game_pb2
from tablelog.v1.medici_card_game_pb2 import (
    MediciCardGameMove,
    MediciCardGameOptions,
    MediciCardGameReveal,
    MediciCardGameStartPlayer,
    MediciCardGameTake,
)
from tests.support.illegal import refused
from tests.support.play import new_position, play_all

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}


def _start(players: int = 3) -> rules.State:
    return GAME.setup([f"p{i + 1}" for i in range(players)], None, TABLE, RECORDED)


def _after(lines: list[str], players: int = 3) -> rules.State:
    state: rules.State = play_all(new_position("medici-card-game", players), lines).state
    return state


def _take(*positions: int) -> MediciCardGameMove:
    return MediciCardGameMove(take=MediciCardGameTake(positions=positions))


def _refused(state: rules.State, move: MediciCardGameMove | str, code: str) -> str:
    return refused(GAME, state, move, code)


THREE_UP = ["reveal fur3", "flip", "reveal grain2", "flip", "reveal spice4"]


def test_the_last_card_must_be_taken() -> None:
    message = _refused(_after(THREE_UP), _take(2, 3), "TAKE_MUST_INCLUDE_LAST")
    assert "position 1" in message


def test_only_the_last_three_cards_are_in_reach() -> None:
    state = _after([*THREE_UP, "take 1", "flip", "reveal dye2"])
    assert len(state.market) == 3
    state = replace(state, market=(*state.market, state.market[0]))
    assert "positions 1-3" in _refused(state, _take(1, 4), "TAKE_OUT_OF_REACH")


def test_a_position_beyond_the_market_is_refused() -> None:
    state = _after(["reveal fur3"])
    assert "1 card" in _refused(state, _take(1, 2), "TAKE_NO_SUCH_CARD")


def test_a_card_is_taken_once() -> None:
    _refused(_after(THREE_UP), _take(1, 1), "TAKE_REPEATED")


def test_optional_cards_must_fit_the_hold() -> None:
    """G-A5: 4 of 5 holds used; the last card fits, one more does not."""
    state = _after(THREE_UP)
    by_name = state.rules.deck.by_name
    state = replace(
        state,
        ships=((by_name["dye2"], by_name["dye3"], by_name["dye4"], by_name["dye5"]), (), ()),
        holds=(4, 0, 0),
    )
    message = _refused(state, _take(1, 2), "HOLD_FULL")
    assert "you have 4" in message
    assert "would make 6" in message
    GAME.apply(state, _take(1))


def test_green_flag_cards_always_fit() -> None:
    state = _after(["reveal green2", "flip", "reveal dyeflag", "flip", "reveal fur2"])
    by_name = state.rules.deck.by_name
    state = replace(state, ships=((by_name["dye2"],) * 4, (), ()), holds=(4, 0, 0))
    after = GAME.apply(state, _take(1, 2, 3))
    assert after.holds[0] == 5


def test_at_most_three_reveals_a_turn() -> None:
    _refused(_after(THREE_UP), "flip", "REVEAL_LIMIT")


def test_no_reveal_from_an_empty_deck() -> None:
    state = replace(_after(["reveal fur3"]), deck_size=0)
    assert "empty" in _refused(state, "flip", "DECK_EMPTY")


def test_the_market_must_hold_a_card_to_take() -> None:
    state = replace(_after(["reveal fur3"]), market=())
    _refused(state, _take(1), "MARKET_EMPTY")


def test_a_reveal_must_name_a_card_kind() -> None:
    move = MediciCardGameMove(reveal=MediciCardGameReveal(card="fur9"))
    _refused(_start(), move, "UNKNOWN_CARD")


def test_a_reveal_needs_an_unseen_copy_when_counts_are_known() -> None:
    """Dealt mode deals from the placeholder deck, so its counts hold; table mode with the
    unverified deck checks kinds only (engine decision on G-A1)."""
    dealt = GAME.setup(["a", "b", "c"], None, DEALT, RECORDED)
    by_name = dealt.rules.deck.by_name
    k = by_name["fur3"]
    dealt = replace(dealt, unseen=(*dealt.unseen[:k], 0, *dealt.unseen[k + 1 :]))
    assert "fur3" in _refused(dealt, "reveal fur3", "CARD_NOT_IN_DECK")
    lenient = replace(_start(), unseen=dealt.unseen)
    assert GAME.apply(lenient, GAME.parse("reveal fur3", lenient)).market == (k,)


def _verified_deck(counts: dict[str, int]) -> game_pb2.ComponentFile:
    """The shipped deck file with `count_confirmed` filled in: the placeholder count of each
    kind unless `counts` (by card name) says otherwise."""
    content = default_components()[0].content.decode()
    rows = content.splitlines()
    header = rows[0].split(",")
    confirmed = header.index("count_confirmed")
    placeholder = header.index("count_placeholder")
    kind, good, value = header.index("kind"), header.index("good"), header.index("value")
    names = {"goods": "{g}{v}", "goods_flag": "{g}flag", "neutral_flag": "green{v}"}
    fixed = [rows[0]]
    for row in rows[1:]:
        cells = row.split(",")
        name = names.get(cells[kind], "black{v}").format(g=cells[good], v=cells[value])
        cells[confirmed] = str(counts.get(name, int(cells[placeholder])))
        fixed.append(",".join(cells))
    return game_pb2.ComponentFile(name="deck", content="\n".join(fixed).encode())


def test_a_verified_deck_file_counts_copies_in_table_mode() -> None:
    # One fur3 and five fur2 (placeholder 3 + 3): still the 95 cards of §A1.
    deck = _verified_deck({"fur3": 1, "fur2": 5})
    state = GAME.setup(["a", "b", "c"], None, TABLE, {"deck": deck})
    assert state.rules.deck.verified
    assert state.rules.deck.total == 95
    assert state.rules.strict
    state = GAME.apply(state, GAME.parse("reveal fur3", state))
    state = GAME.apply(state, GAME.parse("flip", state))
    assert "all 1 are already out" in _refused(state, "reveal fur3", "CARD_NOT_IN_DECK")
    assert "UNVERIFIED" not in GAME.render(GAME.view(state, None))


@pytest.mark.parametrize(
    ("counts", "total"), [({"fur3": 1}, 93), ({"fur2": 4}, 96), ({"black7": 0}, 90)]
)
def test_a_verified_deck_file_must_have_95_cards(counts: dict[str, int], total: int) -> None:
    """§A1: the goods deck has 95 cards; a deck file that claims confirmed counts adding up
    to anything else is refused (a placeholder file is only marked unverified)."""
    deck = _verified_deck(counts)
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup(["a", "b", "c"], None, TABLE, {"deck": deck})
    assert refused.value.code == "DECK_FILE"
    assert (
        f"must have the 95 cards of the goods deck (Rules §A1); its counts add up to {total}"
        in (refused.value.message)
    )


def test_a_take_waits_for_the_pending_reveal() -> None:
    _refused(_after(["reveal fur3", "flip"]), _take(1), "REVEAL_PENDING")


def test_a_reveal_needs_a_flip_first() -> None:
    _refused(_after(["reveal fur3"]), "reveal fur4", "NO_REVEAL_PENDING")


def _tied_round_two() -> rules.State:
    state = _after(["reveal fur3"])
    return replace(state, round=2, phase=rules.START, tied=(0, 2), market=())


def test_the_start_player_must_be_among_the_poorest() -> None:
    move = MediciCardGameMove(start_player=MediciCardGameStartPlayer(seat=1))
    assert "p1, p3" in _refused(_tied_round_two(), move, "START_NOT_POOREST")
    assert GAME.apply(_tied_round_two(), GAME.parse("start 3", _tied_round_two())).current == 2


def test_nothing_is_played_while_the_start_player_is_open() -> None:
    _refused(_tied_round_two(), _take(1), "START_PENDING")
    _refused(_tied_round_two(), "reveal fur3", "START_PENDING")


def test_no_start_player_is_chosen_mid_round() -> None:
    move = MediciCardGameMove(start_player=MediciCardGameStartPlayer(seat=0))
    _refused(_after(["reveal fur3"]), move, "NO_START_PENDING")


def test_an_empty_move_is_refused() -> None:
    _refused(_after(["reveal fur3"]), MediciCardGameMove(), "EMPTY_MOVE")


def test_nothing_after_the_end() -> None:
    state = replace(_start(), phase=rules.OVER)
    with pytest.raises(GameOver):
        GAME.apply(state, _take(1))


def test_the_fold_refuses_a_seat_out_of_turn() -> None:
    position = play_all(new_position("medici-card-game", 3), ["reveal fur3"])
    move = position.table.wrap(_take(1), seat=1)
    with pytest.raises(NotYourTurn):
        folding.check_move(position, move)


@pytest.mark.parametrize(
    ("players", "options", "code"),
    [
        (1, MediciCardGameOptions(), "PLAYER_COUNT"),
        (7, MediciCardGameOptions(), "PLAYER_COUNT"),
        (3, MediciCardGameOptions(first_player=3), "FIRST_PLAYER"),
        (3, MediciCardGameOptions(ship_rewards=[30, 20, 10, 5]), "SHIP_REWARDS"),
    ],
)
def test_invalid_setups(players: int, options: MediciCardGameOptions, code: str) -> None:
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup([f"p{i}" for i in range(players)], options, TABLE, RECORDED)
    assert refused.value.code == code


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe", b"kind,good,value\ngoods,grain,x\n", b"kind,good,value,icons\nmagic,,1,0\n"],
)
def test_bad_deck_files(content: bytes) -> None:
    deck = game_pb2.ComponentFile(name="deck", content=content)
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup(["a", "b"], None, TABLE, {"deck": deck})
    assert refused.value.code == "DECK_FILE"


def test_the_shipped_deck_is_marked_unverified() -> None:
    (deck,) = GAME.default_components()
    assert deck.approximate
    assert "UNVERIFIED" in deck.approximate_note
    assert DECK_FILE.endswith(".csv")
    state = _start()
    view = GAME.view(state, None)
    assert view.deck_unverified
    assert "UNVERIFIED" in view.deck_note
    assert "UNVERIFIED" in GAME.render(view)
    assert state.rules.deck.total == 95
