"""Metrics, traces and request ids (issue 27): Prometheus `/metrics` on the HTTP port (and
`--metrics-address` without it) counting calls per method, transport and code, with
bounded labels; a W3C `traceparent`'s trace id in the call's log lines; a request id made
when the caller sends none and returned as `x-request-id`; uvicorn's lines in JSON."""

from __future__ import annotations

import io
import json
import re
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog

from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import EmbeddedRedis, free_port
from tablelog.service.tracing import trace_id_of
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tests.service.helpers import CHAIN, OWNER_TOKEN, splendor_line
from tests.service.support import ServeProcess

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SAMPLE = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


@pytest.fixture(scope="module")
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    configure_logging("warning", json=True)
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    yield running
    running.stop()


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        assert answer.headers["content-type"].startswith("text/plain; version=")
        text = answer.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        found = SAMPLE.match(line)
        assert found, line
        labels = frozenset(
            tuple(pair.split("=", 1)) for pair in re.findall(r'\w+="[^"]*"', found["labels"] or "")
        )
        samples[(found["name"], frozenset((k, v.strip('"')) for k, v in labels))] = float(
            found["value"]
        )
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_calls_per_method_transport_and_code_after_a_recorded_game(
    served: BackgroundServer,
) -> None:
    before = scrape(served.http_url)
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
        line = splendor_line(seed=3)[:12]
        for move in line:
            client.record(game.game_id, move)
        with pytest.raises(TablelogError):
            client.record(game.game_id, "take w w w w")  # refused: not a legal move here
    with urllib.request.urlopen(served.http_url + "/readyz", timeout=5):
        pass
    after = scrape(served.http_url)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    ok = {"method": "RecordMove", "transport": "grpc", "code": "OK"}
    assert grew("tablelog_rpc_calls_total", **ok) == len(line)
    assert grew("tablelog_rpc_calls_total", method="CreateGame", transport="grpc", code="OK") == 1
    refused = sum(
        grew("tablelog_rpc_calls_total", method="RecordMove", transport="grpc", code=code)
        for code in ("INVALID_ARGUMENT", "FAILED_PRECONDITION")
    )
    assert refused == 1
    reasons = {
        dict(labels)["reason"]: grown
        for (name, labels), counted in after.items()
        if name == "tablelog_refused_calls_total"
        and (grown := counted - before.get((name, labels), 0.0))
    }
    assert sum(reasons.values()) == 1, reasons
    assert set(reasons) <= {"ILLEGAL_MOVE", "INVALID_NOTATION"}, reasons
    count = grew("tablelog_rpc_duration_seconds_count", method="RecordMove", transport="grpc")
    assert count >= len(line)
    assert (
        grew(
            "tablelog_rpc_duration_seconds_bucket", method="RecordMove", transport="grpc", le="+Inf"
        )
        == count
    )
    assert value(after, "tablelog_redis_up") == 1
    assert value(after, "tablelog_ready") == 1
    assert value(after, "tablelog_head_cache_bytes") > 0
    assert grew("tablelog_head_cache_hits_total") + grew("tablelog_head_cache_misses_total") > 0
    for name in ("tablelog_watchers", "tablelog_watched_games", "tablelog_append_retries_total"):
        assert (name, frozenset()) in after, name
    # Bounded labels: no game id, no member, no club in any sample.
    exposition = urllib.request.urlopen(served.http_url + "/metrics", timeout=10).read().decode()
    assert game.game_id not in exposition
    label_names = {k for (_name, labels) in after for k, _v in labels}
    assert label_names <= {"method", "transport", "code", "reason", "result", "le"}


