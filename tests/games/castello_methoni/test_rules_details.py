"""Rules beyond the seed's pictures: running out of pieces (§6.4), the end of the game (§7),
scoring and tie-breaks (§8), market income limits (§6.5, §6.6) and dealt-mode chance."""

from __future__ import annotations

import pytest

from tablelog.replay import fold
from tablelog.replay.core import CHANCE, DEALT, IllegalMove
from tablelog.replay.games.castello_methoni import GAME
from tablelog.replay.games.castello_methoni.rules import (
    MERGE,
    OVER,
    PLAY,
    REVEAL,
    Castle,
    State,
    chance_outcomes,
    house_options,
    replace,
)
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2
from tests.games.castello_methoni.boards import board_data, grid_data, moves, start
from tests.games.castello_methoni.test_seed_examples import CHAIN, CHAIN_SETUP, PAIR
from tests.support import play


def at(position: fold.Position, state: State) -> fold.Position:
    return fold.Position(position.table, state, position.revision, position.sequence)


def legal(position: fold.Position) -> list[str]:
    return [GAME.format(m, position.state) for m in GAME.legal_moves(position.state)]


def test_with_no_houses_left_the_builder_places_one_of_each_neighbour() -> None:
    position = start(PAIR)
    position = at(position, replace(position.state, houses_left=(0, 15, 15)))
    builds = [t for t in legal(position) if t.startswith("build mountain m|f")]
    assert builds == ["build mountain m|f left m right f", "build mountain m|f left f right m"]
    # A neighbour with no house left is skipped; a sea edge takes either neighbour's house.
    position = at(position, replace(position.state, houses_left=(0, 0, 15)))
    assert house_options(position.state, 0, 1) == [((2, 1),), ((2, 0),)]
    assert house_options(position.state, 0, -1) == [((2, 0),)]
    position = at(position, replace(position.state, houses_left=(0, 0, 0)))
    assert house_options(position.state, 0, 1) == [()]
    position = moves(position, "build mountain m|f")
    assert not any(sum(row) for row in position.state.houses)


def test_the_chosen_neighbour_must_have_a_house() -> None:
    position = start(PAIR)
    position = at(position, replace(position.state, houses_left=(15, 0, 15)))
    assert [t for t in legal(position) if t.startswith("build mountain m|f own m")] == [
        "build mountain m|f own m right f"
    ]
    with pytest.raises(IllegalMove) as refused:
        moves(position, "build mountain m|f own m left f")
    assert refused.value.code == "HOUSES_NOT_ALLOWED"
    assert "Allowed here" in refused.value.message


STRIP = board_data(
    {"p": "mountain", "q": "mountain", "r": "hill"},
    [("p", "SEA"), ("p", "SEA"), ("p", "q"), ("q", "SEA"), ("q", "r"), ("r", "SEA"), ("r", "SEA")],
)


def test_no_tower_exception_merges_the_new_castle_into_the_own_castle() -> None:
    """§6.4: with no tower left a castle can still be made when it touches one of the
    player's castles: it is merged into it at once, for free."""
    position = moves(
        start(STRIP),
        "build mountain p|sea own p",
        "build mountain p|sea own p",
        "build hill r|sea own r",
        "end",
        "build mountain q|sea own q",
        "end",
        "build mountain p|q own q left p",  # Jerry encloses p
        "end",
    )
    state: State = position.state
    jerry = state.cell_castle[0]
    assert jerry
    assert state.castle(jerry).owner == 0
    # Jerry plays again, now without towers; the wall q|r would close q beside his castle.
    state = replace(state, current=0, towers_left=(0, 4, 4))
    position = moves(at(position, state), "build mountain q|r own r left q")
    after: State = position.state
    assert after.cell_castle[1] == jerry
    assert len(after.castle(jerry).cells) == 2
    assert after.towers_left == (0, 4, 4)
    assert after.wall_supply == state.wall_supply - 1 + 1  # the wall p|q went back


