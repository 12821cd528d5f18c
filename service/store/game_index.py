"""The listing index of a club's games (ListGames): sorted sets that page by a cursor in
O(log n + page) at any depth, one per filter ListGames offers, so that a filter reads only
the games it matches.

Every key of a club's index carries the club's hash tag, so the whole index lives in one
Redis Cluster slot and the update script may touch all of it; nothing is global but the
version key, read once at start-up (see `service.game_index`):

    tl:{club:<id>}:listing:entries                hash: game id -> "<position> <kind> <status>
                                                  <revision>", what the sets below hold of it
    tl:{club:<id>}:listing:all                    every game of the club
    tl:{club:<id>}:listing:game:<kind>            the games of one game kind ("splendor")
    tl:{club:<id>}:listing:status:<n>             the games in one GameStatus (a number)
    tl:{club:<id>}:listing:game:<kind>:status:<n> both filters at once
    tl:listing:version                            the index layout the data was built for

Each set holds its games as members of score 0, ordered by their `position`: the creation
time (seconds since year 1, zero-padded, then nanoseconds) and the game id, so the members'
byte order is the order by (created time, game id) and a page after a cursor is one
``ZRANGE ... BYLEX REV LIMIT`` from it, with no global counter to order them.

The index is a summary of the games' head summaries (the truth for what a game is): an
entry is replaced only by one of the same or a later revision (`INDEX_SCRIPT`), so two
updates of a game arriving out of order, or again, leave the later one; the status
follows a game's end after its append (a follow-up: in a cluster the game and the club
are in different slots), and what a lost follow-up leaves stale is repaired when a listing
reads it and by a rebuild.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis import exceptions as redis_errors

from service.store.cluster import RedisClient

YEAR_ONE_OFFSET = 62_135_596_800
"""Seconds from 0001-01-01 (protobuf Timestamp's earliest) to the Unix epoch: positions
count from there, so every valid creation time has a non-negative, fixed-width position."""

POSITION = re.compile(r"^[0-9]{21}:[a-z0-9][a-z0-9_-]{0,63}$")
"""A position: 12 digits of seconds, 9 of nanoseconds, ":" and the game id."""

INDEX_VERSION = 1
"""The layout above; a store whose version key says less is rebuilt at start-up."""

INDEX_SCRIPT = """
local base = ARGV[1]
local games = {}
for i = 2, #ARGV, 5 do
  games[#games + 1] = ARGV[i]
end
local olds = redis.call("HMGET", KEYS[1], unpack(games))
local added = {}
local stored = {}
local function add(key, position)
  local members = added[key]
  if not members then
    members = {}
    added[key] = members
  end
  members[#members + 1] = "0"
  members[#members + 1] = position
end
for n = 1, #games do
  local i = 2 + (n - 1) * 5
  local game, position, kind, status = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local entry = position .. " " .. kind .. " " .. status .. " " .. ARGV[i + 4]
  local old = olds[n]
  local apply = old ~= entry
  if old and apply then
    local p, k, s, r = string.match(old, "^(%S+) (%S+) (%S+) (%d+)$")
    if p and tonumber(r) > tonumber(ARGV[i + 4]) then
      apply = false
    elseif p then
      redis.call("ZREM", base .. ":all", p)
      redis.call("ZREM", base .. ":game:" .. k, p)
      redis.call("ZREM", base .. ":status:" .. s, p)
      redis.call("ZREM", base .. ":game:" .. k .. ":status:" .. s, p)
    end
  end
  if apply then
    add(base .. ":all", position)
    add(base .. ":game:" .. kind, position)
    add(base .. ":status:" .. status, position)
    add(base .. ":game:" .. kind .. ":status:" .. status, position)
    stored[#stored + 1] = game
    stored[#stored + 1] = entry
  end
end
for key, members in pairs(added) do
  redis.call("ZADD", key, unpack(members))
end
if #stored > 0 then
  redis.call("HSET", KEYS[1], unpack(stored))
end
return #stored / 2
"""
"""KEYS[1] a club's entries hash; ARGV[1] the club's key prefix (``tl:{club:<id>}:listing``,
whose sets the script names from it: the old kind's and status's are only known once the
entry is read, and they all share KEYS[1]'s hash tag, so its slot); then five arguments per
game: id, position, kind, status, revision, each game at most once. Replaces each game's
entry and its set members unless the stored entry is of a later revision (the old members
removed first, the new ones added at the end, a set's in one ZADD). Answers how many
entries changed."""

MAX_BATCH = 500
"""Entries written by one script call: a rebuild of many games holds Redis only this long
(and Lua's `unpack` stays far below its limit of some 8,000 values)."""

Call = Callable[[Awaitable[Any]], Awaitable[Any]]


def position_of(game_id: str, seconds: int, nanos: int) -> str:
    """Where a game created at (`seconds`, `nanos`) since the Unix epoch sorts."""
    return f"{seconds + YEAR_ONE_OFFSET:012d}{nanos:09d}:{game_id}"


def game_of(position: str) -> str:
    return position.partition(":")[2]


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What the index holds of one game: where it sorts and what the filters compare."""

    game_id: str
    position: str
    kind: str
    """The game kind's registry name, as ListGames's `game` filter names it once found."""
    status: int
    """The GameStatus number."""
    revision: int
    """The revision of the summary it was made from: a later one replaces it."""

    def fields(self) -> tuple[str, str, str, int, int]:
        return (self.game_id, self.position, self.kind, self.status, self.revision)


class GameIndex:
    """The clubs' listing indexes in one Redis (see the module)."""

    def __init__(self, client: RedisClient, prefix: str, call: Call) -> None:
        """`call` runs a Redis command with the store's time limit and outage handling."""
        self._client = client
        self._prefix = prefix
        self._call = call
        self._sha = hashlib.sha1(INDEX_SCRIPT.encode()).hexdigest()

    def base(self, club: str) -> str:
        return f"{self._prefix}:{{club:{club}}}:listing"

    def set_key(self, club: str, kind: str = "", status: int = 0) -> str:
        """The set that holds exactly the club's games of `kind` in `status` (each: any)."""
        key = self.base(club)
        if kind:
            key += f":game:{kind}"
        if status:
            key += f":status:{status}"
        return key if kind or status else key + ":all"

    @property
    def version_key(self) -> str:
        return f"{self._prefix}:listing:version"

    async def put(self, club: str, entries: Sequence[IndexEntry]) -> int:
        """Write `entries` into `club`'s index (an entry of a later revision stays); how
        many changed."""
        # One entry per game, the latest (the script reads each game's stored entry once).
        latest: dict[str, IndexEntry] = {}
        for entry in entries:
            kept = latest.get(entry.game_id)
            if kept is None or entry.revision >= kept.revision:
                latest[entry.game_id] = entry
        unique = list(latest.values())
        changed = 0
        for start in range(0, len(unique), MAX_BATCH):
            argv: list[Any] = [self.base(club)]
            for entry in unique[start : start + MAX_BATCH]:
                argv.extend(entry.fields())
            changed += int(await self._run_script(self.base(club) + ":entries", argv))
        return changed

    async def _run_script(self, key: str, argv: Sequence[Any]) -> Any:
        try:
            return await self._call(self._client.evalsha(self._sha, 1, key, *argv))
        except redis_errors.NoScriptError:  # Redis restarted
            await self._call(self._client.script_load(INDEX_SCRIPT))
            return await self._call(self._client.evalsha(self._sha, 1, key, *argv))

    async def page(
        self, club: str, kind: str, status: int, after: str | None, count: int
    ) -> list[str]:
        """Up to `count` positions of `club`'s games of `kind` in `status` (each: any when
        empty or 0), newest first, after the position `after` if given."""
        top = f"({after}" if after is not None else "+"
        key = self.set_key(club, kind, status)
        rows = await self._call(
            self._client.zrange(key, top, "-", desc=True, bylex=True, offset=0, num=count)
        )
        return [row.decode() for row in rows]

    async def entries(self, club: str) -> dict[str, IndexEntry]:
        """Every entry of `club`'s index: what it holds of each game, to look at it whole."""
        rows = await self._call(self._client.hgetall(self.base(club) + ":entries"))
        found = {}
        for game, text in rows.items():
            position, kind, status, revision = text.decode().split(" ")
            found[game.decode()] = IndexEntry(
                game.decode(), position, kind, int(status), int(revision)
            )
        return found

    async def clear(self) -> None:
        """Delete every club's index and the version key (a rebuild from scratch follows)."""
        keys: list[Any] = [self.version_key]
        # scan_iter, not SCAN with a cursor: on a cluster it walks every primary in turn.
        pattern = f"{self._prefix}:{{club:*}}:listing:*"
        keys += [key async for key in self._client.scan_iter(match=pattern, count=1000)]
        for start in range(0, len(keys), MAX_BATCH):
            # One key per DEL: the keys of different clubs are in different cluster slots.
            async with self._client.pipeline(transaction=False) as pipe:
                for key in keys[start : start + MAX_BATCH]:
                    pipe.delete(key)
                await self._call(pipe.execute())

    async def version(self) -> int:
        value = await self._call(self._client.get(self.version_key))
        return int(value) if value is not None else 0

    async def mark_version(self, version: int) -> None:
        await self._call(self._client.set(self.version_key, version))
