"""The Redis backend of the event store: one Redis stream per game, appended to by the
compare-and-append script (append.lua, called through `tablelog.service.store.script`).

Layout (every key of a game carries the hash tag ``{<game_id>}``, so a game lives in one
Redis Cluster slot and the append script may touch all of them):

    tl:{<game_id>}:events    stream; entry id ``<sequence>-0``, one field ``e`` = Event bytes
    tl:{<game_id>}:head      hash: sequence, revision, last_hash, summary (GameSummary bytes)
    tl:{<game_id>}:requests  hash: request id -> "first:last fingerprint ms": the sequences
                             it appended, the fingerprint of the request that did, when
    tl:{<game_id>}:request-order  list: "<ms> <request id>", oldest first; ids older than
                             the retention are forgotten, and both keys expire within 1.5
                             retentions of the last one stored
    tl:{<game_id>}:seed      string: dealt mode's secret seed, deleted once revealed
    tl:{club:<id>}:listing:* a club's listing index (ListGames): `store.game_index`
    tl:{<game_id>}:checkpoint*  folded positions kept beside the stream, never the truth
                             (`store.checkpoint_storage`, `recording.checkpoints`)
    tl:{<game_id>}:result    string: the game's sealed result for club memory's rebuild,
                             never the truth (`store.result_storage`, `memory.results`)
    tl:club:<club>:bytes     integer: the club's quota counter, when the store has a quota
                             (the bytes of its games' streams: see `store.club_storage`)

Only the append script touches several keys at once, all of one game (one slot); the keys
outside a game's tag are only ever used one at a time, so the store runs unchanged on Redis
Cluster (``redis+cluster://``, see `tablelog.service.store.cluster`).

The stream is the truth; the head hash is a summary the script keeps in step with it, and
everything in it can be rebuilt from the stream. Streams are never trimmed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from importlib import resources
from typing import Any
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis.asyncio.cluster import RedisCluster
from redis.cluster import LoadBalancingStrategy

from tablelog.service.store.base import AppendResult, EventStore, StoredHead
from tablelog.service.store.calls import Calls
from tablelog.service.store.chain import GENESIS_HASH, Chain
from tablelog.service.store.checkpoint_storage import CheckpointStorage
from tablelog.service.store.club_storage import DEFAULT_LEASE, ClubStorage
from tablelog.service.store.cluster import (
    RedisClient,
    ReplicasBehind,
    ReplicaWait,
    is_cluster_url,
    open_cluster,
    run_script,
    run_script_standalone,
)
from tablelog.service.store.data_disk import DataDisk
from tablelog.service.store.errors import (
    ChainMismatch,
    CorruptEvent,
    GameExists,
    GameNotFound,
    IdempotencyKeyReused,
    SequenceMoved,
    StaleVersion,
    StoreUnavailable,
)
from tablelog.service.store.game_index import GameIndex, IndexEntry
from tablelog.service.store.packing import pack_with_hiredis
from tablelog.service.store.pool import (
    DEFAULT_POOL_SIZE,
    WaitingConnectionPool,
    driver_settings,
)
from tablelog.service.store.result_storage import ResultStorage
from tablelog.service.store.script import (
    AppendCall,
    RequestEntry,
    ScriptReply,
    ScriptStatus,
    SeedOp,
)
from tablelog.v1 import events_pb2

STORE_TIMEOUT = 5.0
"""Seconds a Redis command may take before the call fails with StoreUnavailable."""

REQUEST_ID_RETENTION = 3 * 24 * 3600.0
"""Seconds a request id is kept (`serve --request-id-retention`): far beyond any client's
retries (minutes), long enough for one offline for a weekend; docs/service.md, Idempotency."""
REPLICA_MAP_SECONDS = 1.0
"""A watch tail that reads replicas (a cluster with `--redis-wait`) and finds none listed
for its game's slot reads the slot map again at most this often, showing nothing meanwhile."""


STREAM_AHEAD = "equal or smaller than the target stream top item"
"""Redis's refusal of an XADD whose entry id is not beyond the stream's last one."""


