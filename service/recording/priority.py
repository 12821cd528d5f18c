"""Changes first: the readers of one process (watch fan-out, replays, pictures) step aside
while a change (RecordMove, an undo, a new game ...) is being served on it.

asyncio has no priorities: a RecordMove whose request or Redis reply arrives while a
thousand watchers' deliveries are ready to run waits behind them, at each of its awaits.
So the servicer marks each change for as long as it runs (`change`), and a reader doing
work in steps (a watch tail between batches of watchers, a watch's catch-up between its
messages, a tail's history fold, a replay between revisions) calls
`first` before each step: it returns at once when no change is in flight, else when the
last one is answered, or after `limit` seconds at most, so a steady stream of changes
slows the readers (each step by at most `limit`) without ever stopping them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Final

STEP_ASIDE_SECONDS: Final = 0.01
"""The longest a reader's step waits for the changes in flight (a RecordMove takes 1-5 ms
on an idle server; a reader waits at most this per step when changes never stop)."""


class ChangesFirst:
    """The changes in flight on one event loop, and the readers that wait for them."""

    def __init__(self) -> None:
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.contextmanager
    def change(self) -> Iterator[None]:
        """Mark a change as in flight for the duration of the block."""
        self.in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                self._idle.set()

    async def first(self, limit: float = STEP_ASIDE_SECONDS) -> None:
        """Let the changes in flight finish first (for `limit` seconds at most)."""
        if not self.in_flight:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), limit)
