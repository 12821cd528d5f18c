"""Every `--redis-url` form the docs accept (docs/service.md, External Redis and Redis
Cluster; a unix socket as redis-py names it) starts a live health probe: the URL goes
through what `tablelog serve` does to it (`tablelog.service.api.cli.redis_url`: the password file
and the CA folded in) and the probe PINGs the Redis it names, over and over. A unix socket's
`unix:///path` came out as `unix:/path`, which redis-py refuses: the probe's thread died at start
and health was never checked again."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from grpc_health.v1 import health

from tablelog.service.api.cli import redis_url
from tablelog.service.api.health import StoreProbe
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis, free_port
from tablelog.service.store.redis_store import with_credentials
from tests.service.conftest import standalone_redis
from tests.service.helpers import CHAIN
from tests.service.support import Certificates, make_certificates
from tests.support.cluster import LocalCluster

PASSWORD = "probe-s3cret"
INTERVAL = 0.05
"""The probe's interval here: a live probe answers several PINGs within a second."""


def served_url(url: str, password_file: Path | None = None, ca: Path | None = None) -> str:
    """The URL `tablelog serve --redis-url url [--redis-password-file] [--redis-ca]` uses."""
    args = argparse.Namespace(
        redis_url=url,
        redis_password_file=str(password_file) if password_file else None,
        redis_ca=str(ca) if ca else None,
    )
    served = redis_url(args)
    assert served is not None
    return served


def assert_probe_lives(url: str) -> None:
    """A probe on `url` answers PINGs (three, within ten seconds) and keeps SERVING."""

    async def run() -> None:
        store = RedisEventStore.from_url(url, chain=CHAIN)
        servicer = health.aio.HealthServicer()
        probe = StoreProbe(url, store, servicer, [""], interval=INTERVAL)
        probe.start()
        try:
            deadline = time.monotonic() + 10
            while probe.answered < 3 and time.monotonic() < deadline:
                await asyncio.sleep(INTERVAL)
            assert probe.answered >= 3, f"the probe on {url} is not PINGing"
            assert probe.serving
        finally:
            probe.stop()
            await store.close()

    asyncio.run(run())


def password_file(directory: Path) -> Path:
    path = directory / "redis-password"
    path.write_text(PASSWORD + "\n")
    return path


def test_a_unix_socket(embedded_redis: EmbeddedRedis) -> None:
    if not embedded_redis.url.startswith("unix://"):
        pytest.skip("the embedded Redis listens on TCP here (no unix sockets)")
    assert embedded_redis.url.startswith("unix:///")
    url = served_url(embedded_redis.url)
    assert_probe_lives(url)
    assert url == embedded_redis.url  # nothing to fold in: the URL as given


@pytest.fixture(scope="module")
def protected_socket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone Redis needing a password, on a unix socket (and a port): its
    `unix:///...` URL without the password."""
    data = tmp_path_factory.mktemp("socket-redis")
    socket = data / "redis.sock"
    port = free_port()
    with standalone_redis(
        data,
        "--unixsocket", str(socket), "--unixsocketperm", "700", "--requirepass", PASSWORD,
        port=port,
        url=f"redis://:{PASSWORD}@127.0.0.1:{port}/0",
    ):  # fmt: skip
        yield f"unix://{socket}"


def test_a_unix_socket_with_a_password_file(protected_socket: str, tmp_path: Path) -> None:
    url = served_url(protected_socket, password_file(tmp_path))
    assert url.startswith("unix://:")
    assert_probe_lives(url)


def test_a_unix_socket_with_the_password_in_the_url(protected_socket: str) -> None:
    url = served_url(protected_socket.replace("unix://", f"unix://:{PASSWORD}@"))
    assert_probe_lives(url)


@pytest.fixture(scope="module")
def protected_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone Redis needing a password: its redis:// URL without it."""
    port = free_port()
    with standalone_redis(
        tmp_path_factory.mktemp("protected-redis"),
        "--requirepass", PASSWORD,
        port=port,
        url=f"redis://:{PASSWORD}@127.0.0.1:{port}/0",
    ):  # fmt: skip
        yield f"redis://127.0.0.1:{port}/0"


def test_redis_with_the_password_in_the_url(protected_redis: str) -> None:
    url = served_url(protected_redis.replace("redis://", f"redis://:{PASSWORD}@"))
    assert_probe_lives(url)


def test_redis_with_a_password_file(protected_redis: str, tmp_path: Path) -> None:
    assert_probe_lives(served_url(protected_redis, password_file(tmp_path)))


def test_plain_redis(standalone_redis_url: str) -> None:
    assert_probe_lives(served_url(standalone_redis_url))


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("probe-tls"), "redis")


@pytest.fixture(scope="module")
def tls_redis(
    tmp_path_factory: pytest.TempPathFactory, certificates: Certificates
) -> Iterator[str]:
    """A Redis on a TLS port only: its rediss:// URL without the CA."""
    tls_port = free_port()
    plain = f"rediss://127.0.0.1:{tls_port}/0"
    with standalone_redis(
        tmp_path_factory.mktemp("probe-tls-redis"),
        "--port", "0",
        "--tls-port", str(tls_port),
        "--tls-cert-file", str(certificates.certificate),
        "--tls-key-file", str(certificates.key),
        "--tls-ca-cert-file", str(certificates.ca),
        "--tls-auth-clients", "no",
        url=with_credentials(plain, ca_file=str(certificates.ca)),
    ):  # fmt: skip
        yield plain


def test_tls_redis_with_a_ca(tls_redis: str, certificates: Certificates) -> None:
    assert_probe_lives(served_url(tls_redis, ca=certificates.ca))


def test_a_redis_cluster(redis_cluster: LocalCluster) -> None:
    assert_probe_lives(served_url(redis_cluster.url))
