"""The event store: one Redis stream per game, appended to by compare-and-append.

Layout (every key of a game carries the hash tag ``{<game_id>}``, so a game lives in one
Redis Cluster slot and the append script may touch all of them):

    tl:{<game_id>}:events    stream; entry id ``<sequence>-0``, one field ``e`` = Event bytes
    tl:{<game_id>}:head      hash: sequence, revision, last_hash, summary (GameSummary bytes)
    tl:{<game_id>}:requests  hash: request id -> "first:last fingerprint": the sequences
                             it appended and the fingerprint of the request that did
    tl:{<game_id>}:seed      string: dealt mode's secret seed, deleted once revealed
    tl:games                 sorted set of game ids by creation order (the ListGames index)
    tl:games:counter         the creation counter that orders that set

The stream is the truth; the head hash is a summary the script keeps in step with it, and
everything in it can be rebuilt from the stream. Streams are never trimmed.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import hashlib
from collections import deque
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis.asyncio.connection import AbstractConnection
from redis.connection import HiredisRespSerializer
from redis.utils import HIREDIS_AVAILABLE

from tablelog.v1 import events_pb2

GENESIS_HASH = bytes(32)
"""The `prev_hash` of a game's first event."""


class StoreError(Exception):
    """Base class of what the store refuses or cannot do."""


class GameNotFound(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"There is no game {game_id!r}.")
        self.game_id = game_id


class GameExists(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"A game {game_id!r} exists already.")
        self.game_id = game_id


class StaleVersion(StoreError):
    """The client's expected revision is not the game's current revision."""

    def __init__(self, game_id: str, expected: int, current: int) -> None:
        super().__init__(
            f"The game has moved on: you saw version {expected}, it is now at version "
            f"{current}. Fetch the game again and retry."
        )
        self.game_id = game_id
        self.expected = expected
        self.current = current


class SequenceMoved(StoreError):
    """The revision matched but other events (annotations, another instance) came first:
    the caller rebuilds its events on the new head and tries again."""

    def __init__(self, game_id: str, sequence: int, revision: int) -> None:
        super().__init__(f"Game {game_id!r} is now at event {sequence}.")
        self.sequence = sequence
        self.revision = revision


class ChainMismatch(StoreError):
    """The caller's previous hash is not the stored one: its cached head is not the truth."""


class IdempotencyKeyReused(StoreError):
    """A request id already used for a different request (another fingerprint)."""

    def __init__(self, game_id: str, request_id: str) -> None:
        super().__init__(
            "This request id was used before for a different request; a retry must repeat "
            "the request exactly, and a new request needs a new request id."
        )
        self.game_id = game_id
        self.request_id = request_id


class CorruptEvent(StoreError):
    """A stored entry that does not read as an Event."""

    def __init__(self, game_id: str, sequence: int, why: str) -> None:
        super().__init__(f"Event {sequence} of game {game_id!r} is unreadable: {why}")
        self.sequence = sequence


class StoreUnavailable(StoreError):
    """Redis cannot be reached (or timed out)."""


class SeedOp(enum.Enum):
    KEEP = "-"
    SET = "set"
    DELETE = "del"


@dataclass(frozen=True, slots=True)
class StoredHead:
    sequence: int
    revision: int
    last_hash: bytes


@dataclass(frozen=True, slots=True)
class AppendResult:
    events: tuple[events_pb2.Event, ...]
    """The events as stored, hashes included (for a duplicate: the ones first stored)."""
    duplicate: bool


def event_hash(event: events_pb2.Event) -> bytes:
    """SHA-256 of the event serialized deterministically with `hash` left empty (what
    `seal` hashes when it stores an event)."""
    unhashed = events_pb2.Event()
    unhashed.CopyFrom(event)
    unhashed.ClearField("hash")
    return hashlib.sha256(unhashed.SerializeToString(deterministic=True)).digest()


