"""A catalogue of illegal moves: one per rule, each refused with its own reason code."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TABLE, GameOver, InvalidSetup, NotYourTurn
from tablelog.replay.games.medici import GAME, rules
from tablelog.v1 import game_pb2
from tablelog.v1.medici_pb2 import (
    MEDICI_EDITION_CLASSIC,
    MediciBid,
    MediciDraw,
    MediciMove,
    MediciOptions,
    MediciRemove,
    MediciStartPlayer,
)
from tests.support.illegal import refused
from tests.support.play import new_position, play_all

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}


def _state(
    lines: list[str], players: int = 4, mode: game_pb2.Mode.ValueType = TABLE
) -> rules.State:
    state: rules.State = play_all(new_position("medici", players, mode=mode), lines).state
    return state


def _refused(state: rules.State, move: MediciMove | str, code: str) -> str:
    return refused(GAME, state, move, code)


AUCTION = ["draw fur3", "auction"]


def test_the_lowest_bid_is_one() -> None:
    _refused(_state(AUCTION), MediciMove(bid=MediciBid(florins=0)), "BID_TOO_LOW")


def test_a_bid_must_beat_the_high_bid() -> None:
    assert "high bid of 5" in _refused(_state([*AUCTION, "bid 5"]), "bid 5", "BID_NOT_HIGHER")


def test_a_bid_cannot_exceed_your_money() -> None:
    assert "You have 40 florins" in _refused(_state(AUCTION), "bid 41", "BID_OVER_MONEY")


def test_zero_florins_may_only_pass() -> None:
    """G-B7: a player with 0 florins stays in the bid order but can only pass."""
    state = replace(_state(AUCTION), florins=(40, 0, 40, 40))
    assert [GAME.format(m, state) for m in GAME.legal_moves(state)] == ["pass"]
    _refused(state, "bid 1", "BID_OVER_MONEY")


def test_a_lot_must_fit_your_ship() -> None:
    state = _state(AUCTION)
    by_name = state.rules.tiles.by_name
    full = tuple(by_name["dye1"] for _ in range(5))
    state = _state(["draw fur3", "draw", "draw fur4", "auction"])
    state = replace(state, ships=((), full[:4], (), ()))
    assert "1 free space" in _refused(state, "bid 3", "LOT_DOES_NOT_FIT")


def test_a_lot_has_at_most_three_tiles() -> None:
    state = _state(["draw fur3", "draw", "draw fur4", "draw", "draw fur5"])
    state = replace(state, phase=rules.DECIDE, current=state.drawer)
    _refused(state, "draw", "LOT_LIMIT")


def test_a_lot_never_outgrows_every_ship() -> None:
    state = _state(["draw fur3"])
    by_name = state.rules.tiles.by_name
    four = tuple(by_name["dye1"] for _ in range(4))
    state = replace(state, ships=(four, four, four, four), phase=rules.DECIDE)
    assert "most free space is 1" in _refused(state, "draw", "LOT_TOO_BIG")


def test_a_draw_after_the_lot_closed_by_rule_names_the_rule() -> None:
    """§B3 step 1: the third tile closes the lot (and, G-B3, so does a lot as big as the
    largest free space); a `draw` then is refused with that rule, not as a bid out of turn."""
    three = _state(["draw fur3", "draw", "draw fur4", "draw", "draw fur5"])
    assert three.phase == rules.BID
    for line in ("draw", "draw dye2"):
        message = _refused(three, line, "LOT_LIMIT")
        assert "The lot closed at 3 tiles: a lot has at most 3 tiles" in message
        assert "(RULES.md §B3 step 1)" in message
    state = _state(["draw fur3"], players=3)
    four = tuple(state.rules.tiles.by_name["dye1"] for _ in range(4))
    state = play_all_state(replace(state, ships=(four, four, four)), "auction")
    message = _refused(state, "draw", "LOT_TOO_BIG")
    assert "The lot closed at 1 tile: a lot of 2 would fit no ship" in message
    # A drawer who chose to auction: the auction is simply under way.
    _refused(_state(AUCTION), "draw", "AUCTION_UNDER_WAY")


def play_all_state(state: rules.State, line: str) -> rules.State:
    after: rules.State = GAME.apply(state, GAME.parse(line, state))
    return after


def test_the_free_fill_of_the_last_ship_names_its_rule() -> None:
    """§B4: once every ship but one is full, trading stops and the table records the tiles
    drawn free into the last ship; a bid or a pass then says so."""
    state = _state(["draw fur3", "auction"], players=3)
    by_name = state.rules.tiles.by_name
    five = tuple(by_name["dye1"] for _ in range(5))
    three = tuple(by_name["dye2"] for _ in range(3))
    state = replace(state, ships=(five, three, five))
    state = play_all_state(state, "pass")  # full ships take no part: p2 alone bids
    assert state.phase == rules.FILL
    for line in ("bid 1", "pass", "auction"):
        message = _refused(state, line, "DRAW_PENDING")
        assert "Only p2's ship has room" in message
        assert "for free" in message
        assert "(RULES.md §B4)" in message


def test_no_draw_from_an_empty_bag() -> None:
    state = replace(_state(["draw fur3"]), bag_size=0)
    _refused(state, "draw", "BAG_EMPTY")


def test_a_drawn_tile_must_be_a_real_tile() -> None:
    _refused(_state([]), MediciMove(draw=MediciDraw(tile="fur9")), "UNKNOWN_TILE")


def test_a_drawn_tile_must_be_unseen() -> None:
    state = _state(["draw gold", "auction", "pass", "pass", "pass", "pass"])
    assert "all 1 are out" in _refused(state, "draw gold", "TILE_NOT_IN_BAG")


def test_the_drawer_decides_before_anyone_bids() -> None:
    _refused(_state(["draw fur3"]), "bid 3", "DRAWER_DECIDING")


def test_a_draw_waits_for_its_tile() -> None:
    _refused(_state(["draw fur3", "draw"]), "auction", "DRAW_PENDING")


def test_no_tile_is_drawn_during_an_auction() -> None:
    _refused(_state(AUCTION), "draw fur4", "AUCTION_UNDER_WAY")


def test_the_removal_comes_first_in_dealt_mode() -> None:
    state = GAME.setup(["a", "b", "c", "d"], None, DEALT, RECORDED)
    assert state.phase == rules.REMOVE
    _refused(state, "draw fur3", "REMOVAL_PENDING")


def test_table_mode_records_no_removal() -> None:
    _refused(_state(["draw fur3"]), MediciMove(remove=MediciRemove(tile="fur4")), "DRAWER_DECIDING")


def test_the_start_player_must_be_among_the_poorest() -> None:
    state = replace(_state([]), day=2, phase=rules.START, tied=(1, 3))
    move = MediciMove(start_player=MediciStartPlayer(seat=0))
    assert "p2, p4" in _refused(state, move, "START_NOT_POOREST")
    _refused(state, "draw fur3", "START_PENDING")


def test_an_empty_move_is_refused() -> None:
    _refused(_state(AUCTION), MediciMove(), "EMPTY_MOVE")


def test_nothing_after_the_end() -> None:
    with pytest.raises(GameOver):
        GAME.apply(replace(_state([]), phase=rules.OVER), GAME.parse("pass", _state([])))


def test_the_fold_refuses_a_seat_out_of_turn() -> None:
    position = play_all(new_position("medici", 4), AUCTION)
    with pytest.raises(NotYourTurn):
        folding.check_move(position, position.table.wrap(GAME.parse("bid 3", position.state), 3))


@pytest.mark.parametrize(
    ("players", "options", "code"),
    [
        (1, MediciOptions(), "PLAYER_COUNT"),
        (7, MediciOptions(), "PLAYER_COUNT"),
        (2, MediciOptions(edition=MEDICI_EDITION_CLASSIC), "PLAYER_COUNT"),
        (3, MediciOptions(first_player=5), "FIRST_PLAYER"),
    ],
)
def test_invalid_setups(players: int, options: MediciOptions, code: str) -> None:
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup([f"p{i}" for i in range(players)], options, TABLE, RECORDED)
    assert refused.value.code == code


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff", b"id,kind,good,value\nT1,goods,silk,3\n", b"id,kind,good,value\nT1,gem,,3\n"],
)
def test_bad_tile_files(content: bytes) -> None:
    tiles = game_pb2.ComponentFile(name="tiles", content=content)
    with pytest.raises(InvalidSetup) as refused:
        GAME.setup(["a", "b", "c"], None, TABLE, {"tiles": tiles})
    assert refused.value.code == "TILE_FILE"
