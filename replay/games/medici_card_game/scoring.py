"""Scoring of Medici: The Card Game (Rules §A4-A6): each round's payouts, most florins wins."""

from __future__ import annotations

from tablelog.replay.games.medici_card_game import rules
from tablelog.replay.games.medici_common.scoring import build_result, payout_items
from tablelog.v1 import game_pb2


def result(state: rules.State) -> game_pb2.GameResult:
    """Rules §A6: every round's payouts (§A4) itemised; the most florins wins and tied
    players share the win (§A5)."""
    items = [payout_items(p, "round") for p in state.payouts]
    return build_result(
        state.florins,
        items,
        state.phase == rules.OVER,
        "tied players share the win (A5)",
    )