def between_two_own_castles() -> fold.Position:
    """STRIP with Jerry's castles on p (id 1) and r (id 2), Jerry to play with no tower left:
    walling q's sea edge makes a castle touching both (§6.2, §6.4)."""
    position = moves(
        start(STRIP),
        "build mountain p|sea own p",
        "build mountain p|sea own p",
        "build hill r|sea own r",
        "build hill r|sea own r",
    )
    position = moves(
        at(position, replace(position.state, current=0)), "build mountain p|q own q left p"
    )
    position = moves(position, "build hill q|r own q left r")
    state: State = position.state
    assert (state.cell_castle[0], state.cell_castle[2]) == (1, 2)
    return at(position, replace(state, current=0, cards_played=0, towers_left=(0, 4, 4)))


def test_no_tower_builder_chooses_which_own_castle_the_new_castle_merges_into() -> None:
    """§6.2, §6.4: the new castle touches two of Jerry's castles; he chooses the one it
    merges into (`into`), and the text without `into` keeps its meaning: the lowest id."""
    position = between_two_own_castles()
    assert [t for t in legal(position) if t.startswith("build mountain q|sea")] == [
        "build mountain q|sea own q",
        "build mountain q|sea own q into r",
    ]
    plain = moves(position, "build mountain q|sea own q").state
    assert plain.cell_castle[:3] == (1, 1, 2)
    chosen: State = moves(position, "build mountain q|sea own q into r").state
    assert chosen.cell_castle[:3] == (1, 2, 2)
    assert chosen.towers_left == (0, 4, 4)
    assert chosen.phase == MERGE
    assert chosen.merging == 2
    typed = GAME.parse("build mountain q|sea own q into r", position.state)
    assert typed.build.into == "r"
    assert GAME.format(typed, position.state) == "build mountain q|sea own q into r"
    # Naming the castle it merges into anyway is the plain move, text and all.
    same = GAME.parse("build mountain q|sea own q into p", position.state)
    assert not same.build.into
    assert GAME.format(same, position.state) == "build mountain q|sea own q"


def test_into_is_refused_where_the_new_castle_does_not_merge() -> None:
    """§6.4: `into` only chooses among the builder's castles beside a towerless new castle."""
    position = between_two_own_castles()
    with_tower = at(position, replace(position.state, towers_left=(1, 4, 4)))
    for where, code in (
        (with_tower, "INTO_WITHOUT_MERGE"),
        (position, "INTO_NOT_BESIDE"),
    ):
        move = GAME.parse("build mountain q|sea own q", where.state)
        move.build.into = "r" if code == "INTO_WITHOUT_MERGE" else "q"
        with pytest.raises(IllegalMove) as refused:
            GAME.apply(where.state, move)
        assert refused.value.code == code
        assert "§6.4" in refused.value.message


def test_the_game_ends_at_the_end_of_the_turn_that_emptied_the_wall_supply() -> None:
    position = start(grid_data(2, 3))
    position = at(position, replace(position.state, wall_supply=1))
    position = moves(position, "build mountain r1c1|r1c2 own r1c1 left r1c2")
    state: State = position.state
    assert state.last_turn
    assert state.wall_supply == 0
    assert state.phase == PLAY
    assert "end" in legal(position)
    assert not [t for t in legal(position) if t.startswith("build")]
    with pytest.raises(IllegalMove) as refused:
        moves(position, "build mountain r2c1|r2c2 own r2c1 left r2c2")
    assert refused.value.code == "NO_WALLS_LEFT"
    position = moves(position, "end")
    assert position.state.phase == REVEAL
    assert GAME.to_move(position.state) == CHANCE
    position = moves(position, "mission p2 m5", "mission p1 m1", "mission p3 m3")
    assert position.state.phase == OVER
    result = GAME.result(position.state)
    assert result.termination == game_pb2.TERMINATION_COMPLETED


