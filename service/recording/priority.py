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
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
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


CATCH_UPS: Final = 8
"""Watch catch-ups (a new watcher's backlog being sent) that run at once on one process."""
CATCH_UP_PATIENCE: Final = 1.0
"""Seconds after which a catch-up no longer holds its turn, so that a reader too slow to
take its messages cannot keep the others waiting."""


class CatchUps:
    """Turns for watch catch-ups: when every spectator of a long game opens at once, each
    catch-up is a stream of messages of its own, and hundreds of them ready together make
    every change wait behind them at each of its awaits (`ChangesFirst` helps only a change
    already running). A catch-up takes a turn first; at most `turns` run at once, and one
    running longer than `patience` no longer counts.

    The catch-ups waiting for a turn queue up, first come first served, and a turn that
    ends wakes one of them: waking them all at each turn's end (an event) cost each of the
    200 watchers of a window's start a wake-up and a new timed wait at every one of the
    others' ends, a fifth of the opening's CPU (benchmarks/watch_opening.py: 0.98-1.04 s
    of server CPU before, 0.73-0.84 s after)."""

    def __init__(self, turns: int = CATCH_UPS, patience: float = CATCH_UP_PATIENCE) -> None:
        self._turns = turns
        self._patience = patience
        self._running: OrderedDict[object, float] = OrderedDict()
        """The catch-ups holding a turn, by when they took it (oldest first)."""
        self._waiting: deque[_Place] = deque()
        """The catch-ups waiting for a turn, first come first."""

    def _holding(self) -> int:
        overdue = time.monotonic() - self._patience
        while self._running and next(iter(self._running.values())) < overdue:
            self._running.popitem(last=False)
        return len(self._running)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if self._waiting or self._holding() >= self._turns:
            await self._wait_in_line()
        token = object()
        self._running[token] = time.monotonic()
        try:
            yield
        finally:
            if self._running.pop(token, None) is not None:
                self._wake_first()

    async def _wait_in_line(self) -> None:
        """Until this catch-up is first in the queue and a turn is free."""
        loop = asyncio.get_running_loop()
        place = _Place(loop.create_future())
        self._waiting.append(place)
        try:
            while self._waiting[0] is not place or self._holding() >= self._turns:
                # The first in line looks again after a quarter of the patience at most (a
                # turn held past its patience ends without waking anyone); the others wait
                # to be woken, when they are first.
                timer = None
                if self._waiting[0] is place:
                    timer = loop.call_later(self._patience / 4, _wake, place.woken)
                try:
                    await place.woken
                finally:
                    if timer is not None:
                        timer.cancel()
                place.woken = loop.create_future()
        finally:
            first = self._waiting[0] is place
            self._waiting.remove(place)
            if first and self._waiting:
                _wake(self._waiting[0].woken)  # first in line now: it looks for itself

    def _wake_first(self) -> None:
        if self._waiting:
            _wake(self._waiting[0].woken)


@dataclass(slots=True)
class _Place:
    """A catch-up's place in the queue for a turn, and what wakes it."""

    woken: asyncio.Future[None]


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
