"""What the ports check before they read (`tablelog.service.api.http_guard`,
`tablelog.service.access.anonymous`): the HTTP port checks the token and the Content-Length from the
headers before it reads a body, bounds the bodies in progress per peer and in all and their rate;
both ports give callers without a valid token a budget of refusals per peer, spent before the token
is looked up, and sample the log lines of their refusals."""

from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import structlog

from tablelog.service.access import anonymous
from tablelog.service.access.identity import LOCAL_CLUB
from tablelog.service.api.http_guard import MAX_BODY_BYTES, BodyLimits
from tablelog.service.api.http_port import HttpApp
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.errors import LimitReached
from tablelog.service.logs import configure_logging
from tablelog.service.metrics import REGISTRY
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2, service_pb2_grpc
from tests.service.helpers import CHAIN, OWNER_TOKEN, rpc_refused

LIST_GAMES = "/tablelog.v1.TablelogService/ListGames"


@pytest.fixture
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """A server of its own for each test: the budgets of refusals are per process."""
    configure_logging("warning", json=True)
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    # The budget's clock stands still: none is earned back while a slow (loaded) run makes
    # its calls, so the calls a budget allows are exactly its burst.
    assert running.built is not None
    running.built.gate.anonymous = anonymous.AnonymousBudget(clock=lambda: 0.0)
    yield running
    running.stop()


def http_app(served: BackgroundServer) -> HttpApp:
    assert served.built is not None
    assert served.built.http is not None
    app = served.built.http.server.config.app
    assert isinstance(app, HttpApp)
    return app


def http_port(served: BackgroundServer) -> int:
    return int(served.http_url.rsplit(":", 1)[1])


def head(
    length: int, token: str | None = None, path: str = LIST_GAMES, extra: tuple[str, ...] = ()
) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/proto",
        f"Content-Length: {length}",
        *extra,
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(connection: socket.socket, seconds: float = 5.0) -> tuple[int, bytes, bool]:
    """The status and head of the answer on `connection`, and whether the server then
    closed the connection; within `seconds` or the test fails."""
    connection.settimeout(seconds)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        assert chunk, f"closed without an answer: {received!r}"
        received += chunk
    status = int(received.split(b" ", 2)[1])
    closed = False
    try:
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                closed = True
                break
            received += chunk
    except TimeoutError:
        pass
    return status, received, closed


def test_a_call_without_a_token_is_refused_before_its_body_is_read(
    served: BackgroundServer,
) -> None:
    """Main read the whole body first: the head and 1 KiB of a 1 MiB body got no answer."""
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(1024 * 1024) + b"\0" * 1024)
        started = time.monotonic()
        status, received, closed = answer(caller)
        assert time.monotonic() - started < 3
    assert status == 401, received
    assert closed, "the unread body's connection must be dropped with the answer"
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(1024 * 1024, token="not-a-token") + b"\0" * 1024)
        assert answer(caller)[0] == 401


def test_a_content_length_over_the_limit_is_refused_at_once(served: BackgroundServer) -> None:
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(MAX_BODY_BYTES + 1, token=OWNER_TOKEN))  # and no body at all
        status, received, closed = answer(caller)
    assert status == 429, received
    assert b"resource_exhausted" in received
    assert closed
    # A body within the limit from the same member is read and answered.
    body = service_pb2.ListGamesRequest().SerializeToString()
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(len(body), token=OWNER_TOKEN) + body)
        assert answer(caller, 2)[0] == 200


def test_a_body_slower_than_the_minimum_rate_is_refused(served: BackgroundServer) -> None:
    app = http_app(served)
    app.bodies.limits = BodyLimits(bytes_per_second=1000, grace_seconds=0.5)
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(100_000, token=OWNER_TOKEN) + b"\0" * 10)
        started = time.monotonic()
        status, received, closed = answer(caller, 10)
        assert time.monotonic() - started < 5
    assert status == 504, received  # deadline_exceeded
    assert b"too slowly" in received
    assert closed
    assert app.bodies.total == 0


def test_bodies_in_progress_are_bounded_per_peer_and_in_all(served: BackgroundServer) -> None:
    app = http_app(served)
    app.bodies.limits = BodyLimits(per_peer=2, total=3, bytes_per_second=1, grace_seconds=30)
    port = http_port(served)
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
    try:
        for connection in held:
            connection.sendall(head(100_000, token=OWNER_TOKEN) + b"\0" * 10)
        deadline = time.monotonic() + 5
        while app.bodies.total < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert app.bodies.total == 2
        with socket.create_connection(("127.0.0.1", port), timeout=10) as third:
            third.sendall(head(100_000, token=OWNER_TOKEN) + b"\0" * 10)
            status, received, closed = answer(third)
        assert status == 429, received
        assert b"bodies in progress" in received
        assert closed
        # Another peer would still have room (per_peer): the total bounds it at 3.
        app.bodies.by_peer["10.9.9.9"] += 1
        app.bodies.total += 1
        try:
            assert not app.bodies.take("10.9.9.8")
        finally:
            app.bodies.give("10.9.9.9")
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + 5
    while app.bodies.total and time.monotonic() < deadline:
        time.sleep(0.02)
    assert app.bodies.total == 0  # closed connections give their slots back