HASH_FIELD_TAG = b"\x42\x20"  # field 8 (`hash`), length-delimited, 32 bytes
SEAL_LENGTH = len(HASH_FIELD_TAG) + 32


def stored_hash(data: bytes) -> tuple[bytes, bytes] | None:
    """(the hash the stored bytes carry, the hash of the bytes it covers), from the stored
    layout itself: body + HASH_FIELD_TAG + 32-byte hash. None when the bytes do not end in
    a seal. Verification uses this, never a re-serialization, so any changed byte shows."""
    if len(data) < SEAL_LENGTH or data[-SEAL_LENGTH:-32] != HASH_FIELD_TAG:
        return None
    return data[-32:], hashlib.sha256(data[:-SEAL_LENGTH]).digest()


def seal(
    events: Sequence[events_pb2.Event], prev_hash: bytes
) -> list[tuple[events_pb2.Event, bytes]]:
    """Copies of `events` chained after `prev_hash` (each gets prev_hash and its own hash),
    with the bytes to store: the deterministic serialization without `hash` (which is what
    the hash covers) followed by the `hash` field. A parser reads fields in any order, and
    re-serializing what it read gives back the hashed bytes (`event_hash`)."""
    sealed: list[tuple[events_pb2.Event, bytes]] = []
    for event in events:
        copy = events_pb2.Event()
        copy.CopyFrom(event)
        copy.prev_hash = prev_hash
        copy.ClearField("hash")
        unhashed = copy.SerializeToString(deterministic=True)
        copy.hash = prev_hash = hashlib.sha256(unhashed).digest()
        sealed.append((copy, unhashed + HASH_FIELD_TAG + copy.hash))
    return sealed


