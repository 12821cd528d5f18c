"""The listing index of a club's games (ListGames): sorted sets that page by a cursor in
O(log n + page) at any depth, one per filter ListGames offers and per combination of them,
so that a filter reads only the games it matches.

Every key of a club's index carries the club's hash tag, so the whole index lives in one
Redis Cluster slot and the update script may touch all of it; nothing is global but the
version key, read once at start-up (see `tablelog.service.recording.game_index`):

    tl:{club:<id>}:listing:entries                hash: game id -> "<position> <kind> <status>
                                                  <revision> <players>", what the sets below
                                                  hold of it (<players>: the seats' player
                                                  keys joined by ",", "-" for none)
    tl:{club:<id>}:listing:all                    every game of the club
    tl:{club:<id>}:listing:game:<kind>            the games of one game kind ("splendor")
    tl:{club:<id>}:listing:status:<n>             the games in one GameStatus (a number)
    tl:{club:<id>}:listing:game:<kind>:status:<n> both filters at once
    tl:{club:<id>}:listing:player:<key>           the games one player has a seat in
    tl:{club:<id>}:listing:player:<key>:game:<kind>, ...:player:<key>:status:<n>,
    tl:{club:<id>}:listing:player:<key>:game:<kind>:status:<n>
                                                  the player with the other filters
    tl:listing:version                            the index layout the data was built for

A player's <key> is a digest of the seat's name as a person compares it
(`tablelog.service.recording.game_index.player_key`): bounded, and safe in a key whatever the name
holds. Every filter and combination has a set of its own rather than a filtered walk of a wider one,
so that a rare combination (a player's few ended medici games among thousands) costs one page like
any other: a game is a member of 4 sets and 4 more per seat (a four-seat game: 20), written by one
script call when it is indexed, and a change of status moves it in half of them.

Each set holds its games as members of score 0, ordered by their `position`: the creation
time (seconds since year 1, zero-padded, then nanoseconds) and the game id, so the members'
byte order is the order by (created time, game id) and a page after a cursor is one
``ZRANGE ... BYLEX REV LIMIT`` from it, with no global counter to order them.

A deleted game (GAME_STATUS_DELETED, 4) keeps its entry in the entries hash, so its club
still finds it by id (`holds`), and is a member of no set: no listing shows it.

The index is a summary of the games' head summaries (the truth for what a game is): an
entry is replaced only by one of the same or a later revision (`INDEX_SCRIPT`), so two
updates of a game arriving out of order, or again, leave the later one; the status
follows a game's end after its append (a follow-up: in a cluster the game and the club
are in different slots), and what a lost follow-up leaves stale is repaired when a listing
reads it and by a rebuild. The seats are known when a game is created and never change
(BindSeat binds a member to a seat, not a name), so its player sets are written with its
first entry; a later entry of the same game (another position, after a creation that lost
a race for the id) replaces them like the others.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis import exceptions as redis_errors

from tablelog.service.store.cluster import RedisClient

YEAR_ONE_OFFSET = 62_135_596_800
"""Seconds from 0001-01-01 (protobuf Timestamp's earliest) to the Unix epoch: positions
count from there, so every valid creation time has a non-negative, fixed-width position."""

POSITION = re.compile(r"^[0-9]{21}:[a-z0-9][a-z0-9_-]{0,63}$")
"""A position: 12 digits of seconds, 9 of nanoseconds, ":" and the game id."""

INDEX_VERSION = 2
"""The layout above; a store whose version key says less is rebuilt at start-up (1: before
the player sets, whose entries have no <players>)."""

NO_PLAYERS = "-"

INDEX_SCRIPT = """
local base = ARGV[1]
local games = {}
for i = 2, #ARGV, 6 do
  games[#games + 1] = ARGV[i]
end
local olds = redis.call("HMGET", KEYS[1], unpack(games))
local added = {}
local stored = {}
local function sets(kind, status, players)
  if status == "4" then  -- GAME_STATUS_DELETED: kept in the entries hash only
    return {}
  end
  local prefixes = {base}
  for player in string.gmatch(players, "[0-9a-f]+") do
    prefixes[#prefixes + 1] = base .. ":player:" .. player
  end
  local found = {}
  for _, prefix in ipairs(prefixes) do
    found[#found + 1] = prefix == base and base .. ":all" or prefix
    found[#found + 1] = prefix .. ":game:" .. kind
    found[#found + 1] = prefix .. ":status:" .. status
    found[#found + 1] = prefix .. ":game:" .. kind .. ":status:" .. status
  end
  return found
end
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
  local i = 2 + (n - 1) * 6
  local game, position, kind, status = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local revision, players = ARGV[i + 4], ARGV[i + 5]
  local entry = position .. " " .. kind .. " " .. status .. " " .. revision .. " " .. players
  local old = olds[n]
  local apply = old ~= entry
  if old and apply then
    local p, k, s, r, o = string.match(old, "^(%S+) (%S+) (%S+) (%d+) (%S+)$")
    if not p then  -- an entry of layout 1, without players
      p, k, s, r = string.match(old, "^(%S+) (%S+) (%S+) (%d+)$")
      o = "-"
    end
    if p and tonumber(r) > tonumber(revision) then
      apply = false
    elseif p then
      for _, key in ipairs(sets(k, s, o)) do
        redis.call("ZREM", key, p)
      end
    end
  end
  if apply then
    for _, key in ipairs(sets(kind, status, players)) do
      add(key, position)
    end
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
whose sets the script names from it: the old kind's, status's and players' are only known
once the entry is read, and they all share KEYS[1]'s hash tag, so its slot); then six
arguments per game: id, position, kind, status, revision and the seats' player keys (joined
by ",", "-" for none), each game at most once. Replaces each game's entry and its set
members unless the stored entry is of a later revision (the old members removed first, the
new ones added at the end, a set's in one ZADD). Answers how many entries changed."""

MAX_BATCH = 500
"""Entries written by one script call: a rebuild of many games holds Redis only this long
(and Lua's `unpack` stays far below its limit of some 8,000 values: a game is in a set once,
so a set's ZADD, like the HSET, is two values a game whatever its seats)."""

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
    players: tuple[str, ...] = ()
    """The player keys of its seats (`tablelog.service.recording.game_index.player_key`), each
    once."""

    def fields(self) -> tuple[str, str, str, int, int, str]:
        players = ",".join(self.players) or NO_PLAYERS
        return (self.game_id, self.position, self.kind, self.status, self.revision, players)


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

    def set_key(self, club: str, kind: str = "", status: int = 0, player: str = "") -> str:
        """The set that holds exactly the club's games of `kind` in `status` with a seat of
        the player whose key is `player` (each: any when empty or 0)."""
        key = self.base(club)
        if player:
            key += f":player:{player}"
        if kind:
            key += f":game:{kind}"
        if status:
            key += f":status:{status}"
        return key if kind or status or player else key + ":all"

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
        self, club: str, kind: str, status: int, after: str | None, count: int, player: str = ""
    ) -> list[str]:
        """Up to `count` positions of `club`'s games of `kind` in `status` with a seat of the
        player whose key is `player` (each: any when empty or 0), newest first, after the
        position `after` if given."""
        top = f"({after}" if after is not None else "+"
        key = self.set_key(club, kind, status, player)
        rows = await self._call(
            self._client.zrange(key, top, "-", desc=True, bylex=True, offset=0, num=count)
        )
        return [row.decode() for row in rows]

    async def signature(self, club: str) -> tuple[int, str]:
        """How many games the club's index holds, and the newest one's position ("" for
        none), in one round trip (both keys are in the club's slot)."""
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hlen(self.base(club) + ":entries")
            pipe.zrange(self.set_key(club), "+", "-", desc=True, bylex=True, offset=0, num=1)
            count, newest = await self._call(pipe.execute())
        return int(count), bytes(newest[0]).decode() if newest else ""

    async def holds(self, club: str, game_id: str) -> bool:
        """Whether the club's index has an entry for the game (HEXISTS: a reply of one
        integer whatever the game, so another club's game costs what no game costs)."""
        found = await self._call(self._client.hexists(self.base(club) + ":entries", game_id))
        return bool(found)

    async def entries(self, club: str) -> dict[str, IndexEntry]:
        """Every entry of `club`'s index: what it holds of each game, to look at it whole."""
        rows = await self._call(self._client.hgetall(self.base(club) + ":entries"))
        found = {}
        for game, text in rows.items():
            position, kind, status, revision, *players = text.decode().split(" ")
            seated = tuple(players[0].split(",")) if players and players[0] != NO_PLAYERS else ()
            found[game.decode()] = IndexEntry(
                game.decode(), position, kind, int(status), int(revision), seated
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