def with_credentials(url: str, password: str | None = None, ca_file: str | None = None) -> str:
    """`url` carrying a password (read from a file, kept out of the command line) and the
    CA that signed a TLS Redis's certificate, so that every client made from it (the
    store's pool, the watch tails' connections, the health probe) has them. The URL itself
    may already carry both: ``rediss://user:password@host:6380/0?ssl_ca_certs=/ca.pem``
    (redis-py reads the user, the password and TLS from it; ``rediss`` verifies the
    server's certificate and name, against the system's CAs unless one is given)."""
    if password is None and ca_file is None:
        return url  # as given: splitting and joining it again is not the identity
    parts = urlsplit(url)
    if password is not None:
        user = quote(unquote(parts.username or ""), safe="")
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}")
    if ca_file is not None:
        if parts.scheme not in ("rediss", "rediss+cluster"):
            raise ValueError("a CA for Redis needs TLS: a rediss:// (or rediss+cluster://) URL")
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "ssl_ca_certs"]
        parts = parts._replace(query=urlencode([*query, ("ssl_ca_certs", ca_file)]))
    return _joined(parts)


def _joined(parts: SplitResult) -> str:
    """`urlunsplit` keeping the `//` of a URL without a host: `unix:///run/redis.sock`
    (a unix socket, as redis-py names it) would be joined as `unix:/run/redis.sock`, which
    redis-py refuses: urllib keeps `//` only for the schemes it knows to have a host."""
    joined = urlunsplit(parts)
    if not parts.netloc and parts.scheme and not joined.startswith(f"{parts.scheme}://"):
        joined = f"{parts.scheme}://" + joined.removeprefix(f"{parts.scheme}:")
    return joined


