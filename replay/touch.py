"""The picture as the input (issue 25): which taps on a game's picture select each legal move.

Each game's `touches.py` says, for one legal move, the full path of touches that names it on
that game's picture (`Touches`: the `data-touch` ids of the picture's elements, in a natural
tap order, or in any order for a move whose parts have none, such as three different gems).
The paths a game gives are complete: they tell every legal move from every other. What a
client is sent (`legal_touches`) is each path cut to its shortest start that no other legal
move shares, so a move that nothing else begins like is one tap, and a choice costs a tap only
where there is a choice (Castello's "the castle it joins, when there is a choice").

A client narrows the listed moves by the taps so far: an ordered move stays a candidate while
the taps are a prefix of its touches; an any-order move while the taps, counted as a multiset,
fit inside its touches. The server still checks the move it is sent. Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

MAX_TOUCHES: Final = 16
"""No move of any game needs more taps than this (Splendor's longest is a payment of ten
tokens after the card and the tableau); a game that gives more has a bug, and the cut below
keeps the answer bounded whatever it gives."""


@dataclass(frozen=True, slots=True)
class Touches:
    """The touches naming one move: `ids` in tap order; `any_order` when the order of the
    taps does not matter (the ids are then a multiset)."""

    ids: tuple[str, ...]
    any_order: bool = False


def fits(taps: Sequence[str], touches: Touches) -> bool:
    """Whether `taps` can still become `touches`: a prefix, or (any order) a sub-multiset."""
    if touches.any_order:
        have = Counter(touches.ids)
        have.subtract(taps)
        return all(n >= 0 for n in have.values())
    return tuple(taps) == touches.ids[: len(taps)]


def selected(taps: Sequence[str], all_touches: Sequence[Touches]) -> list[int]:
    """The indexes of the moves `taps` has selected completely (its touches all tapped)."""
    return [
        index
        for index, touches in enumerate(all_touches)
        if len(touches.ids) == len(taps) and fits(taps, touches)
    ]


def shortest(all_touches: Sequence[Touches]) -> list[Touches]:
    """Each path cut to its shortest start that no other path can still become.

    An any-order path is kept whole (its taps may come in any order, so no start of it is
    "first"). An ordered path is cut at the first prefix that neither another ordered path
    begins with nor an any-order path contains: tapping that prefix leaves this move alone.
    Paths that are not complete (one a prefix of another) keep their length."""
    starts: Counter[tuple[str, ...]] = Counter()
    for touches in all_touches:
        if not touches.any_order:
            for end in range(1, len(touches.ids) + 1):
                starts[touches.ids[:end]] += 1
    # The any-order paths by the ids they hold, so a prefix is checked only against those
    # that hold its first tap (a stuck-hand redraw lists hundreds of them).
    holding: dict[str, list[Counter[str]]] = {}
    for touches in all_touches:
        if touches.any_order:
            counts = Counter(touches.ids)
            for touch_id in counts:
                holding.setdefault(touch_id, []).append(counts)

    def contained(prefix: tuple[str, ...]) -> bool:
        wanted = Counter(prefix)
        return any(
            all(counts[k] >= n for k, n in wanted.items()) for counts in holding.get(prefix[0], ())
        )

    cut: list[Touches] = []
    for touches in all_touches:
        if touches.any_order:
            cut.append(touches)
            continue
        ids = touches.ids
        for end in range(1, len(ids) + 1):
            prefix = ids[:end]
            if starts[prefix] == 1 and not contained(prefix):
                ids = prefix
                break
        cut.append(Touches(ids[:MAX_TOUCHES], False))
    return cut


def legal_touches(game: Any, state: Any, moves: Sequence[Any]) -> list[Touches]:
    """The touches of each of `moves` (the legal moves of `state`), cut by `shortest`."""
    return shortest([game.touches(move, state) for move in moves])
