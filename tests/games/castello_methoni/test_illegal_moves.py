"""The catalogue of illegal moves: one per rule, each refused with its stable code and a
message in the rule's words."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tablelog.replay import fold
from tablelog.replay.core import DEALT, IllegalMove
from tablelog.replay.games.castello_methoni.rules import MERGE, OVER, REVEAL, State, replace
from tablelog.v1 import castello_methoni_pb2 as pb
from tests.games.castello_methoni.boards import board_data, grid_data, moves, start
from tests.games.castello_methoni.test_rules_details import between_two_own_castles
from tests.games.castello_methoni.test_seed_examples import CHAIN, CHAIN_SETUP, PAIR
from tests.support.illegal import refused

Build = pb.CastelloMethoniBuild
Move = pb.CastelloMethoniMove
H = pb.CastelloMethoniHouse


def pair() -> State:
    state: State = start(PAIR).state
    return state


def chain_before_andrew_closes() -> State:
    state: State = moves(start(CHAIN), *CHAIN_SETUP).state
    return state


def andrew_merging() -> State:
    state: State = moves(start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a").state
    return state


def chain_done() -> State:
    state: State = moves(
        start(CHAIN), *CHAIN_SETUP, "build mountain a|sea own a", "stop", "end"
    ).state
    return state


def build(card: str, cell: str, other: str, *houses: tuple[int, str]) -> Move:
    return Move(
        build=Build(
            card=card, cell=cell, other=other, houses=[H(seat=s, cell=c) for s, c in houses]
        )
    )


def poor(state: State, seat: int, ducats: int) -> State:
    """Move a seat's ducats to the bank (ducats stay conserved)."""
    taken = state.ducats[seat] - ducats
    money = list(state.ducats)
    money[seat] = ducats
    return replace(state, ducats=tuple(money), bank=state.bank + taken)


def dealt_playing() -> State:
    """Dealt mode: every chance move takes the first outcome (Jerry holds 5 mountains)."""
    position = start(PAIR, mode=DEALT)
    while position.game.to_move(position.state) < 0:
        first = position.game.chance_outcomes(position.state)[0][0]
        position = fold.record(position, position.table.wrap(first), "")
    state: State = position.state
    return state


STUCK = board_data({"k": "mountain"}, [("k", "SEA")])


def stuck() -> State:
    """A single cell with one sea edge: its only wall would enclose it; Jerry has no money."""
    return poor(start(STUCK).state, 0, 0)


