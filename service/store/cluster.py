"""Redis Cluster under the store: the client a URL names, and the append run on its slot.

``redis+cluster://host:port`` (``rediss+cluster://`` for TLS; user and password as in any
Redis URL) names a cluster by one of its nodes; redis-py's cluster client finds the others.
Every key of a game carries the hash tag ``{<game_id>}`` (see `tablelog.service.store.redis_store`),
so the append script and everything else a game needs run on the one node holding its slot.

Reads and single-key commands go through redis-py's cluster client, which follows MOVED and
ASK. The append (`run_script`) is sent by this module to the slot's primary itself, in one
pipeline with the `ReplicaWait` when one is asked, because WAIT counts the replicas that have
the writes of *its own connection*: it must follow the script on the same connection. So the
redirections of that one call are handled here, in the same way: MOVED re-reads the slot
map, ASK repeats the call on the importing node after ASKING, TRYAGAIN (a slot half moved)
and CLUSTERDOWN (a failover under way) are tried again after a short pause, NOSCRIPT (a node
that never ran the script, a new primary) sends the script itself. The store's time limit
bounds the whole (its watchdog). Trying again cannot append twice: the script compares the
game's sequence and keeps each request id's result, so an append that did run answers
"duplicate" or "moved" the second time, never appends again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, PipelineCommand, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from tablelog.service.store.errors import StoreUnavailable

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""The URL schemes that name a cluster, and the plain scheme of each of its nodes."""

RETRY_PAUSE = 0.01
RETRY_PAUSE_MAX = 0.2
"""Pauses between attempts of an append the cluster asked to try again (doubling)."""

UNAVAILABLE_ERRORS: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ClusterError,
    redis_errors.TryAgainError,
    redis_errors.RedisClusterException,
)
"""What redis-py raises when Redis (or the cluster) cannot serve a call now: the store says
StoreUnavailable (the caller may retry), never an internal error."""

RedisClient = aioredis.Redis | RedisCluster
"""The store's client: one Redis, or a cluster."""


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def node_url(url: str) -> str:
    """`url` with the plain scheme redis-py parses (``redis+cluster`` -> ``redis``)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(scheme=CLUSTER_SCHEMES.get(parts.scheme, parts.scheme)))


@dataclass(frozen=True, slots=True)
class ReplicaWait:
    """`tablelog serve --redis-wait N[:timeout_ms]`: after each append, before it is
    acknowledged, WAIT until `replicas` replicas have it (at most `timeout_ms`)."""

    replicas: int
    timeout_ms: int = 1000

    @classmethod
    def parse(cls, text: str) -> ReplicaWait:
        count, _, timeout = text.partition(":")
        try:
            wait = cls(int(count), int(timeout) if timeout else 1000)
        except ValueError:
            raise ValueError(f"--redis-wait {text!r}: expected N or N:TIMEOUT_MS") from None
        if not 1 <= wait.replicas <= 16 or not 1 <= wait.timeout_ms <= 60_000:
            raise ValueError(
                f"--redis-wait {text!r}: N from 1 to 16 replicas, TIMEOUT_MS from 1 to 60000"
            )
        return wait


class ReplicasBehind(StoreUnavailable):
    """WAIT answered fewer replicas than asked: the change is on the primary only, not
    acknowledged (UNAVAILABLE: a retry with the same request id answers it once they have
    it)."""

    def __init__(self, acknowledged: int, wait: ReplicaWait) -> None:
        super().__init__(
            f"the change is stored on the primary but only {acknowledged} of the "
            f"{wait.replicas} replicas asked for confirmed it within {wait.timeout_ms} ms; "
            "retry with the same request id"
        )


class BoundedCluster(RedisCluster):
    """redis-py's cluster client, closed whole (`aclose`), with at most `turns` commands
    (or pipelines) of this client in flight: a node's pool (`max_connections` = `turns`)
    is then never found all busy, which redis-py answers with an error, not a wait. A call
    beyond waits for a turn (the store's watchdog bounds the wait), as
    `WaitingConnectionPool` does for one Redis. A pipeline takes one connection per node,
    so one turn."""

    def __init__(self, *args: Any, turns: int, **kwargs: Any) -> None:
        kwargs["max_connections"] = turns
        super().__init__(*args, **kwargs)
        self.turns = asyncio.Semaphore(turns)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.turns:
            return await super().execute_command(*args, **kwargs)

    async def aclose(self) -> None:
        # redis-py's aclose closes nothing while the client is flagged to read the slot map
        # again (a node failed since its last command, as in a failover), and a refreshed
        # map that drops a node (a master turned replica, not yet listed) closes only its
        # idle connections: theirs would outlive the client. So every node it knows of is
        # closed here as well (closing a connection twice is harmless).
        manager = self.nodes_manager
        known = {
            id(node): node
            for node in (
                *manager.nodes_cache.values(),
                *manager.startup_nodes.values(),
                *self.startup_nodes,
            )
        }
        try:
            await super().aclose()
        finally:
            await asyncio.gather(
                *(node.disconnect() for node in known.values()), return_exceptions=True
            )

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> Any:
        if shard_hint:
            raise redis_errors.RedisClusterException("shard_hint is deprecated in cluster mode")
        # (redis-py's own `pipeline` makes its ClusterPipeline so: mypy takes the class for
        # abstract because a base declares an attribute that __init__ sets.)
        return _TurnPipeline(self, transaction)  # type: ignore[abstract]


class _TurnPipeline(ClusterPipeline):
    async def execute(self, *args: Any, **kwargs: Any) -> list[Any]:
        cluster = self.cluster_client
        assert isinstance(cluster, BoundedCluster)
        async with cluster.turns:
            result: list[Any] = await super().execute(*args, **kwargs)
            return result


def open_cluster(
    url: str, *, turns: int, connect_timeout: float, **settings: Any
) -> BoundedCluster:
    """The cluster client of a ``redis+cluster://`` URL (one seed node; the others are found
    from it). `settings` go to every node's connections."""
    cluster = BoundedCluster.from_url(
        node_url(url),
        turns=turns,
        socket_connect_timeout=connect_timeout,
        # Failures are retried by the store (the append) or reported (the rest): redis-py's
        # own retries of a connection error would repeat each for seconds on a dead node.
        retry=Retry(NoBackoff(), 1),
        **settings,
    )
    assert isinstance(cluster, BoundedCluster)
    return cluster