def _bad_calls_over_grpc(served: BackgroundServer, count: int) -> list[grpc.StatusCode]:
    codes = []
    with channel(served.target, "not-a-token") as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        for _ in range(count):
            code, _details = rpc_refused(lambda: stub.ListGames(service_pb2.ListGamesRequest()))
            codes.append(code)
    return codes


def _count_lookups(served: BackgroundServer) -> list[str]:
    assert served.built is not None
    members: Any = served.built.gate.members
    looked: list[str] = []
    resolve = members.resolve

    async def counting(token: str) -> Any:
        looked.append(token)
        return await resolve(token)

    members.resolve = counting
    return looked


def test_callers_without_a_valid_token_have_a_budget_per_peer_before_any_lookup(
    served: BackgroundServer,
) -> None:
    """Main looked every token up and logged every refusal: 1,270 a second from one
    client, a Redis GET and a warning line each."""
    with channel(served.target, OWNER_TOKEN) as opened:  # a member known to this process
        member = service_pb2_grpc.TablelogServiceStub(opened)
        member.ListGames(service_pb2.ListGamesRequest())
    looked = _count_lookups(served)
    codes = _bad_calls_over_grpc(served, 60)
    burst = anonymous.ANONYMOUS_BURST
    assert codes[:burst] == [grpc.StatusCode.UNAUTHENTICATED] * burst
    assert codes[-10:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 10
    # Lookups stop with the budget.
    assert len(looked) == burst, len(looked)
    # The HTTP port shares the budget, and refuses before it reads a body.
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        caller.sendall(head(1024, token="another-bad-one"))
        status, received, _closed = answer(caller)
    assert status == 429, received
    assert b"Too many calls without a valid token" in received
    # A member this process has served before is served from the same address, even
    # after the cache of resolved tokens is dropped (a member changed).
    assert served.built is not None
    served.built.gate.forget(LOCAL_CLUB)
    with channel(served.target, OWNER_TOKEN) as opened:
        service_pb2_grpc.TablelogServiceStub(opened).ListGames(service_pb2.ListGamesRequest())


def test_refusals_of_anonymous_callers_are_logged_sampled(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured = io.StringIO()
    monkeypatch.setattr(
        "tablelog.service.api.interceptors.log",
        structlog.wrap_logger(
            structlog.PrintLogger(captured),
            processors=[structlog.processors.JSONRenderer()],
            wrapper_class=structlog.BoundLogger,
        ),
    )
    sampler = anonymous.LogSampler(per_second=5, clock=lambda: 100.0)  # one second
    monkeypatch.setattr("tablelog.service.api.interceptors.SAMPLER", sampler)
    _bad_calls_over_grpc(served, 30)
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert len(lines) == 5
    # The others are counted, not written (a call the server answers before its gate, say
    # a connection's first one refused elsewhere, may not reach the sampler at all).
    left_out = sampler.suppressed
    assert 20 <= left_out <= 25
    assert {line["status"] for line in lines} == {"UNAUTHENTICATED"}
    sampler._clock = lambda: 101.0  # the next second: the count rides on the next line
    # A few calls, as one of them may be answered before the sampler (see above); the server
    # writes a call's line after its answer has gone: wait for the first.
    _bad_calls_over_grpc(served, 3)
    deadline = time.monotonic() + 10
    while len(captured.getvalue().splitlines()) == len(lines) and time.monotonic() < deadline:
        time.sleep(0.01)
    following = json.loads(captured.getvalue().splitlines()[len(lines)])
    assert following["suppressed"] == left_out


def test_peers_are_told_apart_by_address_and_ipv6_by_its_64() -> None:
    assert anonymous.peer_of("ipv4:10.0.0.5:51234") == "ipv4:10.0.0.5"
    assert anonymous.peer_of("ipv6:[2001:db8::1]:443") == anonymous.peer_of(
        "ipv6:[2001:db8::ffff:1]:80"
    )
    assert anonymous.peer_of("ipv6:[2001:db8:0:1::1]:443") != anonymous.peer_of(
        "ipv6:[2001:db8::1]:443"
    )
    budget = anonymous.AnonymousBudget(per_second=1, burst=2, clock=lambda: 0.0)
    budget.spend("ipv4:1.2.3.4:1")
    budget.check("ipv4:1.2.3.4:2")
    budget.spend("ipv4:1.2.3.4:3")
    with pytest.raises(LimitReached):
        budget.check("ipv4:1.2.3.4:4")
    budget.check("ipv4:1.2.3.5:4")


TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"traceparent: 00-{TRACE_ID}-00f067aa0ba902b7-01"


class Account:
    """What the server counts and logs of the calls a test makes: the deltas of
    `tablelog_rpc_calls_total` and `tablelog_refused_calls_total`, and the call lines."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.captured = io.StringIO()
        monkeypatch.setattr(
            "tablelog.service.api.interceptors.log",
            structlog.wrap_logger(
                structlog.PrintLogger(self.captured),
                processors=[structlog.processors.JSONRenderer()],
                wrapper_class=structlog.BoundLogger,
            ),
        )
        # A sampler of its own: anonymous refusals' lines are sampled per process.
        monkeypatch.setattr(
            "tablelog.service.api.interceptors.SAMPLER",
            anonymous.LogSampler(per_second=100, clock=lambda: 0.0),
        )
        self.before = self._counts()

    @staticmethod
    def _counts() -> dict[tuple[str, ...], float]:
        counts: dict[tuple[str, ...], float] = {}
        for metric in REGISTRY.collect():
            for sample in metric.samples:
                if sample.name == "tablelog_rpc_calls_total":
                    key = ("call", sample.labels["method"], sample.labels["transport"])
                    counts[(*key, sample.labels["code"])] = sample.value
                elif sample.name == "tablelog_refused_calls_total":
                    counts[("refused", sample.labels["reason"])] = sample.value
        return counts

    def grown(self) -> dict[tuple[str, ...], float]:
        after = self._counts()
        return {
            key: value - self.before.get(key, 0.0)
            for key, value in after.items()
            if value != self.before.get(key, 0.0)
        }

    def lines(self, deadline: float = 5.0) -> list[dict[str, Any]]:
        """The call lines written (waiting a moment for the first)."""
        until = time.monotonic() + deadline
        while not self.captured.getvalue() and time.monotonic() < until:
            time.sleep(0.01)
        return [json.loads(line) for line in self.captured.getvalue().splitlines()]


def _request_id(received: bytes) -> str | None:
    for line in received.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"x-request-id":
            return value.strip().decode()
    return None


def _one_refused_call(
    account: Account, code: str, reason: str | None, request_id: str
) -> dict[str, Any]:
    grown = account.grown()
    assert grown.get(("call", "ListGames", "http", code)) == 1, grown
    if reason is not None:
        assert grown.get(("refused", reason)) == 1, grown
    lines = [line for line in account.lines() if line.get("request_id") == request_id]
    assert len(lines) == 1, account.lines()
    line = lines[0]
    assert (line["method"], line["transport"], line["status"]) == ("ListGames", "http", code)
    assert line["trace_id"] == TRACE_ID
    return line


def test_a_body_over_the_limit_is_counted_and_logged_with_the_calls_ids(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: the calls the HTTP port refuses before their handler were in no metric,
    and their lines (if any) carried no trace or request id."""
    account = Account(monkeypatch)
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        sent = (TRACEPARENT, "x-request-id: too-large-1")
        caller.sendall(head(MAX_BODY_BYTES + 1, token=OWNER_TOKEN, extra=sent))
        status, received, _closed = answer(caller)
    assert status == 429, received
    assert b"resource_exhausted" in received
    assert _request_id(received) == "too-large-1"
    line = _one_refused_call(account, "RESOURCE_EXHAUSTED", "BODY_TOO_LARGE", "too-large-1")
    assert line["refused"] == "before the body"


def test_a_token_refused_before_the_body_is_counted_and_logged_with_the_calls_ids(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = Account(monkeypatch)
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        sent = (TRACEPARENT, "x-request-id: no-token-1")
        caller.sendall(head(1024, token="not-a-token", extra=sent) + b"\0" * 16)
        status, received, _closed = answer(caller)
    assert status == 401, received
    assert _request_id(received) == "no-token-1"
    _one_refused_call(account, "UNAUTHENTICATED", "TOKEN_UNKNOWN", "no-token-1")


def test_a_body_too_slow_is_counted_by_reason_and_logged_with_the_calls_ids(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = http_app(served)
    app.bodies.limits = BodyLimits(bytes_per_second=1000, grace_seconds=0.5)
    account = Account(monkeypatch)
    with socket.create_connection(("127.0.0.1", http_port(served)), timeout=10) as caller:
        sent = (TRACEPARENT, "x-request-id: too-slow-1")
        caller.sendall(head(100_000, token=OWNER_TOKEN, extra=sent) + b"\0" * 10)
        status, received, _closed = answer(caller, 10)
    assert status == 504, received
    assert _request_id(received) == "too-slow-1"
    line = _one_refused_call(account, "DEADLINE_EXCEEDED", "BODY_TOO_SLOW", "too-slow-1")
    assert line["refused"] == "with the body"


def test_bodies_in_progress_refused_are_counted_by_reason_and_logged_with_the_calls_ids(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = http_app(served)
    app.bodies.limits = BodyLimits(per_peer=1, total=1, bytes_per_second=1, grace_seconds=30)
    port = http_port(served)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as holding:
        holding.sendall(head(100_000, token=OWNER_TOKEN) + b"\0" * 10)
        deadline = time.monotonic() + 5
        while app.bodies.total < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        account = Account(monkeypatch)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as second:
            sent = (TRACEPARENT, "x-request-id: crowded-1")
            second.sendall(head(100_000, token=OWNER_TOKEN, extra=sent) + b"\0" * 10)
            status, received, _closed = answer(second)
        assert status == 429, received
        assert _request_id(received) == "crowded-1"
        _one_refused_call(account, "RESOURCE_EXHAUSTED", "BODIES_IN_PROGRESS", "crowded-1")
