"""Where a game's sealed result is kept in Redis, beside its stream and in its hash slot:

    tl:{<game_id>}:result    string: the game's sealed result (`tablelog.service.memory.results`)

A result is never the truth (`tablelog.service.memory.results` says what one holds, how it is
sealed and when a rebuild may use it): this module only stores the bytes and reads them back
with the head they must match, many games a round trip.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from tablelog.service.store.base import StoredHead
from tablelog.service.store.cluster import RedisClient

PUT_SCRIPT: Final = """
if redis.call("HGET", KEYS[1], "last_hash") ~= ARGV[1] then
  return 0
end
redis.call("SET", KEYS[2], ARGV[2])
return 1
"""
"""KEYS: the game's head hash, its result. ARGV: the hash of the last event the result was
folded up to, the result."""


class ResultStorage:
    """The result key of every game, on the store's client and time limit."""

    def __init__(
        self,
        client: RedisClient,
        key: Callable[[str, str], str],
        call: Callable[[Awaitable[Any]], Awaitable[Any]],
    ) -> None:
        self._redis = client
        self._key = key
        self._call = call

    async def put(self, game_id: str, data: bytes, last_hash: bytes) -> bool:
        """Store `data`, a result folded up to the event whose hash is `last_hash`, only if
        that event is still the game's head (one script on the game's slot): a slower fold
        never replaces a newer result, and a game deleted meanwhile (its club's deletion)
        gets no result back. Whether it was stored."""
        keys = [self._key(game_id, "head"), self._key(game_id, "result")]
        return bool(
            await self._call(self._redis.eval(PUT_SCRIPT, len(keys), *keys, last_hash, data))
        )

    async def with_heads(
        self, game_ids: Sequence[str]
    ) -> list[tuple[StoredHead | None, bytes | None]]:
        """Each game's stored head (the head hash's sequence, revision and last hash, as
        `RedisEventStore.head` reads it; None when the game has none) and its sealed result
        (None when none is stored), in one pipeline: on a cluster, split by slot."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hmget(self._key(game_id, "head"), ["sequence", "revision", "last_hash"])
                pipe.get(self._key(game_id, "result"))
            replies = await self._call(pipe.execute())
        found: list[tuple[StoredHead | None, bytes | None]] = []
        for index in range(0, len(replies), 2):
            (sequence, revision, last_hash), data = replies[index], replies[index + 1]
            head = (
                None
                if sequence is None or revision is None
                else StoredHead(int(sequence), int(revision), bytes(last_hash or b""))
            )
            found.append((head, None if data is None else bytes(data)))
        return found
