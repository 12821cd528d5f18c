"""The store's time limit on Redis calls, without a task and a timer per command."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from tablelog.service.store.errors import StoreUnavailable


class Watchdog:
    """Cancels store calls that have waited for Redis longer than their time limit.

    redis-py's own `socket_timeout` wraps every command's write in `asyncio.wait_for`,
    a task and a timer per command (about 15 us of CPU per call, a third of a round
    trip). Here one timer per second, armed only while calls are in flight, checks the
    calls' deadlines instead; a call past its deadline is cancelled (redis-py closes a
    connection interrupted mid-command, so nothing half-read is reused) and fails with
    StoreUnavailable. Limits are thus kept to within a second."""

    def __init__(self) -> None:
        self._deadlines: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None

    async def run(self, call: Awaitable[Any], limit: float) -> Any:
        task = asyncio.current_task()
        if task is None or task in self._deadlines:  # not a task, or a nested call
            return await call
        loop = asyncio.get_running_loop()
        self._deadlines[task] = loop.time() + limit
        if self._timer is None or self._timer_loop is not loop:  # (a store reused on a new loop)
            self._timer, self._timer_loop = loop.call_later(1.0, self._sweep, loop), loop
        try:
            return await call
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()
            raise StoreUnavailable(f"Redis did not answer (limit {limit:g} s).") from None
        finally:
            del self._deadlines[task]
            self._expired.discard(task)

    def expire_all(self) -> None:
        """Fail every call in flight now with StoreUnavailable (the health probe found
        Redis down or frozen: waiting out their limits would only hold the callers)."""
        for task in self._deadlines:
            if task not in self._expired:
                self._expired.add(task)
                task.cancel()

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer_loop is not loop:
            return  # superseded by the timer of the loop now in use
        now = loop.time()
        for task, deadline in self._deadlines.items():
            if deadline <= now and task not in self._expired and task.get_loop() is loop:
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(1.0, self._sweep, loop) if self._deadlines else None
