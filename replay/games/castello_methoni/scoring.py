"""Scoring of Castello Methoni (RULES.md §8): itemised points, the winner and the tie-break."""

from __future__ import annotations

from tablelog.replay.games.castello_methoni.rules import OVER, State
from tablelog.v1 import game_pb2

TOWER_POINTS = (0, 1, 3, 6, 10)
"""RULES.md §8: points for 0..4 towers on the board."""
LAND_POINTS = 3
LARGEST = 10
SECOND = 5
MISSIONS_LATER = "missions: revealed at the end"
"""RULES.md §2 step 3, §8: the mission item while the game is in progress (value 0)."""


def _rank_points(state: State) -> tuple[list[int], list[int]]:
    """RULES.md §8 (engine decision §10 #13): every owner of a castle of the largest size
    scores 10; the next size down scores 5 only when exactly one castle is largest (or with
    the option `second_place_after_tie`). Once per rank per player."""
    n = state.ctx.n
    largest, second = [0] * n, [0] * n
    castles = list(state.live_castles())
    if not castles:
        return largest, second
    sizes = sorted({len(c.cells) for c in castles}, reverse=True)
    top = [c for c in castles if len(c.cells) == sizes[0]]
    for castle in top:
        largest[castle.owner] = LARGEST
    if len(sizes) > 1 and (len(top) == 1 or state.ctx.second_place_after_tie):
        for castle in castles:
            if len(castle.cells) == sizes[1]:
                second[castle.owner] = SECOND
    return largest, second


def result(state: State) -> game_pb2.GameResult:
    """RULES.md §8: itemised scores; winner by total, then most valuable castle, then ducats.
    RULES.md §2 step 3 and §8: the secret mission bonus counts only once the game is over;
    until then the item is 0 ("missions: revealed at the end"), so that the running result,
    which every viewer receives, gives no mission away."""
    board, n = state.board, state.ctx.n
    over = state.phase == OVER
    largest, second = _rank_points(state)
    scores = []
    keys: list[tuple[int, int, int]] = []
    for seat in range(n):
        own = [c for c in state.live_castles() if c.owner == seat]
        cells = [cell for c in own for cell in c.cells]
        mission = state.missions[seat]
        if not over:
            # §2 step 3: missions are secret until the final scoring; the running result goes to
            # every viewer, so it says nothing about them.
            mission_label, bonus = MISSIONS_LATER, 0
        elif mission >= 0:
            terrains = board.missions[mission].terrains
            mission_label = "mission"
            bonus = sum(1 for cell in cells if board.terrain[cell] in terrains)
        else:
            mission_label, bonus = "mission (not recorded)", 0
        items = [
            game_pb2.ScoreItem(label="land (3 per castle cell)", value=LAND_POINTS * len(cells)),
            game_pb2.ScoreItem(label="ducats", value=state.ducats[seat]),
            game_pb2.ScoreItem(label=mission_label, value=bonus),
            game_pb2.ScoreItem(label="largest castle", value=largest[seat]),
            game_pb2.ScoreItem(label="second-largest castle", value=second[seat]),
            game_pb2.ScoreItem(label="towers", value=TOWER_POINTS[min(len(own), 4)]),
        ]
        total = sum(i.value for i in items)
        scores.append(game_pb2.SeatScore(seat=seat, total=total, items=items))
        keys.append((total, max((c.value for c in own), default=0), state.ducats[seat]))
    termination = (
        game_pb2.TERMINATION_ONGOING
        if not over
        else game_pb2.TERMINATION_DEADLOCK
        if state.deadlock
        else game_pb2.TERMINATION_COMPLETED
    )
    best = max(keys)
    winners = [s for s in range(n) if keys[s] == best]
    tiebreak = ""
    leaders = [s for s in range(n) if keys[s][0] == best[0]]
    if len(leaders) > 1:
        castle_leaders = [s for s in leaders if keys[s][1] == best[1]]
        if len(castle_leaders) < len(leaders):
            tiebreak = "most valuable castle"
        elif len(winners) < len(castle_leaders):
            tiebreak = "most valuable castle, then most ducats"
        else:
            tiebreak = "shared win: tied on points, castle value and ducats"
    return game_pb2.GameResult(
        termination=termination,
        scores=scores,
        winners=winners if over else [],
        tiebreak=tiebreak if over else "",
    )
