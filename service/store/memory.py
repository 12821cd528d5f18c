"""Club memory's keys in Redis: the feed of changed games, the projected outcomes and the
projector's checkpoint (docs/club-memory.md, "Projections").

Layout (every key of a club carries its hash tag ``{club:<id>}``, so a club's projection is
one Redis Cluster slot and `APPLY_SCRIPT` writes it atomically):

    tl:{club:<id>}:memory:feed        stream: a changed game per entry (field g: game id),
                                      appended after an append that ended, reopened,
                                      abandoned or amended a game; trimmed once projected
    tl:{club:<id>}:memory:outcomes    hash: game id -> serialized GameOutcome (ended games)
    tl:{club:<id>}:memory:seen        hash: game id -> the game's event sequence projected
    tl:{club:<id>}:memory:checkpoint  string: the last feed entry id projected
    tl:{club:<id>}:memory:version     counter: changes of the outcomes (a cache's key)
    tl:{club:<id>}:memory:changes     stream: the change log, an entry per version (id
                                      "<version>-0", field g: the game ids it changed,
                                      space-separated, or "*"), capped near
                                      CHANGES_LENGTH: a reader catches up by reading the
                                      changed games alone
    tl:{club:<id>}:seasons            hash: season name -> "<start> <end>" (epoch seconds)
    tl:memory:dirty                   set: clubs whose feed has entries to project
    tl:memory:wake                    stream: an entry per flag, naming no club (capped
                                      near WAKE_LENGTH), read blocking by idle projectors

Idempotent by construction: an outcome is written only when derived at a later sequence of
its game than the one stored (a retry, a second instance, an older fold: no-ops), and the
checkpoint only ever moves forward, in the same script as the outcome it follows."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

from tablelog.service.store.calls import Calls
from tablelog.service.store.cluster import RedisClient
from tablelog.v1 import standings_pb2

LAG_COUNT: Final = 10_000
"""Feed entries a lag report counts at most (it says "at least" past that)."""
CHANGES_LENGTH: Final = 2_000
"""Entries the change log keeps about (XADD MAXLEN ~): an instance whose copy of a club is
older than that reads the club's outcomes whole again."""
CHANGES_NAMED: Final = 100
"""Games one change log entry names at most (a rebuild's page changing more says "*"):
the log stays small, about `CHANGES_LENGTH` x this x a game id."""
WAKE_LENGTH: Final = 1_000
"""Entries the wake-up stream keeps about (XADD MAXLEN ~): an idle projector reads only
the newest, so any bound above one round's flags will do."""

LOG_FUNCTION: Final = f"""
local function log(key, version, games)
  -- The change log's entry for `version`, id "<version>-0": a reader holding the club at
  -- version v reads the entries after v. An id not above the log's last (a version counter
  -- reset beside a log that outlived it) starts the log again: readers see a gap, reload.
  local args = {{"XADD", key, "MAXLEN", "~", "{CHANGES_LENGTH}", version .. "-0", "g", games}}
  local added = redis.pcall(unpack(args))
  if type(added) == "table" and added.err then
    redis.call("DEL", key)
    redis.call(unpack(args))
  end
end
"""
"""The change log's append (`MemoryStore.changes_after` reads it): one entry per outcome
version, naming the games whose outcomes that version changed ("*": too many to name)."""

