"""The service's health follows its store: a probe PINGs Redis twice a second and, when
Redis does not answer within a second (down, frozen, unreachable), turns the standard
health service NOT_SERVING and makes the store fail every call at once (those in flight
too) with UNAVAILABLE, instead of letting callers wait out the store's time limit; when
Redis answers again, SERVING, and calls go through. So health says NOT_SERVING, and calls
fail, within PROBE_INTERVAL + PROBE_TIMEOUT (1.5 s) of Redis failing.

With the embedded Redis the probe also looks at its data directory (`DataDisk`): a Redis
that exited on a failed write of its append-only file (what Redis does on a full disk under
``appendfsync always``) is NOT_SERVING with its disk named, and stays so until the probe's
own write reaches the disk again (tried at growing intervals, `WRITE_CHECK_INTERVALS`, and
only while the disk shows room).

The probe runs on a thread of its own, over a connection of its own: neither a busy server
loop nor an exhausted connection pool makes it report a failure that is not Redis's; its
verdict reaches the server's loop through thread-safe calls.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

import redis
from grpc_health.v1 import health, health_pb2
from redis.backoff import NoBackoff
from redis.retry import Retry

from tablelog.service.logs import get_logger
from tablelog.service.store import RedisEventStore
from tablelog.service.store.cluster import close_sync_client, open_sync_client
from tablelog.service.store.data_disk import DISK_CHECK_KEY, DataDisk

PROBE_INTERVAL = 0.5
"""Seconds between PINGs."""
PROBE_TIMEOUT = 1.0
"""Seconds a PING may take before Redis counts as failing."""
WRITE_CHECK_INTERVALS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds between the probe's writes while the data disk fails (the last repeats): each
write to a disk still failing ends Redis again, so they are spaced out."""

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING

log = get_logger("tablelog.health")


