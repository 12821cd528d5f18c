"""An external Redis with a password, an ACL user and TLS (rediss://), as the deploy files
run it (docs/service.md, External Redis): Debian's redis-server, started here."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tablelog.service.access.quotas import CallerLimits
from tablelog.service.api.health import PROBE_INTERVAL, PROBE_TIMEOUT
from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import free_port
from tablelog.service.store.redis_store import redacted, with_credentials
from tablelog_client import Client
from tests.service.conftest import standalone_redis
from tests.service.helpers import CHAIN, splendor_line
from tests.service.support import Certificates, ServeProcess, make_certificates, run_serve
from tests.support.faults import SERVING, health_status

pytestmark = pytest.mark.slow

PASSWORD = "default-s3cret"
ACL_PASSWORD = "alice-s3cret"
ACL_RIGHTS = (
    "~tl:*", "+@stream", "+@hash", "+@list", "+@sortedset", "+@set", "+@string", "+@keyspace",
    "+@scripting",
    "+@connection", "-@dangerous",
)  # fmt: skip
"""What docs/service.md (External Redis) says tablelog's ACL user needs: tablelog's keys,
the commands of its data types and scripts, nothing dangerous (no CONFIG)."""


@pytest.fixture(scope="module")
def protected_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis whose default user needs a password and with an ACL user "alice" holding
    only `ACL_RIGHTS`; its address without credentials."""
    port = free_port()
    with standalone_redis(
        tmp_path_factory.mktemp("protected-redis"),
        "--requirepass", PASSWORD,
        "--user", "alice", "on", f">{ACL_PASSWORD}", *ACL_RIGHTS,
        port=port,
        url=f"redis://alice:{ACL_PASSWORD}@127.0.0.1:{port}/0",
    ):  # fmt: skip
        yield f"redis://127.0.0.1:{port}/0"


def with_user(url: str, user: str, password: str) -> str:
    return url.replace("redis://", f"redis://{user}:{password}@")