CASES: list[tuple[str, Callable[[], State], Move]] = [
    ("UNKNOWN_CARD", pair, build("gold", "m", "f", (0, "m"), (1, "f"))),
    ("UNKNOWN_CELL", pair, build("mountain", "m", "zz", (0, "m"))),
    (
        "NOT_AN_EDGE",
        lambda: start(grid_data(2, 2)).state,
        build("mountain", "r1c1", "r2c2", (0, "r1c1"), (1, "r2c2")),
    ),
    ("NOT_AN_EDGE", pair, build("field", "f", "f", (0, "f"))),
    ("CARD_NOT_IN_HAND", dealt_playing, build("hill", "m", "f", (0, "m"), (1, "f"))),
    (
        "CARD_NOT_AVAILABLE",
        lambda: replace(pair(), discard=(9, 0, 0, 0, 0, 0, 0)),
        build("mountain", "m", "f", (0, "m"), (1, "f")),
    ),
    (
        "NO_CARDS",
        lambda: replace(pair(), hand_sizes=(0, 5, 5)),
        build("mountain", "m", "f", (0, "m"), (1, "f")),
    ),
    ("EDGE_IN_CASTLE", chain_done, build("field", "e1", "e2", (2, "e1"), (0, "e2"))),
    (
        "EDGE_HAS_WALL",
        lambda: moves(start(PAIR), "build mountain m|f own m left f").state,
        build("mountain", "m", "f", (0, "m"), (1, "f")),
    ),
    (
        "EDGE_HAS_WALL",
        lambda: moves(start(PAIR), "build mountain m|sea own m").state,
        build("mountain", "m", "sea", (0, "m")),
    ),
    ("CARD_DOES_NOT_MATCH", pair, build("hill", "m", "f", (0, "m"), (1, "f"))),
    ("CARD_DOES_NOT_MATCH", pair, build("sea", "m", "f", (0, "m"), (1, "f"))),
    (
        "NO_WALLS_LEFT",
        lambda: replace(pair(), wall_supply=0),
        build("mountain", "m", "f", (0, "m"), (1, "f")),
    ),
    ("HOUSES_NOT_ALLOWED", pair, build("mountain", "m", "f", (0, "m"))),
    ("HOUSES_NOT_ALLOWED", pair, build("mountain", "m", "f", (0, "m"), (0, "f"))),
    ("HOUSES_NOT_ALLOWED", pair, build("mountain", "m", "sea", (0, "m"), (1, "m"))),
    ("HOUSE_NOT_BESIDE_WALL", chain_before_andrew_closes, build("mountain", "a", "sea", (1, "x"))),
    ("UNKNOWN_SEAT", pair, build("mountain", "m", "f", (0, "m"), (7, "f"))),
    (
        "CASTLE_UNAFFORDABLE",
        lambda: poor(chain_before_andrew_closes(), 1, 1),
        build("mountain", "a", "sea", (1, "a")),
    ),
    (
        "NO_TOWER",
        lambda: replace(chain_before_andrew_closes(), towers_left=(3, 0, 3)),
        build("mountain", "a", "sea", (1, "a")),
    ),
    (
        "INTO_WITHOUT_MERGE",
        pair,
        Move(
            build=Build(
                card="mountain",
                cell="m",
                other="f",
                houses=[H(seat=0, cell="m"), H(seat=1, cell="f")],
                into="m",
            )
        ),
    ),
    (
        "INTO_NOT_BESIDE",
        lambda: between_two_own_castles().state,
        Move(
            build=Build(
                card="mountain", cell="q", other="sea", houses=[H(seat=0, cell="q")], into="q"
            )
        ),
    ),
    ("MERGE_PENDING", andrew_merging, Move(trade=pb.CastelloMethoniTrade(card="sea"))),
    ("MERGE_PENDING", andrew_merging, Move(end_turn=pb.CastelloMethoniEndTurn())),
    ("NOTHING_TO_MERGE", pair, Move(merge=pb.CastelloMethoniMerge(cell="m"))),
    ("NOTHING_TO_MERGE", pair, Move(stop_merging=pb.CastelloMethoniStopMerging())),
    ("NOT_A_CASTLE", andrew_merging, Move(merge=pb.CastelloMethoniMerge(cell="x"))),
    ("SAME_CASTLE", andrew_merging, Move(merge=pb.CastelloMethoniMerge(cell="a"))),
    (
        "MERGE_UNAFFORDABLE",
        lambda: poor(andrew_merging(), 1, 9),
        Move(merge=pb.CastelloMethoniMerge(cell="e2")),
    ),
    (
        "MERGE_UNAFFORDABLE",
        lambda: andrew_closed_too_poor_to_merge(),
        Move(merge=pb.CastelloMethoniMerge(cell="j")),
    ),
    ("NO_ACTIVE_MARKET", pair, Move(trade=pb.CastelloMethoniTrade(card="sea"))),
    ("NO_MARKET_FOR_CARD", chain_done, Move(trade=pb.CastelloMethoniTrade(card="field"))),
    ("MUST_PLAY_A_CARD", pair, Move(end_turn=pb.CastelloMethoniEndTurn())),
    (
        "REDRAW_NOT_NOW",
        lambda: moves(start(PAIR), "build mountain m|f own m left f").state,
        Move(redraw=pb.CastelloMethoniRedraw(revealed=["hill"] * 5)),
    ),
    (
        "ALREADY_REDRAWN",
        lambda: replace(stuck(), redrawn=True),
        Move(redraw=pb.CastelloMethoniRedraw(revealed=["hill"] * 5)),
    ),
    ("REDRAW_HAND_SIZE", stuck, Move(redraw=pb.CastelloMethoniRedraw(revealed=["hill"] * 4))),
    ("HAND_NOT_STUCK", pair, Move(redraw=pb.CastelloMethoniRedraw(revealed=["mountain"] * 5))),
    (
        "REDRAW_NAMES_CARDS",
        dealt_playing,
        Move(redraw=pb.CastelloMethoniRedraw(revealed=["hill"] * 5)),
    ),
    (
        "CARD_NOT_AVAILABLE",
        lambda: replace(stuck(), discard=(0, 0, 0, 0, 6, 0, 0)),
        Move(redraw=pb.CastelloMethoniRedraw(revealed=["hill"] * 5)),
    ),
    ("FIRST_PLAYER_KNOWN", pair, Move(first_player=pb.CastelloMethoniFirstPlayer(seat=1))),
    (
        "UNKNOWN_SEAT",
        lambda: start(PAIR, first=None).state,
        Move(first_player=pb.CastelloMethoniFirstPlayer(seat=3)),
    ),
    ("MISSION_NOT_NOW", pair, Move(mission=pb.CastelloMethoniMission(seat=0, mission="m1"))),
    (
        "UNKNOWN_MISSION",
        lambda: replace(pair(), phase=REVEAL),
        Move(mission=pb.CastelloMethoniMission(seat=0, mission="m9")),
    ),
    (
        "MISSION_KNOWN",
        lambda: replace(pair(), phase=REVEAL, missions=(0, -1, -1)),
        Move(mission=pb.CastelloMethoniMission(seat=0, mission="m2")),
    ),
    (
        "MISSION_TAKEN",
        lambda: replace(pair(), phase=REVEAL, missions=(0, -1, -1)),
        Move(mission=pb.CastelloMethoniMission(seat=1, mission="m1")),
    ),
    (
        "DEAL_ORDER",
        lambda: start(PAIR, mode=DEALT).state,
        Move(mission=pb.CastelloMethoniMission(seat=2, mission="m1")),
    ),
    ("DRAW_NOT_NOW", pair, Move(draw=pb.CastelloMethoniDraw(card="hill"))),
    (
        "CARD_NOT_IN_DRAW_PILE",
        lambda: replace(
            start(PAIR, mode=DEALT).state, missions=(0, 1, 2), discard=(9, 0, 0, 0, 0, 0, 0)
        ),
        Move(draw=pb.CastelloMethoniDraw(card="mountain")),
    ),
    ("EMPTY_MOVE", pair, Move()),
]