class StoreProbe:
    """Started with the server (`start`, from its event loop), stopped before it (`stop`)."""

    def __init__(
        self,
        url: str,
        store: RedisEventStore,
        health_servicer: health.aio.HealthServicer,
        services: Sequence[str],
        interval: float = PROBE_INTERVAL,
        timeout: float = PROBE_TIMEOUT,
        data_disk: DataDisk | None = None,
    ) -> None:
        """`data_disk`: the embedded Redis's data directory (None: an external Redis, whose
        disk the probe knows only from what Redis answers)."""
        self._url = url
        self._store = store
        self._health = health_servicer
        self._services = tuple(services)
        self._interval = interval
        self._timeout = timeout
        self._server_loop: asyncio.AbstractEventLoop | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._stop_writes: bool | None = None
        self._data_disk = data_disk
        self._write_checks = 0
        self._next_write_check = 0.0
        self.disk_failing = False
        """Whether the last failure is the disk's (calls then fail STORE_DISK_FAILING)."""
        self.serving = True
        """The last verdict (the server starts SERVING: it checked Redis at start-up)."""
        self.answered = 0
        """PINGs Redis answered in time so far (what shows the probe is alive)."""
        self.failure: str | None = None
        """Why the store failed, while it does (for `/readyz`, `tablelog.service.api.readiness`)."""

    def start(self) -> None:
        self._server_loop = asyncio.get_running_loop()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="store-probe", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(self._interval + self._timeout + 5)
            self._thread = None

    def _run(self) -> None:
        try:
            client = open_sync_client(
                self._url,
                socket_timeout=self._timeout,
                socket_connect_timeout=self._timeout,
                retry=Retry(NoBackoff(), 0),  # one PING, one verdict
            )
        except Exception as exc:  # a URL the client refuses: say so, never die silently
            log.error("health probe cannot start: NOT_SERVING", why=f"{type(exc).__name__}: {exc}")
            self._report(Failure(f"the probe cannot open a client: {exc}"))
            return
        try:
            while not self._stopping.wait(self._interval):
                failure = self._ping(client)
                if failure is None:
                    self.answered += 1
                self._report(self._data_disk_failure(client, failure) or failure)
        finally:
            close_sync_client(client)

    def _ping(self, client: redis.Redis | redis.RedisCluster) -> Failure | None:
        """None when Redis answered in time, else why not (a connection that failed is
        dropped by redis-py: the next PING opens a new one). A cluster is asked whether it
        serves every slot (CLUSTER INFO on one node: while a master is down and not yet
        replaced, the cluster refuses the calls of its slots, and says so)."""
        try:
            if isinstance(client, redis.RedisCluster):
                info = client.cluster_info(target_nodes=redis.RedisCluster.DEFAULT_NODE)
                if info.get("cluster_state") != "ok":
                    return Failure(f"the cluster is {info.get('cluster_state')}")
                return None
            client.ping()
            refusing = self._disk(client)
            return None if refusing is None else Failure(refusing, disk=True)
        except redis.TimeoutError:
            return Failure(f"no answer to PING within {self._timeout:g} s")
        except redis.ResponseError as exc:
            # Redis 7 refuses PING too while it refuses writes for its disk (MISCONF).
            return Failure(f"{type(exc).__name__}: {exc}", disk=str(exc).startswith("MISCONF"))
        except (redis.RedisError, OSError) as exc:  # refused, reset, LOADING, ...
            return Failure(f"{type(exc).__name__}: {exc}")

    def _disk(self, client: redis.Redis) -> str | None:
        """Why Redis refuses writes for its disk, or None: its append-only file failed to be
        written, or its last snapshot failed while it stops writes on that (MISCONF; most
        often a full data disk). Until it clears, health says NOT_SERVING and calls fail
        with the reason (in every durability mode that writes to disk)."""
        try:
            info = client.info("persistence")
        except redis.exceptions.ResponseError:  # INFO denied (an ACL user): no verdict on it
            return None
        if info.get("aof_enabled") and info.get("aof_last_write_status") == "err":
            return "Redis cannot write its append-only file: its data disk is full or failing"
        if info.get("rdb_last_bgsave_status") == "err" and self._stops_writes(client):
            return (
                "Redis's last snapshot to its data disk failed (full or failing) and it "
                "refuses writes until one succeeds"
            )
        return None

    def _stops_writes(self, client: redis.Redis) -> bool:
        if self._stop_writes is None:
            try:
                found = client.config_get("stop-writes-on-bgsave-error")
                self._stop_writes = found.get("stop-writes-on-bgsave-error", "yes") == "yes"
            except redis.RedisError:  # CONFIG denied (an ACL): Redis's default
                self._stop_writes = True
        return self._stop_writes

    def _data_disk_failure(
        self, client: redis.Redis | redis.RedisCluster, failure: Failure | None
    ) -> Failure | None:
        """The embedded Redis's data disk failing (`DataDisk.check`), or None: once found,
        it stands until a write of the probe's reaches Redis's disk, which is tried only
        while Redis answers and the disk shows room, at `WRITE_CHECK_INTERVALS`."""
        disk = self._data_disk
        if disk is None:
            return None
        found = disk.check(lost=failure is not None and not failure.disk)
        if found is None:
            return None
        if failure is None and disk.has_room() and time.monotonic() >= self._next_write_check:
            try:
                # Under appendfsync always, OK comes only once the write is on disk.
                client.set(DISK_CHECK_KEY, str(int(time.time())))
            except (redis.RedisError, OSError) as exc:
                last = len(WRITE_CHECK_INTERVALS) - 1
                delay = WRITE_CHECK_INTERVALS[min(self._write_checks, last)]
                self._write_checks += 1
                self._next_write_check = time.monotonic() + delay
                log.warning(
                    "the data disk still fails a write",
                    error=f"{type(exc).__name__}: {exc}",
                    next_check_in_seconds=delay,
                )
                return Failure(disk.check(lost=True) or found, disk=True)
            disk.cleared()
            self._write_checks = 0
            self._next_write_check = 0.0
            log.warning("the data disk takes writes again", data_dir=str(disk.data_dir))
            return None
        return Failure(found, disk=True)

    def _report(self, failure: Failure | None) -> None:
        serving = failure is None
        if self._server_loop is None:
            return
        if serving == self.serving and (failure is None or not self._news(failure)):
            return
        self.failure = None if failure is None else failure.why
        self.disk_failing = failure is not None and failure.disk
        loop = self._server_loop
        if failure is None:
            log.warning("store answers again: SERVING")
            loop.call_soon_threadsafe(self._store.mark_available)
        else:
            # Also when only the reason changed (Redis unreachable, then found lost to its
            # disk): calls are refused with the latest.
            log.error("store failing: NOT_SERVING", why=failure.why, disk=failure.disk)
            loop.call_soon_threadsafe(
                functools.partial(self._store.mark_unavailable, failure.why, disk=failure.disk)
            )
        if serving == self.serving:
            return
        self.serving = serving
        status = SERVING if serving else NOT_SERVING
        for name in self._services:
            done: Future[None] = asyncio.run_coroutine_threadsafe(
                self._health.set(name, status), loop
            )
            done.add_done_callback(_log_failure)

    def _news(self, failure: Failure) -> bool:
        """Whether a failure while failing already is worth telling the store: it is, or is
        no longer, the disk's, or the disk's reason changed (an unreachable Redis's words
        vary from one PING to the next: not worth a log line each)."""
        if failure.disk != self.disk_failing:
            return True
        return failure.disk and failure.why != self.failure


@dataclass(frozen=True)
class Failure:
    """Why the store fails; `disk`: Redis cannot write its data disk."""

    why: str
    disk: bool = False


def _log_failure(done: Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.error("health status not updated", error=str(done.exception()))