def test_market_income_is_limited_by_the_bank() -> None:
    position = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a", "stop", "end")
    position = moves(position, "trade mountain", "trade sea", "trade sea")  # Evan, Jerry
    state: State = position.state
    state = replace(state, bank=1, ducats=(state.ducats[0] + 1, *state.ducats[1:]))
    position = at(position, state)
    before = position.state.ducats[1]
    position = moves(position, "end")
    assert position.state.ducats[1] == before + 1
    assert position.state.bank == 0


def scored(
    castles: list[tuple[int, int, int]],
    ducats: tuple[int, int, int],
    missions: tuple[int, int, int] = (1, 1, 1),
    **options: bool,
) -> game_pb2.GameResult:
    """A finished 3-player game on a 1 x 12 strip of mountains with castles (owner, first
    cell, size). Mission m2 (forest, field, hill) scores nothing there, m1 one per cell."""
    opts = pb.CastelloMethoniOptions(**options)
    state: State = start(grid_data(1, 12), options=opts).state
    cell_castle = [0] * 12
    made = []
    for number, (owner, first, size) in enumerate(castles, start=1):
        cells = frozenset(range(first, first + size))
        for cell in cells:
            cell_castle[cell] = number
        made.append(Castle(number, owner, cells, (0, 0, 0), (0, 0, 0), 0))
    state = replace(
        state,
        castles=tuple(made),
        cell_castle=tuple(cell_castle),
        ducats=ducats,
        missions=missions,
        phase=OVER,
    )
    return GAME.result(state)


def items(result: game_pb2.GameResult, seat: int) -> dict[str, int]:
    return {i.label: i.value for i in result.scores[seat].items}


def test_largest_and_second_castle_points_with_ties() -> None:
    result = scored([(0, 0, 3), (1, 4, 2), (2, 7, 2)], (0, 0, 0))
    assert items(result, 0)["largest castle"] == 10
    assert items(result, 1)["second-largest castle"] == 5
    assert items(result, 2)["second-largest castle"] == 5
    tie = scored([(0, 0, 3), (1, 4, 3), (2, 8, 2)], (0, 0, 0))
    assert items(tie, 0)["largest castle"] == 10
    assert items(tie, 1)["largest castle"] == 10
    assert items(tie, 2)["second-largest castle"] == 0
    flag = scored([(0, 0, 3), (1, 4, 3), (2, 8, 2)], (0, 0, 0), second_place_after_tie=True)
    assert items(flag, 2)["second-largest castle"] == 5


def test_final_score_items_and_towers() -> None:
    result = scored([(0, 0, 2), (0, 3, 1), (1, 5, 1)], (7, 3, 9), missions=(0, 1, 2))
    mine = items(result, 0)
    assert mine["land (3 per castle cell)"] == 9
    assert mine["ducats"] == 7
    assert mine["towers"] == 3  # two towers on the board
    assert mine["largest castle"] == 10
    # mission m1 = mountain, forest, pasture: the grid is all mountain, so +1 per cell.
    assert mine["mission"] == 3
    # Largest (2 cells) and, once per rank, second (1 cell) both go to p1.
    assert mine["second-largest castle"] == 5
    assert result.scores[0].total == 9 + 7 + 3 + 10 + 5 + 3
    assert list(result.winners) == [0]


