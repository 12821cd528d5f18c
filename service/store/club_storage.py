"""The bytes a club's games may take (`tablelog serve --club-storage-bytes`), held across
every service process sharing the Redis.

The count is a counter in Redis per club, ``tl:club:<club>:bytes``. It cannot be kept by
the append script: in Redis Cluster it lives in another slot than the game. So each process
leases room from it (`LEASE_SCRIPT`: granted only up to the quota, atomically) and spends
its lease locally, one append at a time, asking Redis again only when the lease runs out
(about once per `DEFAULT_LEASE` bytes, a few hundred moves, instead of a round trip per
append); an append that stores nothing gives its bytes back to the lease (and what passes
`lease` to the counter); a process that stops returns what it has left. With `lease` 0
the counter is exactly the stored bytes, at one more round trip per append.

How exact: the counter is the bytes stored plus the unused leases of the running
processes (at most `lease` bytes per club each), plus the bytes of appends left in doubt
(Redis unreachable while the script ran) and the leases of processes that died: it can
count too much, never let a club store more than its quota. Near the quota a process may
refuse while another still holds the last room in its lease."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from redis import exceptions as redis_errors

from tablelog.service.store.cluster import RedisClient
from tablelog.service.store.errors import ClubStorageFull, StoreUnavailable

DEFAULT_LEASE = 64 * 1024
"""Room a process leases at a time, per club."""

LEASE_SCRIPT = """
local used = tonumber(redis.call("GET", KEYS[1]) or "0")
local room = tonumber(ARGV[3]) - used
if room < tonumber(ARGV[1]) then
  return {0, used}
end
local granted = math.min(tonumber(ARGV[2]), room)
redis.call("INCRBY", KEYS[1], granted)
return {1, granted}
"""
"""KEYS[1] a club's counter; ARGV: the bytes needed, the bytes wanted, the quota. Grants
what is wanted or, near the quota, what is left, if that covers what is needed: {1,
granted}; else {0, the count as it stays}."""

Call = Callable[[Awaitable[Any]], Awaitable[Any]]


class ClubStorage:
    """The quota's accounting for one store (one process's leases)."""

    def __init__(
        self,
        client: RedisClient,
        prefix: str,
        quota: int,
        call: Call,
        lease: int = DEFAULT_LEASE,
    ) -> None:
        """`call` runs a Redis command with the store's time limit and outage handling."""
        self.quota = quota
        self.lease = lease
        self._client = client
        self._prefix = prefix
        self._call = call
        self._sha = hashlib.sha1(LEASE_SCRIPT.encode()).hexdigest()
        self._leases: dict[str, int] = {}
        """club -> bytes leased from its counter and not yet spent"""

    def key(self, club: str) -> str:
        return f"{self._prefix}:club:{club}:bytes"

    async def take(self, club: str, size: int) -> None:
        """Spend `size` bytes of `club`'s room, leasing more when needed; raise
        ClubStorageFull (spending nothing) when the quota has no room for them."""
        while True:
            held = self._leases.get(club, 0)
            if held >= size:
                self._leases[club] = held - size
                return
            # Other appends of the club may spend the lease while this one waits: the loop
            # looks again once the grant has arrived.
            granted = await self._lease(club, size - held, size - held + self.lease)
            self._leases[club] = self._leases.get(club, 0) + granted

    async def give_back(self, club: str, size: int) -> None:
        """`size` bytes taken for an append that stored nothing: back into the lease, and
        what the lease holds beyond `lease` bytes back to the counter."""
        held = self._leases.get(club, 0) + size
        excess = held - self.lease
        if excess <= 0:
            self._leases[club] = held
            return
        self._leases[club] = self.lease
        try:
            await self._call(self._client.decrby(self.key(club), excess))
        except StoreUnavailable:  # kept for the next appends (or returned at the stop)
            self._leases[club] = self._leases.get(club, 0) + excess

    async def check_room(self, club: str, size: int) -> None:
        """Raise ClubStorageFull if `club` has no room for `size` bytes (spending nothing)."""
        held = self._leases.get(club, 0)
        if held >= size:
            return
        used = await self.counted(club)
        if used + size - held > self.quota:
            raise ClubStorageFull(club, self.quota, used, size)

    async def counted(self, club: str) -> int:
        """The club's counter (what is stored, plus what is leased: see the module)."""
        return int(await self._call(self._client.get(self.key(club))) or 0)

    async def return_leases(self) -> None:
        """Give the unused leases back to the counters (the process is stopping)."""
        leases, self._leases = self._leases, {}
        for club, held in leases.items():
            if held > 0:
                await self._call(self._client.decrby(self.key(club), held))

    async def _lease(self, club: str, needed: int, wanted: int) -> int:
        arguments = (1, self.key(club), needed, wanted, self.quota)
        try:
            reply = await self._call(self._client.evalsha(self._sha, *arguments))
        except redis_errors.NoScriptError:  # Redis restarted
            await self._call(self._client.script_load(LEASE_SCRIPT))
            reply = await self._call(self._client.evalsha(self._sha, *arguments))
        granted, value = int(reply[0]), int(reply[1])
        if not granted:
            raise ClubStorageFull(club, self.quota, value, needed)
        return value
