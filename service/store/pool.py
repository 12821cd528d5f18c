"""The request path's bounded connection pool."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import redis
import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis.asyncio.connection import AbstractConnection

DEFAULT_POOL_SIZE = 64
"""Connections to Redis for the request path (`tablelog serve --redis-pool-size`)."""


def driver_settings() -> dict[str, Any]:
    """What a pool made from a URL gives each new connection to say who it is (CLIENT
    SETINFO): redis-py 8 otherwise reads its own version from the installed package's
    metadata for every new connection (a file read and a header parse, 290 us; each watched
    game's tail opens a connection of its own, on the event loop). An older redis-py, without
    `DriverInfo`, reads it once, at import."""
    try:
        from redis.driver_info import DriverInfo
    except ImportError:  # a redis-py older than the floor (8.0.1, which has it)
        return {}
    return {"driver_info": DriverInfo(name="redis-py", lib_version=redis.__version__)}


class WaitingConnectionPool(aioredis.ConnectionPool):
    """redis-py's pool, bounded: a command that finds all `max_connections` busy waits for
    one to be released instead of failing ("Too many connections"); the store's watchdog
    bounds the wait. redis-py's own BlockingConnectionPool waits the same way but costs
    every command 10 us more (a condition and a timeout context each time), even with idle
    connections; here the common case is the plain pool's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        while True:
            try:
                # (redis-py leaves it untyped: a decorator warns of deprecated arguments)
                connection: AbstractConnection = await super().get_connection(  # type: ignore[no-untyped-call]
                    *args, **kwargs
                )
                return connection
            except redis_errors.MaxConnectionsError:
                released = asyncio.get_running_loop().create_future()
                self._waiting.append(released)
                try:
                    await released
                except asyncio.CancelledError:  # the watchdog or the caller gave up
                    if released.cancelled():
                        if released in self._waiting:  # (a release may have dropped it)
                            self._waiting.remove(released)
                    else:  # woken and cancelled at once: the turn goes to the next one
                        self._wake_one()
                    raise

    async def release(self, connection: AbstractConnection) -> None:
        await super().release(connection)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiting:
            released = self._waiting.popleft()
            if not released.done():
                released.set_result(None)
                return
