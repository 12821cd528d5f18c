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
from collections import deque
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
"""Watch catch-ups (a new watcher's backlog being sent) that work at once on one process."""
CATCH_UP_PATIENCE: Final = 1.0
"""Seconds of turns after which a catch-up no longer holds one, so that a reader that takes
each message just short of `READER_WAIT_SECONDS` cannot keep the others waiting either."""
READER_WAIT_SECONDS: Final = 0.005
"""How long a catch-up's message may wait for its reader to take it before the catch-up's
turn goes to the next in line. The server's own work for a message is about 0.1 ms; a
message waits longer when the watcher's client has not yet taken the ones before (HTTP/2
flow control: a busy reader, a slow network), and that wait costs the server nothing."""


class CatchUps:
    """Turns for watch catch-ups: when every spectator of a long game opens at once, each
    catch-up is a stream of messages of its own, and hundreds of them ready together make
    every change wait behind them at each of its awaits (`ChangesFirst` helps only a change
    already running). A catch-up takes a turn first; at most `turns` work at once.

    A turn bounds the server's work, not the readers': a catch-up whose message has waited
    `reader_wait` for its reader (`CatchUp.sending`) gives its turn to the next in line, and
    takes one again, ahead of those that have not started, once its reader has taken the
    message (`CatchUp.working`). Before, a catch-up held its turn for its whole backlog, and
    at a club night's later openings (games of about 100 revisions, readers in a busy
    process) the watchers waited 1-2 s for a turn while the servers used an eighth of a
    core. One that has held turns for `patience` in all no longer counts.

    The catch-ups waiting for a turn queue up, and a turn that ends wakes the first of
    them: waking them all at each turn's end (an event) cost each of the 200 watchers of a
    window's start a wake-up and a new timed wait at every one of the others' ends, a fifth
    of the opening's CPU (benchmarks/watch_opening.py)."""

    def __init__(
        self,
        turns: int = CATCH_UPS,
        patience: float = CATCH_UP_PATIENCE,
        reader_wait: float = READER_WAIT_SECONDS,
    ) -> None:
        self._turns = turns
        self._patience = patience
        self._reader_wait = reader_wait
        self._holding_turns: dict[CatchUp, None] = {}
        """The catch-ups holding a turn (never more than `turns`)."""
        self._waiting: deque[_Place] = deque()
        """The catch-ups waiting for a turn: those that gave theirs to a reader's wait
        first, then the others, first come first."""

    def _holding(self) -> int:
        """The turns held, after letting go of those past their patience or whose message
        has waited for its reader too long."""
        now = time.monotonic()
        for catch_up in [c for c in self._holding_turns if c.let_go(now)]:
            del self._holding_turns[catch_up]
        return len(self._holding_turns)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[CatchUp]:
        """A turn for one catch-up, for the duration of the block."""
        catch_up = CatchUp(self)
        await self._hold(catch_up, resuming=False)
        try:
            yield catch_up
        finally:
            if catch_up in self._holding_turns:
                del self._holding_turns[catch_up]
                self._wake_first()

    async def _hold(self, catch_up: CatchUp, resuming: bool = True) -> None:
        """A turn for `catch_up`, at once if it holds one still or one is free and nobody
        waits, else in line (one `resuming` after its reader took a message goes before
        those that have not started)."""
        if catch_up in self._holding_turns:
            return
        if self._waiting or self._holding() >= self._turns:
            await self._wait_in_line(resuming)
        catch_up.took(time.monotonic())
        self._holding_turns[catch_up] = None

    async def _wait_in_line(self, resuming: bool) -> None:
        """Until this catch-up is first in the queue and a turn is free."""
        loop = asyncio.get_running_loop()
        place = _Place(loop.create_future())
        if resuming:  # behind the others resuming, before those not yet started
            index = next((i for i, p in enumerate(self._waiting) if not p.resuming), None)
            place.resuming = True
            self._waiting.insert(len(self._waiting) if index is None else index, place)
        else:
            self._waiting.append(place)
        # The first in line looks again every so often: a turn past its patience, or whose
        # reader is slow, lets go without waking anyone; the others wait to be woken.
        look_again = min(self._reader_wait, self._patience / 4)
        try:
            while self._waiting[0] is not place or self._holding() >= self._turns:
                timer = None
                if self._waiting[0] is place:
                    timer = loop.call_later(look_again, _wake, place.woken)
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


class CatchUp:
    """One catch-up's turn: `sending` before each message is handed to its reader,
    `working` when the server works for it again."""

    __slots__ = ("_catch_ups", "_held", "_since", "_taken", "tired")

    def __init__(self, catch_ups: CatchUps) -> None:
        self._catch_ups = catch_ups
        self._held = 0.0
        """Seconds of turns it held before its current one."""
        self._taken = 0.0
        """When it took its current turn."""
        self._since: float | None = None
        """Since when its message has waited for its reader (None: the server works for it)."""
        self.tired = False
        """Past its patience: it holds no turn, and asks for none, any more."""

    def took(self, now: float) -> None:
        self._taken = now

    def let_go(self, now: float) -> bool:
        """Whether its turn is to be let go: its patience is out, or its reader is slow."""
        held = self._held + now - self._taken
        if held > self._catch_ups._patience:
            self.tired = True
        elif self._since is None or now - self._since <= self._catch_ups._reader_wait:
            return False
        self._held = held
        return True

    def sending(self) -> None:
        """Its message is handed to its reader: past the reader wait, its turn may go."""
        self._since = time.monotonic()

    async def working(self) -> None:
        """The server works for it again: if its turn went while its reader took the last
        message, it waits for one."""
        self._since = None
        if not self.tired:
            await self._catch_ups._hold(self)


@dataclass(slots=True)
class _Place:
    """A catch-up's place in the queue for a turn, and what wakes it."""

    woken: asyncio.Future[None]
    resuming: bool = False


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