@pytest.mark.parametrize(
    ("code", "make", "move"), CASES, ids=[f"{i:02d}-{c}" for i, (c, _, _) in enumerate(CASES)]
)
def test_illegal_move_is_refused_with_its_code(
    code: str, make: Callable[[], State], move: Move
) -> None:
    from tablelog.replay.registry import find_game

    refused(find_game("castello-methoni"), make(), move, code)


def test_messages_carry_the_numbers_of_the_situation() -> None:
    from tablelog.replay.registry import find_game

    game = find_game("castello-methoni")
    with pytest.raises(IllegalMove, match=r"costs 1 for the land and 1 .* 2 ducats; Andrew has 1"):
        game.apply(
            poor(chain_before_andrew_closes(), 1, 1), build("mountain", "a", "sea", (1, "a"))
        )
    with pytest.raises(IllegalMove, match=r"costs its value, 10 ducats .* has 9"):
        game.apply(poor(andrew_merging(), 1, 9), Move(merge=pb.CastelloMethoniMerge(cell="e2")))


def andrew_closed_too_poor_to_merge() -> State:
    """Andrew builds his castle on a with 2 ducats left: no neighbour can be paid for, so
    the merge step ends at once (§6.2)."""
    state = poor(chain_before_andrew_closes(), 1, 3)
    after: State = moves(fold_at(state), "build mountain a|sea own a").state
    return after


def fold_at(state: State) -> fold.Position:
    position = start(CHAIN)
    return fold.Position(position.table, state, position.revision, position.sequence)


def test_a_merge_after_the_merge_step_names_its_price() -> None:
    """§6.2: a merge typed once the merge step has ended for want of money says what the
    castle costs, not that nothing was built."""
    from tablelog.replay.registry import find_game

    state = andrew_closed_too_poor_to_merge()
    assert state.phase != MERGE
    message = refused(
        find_game("castello-methoni"),
        state,
        Move(merge=pb.CastelloMethoniMerge(cell="e2")),
        "MERGE_UNAFFORDABLE",
    )
    assert "merge step has ended" in message
    assert "costs its value, 10 ducats" in message
    assert "Andrew has 2 (RULES.md §6.2)" in message
    # Before any card this turn there was no merge step: the plain refusal.
    refused(
        find_game("castello-methoni"),
        replace(state, cards_played=0),
        Move(merge=pb.CastelloMethoniMerge(cell="e2")),
        "NOTHING_TO_MERGE",
    )


def test_an_early_mission_names_when_missions_are_recorded() -> None:
    """§7, §8: in table mode the missions are recorded at the final scoring."""
    from tablelog.replay.registry import find_game

    message = refused(
        find_game("castello-methoni"),
        pair(),
        Move(mission=pb.CastelloMethoniMission(seat=0, mission="m1")),
        "MISSION_NOT_NOW",
    )
    assert "secret until the end of the game" in message
    assert "final scoring" in message
    assert "(RULES.md §7, §8)" in message


def test_the_stuck_hand_redraw_and_the_blocked_game() -> None:
    """RULES.md §4: with no playable card the hand is revealed, discarded and redrawn; with
    nothing playable after that the player ends the turn; a full round of that ends the game
    (deadlock guard), and in table mode the missions are then recorded."""
    position = start(STUCK)
    state: State = stuck()
    position = fold.Position(position.table, state, position.revision, position.sequence)
    game = position.game
    legal = [game.format(m, state) for m in game.legal_moves(state)]
    assert "redraw mountain mountain mountain mountain mountain" in legal
    assert all(line.startswith("redraw ") for line in legal)
    position = moves(position, "redraw hill hill forest marsh marsh", "end")
    state = position.state
    assert state.discard[1] == 1
    assert state.discard[4] == 2
    assert state.hand_sizes[0] == 5
    assert state.current == 1
    # Andrew and Evan can still wall k (they have money) - Andrew closes it.
    position = moves(position, "build mountain k|sea own k")
    castle = position.state.cell_castle[0]
    assert castle
    assert position.state.castle(castle).owner == 1


def test_a_round_of_idle_turns_ends_a_blocked_game() -> None:
    data = board_data({"k": "mountain"}, [("k", "SEA")])
    state = start(data).state
    money = (0, 0, 0)
    state = replace(state, ducats=money, bank=state.bank + 60)
    position = start(data)
    position = fold.Position(position.table, state, position.revision, position.sequence)
    for card in ("hill", "forest", "marsh"):
        position = moves(position, f"redraw {card} {card} {card} {card} {card}", "end")
    assert position.state.phase == REVEAL
    assert position.state.deadlock
    position = moves(position, "mission p1 m1", "mission p3 m2", "mission p2 m3")
    assert position.state.phase == OVER
    result = position.game.result(position.state)
    assert result.termination == 3  # TERMINATION_DEADLOCK