def redacted(url: str) -> str:
    """`url` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.netloc.rpartition("@")[0].partition(":")[0]
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class RedisEventStore(EventStore):
    """The store on Redis Streams (redis-py's asyncio client, or its cluster client)."""

    def __init__(
        self,
        client: RedisClient,
        prefix: str = "tl",
        timeout: float = STORE_TIMEOUT,
        *,
        chain: Chain,
        club_storage: int | None = None,
        club_lease: int = DEFAULT_LEASE,
        replica_wait: ReplicaWait | None = None,
        url: str = "",
        request_id_retention: float = REQUEST_ID_RETENTION,
        data_disk: DataDisk | None = None,
    ) -> None:
        """`club_storage`: the bytes each club's games may take in their streams (None: no
        limit), leased `club_lease` bytes at a time (see `tablelog.service.store.club_storage`).
        `replica_wait`: acknowledge an append only once that many replicas have it (WAIT).
        `url`: the cluster's, for `dedicated` (a cluster client is not cloned from a pool).
        `request_id_retention`: seconds a request id is kept; an older one is forgotten, and
        a request under it is a new request. `data_disk`: the embedded Redis's data
        directory, where a Redis that cannot be reached is looked for (see `Calls`)."""
        if request_id_retention <= 0:
            raise ValueError("the request id retention must be positive")
        self.request_id_retention_ms = max(1, int(request_id_retention * 1000))
        self.chain = chain
        self._redis = client
        self._cluster = client if isinstance(client, RedisCluster) else None
        self._reads_replica = False
        """`wait` reads a replica of the game's slot (see `dedicated`)."""
        self._replica_map_read = 0.0
        self._url = url
        self.replica_wait = replica_wait
        self.club_storage = (
            ClubStorage(client, prefix, club_storage, self._call, club_lease)
            if club_storage is not None
            else None
        )
        self._prefix = prefix
        self._timeout = timeout
        self.calls = Calls(timeout, data_disk)
        """Every Redis call of this store, and of the stores that share its client (members,
        club memory, rosters): one time limit, one outage flag."""
        script = resources.files("tablelog.service.store").joinpath("append.lua")
        self._script = script.read_text(encoding="utf-8")
        self._script_sha = hashlib.sha1(self._script.encode()).hexdigest()
        self._game_keys: dict[str, tuple[str, str, str, str, str]] = {}
        self.game_index = GameIndex(client, prefix, self._call)
        self.checkpoints = CheckpointStorage(client, self.key, self._call)
        self.results = ResultStorage(client, self.key, self._call)

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "tl",
        timeout: float = STORE_TIMEOUT,
        *,
        chain: Chain,
        pool_size: int = DEFAULT_POOL_SIZE,
        club_storage: int | None = None,
        club_lease: int = DEFAULT_LEASE,
        replica_wait: ReplicaWait | None = None,
        request_id_retention: float = REQUEST_ID_RETENTION,
        read_replicas: bool = False,
        data_disk: DataDisk | None = None,
    ) -> RedisEventStore:
        """A store on a new client, sealing with `chain`. The client has no socket timeout
        of its own: the store's watchdog enforces `timeout` (see `Watchdog`); connecting is
        limited by redis-py as usual. At most `pool_size` connections (per node, on a
        cluster): a call that finds them all busy waits for one (up to `timeout`) rather
        than opening more. The URL carries the credentials and TLS settings (see
        `with_credentials`); ``redis+cluster://`` names a Redis Cluster.
        `read_replicas` (a cluster's watch tails, see `dedicated`): the client's connections
        may read from replicas (READONLY), and `wait` reads a replica of the game's slot.
        `data_disk`: the embedded Redis's data directory (see `Calls`)."""
        # Replies stay bytes (the store decodes what it reads); no socket timeout (the
        # watchdog's); a connection idle for 30 s is pinged before it is used.
        settings: dict[str, Any] = {
            "decode_responses": False,
            "health_check_interval": 30,
            "socket_timeout": None,
        }
        client: RedisClient
        if is_cluster_url(url):
            if read_replicas:
                # (Any strategy makes redis-py send READONLY on each new connection; `wait`
                # picks its node itself.)
                settings["load_balancing_strategy"] = LoadBalancingStrategy.ROUND_ROBIN_REPLICAS
            client = open_cluster(url, turns=pool_size, connect_timeout=timeout, **settings)
            pack_with_hiredis(client)
        else:
            pool = WaitingConnectionPool.from_url(
                url,
                max_connections=pool_size,
                socket_connect_timeout=timeout,
                **settings,
                **driver_settings(),
            )
            pack_with_hiredis(pool)
            client = aioredis.Redis.from_pool(pool)
        store = cls(
            client,
            prefix,
            timeout,
            chain=chain,
            club_storage=club_storage,
            club_lease=club_lease,
            replica_wait=replica_wait,
            url=url if is_cluster_url(url) else "",
            request_id_retention=request_id_retention,
            data_disk=data_disk,
        )
        store._reads_replica = read_replicas and store._cluster is not None
        return store

    def dedicated(self) -> RedisEventStore:
        """A store on one connection of its own to the same Redis, outside the request
        path's pool: for a reader that blocks (a watch tail), so that no number of them
        can hold the connections a RecordMove needs. Close it when done. (On a cluster: a
        client of its own, with one connection per node it reads from.)

        With a replica wait on a cluster, the reader reads a replica of the game's slot: a
        move the primary stored but no replica confirmed is not acknowledged, and is lost if
        a replica takes over, so no watcher may be shown it before a replica has it."""
        if self._cluster is not None:
            return RedisEventStore.from_url(
                self._url,
                self._prefix,
                self._timeout,
                chain=self.chain,
                pool_size=1,
                request_id_retention=self.request_id_retention_ms / 1000,
                read_replicas=self.replica_wait is not None,
            )
        assert isinstance(self._redis, aioredis.Redis)
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
        # A reader appends nothing: no quota of its own (and no leases to hold).
        return RedisEventStore(
            aioredis.Redis.from_pool(own),
            self._prefix,
            self._timeout,
            chain=self.chain,
            request_id_retention=self.request_id_retention_ms / 1000,
            data_disk=self.calls.disk,
        )

    @property
    def redis(self) -> RedisClient:
        return self._redis

    def key(self, game_id: str, part: str) -> str:
        return f"{self._prefix}:{{{game_id}}}:{part}"

    def _keys(self, game_id: str) -> tuple[str, str, str, str, str]:
        keys = self._game_keys.get(game_id)
        if keys is None:
            if len(self._game_keys) >= 4096:
                self._game_keys.clear()
            keys = self._game_keys[game_id] = (
                self.key(game_id, "events"),
                self.key(game_id, "head"),
                self.key(game_id, "requests"),
                self.key(game_id, "seed"),
                self.key(game_id, "request-order"),
            )
        return keys

    def mark_unavailable(self, why: str, *, disk: bool = False) -> None:
        """Until `mark_available`, fail every call at once (`Calls.mark_unavailable`)."""
        self.calls.mark_unavailable(why, disk=disk)

    def mark_available(self) -> None:
        self.calls.mark_available()

    async def _call(self, coroutine: Awaitable[Any], limit: float | None = None) -> Any:
        return await self.calls(coroutine, limit)

    async def _run_append_script(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """EVALSHA of append.lua; after a NOSCRIPT (Redis restarted), SCRIPT LOAD and again.
        On a cluster, or with a replica wait: see `tablelog.service.store.cluster`."""
        if self._cluster is not None or self.replica_wait is not None:
            return await self._run_append_script_waiting(keys, args)
        try:
            return await self._redis.evalsha(self._script_sha, len(keys), *keys, *args)
        except redis_errors.NoScriptError:
            self._script_sha = await self._redis.script_load(self._script)
            return await self._redis.evalsha(self._script_sha, len(keys), *keys, *args)

    async def _run_append_script_waiting(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        wait = self.replica_wait
        if self._cluster is not None:
            reply, replicas = await run_script(
                self._cluster, self._script_sha, self._script, keys, args, wait
            )
        else:
            assert isinstance(self._redis, aioredis.Redis)
            assert wait is not None
            reply, replicas = await run_script_standalone(
                self._redis, self._script_sha, self._script, keys, args, wait
            )
        # Only a change needs its replicas (a refusal changed nothing); a duplicate
        # answers a change the first attempt may have left on the primary alone.
        if (
            wait is not None
            and replicas is not None
            and replicas < wait.replicas
            and ScriptReply.parse(reply).status in (ScriptStatus.OK, ScriptStatus.DUPLICATE)
        ):
            raise ReplicasBehind(replicas, wait)
        return reply

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
        club: str = "",
    ) -> AppendResult:
        if not events:
            raise ValueError("nothing to append")
        for offset, event in enumerate(events, start=1):
            if event.sequence != expected_sequence + offset:
                raise ValueError(
                    f"event {offset} has sequence {event.sequence}, "
                    f"expected {expected_sequence + offset}"
                )
        sealed = self.chain.seal(events, prev_hash if expected_sequence else GENESIS_HASH)
        final = sealed[-1][0]
        call = AppendCall(
            expected_sequence=expected_sequence,
            expected_revision=expected_revision,
            new_revision=final.revision,
            seed_op=seed_op,
            fingerprint=fingerprint,
            now_ms=time.time_ns() // 1_000_000,
            retention_ms=self.request_id_retention_ms,
            request_id=request_id,
            prev_hash=prev_hash if expected_sequence else b"",
            last_hash=final.hash,
            seed=seed,
            summary=summary,
            events=tuple(data for _, data in sealed),
        )
        storage = self.club_storage if club else None
        size = sum(len(data) for _, data in sealed)
        if storage is not None:
            await storage.take(club, size)
        kept = False
        try:
            reply = ScriptReply.parse(
                await self._call(self._run_append_script(self._keys(game_id), call.argv()))
            )
            kept = reply.status is ScriptStatus.OK
        except StoreUnavailable:
            kept = True  # the script may have run: its bytes stay counted
            raise
        except redis_errors.ResponseError as exc:
            if STREAM_AHEAD not in str(exc):
                raise
            # The head says `expected_sequence`, the stream's last entry id is beyond it:
            # the stream is not numbered by its sequences. Nothing was appended (the
            # refused XADD is the script's first write).
            raise CorruptEvent(
                game_id,
                expected_sequence + 1,
                "the stream's entry ids are not its event sequences",
                events[0].revision,
            ) from exc
        finally:
            if storage is not None and not kept:
                await storage.give_back(club, size)
        status = reply.status
        if status is ScriptStatus.OK:
            return AppendResult(tuple(event for event, _ in sealed), duplicate=False)
        if status is ScriptStatus.DUPLICATE:
            original = await self.read(game_id, reply.first - 1, reply.last - reply.first + 1)
            return AppendResult(tuple(original), duplicate=True)
        if status is ScriptStatus.REUSED:
            raise IdempotencyKeyReused(game_id, request_id)
        if status is ScriptStatus.MISSING:
            raise GameNotFound(game_id)
        if status is ScriptStatus.STALE:
            raise StaleVersion(game_id, expected_revision or 0, reply.revision)
        if status is ScriptStatus.MOVED:
            raise SequenceMoved(game_id, reply.sequence, reply.revision)
        if status is ScriptStatus.EXISTS:
            raise GameExists(game_id)
        if status is ScriptStatus.DAMAGED:
            raise ChainMismatch(
                f"Game {game_id!r}: the stream does not end at event {reply.sequence} as its "
                "head says."
            )
        raise ChainMismatch(
            f"Game {game_id!r}: the previous hash given does not match event {reply.sequence}."
        )

    async def check_club_storage(self, club: str, events: Sequence[events_pb2.Event]) -> None:
        if self.club_storage is None or not club:
            return
        sealed = self.chain.seal(events, GENESIS_HASH)
        await self.club_storage.check_room(club, sum(len(data) for _, data in sealed))

    async def lookup_request(
        self, game_id: str, request_id: str, fingerprint: str = ""
    ) -> tuple[events_pb2.Event, ...] | None:
        if not request_id:
            return None
        found = await self._call(self._redis.hget(self.key(game_id, "requests"), request_id))
        if found is None:
            return None
        entry = RequestEntry.parse(bytes(found))
        # The script's own test (append.lua): an id stored more than the retention ago is
        # forgotten even while its entry waits to be removed.
        if entry.expired(time.time_ns() // 1_000_000, self.request_id_retention_ms):
            return None
        if not entry.same_request(fingerprint):
            raise IdempotencyKeyReused(game_id, request_id)
        return tuple(await self.read(game_id, entry.first - 1, entry.last - entry.first + 1))

    async def head(self, game_id: str) -> StoredHead:
        sequence, revision, last_hash = await self._call(
            self._redis.hmget(self.key(game_id, "head"), ["sequence", "revision", "last_hash"])
        )
        if sequence is None:
            raise GameNotFound(game_id)
        return StoredHead(int(sequence), int(revision), bytes(last_hash or b""))

    def _parse(
        self, game_id: str, sequence: int, entry_id: bytes, fields: dict[bytes, bytes]
    ) -> events_pb2.Event:
        """The event in the entry that must hold event `sequence`: under the entry id
        `<sequence>-0`, which every read by range counts on."""
        event = events_pb2.Event()
        try:
            event.ParseFromString(fields[b"e"])
        except Exception as exc:  # DecodeError, a missing field: both mean damage
            raise CorruptEvent(game_id, sequence, str(exc) or type(exc).__name__) from exc
        if event.sequence != sequence or entry_id != b"%d-0" % sequence:
            raise CorruptEvent(
                game_id,
                sequence,
                f"entry {entry_id.decode()} holds event {event.sequence}",
                event.revision,
            )
        return event

    async def read(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[events_pb2.Event]:
        entries = await self._call(
            self._redis.xrange(
                self.key(game_id, "events"), min=f"{after_sequence + 1}-0", max="+", count=count
            )
        )
        return [
            self._parse(game_id, sequence, entry_id, fields)
            for sequence, (entry_id, fields) in enumerate(entries, start=after_sequence + 1)
        ]

    async def read_raw(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        entries = await self._call(
            self._redis.xrange(
                self.key(game_id, "events"), min=f"{after_sequence + 1}-0", count=count
            )
        )
        return [(int(i.split(b"-")[0]), bytes(f.get(b"e", b""))) for i, f in entries]

    async def wait(
        self, game_id: str, after_sequence: int, timeout_seconds: float
    ) -> list[events_pb2.Event]:
        key = self.key(game_id, "events")
        block = max(1, int(timeout_seconds * 1000))
        if self._reads_replica:
            return await self._wait_on_replica(game_id, key, after_sequence, timeout_seconds)
        if self._cluster is None:
            reading = self._redis.xread({key: f"{after_sequence}-0"}, block=block, count=1000)
        else:
            # Sent to the slot's node directly: redis-py would first ask a node where
            # XREAD's keys are (COMMAND GETKEYS), a round trip per read.
            await self._call(self._cluster.initialize())
            reading = self._cluster.execute_command(
                "XREAD", "COUNT", 1000, "BLOCK", block, "STREAMS", key, f"{after_sequence}-0",
                target_nodes=self._cluster.get_node_from_key(key),
            )  # fmt: skip
        try:
            reply = await self._call(reading, limit=timeout_seconds + self._timeout)
        except redis_errors.ResponseError as exc:
            if not str(exc).startswith("UNBLOCKED"):
                raise
            # The node turned replica under the blocked read (a failover): nothing came;
            # the next read finds the slot's new primary (MOVED).
            return []
        return self._parse_read(game_id, after_sequence, reply)

    async def _wait_on_replica(
        self, game_id: str, key: str, after_sequence: int, timeout_seconds: float
    ) -> list[events_pb2.Event]:
        """`wait` on a replica of the game's slot (see `dedicated`). What it read is shown
        only if the node it asked is still a replica of that slot afterwards: a replica
        promoted under a blocked read (a failover) answers what its own appends added,
        which no replica may have yet; those are read again from the new replica."""
        cluster = self._cluster
        assert cluster is not None
        await self._call(cluster.initialize())
        node = cluster.get_node_from_key(key, replica=True)
        if node is None:
            # No replica listed (a cluster lists one only once it has taken writes, or
            # none is up): nothing here is confirmed yet. Read the slot map again, at
            # most once a second, and look again then.
            now = time.monotonic()
            if now - self._replica_map_read >= REPLICA_MAP_SECONDS:
                self._replica_map_read = now
                await self._call(cluster.nodes_manager.initialize())
            await asyncio.sleep(min(timeout_seconds, REPLICA_MAP_SECONDS))
            return []
        block = max(1, int(timeout_seconds * 1000))
        try:
            reading = cluster.execute_command(
                "XREAD", "COUNT", 1000, "BLOCK", block, "STREAMS", key, f"{after_sequence}-0",
                target_nodes=node,
            )  # fmt: skip
            reply = await self._call(reading, limit=timeout_seconds + self._timeout)
        except redis_errors.ResponseError as exc:
            if not str(exc).startswith("UNBLOCKED"):
                raise
            return []
        if not reply:
            return []
        role = await self._call(cluster.execute_command("ROLE", target_nodes=node))
        now_asked = cluster.get_node_from_key(key, replica=True)
        if role[0] != b"slave" or now_asked is None or now_asked.name != node.name:
            # Promoted, or the read was redirected: nothing of it is shown; the slot map
            # is read again and the next read asks a replica.
            self._replica_map_read = time.monotonic()
            await self._call(cluster.nodes_manager.initialize())
            return []
        return self._parse_read(game_id, after_sequence, reply)

    def _parse_read(self, game_id: str, after_sequence: int, reply: Any) -> list[events_pb2.Event]:
        events: list[events_pb2.Event] = []
        for _stream, entries in reply or []:
            events.extend(
                self._parse(game_id, sequence, entry_id, fields)
                for sequence, (entry_id, fields) in enumerate(entries, start=after_sequence + 1)
            )
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

    async def index_games(self, club: str, entries: Sequence[IndexEntry]) -> None:
        await self.game_index.put(club, entries)

    async def indexed(self, club: str, game_id: str) -> bool:
        return await self.game_index.holds(club, game_id)

    async def list_game_ids(
        self, club: str, kind: str, status: int, after: str | None, count: int, player: str = ""
    ) -> list[str]:
        return await self.game_index.page(club, kind, status, after, count, player)

    async def listing_signature(self, club: str) -> tuple[int, str]:
        return await self.game_index.signature(club)

    async def game_ids(self, count: int) -> AsyncIterator[list[str]]:
        # scan_iter, not SCAN with a cursor: on a cluster it walks every primary in turn.
        found: list[str] = []
        async for key in self._redis.scan_iter(match=self.key("*", "head"), count=count):
            game_id = bytes(key).decode().partition("{")[2].rpartition("}")[0]
            if game_id and ":" not in game_id:  # the other tags are "club:", "tok:"...
                found.append(game_id)
            if len(found) >= count:
                yield found
                found = []
        if found:
            yield found

    async def creations(self, game_ids: Sequence[str]) -> list[events_pb2.GameCreated | None]:
        async with self._redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.xrange(self.key(game_id, "events"), min="1-0", max="1-0", count=1)
            replies = await self._call(pipe.execute())
        created: list[events_pb2.GameCreated | None] = []
        for game_id, entries in zip(game_ids, replies, strict=True):
            if not entries:
                created.append(None)
                continue
            entry_id, fields = entries[0]
            event = self._parse(game_id, 1, entry_id, fields)
            created.append(event.game_created if event.HasField("game_created") else None)
        return created

    async def clear_game_index(self) -> None:
        await self.game_index.clear()

    async def game_index_version(self) -> int:
        return await self.game_index.version()

    async def mark_game_index_version(self, version: int) -> None:
        await self.game_index.mark_version(version)

    async def ping(self) -> bool:
        return bool(await self._call(self._redis.ping()))

    async def close(self) -> None:
        if self.club_storage is not None:
            with contextlib.suppress(StoreUnavailable):  # then the counter counts too much
                await self.club_storage.return_leases()
        await self._redis.aclose()