APPLY_SCRIPT: Final = (
    LOG_FUNCTION
    + """
local function later(a, b)
  if b == false or b == nil or b == "" then return true end
  local am, as = string.match(a, "^(%d+)-(%d+)$")
  local bm, bs = string.match(b, "^(%d+)-(%d+)$")
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local changed = 0
if redis.call("EXISTS", KEYS[5]) == 0 then
  return 0  -- the club was deleted: nothing of it is written again
end
local seen = tonumber(redis.call("HGET", KEYS[2], ARGV[1]) or "-1")
if tonumber(ARGV[2]) > seen then
  redis.call("HSET", KEYS[2], ARGV[1], ARGV[2])
  if ARGV[3] == "" then
    changed = redis.call("HDEL", KEYS[1], ARGV[1])
  else
    local old = redis.call("HGET", KEYS[1], ARGV[1])
    if old ~= ARGV[3] then
      redis.call("HSET", KEYS[1], ARGV[1], ARGV[3])
      changed = 1
    end
  end
  if changed > 0 then
    local named = ARGV[1]
    if named == "" or string.find(named, " ", 1, true) then named = "*" end  -- (see plain)
    log(KEYS[6], redis.call("INCR", KEYS[4]), named)
  end
end
if ARGV[4] ~= "" and later(ARGV[4], redis.call("GET", KEYS[3])) then
  redis.call("SET", KEYS[3], ARGV[4])
end
return changed
"""
)
"""KEYS: outcomes, seen, checkpoint, version, the club's record (a deleted club's projection
is not written again: a projector that read its feed before DeleteClub deleted its keys),
the change log.
ARGV: game id, the sequence the outcome was
derived at, the outcome ("" for a game that has none: abandoned, reopened), the feed entry
id it follows ("" for a rebuild). Answers 1 when the outcomes changed."""
APPLY_MANY_SCRIPT: Final = (
    LOG_FUNCTION
    + f"""
if redis.call("EXISTS", KEYS[4]) == 0 then
  return 0
end
local changed = {{}}
local plain = true  -- no empty id, none with a space: the log's ids are space-separated
for i = 1, #ARGV, 3 do
  if ARGV[i] == "" or string.find(ARGV[i], " ", 1, true) then plain = false end
  local seen = tonumber(redis.call("HGET", KEYS[2], ARGV[i]) or "-1")
  if tonumber(ARGV[i + 1]) > seen then
    redis.call("HSET", KEYS[2], ARGV[i], ARGV[i + 1])
    if ARGV[i + 2] == "" then
      if redis.call("HDEL", KEYS[1], ARGV[i]) > 0 then table.insert(changed, ARGV[i]) end
    elseif redis.call("HGET", KEYS[1], ARGV[i]) ~= ARGV[i + 2] then
      redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 2])
      table.insert(changed, ARGV[i])
    end
  end
end
if #changed > 0 then
  local games = "*"
  if #changed <= {CHANGES_NAMED} and plain then games = table.concat(changed, " ") end
  log(KEYS[5], redis.call("INCR", KEYS[3]), games)
end
return #changed
"""
)
"""`APPLY_SCRIPT` for many games of one club at once, without a checkpoint (a rebuild's
page): KEYS outcomes, seen, version, the club's record, the change log; ARGV (game id,
sequence, outcome) per game. Answers how many outcomes changed."""
NOTE_SCRIPT: Final = """
if redis.call("EXISTS", KEYS[2]) == 0 then
  return 0
end
redis.call("XADD", KEYS[1], "*", "g", ARGV[1])
return 1
"""
"""KEYS: the club's feed, the club's record (`tablelog.service.access.members`). ARGV: the
game id. A game of a deleted club is not noted (its feed would outlive the club)."""