def open_sync_client(url: str, **settings: Any) -> redis.Redis | redis.RedisCluster:
    """A blocking client of `url` (one Redis or a cluster), for the health probe and tools."""
    if is_cluster_url(url):
        return redis.RedisCluster.from_url(node_url(url), **settings)
    return redis.Redis.from_url(url, **settings)


def close_sync_client(client: redis.Redis | redis.RedisCluster) -> None:
    """Close a client of `open_sync_client`, every connection of it: redis-py's
    `RedisCluster.close` closes each node's client, which does not own its pool, so the
    sockets it opened stayed open until the collector found them."""
    client.close()
    if isinstance(client, redis.RedisCluster):
        for node in client.get_nodes():  # type: ignore[no-untyped-call]  # unannotated in redis-py
            if node.redis_connection is not None:
                node.redis_connection.connection_pool.disconnect()


def open_async_client(url: str) -> RedisClient:
    """A plain asyncio client of `url` (one Redis or a cluster), for tools and tests."""
    if is_cluster_url(url):
        return RedisCluster.from_url(node_url(url))
    return aioredis.Redis.from_url(url)


async def run_script(
    cluster: RedisCluster,
    sha: str,
    source: str,
    keys: Sequence[str],
    args: Sequence[Any],
    wait: ReplicaWait | None,
) -> tuple[Any, int | None]:
    """EVALSHA of the script (`sha` of `source`) on the primary of the keys' slot, followed
    on the same connection by WAIT when `wait` is given (see the module for the
    redirections). The script's reply, and with `wait` the replicas WAIT counted."""
    await cluster.initialize()
    asking: ClusterNode | None = None
    send_source = False
    pause = RETRY_PAUSE
    while True:
        node = asking or cluster.get_node_from_key(keys[0])
        if node is None:  # (only a replica is asked for this way)
            raise redis_errors.SlotNotCoveredError(f"no primary holds {keys[0]!r}")
        commands = [PipelineCommand(0, "ASKING")] if asking is not None else []
        script = PipelineCommand(
            len(commands),
            "EVAL" if send_source else "EVALSHA",
            source if send_source else sha,
            len(keys),
            *keys,
            *args,
        )
        commands.append(script)
        if wait is not None:
            commands.append(PipelineCommand(len(commands), "WAIT", wait.replicas, wait.timeout_ms))
        asking = None
        try:
            await node.execute_pipeline(commands)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            script.result = exc
        result = script.result
        if isinstance(result, redis_errors.AskError):
            asking = cluster.get_node(host=result.host, port=result.port) or ClusterNode(
                result.host, result.port, **cluster.nodes_manager.connection_kwargs
            )
            continue
        if isinstance(result, redis_errors.NoScriptError):
            send_source = True
            continue
        if isinstance(
            result,
            (
                redis_errors.MovedError,
                redis_errors.TryAgainError,
                redis_errors.ClusterDownError,
                redis_errors.ConnectionError,
                redis_errors.TimeoutError,
            ),
        ):
            if not isinstance(result, redis_errors.TryAgainError):
                # The slot has a new primary (a failover, a migration finished) or its node
                # does not answer: read the slot map again (a dead node's slots keep it
                # until the cluster has failed them over).
                await asyncio.sleep(pause)
                await _reread_slots(cluster)
            else:
                await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_PAUSE_MAX)
            continue
        if isinstance(result, Exception):
            raise result
        return result, (_replicas(commands[-1].result) if wait is not None else None)


async def run_script_standalone(
    client: aioredis.Redis,
    sha: str,
    source: str,
    keys: Sequence[str],
    args: Sequence[Any],
    wait: ReplicaWait,
) -> tuple[Any, int]:
    """EVALSHA then WAIT on one connection of a single Redis (one pipeline); after a
    NOSCRIPT (Redis restarted), EVAL of the script itself. The script's reply and the
    replicas WAIT counted."""
    command: tuple[Any, ...] = ("EVALSHA", sha)
    while True:
        async with client.pipeline(transaction=False) as pipe:
            pipe.execute_command(*command, len(keys), *keys, *args)
            pipe.execute_command("WAIT", wait.replicas, wait.timeout_ms)
            result, acknowledged = await pipe.execute(raise_on_error=False)
        if isinstance(result, redis_errors.NoScriptError) and command[0] == "EVALSHA":
            command = ("EVAL", source)
            continue
        if isinstance(result, Exception):
            raise result
        return result, _replicas(acknowledged)


def _replicas(acknowledged: Any) -> int:
    """The replicas WAIT counted; none when WAIT failed (the master turned replica under
    it, UNBLOCKED; the connection dropped): the write is not known to be on any."""
    if isinstance(acknowledged, Exception):
        return 0
    return int(acknowledged)


async def _reread_slots(cluster: RedisCluster) -> None:
    # No node answers yet: the next attempt tries again, up to the time limit.
    with contextlib.suppress(redis_errors.RedisError, redis_errors.RedisClusterException):
        await cluster.nodes_manager.initialize()