def test_a_request_id_is_made_returned_and_echoed(served: BackgroundServer) -> None:
    with channel(served.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        _answer, call = stub.ListGameTypes.with_call(service_pb2.ListGameTypesRequest())
        made = dict(call.trailing_metadata())["x-request-id"]
        assert isinstance(made, str)
        assert re.fullmatch(r"[0-9a-f]{16}", made)
        _answer, call = stub.ListGameTypes.with_call(
            service_pb2.ListGameTypesRequest(), metadata=(("x-request-id", "mine-1"),)
        )
        assert dict(call.trailing_metadata())["x-request-id"] == "mine-1"
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetGame(
                service_pb2.GetGameRequest(game_id="nosuchgame1234"),
                metadata=(("x-request-id", "mine-2"),),
            )
        answered: Any = refused.value  # a grpc.Call too (the stubs type it as RpcError)
        trailing = dict(answered.trailing_metadata())
        assert trailing["x-request-id"] == "mine-2"
        assert "grpc-status-details-bin" in trailing  # the rich status is still there
    request = urllib.request.Request(
        served.http_url + "/tablelog.v1.TablelogService/ListGameTypes",
        data=b"{}",
        headers={"content-type": "application/json", "authorization": f"Bearer {OWNER_TOKEN}"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert re.fullmatch(r"[0-9a-f]{16}", answer.headers["x-request-id"])


def test_the_callers_trace_id_is_in_the_calls_log_line(
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
    with channel(served.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        stub.ListGameTypes(
            service_pb2.ListGameTypesRequest(), metadata=(("traceparent", TRACEPARENT),)
        )
        stub.ListGameTypes(service_pb2.ListGameTypesRequest())  # none sent: one is made
    # Only these two calls' lines: a stream of an earlier test on the module's server may
    # end meanwhile and log its own (seen under load in CI).
    lines = (json.loads(line) for line in captured.getvalue().splitlines())
    first, second = (line for line in lines if line["method"] == "ListGameTypes")
    assert first["trace_id"] == TRACE_ID
    assert re.fullmatch(r"[0-9a-f]{32}", second["trace_id"])
    assert second["trace_id"] != TRACE_ID
    assert first["request_id"] != second["request_id"]


@pytest.mark.parametrize(
    ("traceparent", "trace_id"),
    [
        (TRACEPARENT, TRACE_ID),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None),
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),
        ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None),
        ("garbage", None),
    ],
)
def test_traceparent_is_read_as_w3c_trace_context_says(traceparent: str, trace_id: str) -> None:
    assert trace_id_of(traceparent) == trace_id


def test_metrics_address_serves_metrics_without_the_http_port_and_every_line_is_json(
    tmp_path: Path,
) -> None:
    metrics = f"127.0.0.1:{free_port()}"
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        serving = ServeProcess(
            tmp_path / "data", "--metrics-address", metrics, "--log-level", "info",
            stderr=stderr, http=False,
        ).start()  # fmt: skip
        try:
            with Client(serving.address, token=serving.token) as client:
                client.game_types()
            with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as answer:
                text = answer.read().decode()
            assert (
                'tablelog_rpc_calls_total{code="OK",method="ListGameTypes",transport="grpc"}'
                in text
            )
        finally:
            serving.stop()
    # uvicorn's own lines (a malformed request makes it log one) are JSON like the rest.
    log2 = tmp_path / "serve-http.log"
    with log2.open("w") as stderr:
        serving = ServeProcess(
            tmp_path / "data2", "--log-level", "info", "--json-logs", stderr=stderr, http=True
        ).start()
        try:
            host, port = serving.http_address.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=5) as raw:
                raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                raw.recv(1024)
            time.sleep(0.5)
        finally:
            serving.stop()
    text = log.read_text() + log2.read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines
    parsed = [json.loads(line) for line in lines]  # every line, not only those with "{"
    assert any(line.get("logger", "").startswith("uvicorn") for line in parsed), lines


def test_a_request_id_that_no_header_can_carry_is_logged_not_returned(
    served: BackgroundServer,
) -> None:
    """A request's own request_id may be any text; metadata values are printable ASCII.
    (The hostile-callers fuzzing found such ids answered INTERNAL 'Invalid metadata'.)"""
    with channel(served.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        players = [events_pb2.Player(name="A"), events_pb2.Player(name="B")]
        for request_id in ("\u202e", "caf\u00e9", "\x00"):
            request = service_pb2.CreateGameRequest(
                game="splendor", players=players, request_id=request_id
            )
            _answer, call = stub.CreateGame.with_call(request)
            assert "x-request-id" not in dict(call.trailing_metadata()), request_id
            with pytest.raises(grpc.RpcError) as refused:
                stub.UndoMove(service_pb2.UndoMoveRequest(game_id="1", request_id=request_id))
            answered: Any = refused.value
            assert answered.code() != grpc.StatusCode.INTERNAL, request_id
