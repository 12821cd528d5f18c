"""Hidden information outside the views (RULES.md §2 steps 3-4, §4 step 2, §8, §9 and the
engine decisions): which recorded moves each viewer may see (`visible_to`), the running
result that says nothing of the secret missions, the flag for assumed missions, and the
argument that one wall never encloses two regions."""

from __future__ import annotations

import dataclasses

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE
from tablelog.replay.games.castello_methoni import GAME
from tablelog.replay.games.castello_methoni.components import MISSIONS_ASSUMED_NOTE
from tablelog.replay.games.castello_methoni.rules import DEAL, DRAW, OVER, REVEAL, State, replace
from tablelog.replay.games.castello_methoni.scoring import MISSIONS_LATER
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2
from tests.games.castello_methoni.boards import grid_data, start
from tests.support import play

MISSION_ITEM = 2
"""The position of the mission item in a seat's score (land, ducats, mission, ...)."""


def _played(players: int, seed: int, mode: game_pb2.Mode.ValueType) -> play.PlayedGame:
    return play.random_game("castello-methoni", players, seed, mode=mode, keep_states=True)


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (4, 2), (5, 3)])
def test_dealt_missions_and_cards_are_seen_only_by_their_seat(players: int, seed: int) -> None:
    played = _played(players, seed, DEALT)
    counts = {"mission": 0, "draw": 0, "public": 0}
    for move, state in zip(played.moves, played.states[:-1], strict=True):
        inner = move.castello_methoni
        kind = inner.WhichOneof("action")
        assert GAME.visible_to(inner, state, FULL)
        if kind == "mission":
            assert state.phase == DEAL
            owner = inner.mission.seat
            counts["mission"] += 1
        elif kind == "draw":
            assert state.phase in (DEAL, DRAW)
            after = GAME.apply(state, inner)
            owner = next(s for s in range(players) if after.hand_sizes[s] > state.hand_sizes[s])
            counts["draw"] += 1
        else:
            counts["public"] += 1
            assert all(GAME.visible_to(inner, state, v) for v in (SPECTATOR, *range(players)))
            continue
        assert GAME.visible_to(inner, state, owner)
        assert not GAME.visible_to(inner, state, SPECTATOR)
        others = [s for s in range(players) if s != owner]
        assert not any(GAME.visible_to(inner, state, s) for s in others)
    assert counts["mission"] == players
    assert counts["draw"] >= 5 * players
    assert counts["public"]


def test_table_mode_records_nothing_hidden() -> None:
    """Table mode names a card when it is played and records the missions only when they
    are revealed at the final scoring: every move is public."""
    played = _played(3, 11, TABLE)
    kinds = set()
    for move, state in zip(played.moves, played.states[:-1], strict=True):
        inner = move.castello_methoni
        kinds.add(inner.WhichOneof("action"))
        if inner.WhichOneof("action") == "mission":
            assert state.phase == REVEAL
        assert all(GAME.visible_to(inner, state, v) for v in (FULL, SPECTATOR, 0, 1, 2))
    assert {"mission", "build", "first_player"} <= kinds


def test_the_first_player_and_a_played_card_are_public_in_dealt_mode() -> None:
    played = _played(3, 4, DEALT)
    first = played.moves[0].castello_methoni
    assert first.WhichOneof("action") == "first_player"
    assert all(GAME.visible_to(first, played.states[0], v) for v in (SPECTATOR, 0, 1, 2))
    plays = [
        (m.castello_methoni, s)
        for m, s in zip(played.moves, played.states[:-1], strict=True)
        if m.castello_methoni.WhichOneof("action") in ("build", "trade")
    ]
    assert plays
    for inner, state in plays:
        assert all(GAME.visible_to(inner, state, v) for v in (SPECTATOR, 0, 1, 2))


def _mission_items(state: State) -> list[tuple[str, int]]:
    result = GAME.result(state)
    for score in result.scores:
        assert score.total == sum(item.value for item in score.items)
    return [(s.items[MISSION_ITEM].label, s.items[MISSION_ITEM].value) for s in result.scores]


def test_the_running_result_reveals_no_mission() -> None:
    played = _played(4, 6, DEALT)
    for state in played.states[:-1]:
        assert state.phase != OVER
        assert _mission_items(state) == [(MISSIONS_LATER, 0)] * 4
        # Another deal of the missions gives the very same running result.
        if -1 not in state.missions:
            swapped = replace(state, missions=(*state.missions[1:], state.missions[0]))
            assert GAME.result(swapped) == GAME.result(state)
    end = played.states[-1]
    assert end.phase == OVER
    final = _mission_items(end)
    assert all(label == "mission" for label, _ in final)
    assert any(value > 0 for _, value in final)


def test_missions_count_once_recorded_at_the_end_in_table_mode() -> None:
    played = _played(3, 11, TABLE)
    reveal = next(i for i, s in enumerate(played.states) if s.phase == REVEAL)
    for state in played.states[reveal:-1]:
        assert _mission_items(state) == [(MISSIONS_LATER, 0)] * 3
    assert all(label == "mission" for label, _ in _mission_items(played.states[-1]))


def test_assumed_missions_are_flagged_in_the_view_and_render() -> None:
    assumed = start(grid_data(2, 2)).state
    assert assumed.board.missions_assumed
    view = GAME.view(assumed, SPECTATOR)
    assert view.missions_assumed
    assert not view.board_approximate
    text = GAME.render(view)
    assert f"!! MISSIONS ASSUMED: {MISSIONS_ASSUMED_NOTE}" in text
    assert "missions assumed" in text

    listed = start(grid_data(2, 2) | {"mission_cards": [{"id": "m1", "terrains": ["hill"]}]})
    view = GAME.view(listed.state, SPECTATOR)
    assert not view.missions_assumed
    assert "MISSIONS ASSUMED" not in GAME.render(view)

    shipped = play.new_position("castello-methoni", 3)
    view = GAME.view(shipped.state, 0)
    assert not view.missions_assumed  # the shipped file lists its (assumed) mission cards
    assert view.board_approximate


def test_build_asserts_that_one_wall_encloses_one_region() -> None:
    """The loader refuses a cell that cannot reach the sea (so the case never arises); on a
    board forced past that check, a wall that closes both of its sides trips the assert."""
    position = start(grid_data(1, 2))
    state = position.state
    wall = pb.CastelloMethoniMove(
        build=pb.CastelloMethoniBuild(
            card="mountain",
            cell="r1c1",
            other="r1c2",
            houses=[
                pb.CastelloMethoniHouse(seat=0, cell="r1c1"),
                pb.CastelloMethoniHouse(seat=1, cell="r1c2"),
            ],
        )
    )
    assert GAME.apply(state, wall).cell_castle == (0, 0)  # both sides still reach the sea
    landlocked = dataclasses.replace(state.ctx.board, sea_edges=(0, 0))
    forced = replace(state, ctx=dataclasses.replace(state.ctx, board=landlocked))
    with pytest.raises(AssertionError, match="one wall enclosed two regions"):
        GAME.apply(forced, wall)
