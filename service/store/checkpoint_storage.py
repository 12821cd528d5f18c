"""Where a game's checkpoints are kept in Redis, beside its stream and in its hash slot:

    tl:{<game_id>}:checkpoints       hash: sequence -> the sealed checkpoint's bytes
    tl:{<game_id>}:checkpoint-index  sorted set: the sequences (20 digits, so that equal
                                     revisions sort by sequence) scored by their revision

A checkpoint is never the truth (`tablelog.service.recording.checkpoints` says what one holds and
how it is checked): this module only stores, finds and drops the bytes. Both keys of a game are
changed together in one MULTI, which Redis Cluster allows within one slot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tablelog.service.store.cluster import RedisClient


def _member(sequence: int) -> str:
    return f"{sequence:020d}"


class CheckpointStorage:
    """The checkpoint keys of every game, on the store's client and time limit."""

    def __init__(
        self,
        client: RedisClient,
        key: Callable[[str, str], str],
        call: Callable[[Awaitable[Any]], Awaitable[Any]],
    ) -> None:
        self._redis = client
        self._key = key
        self._call = call

    def _keys(self, game_id: str) -> tuple[str, str]:
        return self._key(game_id, "checkpoints"), self._key(game_id, "checkpoint-index")

    async def put(self, game_id: str, sequence: int, revision: int, data: bytes) -> None:
        blobs, index = self._keys(game_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(blobs, str(sequence), data)
            pipe.zadd(index, {_member(sequence): revision})
            await self._call(pipe.execute())

    async def nearest(self, game_id: str, revision: int, count: int = 3) -> list[tuple[int, bytes]]:
        """The `count` latest checkpoints at `revision` or before, latest first (a reader
        falls back to the next when one is damaged, and to the start after the last)."""
        blobs, index = self._keys(game_id)
        members = await self._call(
            self._redis.zrevrangebyscore(index, revision, "-inf", start=0, num=count)
        )
        sequences = [int(m) for m in members]
        if not sequences:
            return []
        found = await self._call(self._redis.hmget(blobs, [str(s) for s in sequences]))
        return [(s, bytes(d)) for s, d in zip(sequences, found, strict=True) if d is not None]

    async def every(self, game_id: str) -> list[tuple[int, bytes]]:
        """Every checkpoint of the game, by sequence (for VerifyGame)."""
        blobs, _ = self._keys(game_id)
        found = await self._call(self._redis.hgetall(blobs))
        return sorted((int(s), bytes(d)) for s, d in found.items())

    async def sequences(self, game_id: str) -> list[int]:
        """The sequences of the checkpoints both listed and kept (one without the other
        is missing, and made again)."""
        blobs, index = self._keys(game_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zrange(index, 0, -1)
            pipe.hkeys(blobs)
            listed, kept = await self._call(pipe.execute())
        return sorted({int(m) for m in listed} & {int(k) for k in kept})

    async def drop(self, game_id: str, sequence: int) -> None:
        blobs, index = self._keys(game_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(blobs, str(sequence))
            pipe.zrem(index, _member(sequence))
            await self._call(pipe.execute())