def test_tie_breaks_castle_value_then_ducats_then_shared() -> None:
    # p1: 1-cell castle + 5 ducats; p2: 1-cell castle + 5 ducats -> same points, castle value
    # (2 each), same ducats: a shared win.
    shared = scored([(0, 0, 1), (1, 2, 1)], (5, 5, 0))
    assert list(shared.winners) == [0, 1]
    assert shared.tiebreak.startswith("shared")
    # p1: one 2-cell castle (largest, value 4) + 3 ducats = 6 + 3 + 10 + 1 tower = 20;
    # p2: two 1-cell castles (second, value 2 each) + 6 ducats = 6 + 6 + 5 + 3 towers = 20.
    value = scored([(0, 0, 2), (1, 3, 1), (1, 5, 1)], (3, 6, 0))
    totals = [s.total for s in value.scores]
    assert totals[:2] == [20, 20]
    assert list(value.winners) == [0]
    assert value.tiebreak == "most valuable castle"
    # Same points and castle values, more ducats wins: p1 scores a mission point (m1 on
    # mountain) with 2 ducats, p2 none with 3 ducats: 3 + 2 + 1 + 10 + 1 = 3 + 3 + 10 + 1.
    ducats = scored([(0, 0, 1), (1, 2, 1)], (2, 3, 0), missions=(0, 1, 1))
    assert [s.total for s in ducats.scores][:2] == [17, 17]
    assert list(ducats.winners) == [1]
    assert ducats.tiebreak == "most valuable castle, then most ducats"


def test_dealt_mode_weights_are_the_unseen_copies() -> None:
    position = start(PAIR, mode=DEALT)
    outcomes = chance_outcomes(position.state)
    assert [m.mission.mission for m, _ in outcomes] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    position = moves(position, "mission p1 m2", "mission p2 m1", "mission p3 m6")
    weights = {m.draw.card: w for m, w in chance_outcomes(position.state)}
    assert weights == {
        "mountain": 9,
        "forest": 9,
        "field": 9,
        "pasture": 9,
        "hill": 9,
        "marsh": 9,
        "sea": 6,
    }
    position = moves(position, *["draw mountain"] * 5)
    weights = {m.draw.card: w for m, w in chance_outcomes(position.state)}
    assert weights["mountain"] == 4
    while GAME.to_move(position.state) == CHANCE:
        position = moves(position, "draw sea" if position.state.hand_sizes[1] < 5 else "draw hill")
    assert position.state.hands is not None
    assert position.state.hands[0] == (5, 0, 0, 0, 0, 0, 0)
    assert position.state.phase == PLAY
    position = moves(position, "build mountain m|f own f left m", "end")
    assert position.state.phase != MERGE
    assert GAME.to_move(position.state) == CHANCE  # Jerry draws his replacement card
    position = moves(position, "draw field")
    assert position.state.hands[0][2] == 1
    assert GAME.view(position.state, 1).seats[0].hand == []


@pytest.mark.parametrize(("players", "walls", "ducats"), [(3, 30, 20), (4, 33, 15), (5, 36, 12)])
def test_setup_by_player_count(players: int, walls: int, ducats: int) -> None:
    """§2: walls 30/33/36, 60 ducats split evenly, 4 in the bank, 1 on each market, 15
    houses, 5 villas, 4 towers and 5 cards each; 70 ducats in all on the shipped board."""
    position = moves(play.new_position("castello-methoni", players), "first p1")
    state: State = position.state
    assert state.wall_supply == walls
    assert state.ducats == (ducats,) * players
    assert state.bank == 4
    assert sum(state.market_ducats) == 6
    assert sum(state.ducats) + state.bank + sum(state.market_ducats) == 70
    assert state.houses_left == (15,) * players
    assert state.villas_left == (5,) * players
    assert state.towers_left == (4,) * players
    assert state.hand_sizes == (5,) * players
    assert state.draw_pile == 60 - 5 * players


def test_option_sea_edges_need_the_sea_card() -> None:
    opts = pb.CastelloMethoniOptions(sea_edges_need_sea_card=True)
    position = start(PAIR, options=opts)
    with pytest.raises(IllegalMove) as refused:
        moves(position, "build mountain m|sea own m")
    assert refused.value.code == "CARD_DOES_NOT_MATCH"
    assert "only the Market/Sea card" in refused.value.message
    assert moves(position, "build sea m|sea own m").state.sea_walls[0] == 1
