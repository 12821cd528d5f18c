"""Command packing by hiredis on redis-py's asyncio connections."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
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


def pack_with_hiredis(pool: aioredis.ConnectionPool | RedisCluster) -> None:
    """Make the pool's future connections pack commands with hiredis (when installed); for
    a cluster client, those of the nodes it finds (it makes them from these settings)."""
    if isinstance(pool, RedisCluster):
        settings = pool.nodes_manager.connection_kwargs
        settings["connection_class"] = _hiredis_class(settings["connection_class"])
    else:
        pool.connection_class = _hiredis_class(pool.connection_class)


def _hiredis_class(base: type[AbstractConnection]) -> type[AbstractConnection]:
    if HIREDIS_AVAILABLE and not issubclass(base, _HiredisPacking):
        return type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})
    return base
