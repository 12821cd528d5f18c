"""A call that ends in an error leaves nothing in a reference cycle (issue 29). The server
runs the cyclic collector's full pass rarely (`tune_gc`: twice in a 40-minute long club
night), and the logging interceptor kept the error it reports, whose traceback holds the
interceptor's frame and every frame of the call under it: a refused move's positions, a
cancelled watch's updates (and with them the game's states), kept for tens of minutes."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest

from tablelog.service.api.interceptors import LoggingInterceptor
from tests.service.test_call_metadata import CountingContext


class Held:
    """What a call's frame holds (a position, an update)."""


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_refused_unary_call_leaves_its_frames_to_reference_counting(no_collector: None) -> None:
    held: list[weakref.ref[Held]] = []

    async def inner(request: Any, context: Any) -> None:
        position = Held()
        held.append(weakref.ref(position))
        raise ValueError("refused")

    handler = LoggingInterceptor.wrap(
        "/tablelog.v1.TablelogService/RecordMove", grpc.unary_unary_rpc_method_handler(inner)
    )
    assert handler is not None
    wrapped: Any = handler.unary_unary

    async def call() -> None:
        with pytest.raises(ValueError, match="refused"):
            await wrapped(object(), CountingContext(()))

    asyncio.run(call())
    assert held[0]() is None


def test_a_cancelled_stream_leaves_its_frames_to_reference_counting(no_collector: None) -> None:
    held: list[weakref.ref[Held]] = []

    async def inner(request: Any, context: Any) -> AsyncIterator[bytes]:
        update = Held()
        held.append(weakref.ref(update))
        yield b"first"
        await asyncio.sleep(60)
        yield b"never"

    handler = LoggingInterceptor.wrap(
        "/tablelog.v1.TablelogService/WatchGame", grpc.unary_stream_rpc_method_handler(inner)
    )
    assert handler is not None
    wrapped: Any = handler.unary_stream

    async def watch() -> None:
        async def read() -> None:
            async for _ in wrapped(object(), CountingContext(())):
                pass

        reading = asyncio.create_task(read())
        await asyncio.sleep(0.05)
        reading.cancel()  # as grpc does when the watcher goes away
        with pytest.raises(asyncio.CancelledError):
            await reading

    asyncio.run(watch())
    assert held[0]() is None
