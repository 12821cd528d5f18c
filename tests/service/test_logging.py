"""The logging interceptor also works as an ordinary `grpc.aio` server interceptor; every
standard-library record is a JSON line when JSON lines are chosen."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import structlog
from grpc import aio

from tablelog.service.api.interceptors import LoggingInterceptor
from tablelog.service.api.servicer import TablelogServicer
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2, service_pb2_grpc
from tests.service.helpers import CHAIN


def test_as_a_grpc_aio_server_interceptor(
    embedded_redis: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured = io.StringIO()
    logger = structlog.PrintLogger(captured)
    monkeypatch.setattr(
        "tablelog.service.api.interceptors.log",
        structlog.wrap_logger(
            logger,
            processors=[structlog.processors.JSONRenderer()],
            wrapper_class=structlog.BoundLogger,  # whatever level the session configured
        ),
    )

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        server = aio.server(interceptors=[LoggingInterceptor()])
        service_pb2_grpc.add_TablelogServiceServicer_to_server(
            TablelogServicer(Recorder(store)), server
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = service_pb2_grpc.TablelogServiceStub(channel)
                await stub.ListGameTypes(service_pb2.ListGameTypesRequest())
                with pytest.raises(aio.AioRpcError):
                    await stub.GetGame(service_pb2.GetGameRequest(game_id="nosuchgame"))
        finally:
            await server.stop(None)
            await store.close()

    asyncio.run(scenario())
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert [(line["method"], line["status"]) for line in lines] == [
        ("ListGameTypes", "OK"),
        ("GetGame", "NOT_FOUND"),
    ]
    assert lines[1]["game_id"] == "nosuchgame"
    assert all(line["duration_ms"] >= 0 for line in lines)


FOREIGN_RECORDS = """
import logging
from tablelog.service.logs import configure_logging
from tablelog.service.tracing import CURRENT
configure_logging("info", json=True)
exporter = logging.getLogger("opentelemetry.exporter.otlp.proto.grpc.exporter")
exporter.warning(
    "Transient error %s encountered while exporting traces to %s, retrying in %.2fs.",
    "StatusCode.UNAVAILABLE", "collector:4317", 1.0,
)
logging.getLogger("some.library").info("an info line")
logging.getLogger("some.library").debug("below the level")
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("another.library").exception("Failed to export span batch")
CURRENT.set({"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "request_id": "r-1"})
logging.warning("the root logger itself, during a call")
"""


def test_every_standard_library_record_is_a_json_line() -> None:
    """Issue 27: only uvicorn's, asyncio's and grpc's loggers were routed through structlog;
    any other library's record (OpenTelemetry's exporter warns while its collector is down)
    went to Python's last-resort handler as plain text in the JSON log."""
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join(str(root / p) for p in (".", "proto", "clients/python"))
    done = subprocess.run(
        [sys.executable, "-c", FOREIGN_RECORDS],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # every line JSON
    assert [(line["logger"], line["level"]) for line in lines] == [
        ("opentelemetry.exporter.otlp.proto.grpc.exporter", "warning"),
        ("some.library", "info"),
        ("another.library", "error"),
        ("root", "warning"),
    ]
    assert lines[0]["event"] == (
        "Transient error StatusCode.UNAVAILABLE encountered while exporting traces to "
        "collector:4317, retrying in 1.00s."
    )
    assert "ZeroDivisionError" in lines[2]["exception"]
    assert lines[3]["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert lines[3]["request_id"] == "r-1"
    assert all(line["timestamp"].endswith("Z") for line in lines)
