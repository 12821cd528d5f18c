"""Text-rendering lines shared by both Medici games."""

from __future__ import annotations

from collections.abc import Sequence

from tablelog.replay.games.medici_common.rules import Payout


def winners_line(names: Sequence[str], florins: Sequence[int]) -> str:
    """`render`: "Winner: Ann (75)" or "Winners: Ann, Bo (75)" (§A6 / §B7)."""
    best = max(florins)
    winners = [name for name, f in zip(names, florins, strict=True) if f == best]
    return f"Winner{'s' if len(winners) > 1 else ''}: {', '.join(winners)} ({best})"


def tied_start_text(players: Sequence[str], tied: Sequence[int], period: str) -> str:
    """`view`: what the table must record after a tie for fewest florins (§A5 / §B2), e.g.
    "who starts day 2 (tied for fewest florins: Ann, Bo)"; `period` is "round 2" or "day 2"."""
    names = ", ".join(players[s] for s in tied)
    return f"who starts {period} (tied for fewest florins: {names})"


def payout_lines(seats: Sequence[tuple[str, Sequence[Payout], str]], prefix: str) -> list[str]:
    """`render`: each seat's itemised payouts ("r1 ship 30"; `prefix` "r" or "d"), followed
    by the seat's `suffix`; nothing before the first payout."""
    paid = [seat for seat in seats if seat[1]]
    if not paid:
        return []
    lines = ["Payouts:"]
    for name, payouts, suffix in paid:
        items = ", ".join(f"{prefix}{when} {label} {florins}" for when, label, florins in payouts)
        lines.append(f"  {name}: {items}{suffix}")
    return lines


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A plain left-aligned text table for `render`."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )
    return lines
