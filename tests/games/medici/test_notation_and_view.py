"""Notation (lenient input, canonical output, garbage) and the view/render."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablelog.replay.core import DEALT, FULL, SPECTATOR, IllegalMove, NotationError
from tablelog.replay.games.medici import GAME, rules
from tests.support.play import new_position, play_all

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}


def _state(lines: list[str], players: int = 4) -> rules.State:
    state: rules.State = play_all(
        new_position("medici", ["Adam", "Barbara", "Charles", "Diana"][:players]), lines
    ).state
    return state


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("draw cloth3", "draw cloth3"),
        ("Cloth 3", "draw cloth3"),
        ("d furs5", "draw fur5"),
        ("GOLD", "draw gold"),
        ("draw gold 10", "draw gold"),
        ("remove spice0", "remove spice0"),
        ("start 2", "start 2"),
        ("start diana", "start 4"),
    ],
)
def test_chance_moves_are_read_leniently(text: str, canonical: str) -> None:
    state = _state([])
    assert GAME.format(GAME.parse(text, state), state) == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("draw", "draw"),
        ("D", "draw"),
        ("auction", "auction"),
        ("stop", "auction"),
        ("bid 7", "bid 7"),
        ("B 12", "bid 12"),
        ("pass", "pass"),
        ("P", "pass"),
    ],
)
def test_player_moves_are_read_leniently(text: str, canonical: str) -> None:
    state = _state(["draw fur3"])
    assert GAME.format(GAME.parse(text, state), state) == canonical


@pytest.mark.parametrize(
    "text",
    ["", "bid", "bid x", "bid -3", "bid 99999999999", "fur9", "7", "start 9", "gold 5", "xyz"],
)
def test_bad_text_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        GAME.parse(text, _state([]))


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=30)
    | st.from_regex(r"(draw|bid|pass|start|remove|auction) ?[0-9a-z ]{0,12}")
)
def test_garbage_raises_only_notation_errors(text: str) -> None:
    for state in (_state([]), _state(["draw fur3"]), _state(["draw fur3", "auction"])):
        try:
            move = GAME.parse(text, state)
        except NotationError:
            continue
        with contextlib.suppress(IllegalMove):
            GAME.apply(state, move)


def test_render_shows_the_table() -> None:
    state = _state(["draw fur3", "draw", "draw gold", "auction", "bid 12"])
    text = GAME.render(GAME.view(state, SPECTATOR))
    assert "Medici (classic) - day 1 of 3" in text
    assert "Lot (drawn by Adam): fur3 gold   high bid 12 by Barbara" in text
    assert "Charles to bid or pass." in text
    assert "Removed unseen today: 12 (hidden)" in text
    view = GAME.view(state, FULL)
    assert view.removed_count == 12
    assert not view.removed
    assert view.seats[1].has_bid
    assert view.seats[1].bid == 12


def test_views_never_show_the_removed_tiles_but_to_the_full_viewer() -> None:
    state = GAME.setup(["a", "b", "c"], None, DEALT, RECORDED)
    for text in ["remove fur3", "remove gold", *["remove cloth0"]]:
        state = GAME.apply(state, GAME.parse(text, state))
    full = GAME.view(state, FULL)
    assert [t.name for t in full.removed] == ["fur3", "gold", "cloth0"]
    for viewer in (SPECTATOR, 0, 1, 2):
        view = GAME.view(state, viewer)
        assert not view.removed
        assert {u.tile: u.count for u in view.unseen}["gold"] == 1
        assert "gold" not in GAME.render(view)
    assert "fur3 gold cloth0" in GAME.render(full)


def test_a_removed_tile_is_visible_to_nobody_but_the_full_viewer() -> None:
    """§B2: the day's setup removes tiles unseen; every other move is public (§B3-B4)."""
    state = GAME.setup(["a", "b", "c"], None, DEALT, RECORDED)
    remove = GAME.parse("remove fur3", state)
    assert GAME.is_chance(remove)
    assert GAME.visible_to(remove, state, FULL)
    for seat_or_spectator in (SPECTATOR, 0, 1, 2):
        assert not GAME.visible_to(remove, state, seat_or_spectator)
    while state.phase == rules.REMOVE:
        state = GAME.apply(state, GAME.chance_outcomes(state)[-1][0])  # gold, spice, ...
    played = [("draw cloth3", rules.DRAW), ("draw", rules.DECIDE), ("draw cloth4", rules.DRAW)]
    played += [("auction", rules.DECIDE), ("bid 5", rules.BID), ("pass", rules.BID)]
    viewers: tuple[int | None, ...] = (FULL, SPECTATOR, 0, 1, 2)
    for text, phase in played:
        assert state.phase == phase
        move = GAME.parse(text, state)
        for viewer in viewers:
            assert GAME.visible_to(move, state, viewer), (text, viewer)
        state = GAME.apply(state, move)
    tied = replace(state, phase=rules.START, tied=(0, 1))
    start = GAME.parse("start 2", tied)
    assert all(GAME.visible_to(start, tied, viewer) for viewer in viewers)
