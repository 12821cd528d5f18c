"""A club's roster changes in Redis (`tablelog.service.memory.roster` folds them).

Layout: ``tl:{club:<id>}:roster``, a stream of serialized `RosterEvent`s, append-only (the
audit of the club's players). One key, so it works in Redis Cluster; a change is appended by
a script that checks the stream's length is the version the change was made against
(compare-and-append, as a game's moves are): two instances changing the roster at once
cannot both apply a change checked against the same roster."""

from __future__ import annotations

from tablelog.service.errors import Exhausted, RosterMoved
from tablelog.service.memory.roster import MAX_ROSTER_CHANGES
from tablelog.service.store.calls import Calls
from tablelog.service.store.cluster import RedisClient
from tablelog.v1 import clubs_pb2

APPEND_SCRIPT = """
local length = redis.call("XLEN", KEYS[1])
if length ~= tonumber(ARGV[1]) then
  return {0, length}
end
if length >= tonumber(ARGV[3]) then
  return {-1, length}
end
redis.call("XADD", KEYS[1], (length + 1) .. "-0", "e", ARGV[2])
return {1, length + 1}
"""
"""KEYS[1] the roster stream; ARGV: the version the change was made against, the event, the
most changes a roster holds. {1, new version}; {0, current} when stale; {-1, current} full."""


class RosterStore:
    def __init__(self, client: RedisClient, prefix: str = "tl", calls: Calls | None = None):
        self._redis = client
        self._prefix = prefix
        self._call = calls or Calls()
        """(the event store's, in a server: `RedisEventStore.calls`)"""

    def key(self, club_id: str) -> str:
        return f"{self._prefix}:{{club:{club_id}}}:roster"

    async def changes(self, club_id: str) -> list[clubs_pb2.RosterEvent]:
        """Every change of the club's roster, oldest first."""
        entries = await self._call(self._redis.xrange(self.key(club_id), count=MAX_ROSTER_CHANGES))
        return [clubs_pb2.RosterEvent.FromString(fields[b"e"]) for _id, fields in entries]

    async def version(self, club_id: str) -> int:
        """The roster's version: how many changes it holds (each appended as the next)."""
        return int(await self._call(self._redis.xlen(self.key(club_id))))

    async def append(self, club_id: str, event: clubs_pb2.RosterEvent) -> int:
        """Append `event` (its `version` the roster's next); the roster's new version.
        RosterMoved when another change came first."""
        answer = await self._call(
            self._redis.eval(
                APPEND_SCRIPT,
                1,
                self.key(club_id),
                str(event.version - 1),
                event.SerializeToString(),
                str(MAX_ROSTER_CHANGES),
            )
        )
        status, version = int(answer[0]), int(answer[1])
        if status == 0:
            raise RosterMoved(event.version - 1, version)
        if status < 0:
            raise Exhausted(
                "TOO_MANY_ROSTER_CHANGES",
                f"A club's roster keeps at most {MAX_ROSTER_CHANGES} changes.",
            )
        return version
