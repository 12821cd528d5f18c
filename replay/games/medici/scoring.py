"""Scoring of Medici (Rules §B5-B7): each seat's florins itemised, most florins wins."""

from __future__ import annotations

from tablelog.replay.games.medici import rules
from tablelog.replay.games.medici_common.scoring import build_result, payout_items
from tablelog.v1 import game_pb2


def result(state: rules.State) -> game_pb2.GameResult:
    """Rules §B7: the starting florins, minus the lots bought, plus every day's payouts (§B5);
    the most florins wins and tied players share the win (§B6)."""
    start = state.rules.start_florins
    items = [
        [
            ("starting florins", start),
            ("lots bought", -state.paid[s]),
            *payout_items(state.payouts[s], "day"),
        ]
        for s in range(len(state.rules.players))
    ]
    return build_result(
        state.florins, items, state.phase == rules.OVER, "tied players share the win (B6)"
    )