def test_an_acl_user_records_and_watches(protected_redis: str) -> None:
    """Every connection the server opens (the request pool, a watch tail's own, the
    health probe's) authenticates as the URL's user."""
    url = with_user(protected_redis, "alice", ACL_PASSWORD)
    # With the limits of `tablelog serve`: the club's quota leases through a script too.
    running = BackgroundServer(
        url, chain=CHAIN, caller_limits=CallerLimits(), club_storage=1 << 30
    ).start()
    try:
        with Client(running.target, token=running.owner_token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            line = splendor_line(seed=8)
            client.record(game.game_id, line[0])
            watched = next(iter(client.watch(game.game_id, from_revision=1, timeout=10)))
            assert watched.update.event.revision == 1
            # The health probe's PINGs authenticate too (a failing probe would turn the
            # server NOT_SERVING within PROBE_INTERVAL + PROBE_TIMEOUT).
            time.sleep(PROBE_INTERVAL + PROBE_TIMEOUT + 0.3)
            assert health_status(running.target) == SERVING
            client.record(game.game_id, line[1])
            assert client.get_game(game.game_id).version == game.version + 2
    finally:
        running.stop()
    with redis.Redis.from_url(url) as direct:  # the appends counted, by the lease script
        assert int(direct.get("tl:club:local:bytes") or 0) > 0


def test_serve_reads_the_password_from_a_file(protected_redis: str, tmp_path: Path) -> None:
    secret = tmp_path / "redis-password"
    secret.write_text(PASSWORD + "\n")
    serving = ServeProcess(
        tmp_path / "data", "--redis-url", protected_redis, "--redis-password-file", str(secret)
    ).start()
    try:
        with Client(serving.address, token=serving.token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            client.record(game.game_id, splendor_line(seed=8)[0])
    finally:
        assert serving.stop() == 0


def test_a_wrong_password_stops_serve_at_start_without_showing_it(
    protected_redis: str, tmp_path: Path
) -> None:
    guess = "hunter2-guess"
    refused = run_serve(
        "--address", "127.0.0.1:0",
        "--data-dir", str(tmp_path),
        "--redis-url", with_user(protected_redis, "alice", guess),
    )  # fmt: skip
    assert refused.returncode == 1
    assert "refused the credentials" in refused.stderr
    assert "alice:***@127.0.0.1" in refused.stderr
    assert guess not in refused.stderr + refused.stdout


def test_no_password_stops_serve_at_start(protected_redis: str, tmp_path: Path) -> None:
    refused = run_serve(
        "--address", "127.0.0.1:0", "--data-dir", str(tmp_path), "--redis-url", protected_redis
    )  # fmt: skip
    assert refused.returncode == 1
    assert "needs a password" in refused.stderr


@pytest.fixture(scope="module")
def redis_certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("redis-tls"), "redis")


@pytest.fixture(scope="module")
def tls_redis(
    tmp_path_factory: pytest.TempPathFactory, redis_certificates: Certificates
) -> Iterator[str]:
    """Debian's redis-server (built with TLS) on a TLS port only, with a certificate of a
    CA of the test's own; its rediss:// address without the CA."""
    tls_port = free_port()
    plain = f"rediss://127.0.0.1:{tls_port}/0"
    with standalone_redis(
        tmp_path_factory.mktemp("tls-redis"),
        "--port", "0",
        "--tls-port", str(tls_port),
        "--tls-cert-file", str(redis_certificates.certificate),
        "--tls-key-file", str(redis_certificates.key),
        "--tls-ca-cert-file", str(redis_certificates.ca),
        "--tls-auth-clients", "no",
        url=with_credentials(plain, ca_file=str(redis_certificates.ca)),
    ):  # fmt: skip
        yield plain


def test_serve_on_a_tls_redis_with_its_ca(
    tls_redis: str, redis_certificates: Certificates, tmp_path: Path
) -> None:
    serving = ServeProcess(
        tmp_path / "data", "--redis-url", tls_redis, "--redis-ca", str(redis_certificates.ca)
    ).start()
    try:
        with Client(serving.address, token=serving.token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            client.record(game.game_id, splendor_line(seed=8)[0])
            assert client.verify(game.game_id).ok
    finally:
        assert serving.stop() == 0


def test_a_tls_redis_whose_certificate_is_not_trusted_stops_serve_at_start(
    tls_redis: str, tmp_path: Path
) -> None:
    refused = run_serve(
        "--address", "127.0.0.1:0", "--data-dir", str(tmp_path), "--redis-url", tls_redis
    )  # fmt: skip
    assert refused.returncode == 1
    assert "cannot reach Redis" in refused.stderr
    assert "certificate verify failed" in refused.stderr


def test_a_redis_ca_needs_a_tls_url(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("")
    refused = run_serve(
        "--data-dir", str(tmp_path),
        "--redis-url", "redis://127.0.0.1:1/0",
        "--redis-ca", str(tmp_path / "ca.pem"),
    )  # fmt: skip
    assert refused.returncode == 2
    assert "rediss://" in refused.stderr


def test_credentials_are_folded_into_the_url_and_hidden_when_shown() -> None:
    url = with_credentials("redis://alice@redis:6379/0", "p@ss:word/1", None)
    assert url == "redis://alice:p%40ss%3Aword%2F1@redis:6379/0"
    assert redacted(url) == "redis://alice:***@redis:6379/0"
    assert with_credentials("redis://redis:6379/0", "x") == "redis://:x@redis:6379/0"
    assert redacted("redis://redis:6379/0") == "redis://redis:6379/0"
    tls = with_credentials("rediss://:old@redis:6380/0?ssl_ca_certs=/a.pem", "new", "/b.pem")
    assert tls == "rediss://:new@redis:6380/0?ssl_ca_certs=%2Fb.pem"
    with pytest.raises(ValueError, match="rediss://"):
        with_credentials("redis://redis:6379/0", ca_file="/ca.pem")
