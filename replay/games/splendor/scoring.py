"""Scoring of Splendor (RULES.md §8): prestige from cards and nobles, the winner and the
tie-break."""

from __future__ import annotations

from typing import cast

from tablelog.replay.games.splendor.rules import State
from tablelog.v1 import game_pb2


def result(state: State) -> game_pb2.GameResult:
    """RULES.md §8: highest prestige; tie-break fewest purchased cards; then a shared win."""
    scores = [
        game_pb2.SeatScore(
            seat=seat,
            total=p.card_points + p.noble_points,
            items=[
                game_pb2.ScoreItem(label="cards", value=p.card_points),
                game_pb2.ScoreItem(label="nobles", value=p.noble_points),
            ],
        )
        for seat, p in enumerate(state.players)
    ]
    if not state.over:
        return game_pb2.GameResult(termination=game_pb2.TERMINATION_ONGOING, scores=scores)
    best = max(p.prestige for p in state.players)
    leaders = [seat for seat, p in enumerate(state.players) if p.prestige == best]
    tiebreak = ""
    if len(leaders) > 1:
        fewest = min(len(state.players[s].purchased) for s in leaders)
        leaders = [s for s in leaders if len(state.players[s].purchased) == fewest]
        tiebreak = "fewest development cards purchased"
        if len(leaders) > 1:
            tiebreak += "; still tied: shared win"
    return game_pb2.GameResult(
        termination=cast("game_pb2.Termination.ValueType", state.over),
        scores=scores,
        winners=leaders,
        tiebreak=tiebreak,
    )
