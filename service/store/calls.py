"""Every Redis call of a store, one way: within the store's time limit (a `Watchdog`, no
task and timer per command), failed at once while the health probe says Redis is down, and
Redis's errors said as what they are (unreachable, full, refusing writes). The event store
and the stores of members, club memory and rosters of one server share one `Calls`.

With the embedded Redis, a Redis that cannot be reached is looked for on its data disk
(`DataDisk`): a Redis that exited on a failed write of its append-only file is said to be
its disk's failure, and no call is sent to it until a write succeeds again (each would end
it again)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from redis import exceptions as redis_errors

from tablelog.service.store.cluster import UNAVAILABLE_ERRORS
from tablelog.service.store.data_disk import DataDisk
from tablelog.service.store.errors import (
    StoreDiskFailing,
    StoreFull,
    StoreUnavailable,
    write_refusal,
)
from tablelog.service.store.watchdog import Watchdog

TIMEOUT = 5.0
"""Seconds a Redis call may take (the event store's default too)."""


class Calls:
    def __init__(self, timeout: float = TIMEOUT, disk: DataDisk | None = None) -> None:
        self.timeout = timeout
        self.disk = disk
        """The embedded Redis's data directory (None for an external Redis)."""
        self._watchdog = Watchdog()
        self._outage: str | None = None
        self._outage_is_disk = False

    def mark_unavailable(self, why: str, *, disk: bool = False) -> None:
        """Until `mark_available`, fail every call at once, and those in flight now (set by
        the health probe of `tablelog.service.api.health`, which keeps probing); `disk`: as
        Redis's disk failing (STORE_DISK_FAILING)."""
        if self._outage is None:
            self._watchdog.expire_all()
        self._outage = why
        self._outage_is_disk = disk

    def mark_available(self) -> None:
        self._outage = None

    def _refusal(self) -> StoreUnavailable:
        """Why a call is not sent to Redis now (the data disk's failure first: it says
        more than the probe's verdict on it)."""
        if self.disk is not None and self.disk.failure is not None:
            return StoreDiskFailing(self.disk.failure)
        if self._outage_is_disk:
            return StoreDiskFailing(f"{self._outage}.")
        return StoreUnavailable(f"Redis is unavailable: {self._outage}")

    async def __call__(self, coroutine: Awaitable[Any], limit: float | None = None) -> Any:
        """`coroutine`'s answer, within `limit` seconds (the store's time limit by default);
        Any, as redis-py types its answers loosely."""
        if self._outage is not None or (self.disk is not None and self.disk.failure is not None):
            if asyncio.iscoroutine(coroutine):
                coroutine.close()  # never awaited: no "never awaited" warning
            raise self._refusal()
        try:
            return await self._watchdog.run(coroutine, limit or self.timeout)
        except UNAVAILABLE_ERRORS as exc:
            lost_to_disk = self.disk.check(lost=True) if self.disk is not None else None
            if lost_to_disk is not None:
                raise StoreDiskFailing(lost_to_disk) from exc
            raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc
        except redis_errors.OutOfMemoryError as exc:
            raise StoreFull from exc
        except redis_errors.ResponseError as exc:
            # Redis's refusals of a write (MISCONF: its disk; READONLY, ...) each said as
            # what they are, never an internal error (service/errors.py maps them).
            refused = write_refusal(exc)
            if refused is None:
                raise
            raise refused from exc
