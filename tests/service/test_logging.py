"""The logging interceptor also works as an ordinary `grpc.aio` server interceptor."""

from __future__ import annotations

import asyncio
import io
import json

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
