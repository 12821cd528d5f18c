"""Health that load balancers and orchestrators read (issue 27), during a real Redis outage
(the test stops its own Redis with SIGSTOP, then lets it go on): `/readyz` on the HTTP port
and the gRPC health service (for the server, TablelogService and ClubService) follow Redis;
`/healthz` and `python -m tablelog.service.api.healthcheck --live` (Kubernetes' liveness) do not."""

from __future__ import annotations

import asyncio
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator, MutableMapping
from typing import Any

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablelog.service.api import healthcheck
from tablelog.service.api.readiness import Readiness, answer_health
from tablelog.service.api.server import CLUB_SERVICE_NAME, SERVICE_NAME, BackgroundServer, channel
from tablelog.service.store.embedded import EmbeddedRedis
from tests.service.conftest import own_embedded_redis
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.support.faults import NOT_SERVING, SERVING, wait_for_health

OUTAGE_LIMIT = 5.0
"""Seconds within which the probe (1.5 s by design) must have seen Redis go and come back."""


@pytest.fixture
def redis_server(tmp_path: Any) -> Iterator[EmbeddedRedis]:
    with own_embedded_redis(tmp_path / "redis") as embedded:
        yield embedded
        pid = embedded.pid
        if pid is not None:
            os.kill(pid, signal.SIGCONT)  # a failed test must not leave it stopped


@pytest.fixture
def served(redis_server: EmbeddedRedis) -> Iterator[BackgroundServer]:
    server = BackgroundServer(
        redis_server.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    try:
        yield server
    finally:
        server.stop()


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def grpc_health(target: str, service: str) -> int:
    with channel(target, OWNER_TOKEN) as opened:
        stub: Any = health_pb2_grpc.HealthStub(opened)  # the stubs type it loosely
        status: int = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
        return status


def image_check(served: BackgroundServer, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setenv("TABLELOG_ADDRESS", served.target)
    monkeypatch.delenv("TABLELOG_TLS_CERT", raising=False)
    return healthcheck.main(list(args))


def test_readiness_follows_redis_and_liveness_does_not(
    served: BackgroundServer, redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("", SERVICE_NAME, CLUB_SERVICE_NAME)
    assert http_get(served.http_url + "/healthz") == (200, "alive\n")
    assert http_get(served.http_url + "/readyz") == (200, "ready\n")
    assert [grpc_health(served.target, name) for name in names] == [SERVING] * 3
    assert image_check(served, monkeypatch) == 0
    assert image_check(served, monkeypatch, "--live") == 0

    pid = redis_server.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # Redis stops answering (its supervisor sees it alive)
    try:
        wait_for_health(served.target, NOT_SERVING, within=OUTAGE_LIMIT)
        status, text = http_get(served.http_url + "/readyz")
        assert status == 503
        assert text.startswith("not ready: the store is failing: ")
        assert [grpc_health(served.target, name) for name in names] == [NOT_SERVING] * 3
        assert image_check(served, monkeypatch) == 1  # readiness and start-up
        # Liveness: the process answers, so no restart; Redis is not the server's to cure.
        assert http_get(served.http_url + "/healthz") == (200, "alive\n")
        assert image_check(served, monkeypatch, "--live") == 0
        # The web app's files still answer: an HTTP load balancer must read /readyz.
        assert http_get(served.http_url + "/")[0] in (200, 404)
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for_health(served.target, SERVING, within=OUTAGE_LIMIT)
    assert http_get(served.http_url + "/readyz") == (200, "ready\n")
    assert grpc_health(served.target, CLUB_SERVICE_NAME) == SERVING


def test_readyz_is_not_ready_before_serving_and_once_stopping() -> None:
    readiness = Readiness()

    def get(path: str, method: str = "GET") -> tuple[int, bytes]:
        sent: list[MutableMapping[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": method, "path": path, "headers": []}
        asyncio.run(answer_health(readiness, scope, receive, send))
        return sent[0]["status"], sent[1].get("body", b"")

    assert get("/readyz") == (503, b"not ready: starting\n")
    assert get("/healthz") == (200, b"alive\n")
    readiness.started = True
    assert get("/readyz") == (200, b"ready\n")
    assert get("/readyz", "POST")[0] == 405
    readiness.stopping = True
    assert get("/readyz") == (503, b"not ready: stopping\n")
    assert get("/healthz") == (200, b"alive\n")