class MemoryStore:
    def __init__(self, client: RedisClient, prefix: str = "tl", calls: Calls | None = None):
        self._redis = client
        self._prefix = prefix
        self._call = calls or Calls()
        """(the event store's, in a server: `RedisEventStore.calls`)"""

    def key(self, club_id: str, part: str) -> str:
        return f"{self._prefix}:{{club:{club_id}}}:{part}"

    @property
    def dirty_key(self) -> str:
        return f"{self._prefix}:memory:dirty"

    @property
    def wake_key(self) -> str:
        return f"{self._prefix}:memory:wake"

    # ------------------------------------------------------------------ the feed

    async def note_change(self, club_id: str, game_id: str) -> None:
        """A game of `club_id` changed in a way the projections follow."""
        keys = [self.key(club_id, "memory:feed"), self.key(club_id, "club")]
        if await self._call(self._redis.eval(NOTE_SCRIPT, len(keys), *keys, game_id)):
            await self.flag(club_id)

    async def dirty_clubs(self) -> list[str]:
        """The clubs flagged with feed entries to project, unflagged as they are taken (a
        change noted meanwhile flags its club again)."""
        taken = await self._call(self._redis.spop(self.dirty_key, 100))
        return sorted(bytes(c).decode() for c in taken or ())

    async def unflag(self, club_id: str) -> None:
        """Takes a deleted club out of the flagged ones."""
        await self._call(self._redis.srem(self.dirty_key, club_id))

    async def flag(self, club_id: str) -> None:
        """Flag the club, then wake the idle projectors of every instance (flagged first:
        a projector woken finds the flag). A club flagged already was woken for when it was
        flagged, and no projector has taken it since: no second wake-up."""
        if not await self._call(self._redis.sadd(self.dirty_key, club_id)):
            return
        await self._call(
            # No club id in it: a wake-up only says "look" (a deleted club leaves no trace here).
            self._redis.xadd(self.wake_key, {"w": "1"}, maxlen=WAKE_LENGTH, approximate=True)
        )

    async def wake_end(self) -> str:
        """The id of the wake-up stream's newest entry ("0-0" when empty)."""
        last = await self._call(self._redis.xrevrange(self.wake_key, count=1))
        return bytes(last[0][0]).decode() if last else "0-0"

    async def wait_for_wake(self, after: str, block: float) -> str:
        """Wait (up to `block` seconds, below the store's time limit) for a flag after the
        wake-up entry `after`; the newest entry id seen (`after` when none came). One
        blocking XREAD: an idle projector costs Redis one call per `block`, not one per
        poll, and one flagged anywhere answers it at once."""
        found = await self._call(
            self._redis.xread({self.wake_key: after}, count=WAKE_LENGTH, block=int(block * 1000))
        )
        # RESP2 answers [[stream, entries]], RESP3 {stream: entries}.
        streams = found.items() if isinstance(found, dict) else (found or ())
        for _stream, entries in streams:
            if entries:
                after = bytes(entries[-1][0]).decode()
        return after

    async def checkpoint(self, club_id: str) -> str:
        found = await self._call(self._redis.get(self.key(club_id, "memory:checkpoint")))
        return bytes(found).decode() if found else "0-0"

    async def feed_after(self, club_id: str, after: str, count: int) -> list[tuple[str, str]]:
        """Up to `count` feed entries after the entry id `after`: (entry id, game id)."""
        entries = await self._call(
            self._redis.xrange(
                self.key(club_id, "memory:feed"), min=f"({after}", max="+", count=count
            )
        )
        return [(bytes(i).decode(), bytes(f[b"g"]).decode()) for i, f in entries]

    async def trim(self, club_id: str, upto: str) -> None:
        """Drop the feed entries up to the projected `upto` (kept: what follows)."""
        milliseconds, _, sequence = upto.partition("-")
        await self._call(
            self._redis.xtrim(
                self.key(club_id, "memory:feed"),
                minid=f"{milliseconds}-{int(sequence or 0) + 1}",
            )
        )

    # ------------------------------------------------------------------ outcomes

    async def apply(
        self,
        club_id: str,
        game_id: str,
        sequence: int,
        outcome: standings_pb2.GameOutcome | None,
        feed_id: str,
    ) -> bool:
        """Store what the game's events at `sequence` give (None: no outcome), and move the
        checkpoint to `feed_id`, in one script; whether the outcomes changed."""
        keys = [
            self.key(club_id, "memory:outcomes"),
            self.key(club_id, "memory:seen"),
            self.key(club_id, "memory:checkpoint"),
            self.key(club_id, "memory:version"),
            self.key(club_id, "club"),
            self.key(club_id, "memory:changes"),
        ]
        blob = outcome.SerializeToString(deterministic=True) if outcome is not None else b""
        changed = await self._call(
            self._redis.eval(APPLY_SCRIPT, len(keys), *keys, game_id, str(sequence), blob, feed_id)
        )
        return bool(changed)

    async def apply_many(self, club_id: str, rows: Sequence[tuple[str, int, bytes]]) -> int:
        """`apply` for many games of the club at once, moving no checkpoint: each row (game
        id, the sequence its outcome was derived at, the outcome serialized deterministically
        or b"" for none); how many outcomes changed."""
        if not rows:
            return 0
        keys = [
            self.key(club_id, "memory:outcomes"),
            self.key(club_id, "memory:seen"),
            self.key(club_id, "memory:version"),
            self.key(club_id, "club"),
            self.key(club_id, "memory:changes"),
        ]
        argv = [part for game_id, sequence, blob in rows for part in (game_id, str(sequence), blob)]
        return int(await self._call(self._redis.eval(APPLY_MANY_SCRIPT, len(keys), *keys, *argv)))

    async def version(self, club_id: str) -> int:
        found = await self._call(self._redis.get(self.key(club_id, "memory:version")))
        return int(found or 0)

    async def changes_after(
        self, club_id: str, after: int, upto: int, limit: int
    ) -> set[str] | None:
        """The games whose outcomes changed from version `after` to `upto`, from the change
        log; None when the log cannot say (trimmed past `after`, a version it never logged:
        a rebuild's clear, more than `limit` versions or games, or "*"): read them all."""
        if upto - after > limit or upto <= after:
            return None if upto != after else set()
        entries = await self._call(
            self._redis.xrange(
                self.key(club_id, "memory:changes"), min=f"{after + 1}-0", max=f"{upto}-0"
            )
        )
        if len(entries) != upto - after:
            return None  # ids are versions, unique: as many as versions means every one
        games: set[str] = set()
        for _id, fields in entries:
            named = bytes(fields.get(b"g", b"*")).decode()
            if named == "*":
                return None
            games.update(named.split())
        return games if len(games) <= limit else None

    async def outcomes_of(self, club_id: str, game_ids: Sequence[str]) -> list[bytes | None]:
        """The stored outcomes of `game_ids` (None for a game with none)."""
        if not game_ids:
            return []
        found = await self._call(
            self._redis.hmget(self.key(club_id, "memory:outcomes"), list(game_ids))
        )
        return [bytes(blob) if blob else None for blob in found]

    async def outcomes(self, club_id: str) -> dict[str, bytes]:
        rows = await self._call(self._redis.hgetall(self.key(club_id, "memory:outcomes")))
        return {bytes(k).decode(): bytes(v) for k, v in rows.items()}

    async def clear(self, club_id: str) -> None:
        """Forget the club's projection (a rebuild starts from nothing); the version moves on
        so that no cache keeps serving what was cleared."""
        await self._call(
            self._redis.delete(
                self.key(club_id, "memory:outcomes"),
                self.key(club_id, "memory:seen"),
            )
        )
        await self._call(self._redis.incr(self.key(club_id, "memory:version")))

    async def feed_end(self, club_id: str) -> str:
        """The id of the feed's last entry ("0-0" when empty)."""
        last = await self._call(self._redis.xrevrange(self.key(club_id, "memory:feed"), count=1))
        return bytes(last[0][0]).decode() if last else "0-0"

    async def lag(self, club_id: str) -> standings_pb2.ProjectionLag:
        """Changed games not yet projected, how long the oldest has waited, and how many
        ended games the projection holds."""
        after = await self.checkpoint(club_id)
        pending = await self.feed_after(club_id, after, LAG_COUNT)
        games = await self._call(self._redis.hlen(self.key(club_id, "memory:outcomes")))
        waited = 0.0
        if pending:
            sent = int(pending[0][0].partition("-")[0]) / 1000
            waited = max(0.0, round(time.time() - sent, 3))
        return standings_pb2.ProjectionLag(
            pending_games=len({g for _i, g in pending}),
            seconds=waited,
            projected_games=int(games),
        )

    async def clubs(self) -> list[str]:
        """Every club id (`tl:clubs`, kept by `tablelog.service.access.members`)."""
        found = await self._call(self._redis.smembers(f"{self._prefix}:clubs"))
        return sorted(bytes(c).decode() for c in found)

    # ------------------------------------------------------------------ seasons

    async def seasons(self, club_id: str) -> dict[str, tuple[int, int]]:
        rows = await self._call(self._redis.hgetall(self.key(club_id, "seasons")))
        found: dict[str, tuple[int, int]] = {}
        for name, value in rows.items():
            start, _, end = bytes(value).decode().partition(" ")
            found[bytes(name).decode()] = (int(start), int(end))
        return found

    async def set_season(self, club_id: str, name: str, start: int, end: int, limit: int) -> bool:
        """Define a season; False when the club has `limit` seasons and this is a new one."""
        key = self.key(club_id, "seasons")
        known = await self._call(self._redis.hexists(key, name))
        if not known and await self._call(self._redis.hlen(key)) >= limit:
            return False
        await self._call(self._redis.hset(key, name, f"{start} {end}"))
        return True