class EventStore(abc.ABC):
    """What the service needs from storage. Every backend passes tests/service/
    test_store_contract.py; the only backend is Redis (embedded, standalone or cluster)."""

    @abc.abstractmethod
    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        *,
        expected_sequence: int,
        prev_hash: bytes,
        expected_revision: int | None,
        request_id: str = "",
        summary: bytes = b"",
        seed_op: SeedOp = SeedOp.KEEP,
        seed: bytes = b"",
        fingerprint: str = "",
    ) -> AppendResult:
        """Seal `events` (sequences expected_sequence+1, ...) after `prev_hash` and append
        them atomically, if the game is at `expected_sequence` (0: create it) and, unless
        None, at `expected_revision`. A request id seen before with the same `fingerprint`
        (a short hex digest of what the request asks) returns the original events.

        Raises StaleVersion, SequenceMoved, GameNotFound, GameExists, ChainMismatch,
        IdempotencyKeyReused (the request id was used with another fingerprint)."""

    @abc.abstractmethod
    async def lookup_request(
        self, game_id: str, request_id: str, fingerprint: str = ""
    ) -> tuple[events_pb2.Event, ...] | None:
        """The events a request id appended, if it appended any to this game; raises
        IdempotencyKeyReused when it did so for a request with another fingerprint."""

    @abc.abstractmethod
    async def head(self, game_id: str) -> StoredHead:
        """The last sequence, revision and hash; GameNotFound when there is no game."""

    @abc.abstractmethod
    async def read(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[events_pb2.Event]:
        """Events after `after_sequence`, in order (at most `count`)."""

    @abc.abstractmethod
    async def read_raw(self, game_id: str) -> list[tuple[int, bytes]]:
        """Every entry as stored: (sequence from the entry id, the bytes). For verification."""

    @abc.abstractmethod
    async def wait(
        self, game_id: str, after_sequence: int, timeout_seconds: float
    ) -> list[events_pb2.Event]:
        """Events after `after_sequence`, blocking up to `timeout_seconds` for the first one
        to arrive (an empty list on time-out). Works across service instances."""

    @abc.abstractmethod
    async def summary(self, game_id: str) -> bytes | None:
        """The GameSummary stored with the last append (None when there is no game)."""

    @abc.abstractmethod
    async def summaries(self, game_ids: Sequence[str]) -> list[bytes | None]: ...

    @abc.abstractmethod
    async def seed(self, game_id: str) -> bytes | None:
        """Dealt mode's seed while it is secret."""

    @abc.abstractmethod
    async def index_game(self, game_id: str) -> None:
        """Add a game to the listing index (idempotent; done before its creation append)."""

    @abc.abstractmethod
    async def list_game_ids(self, before: int | None, count: int) -> list[tuple[str, int]]:
        """Game ids newest first with their creation rank, ranks below `before` if given."""

    @abc.abstractmethod
    async def ping(self) -> bool: ...

    @abc.abstractmethod
    async def close(self) -> None: ...


def _split_range(text: bytes) -> tuple[int, int]:
    first, last = text.decode().split(" ")[0].split(":")
    return int(first), int(last)


STORE_TIMEOUT = 5.0
"""Seconds a Redis command may take before the call fails with StoreUnavailable."""
DEFAULT_POOL_SIZE = 64
"""Connections to Redis for the request path (`tablelog serve --redis-pool-size`)."""


class Watchdog:
    """Cancels store calls that have waited for Redis longer than their time limit.

    redis-py's own `socket_timeout` wraps every command's write in `asyncio.wait_for`,
    a task and a timer per command (about 15 us of CPU per call, a third of a round
    trip). Here one timer per second, armed only while calls are in flight, checks the
    calls' deadlines instead; a call past its deadline is cancelled (redis-py closes a
    connection interrupted mid-command, so nothing half-read is reused) and fails with
    StoreUnavailable. Limits are thus kept to within a second."""

    def __init__(self) -> None:
        self._deadlines: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None

    async def run(self, call: Awaitable[Any], limit: float) -> Any:
        task = asyncio.current_task()
        if task is None or task in self._deadlines:  # not a task, or a nested call
            return await call
        loop = asyncio.get_running_loop()
        self._deadlines[task] = loop.time() + limit
        if self._timer is None or self._timer_loop is not loop:  # (a store reused on a new loop)
            self._timer, self._timer_loop = loop.call_later(1.0, self._sweep, loop), loop
        try:
            return await call
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()
            raise StoreUnavailable(f"Redis did not answer within {limit:g} s.") from None
        finally:
            del self._deadlines[task]
            self._expired.discard(task)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer_loop is not loop:
            return  # superseded by the timer of the loop now in use
        now = loop.time()
        for task, deadline in self._deadlines.items():
            if deadline <= now and task not in self._expired and task.get_loop() is loop:
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(1.0, self._sweep, loop) if self._deadlines else None


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


class RedisEventStore(EventStore):
    """The store on Redis Streams (redis-py's asyncio client)."""

    def __init__(
        self, client: aioredis.Redis, prefix: str = "tl", timeout: float = STORE_TIMEOUT
    ) -> None:
        self._redis = client
        self._prefix = prefix
        self._timeout = timeout
        self._watchdog = Watchdog()
        self._script = resources.files("service").joinpath("append.lua").read_text(encoding="utf-8")
        self._script_sha = hashlib.sha1(self._script.encode()).hexdigest()
        self._game_keys: dict[str, tuple[str, str, str, str]] = {}

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "tl",
        timeout: float = STORE_TIMEOUT,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> RedisEventStore:
        """A store on a new client. The client has no socket timeout of its own: the
        store's watchdog enforces `timeout` (see `Watchdog`); connecting is limited by
        redis-py as usual. At most `pool_size` connections: a call that finds them all
        busy waits for one (up to `timeout`) rather than opening more."""
        pool = WaitingConnectionPool.from_url(
            url,
            max_connections=pool_size,
            decode_responses=False,
            health_check_interval=30,
            socket_timeout=None,
            socket_connect_timeout=timeout,
        )
        pack_with_hiredis(pool)
        return cls(aioredis.Redis.from_pool(pool), prefix, timeout)

    def dedicated(self) -> RedisEventStore:
        """A store on one connection of its own to the same Redis, outside the request
        path's pool: for a reader that blocks (a watch tail), so that no number of them
        can hold the connections a RecordMove needs. Close it when done."""
        pool = self._redis.connection_pool
        # The pool's own bookkeeping (maintenance-notification handlers) stays with it.
        settings = {
            key: value
            for key, value in pool.connection_kwargs.items()
            if not key.startswith(("maint_notifications", "orig_"))
        }
        own = aioredis.ConnectionPool(
            connection_class=pool.connection_class, max_connections=1, **settings
        )
        return RedisEventStore(aioredis.Redis.from_pool(own), self._prefix, self._timeout)

    @property
    def redis(self) -> aioredis.Redis:
        return self._redis

    def key(self, game_id: str, part: str) -> str:
        return f"{self._prefix}:{{{game_id}}}:{part}"

    def _keys(self, game_id: str) -> tuple[str, str, str, str]:
        keys = self._game_keys.get(game_id)
        if keys is None:
            if len(self._game_keys) >= 4096:
                self._game_keys.clear()
            keys = self._game_keys[game_id] = (
                self.key(game_id, "events"),
                self.key(game_id, "head"),
                self.key(game_id, "requests"),
                self.key(game_id, "seed"),
            )
        return keys

    async def _call(self, coroutine: Awaitable[Any], limit: float | None = None) -> Any:
        try:
            return await self._watchdog.run(coroutine, limit or self._timeout)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc

    async def _run_append_script(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """EVALSHA of append.lua; after a NOSCRIPT (Redis restarted), SCRIPT LOAD and again."""
        try:
            return await self._redis.evalsha(self._script_sha, len(keys), *keys, *args)
        except redis_errors.NoScriptError:
            self._script_sha = await self._redis.script_load(self._script)
            return await self._redis.evalsha(self._script_sha, len(keys), *keys, *args)

    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        *,
        expected_sequence: int,
        prev_hash: bytes,
        expected_revision: int | None,
        request_id: str = "",
        summary: bytes = b"",
        seed_op: SeedOp = SeedOp.KEEP,
        seed: bytes = b"",
        fingerprint: str = "",
    ) -> AppendResult:
        if not events:
            raise ValueError("nothing to append")
        for offset, event in enumerate(events, start=1):
            if event.sequence != expected_sequence + offset:
                raise ValueError(
                    f"event {offset} has sequence {event.sequence}, "
                    f"expected {expected_sequence + offset}"
                )
        sealed = seal(events, prev_hash if expected_sequence else GENESIS_HASH)
        final = sealed[-1][0]
        header = (
            f"{expected_sequence} {'-' if expected_revision is None else expected_revision} "
            f"{final.revision} {seed_op.value} {len(sealed)} {fingerprint or '-'}"
        )
        args: list[Any] = [
            header,
            request_id,
            prev_hash if expected_sequence else b"",
            final.hash,
            seed,
            summary,
            *(data for _, data in sealed),
        ]
        reply = (await self._call(self._run_append_script(self._keys(game_id), args))).split()
        status = reply[0]
        if status == b"ok":
            return AppendResult(tuple(e for e, _ in sealed), duplicate=False)
        if status == b"duplicate":
            first, last = _split_range(reply[1])
            original = await self.read(game_id, first - 1, last - first + 1)
            return AppendResult(tuple(original), duplicate=True)
        if status == b"reused":
            raise IdempotencyKeyReused(game_id, request_id)
        if status == b"missing":
            raise GameNotFound(game_id)
        sequence, revision = int(reply[1]), int(reply[2])
        if status == b"stale":
            raise StaleVersion(game_id, expected_revision or 0, revision)
        if status == b"moved":
            raise SequenceMoved(game_id, sequence, revision)
        if status == b"exists":
            raise GameExists(game_id)
        raise ChainMismatch(
            f"Game {game_id!r}: the previous hash given does not match event {sequence}."
        )

    async def lookup_request(
        self, game_id: str, request_id: str, fingerprint: str = ""
    ) -> tuple[events_pb2.Event, ...] | None:
        if not request_id:
            return None
        found = await self._call(self._redis.hget(self.key(game_id, "requests"), request_id))
        if found is None:
            return None
        _range, _, stored = bytes(found).partition(b" ")
        if stored and stored.decode() != (fingerprint or "-"):
            raise IdempotencyKeyReused(game_id, request_id)
        first, last = _split_range(found)
        return tuple(await self.read(game_id, first - 1, last - first + 1))

    async def head(self, game_id: str) -> StoredHead:
        sequence, revision, last_hash = await self._call(
            self._redis.hmget(self.key(game_id, "head"), ["sequence", "revision", "last_hash"])
        )
        if sequence is None:
            raise GameNotFound(game_id)
        return StoredHead(int(sequence), int(revision), bytes(last_hash or b""))

    def _parse(self, game_id: str, entry_id: bytes, fields: dict[bytes, bytes]) -> events_pb2.Event:
        sequence = int(entry_id.split(b"-")[0])
        event = events_pb2.Event()
        try:
            event.ParseFromString(fields[b"e"])
        except Exception as exc:  # DecodeError, a missing field: both mean damage
            raise CorruptEvent(game_id, sequence, str(exc) or type(exc).__name__) from exc
        return event

    async def read(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[events_pb2.Event]:
        entries = await self._call(
            self._redis.xrange(
                self.key(game_id, "events"), min=f"{after_sequence + 1}-0", max="+", count=count
            )
        )
        return [self._parse(game_id, entry_id, fields) for entry_id, fields in entries]

    async def read_raw(self, game_id: str) -> list[tuple[int, bytes]]:
        entries = await self._call(self._redis.xrange(self.key(game_id, "events")))
        return [(int(i.split(b"-")[0]), bytes(f.get(b"e", b""))) for i, f in entries]

    async def wait(
        self, game_id: str, after_sequence: int, timeout_seconds: float
    ) -> list[events_pb2.Event]:
        key = self.key(game_id, "events")
        block = max(1, int(timeout_seconds * 1000))
        reply = await self._call(
            self._redis.xread({key: f"{after_sequence}-0"}, block=block, count=1000),
            limit=timeout_seconds + self._timeout,
        )
        events: list[events_pb2.Event] = []
        for _stream, entries in reply or []:
            events.extend(self._parse(game_id, entry_id, fields) for entry_id, fields in entries)
        return events

    async def summary(self, game_id: str) -> bytes | None:
        value = await self._call(self._redis.hget(self.key(game_id, "head"), "summary"))
        return None if value is None else bytes(value)

    async def summaries(self, game_ids: Sequence[str]) -> list[bytes | None]:
        # One round trip; in a cluster a pipeline of single-key commands is split by slot.
        async with self._redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hget(self.key(game_id, "head"), "summary")
            values = await self._call(pipe.execute())
        return [None if v is None else bytes(v) for v in values]

    async def seed(self, game_id: str) -> bytes | None:
        value = await self._call(self._redis.get(self.key(game_id, "seed")))
        return None if value is None else bytes(value)

    async def index_game(self, game_id: str) -> None:
        index = f"{self._prefix}:games"
        if await self._call(self._redis.zscore(index, game_id)) is not None:
            return
        rank = await self._call(self._redis.incr(f"{self._prefix}:games:counter"))
        await self._call(self._redis.zadd(index, {game_id: rank}, nx=True))

    async def list_game_ids(self, before: int | None, count: int) -> list[tuple[str, int]]:
        top: str | int = "+inf" if before is None else f"({before}"
        rows = await self._call(
            self._redis.zrevrangebyscore(
                f"{self._prefix}:games", top, "-inf", start=0, num=count, withscores=True
            )
        )
        return [(member.decode(), int(score)) for member, score in rows]

    async def ping(self) -> bool:
        return bool(await self._call(self._redis.ping()))

    async def close(self) -> None:
        await self._redis.aclose()
