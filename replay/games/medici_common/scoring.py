"""The final result of both Medici games (Rules §A6 / §B7): most florins wins, ties share."""

from __future__ import annotations

from collections.abc import Sequence

from tablelog.replay.games.medici_common.rules import Payout
from tablelog.v1 import game_pb2


def build_result(
    florins: Sequence[int],
    items: Sequence[Sequence[tuple[str, int]]],
    finished: bool,
    tiebreak_rule: str,
) -> game_pb2.GameResult:
    """Rules §A6 / §B7: the most florins wins; tied players share the win.

    `items` are each seat's itemised lines, which add up to its florins."""
    result = game_pb2.GameResult(
        termination=(game_pb2.TERMINATION_COMPLETED if finished else game_pb2.TERMINATION_ONGOING)
    )
    for seat, total in enumerate(florins):
        result.scores.append(
            game_pb2.SeatScore(
                seat=seat,
                total=total,
                items=[
                    game_pb2.ScoreItem(label=label, value=value) for label, value in items[seat]
                ],
            )
        )
    if finished:
        best = max(florins)
        winners = [s for s, f in enumerate(florins) if f == best]
        result.winners.extend(winners)
        if len(winners) > 1:
            result.tiebreak = tiebreak_rule
    return result


def payout_items(payouts: Sequence[Payout], period: str) -> list[tuple[str, int]]:
    """A seat's payouts as result lines ("round 1 ship", 30)."""
    return [(f"{period} {when} {label}", florins) for when, label, florins in payouts]
