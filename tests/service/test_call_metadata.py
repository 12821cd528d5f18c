"""A call's invocation metadata is read from grpc once (`tablelog.service.tracing.call_metadata`):
grpc.aio builds the tuple anew on each `invocation_metadata()`, about 4 us each, and the
logging interceptor and the gate both need it."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from tablelog.service.api.interceptors import LoggingInterceptor
from tablelog.service.tracing import call_metadata


class CountingContext:
    """A servicer context counting the reads of its metadata."""

    transport = ""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self.metadata = metadata
        self.reads = 0

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        self.reads += 1
        return tuple(self.metadata)  # a new tuple each time, as grpc.aio's

    def code(self) -> Any:
        return None

    def set_trailing_metadata(self, metadata: Any) -> None:
        pass


def test_the_gate_reads_the_metadata_the_logging_interceptor_read() -> None:
    context = CountingContext((("authorization", "Bearer t"), ("x-request-id", "abc")))
    other = CountingContext((("authorization", "Bearer u"),))
    seen: list[Any] = []

    async def inner(request: Any, called: Any) -> str:
        seen.append(call_metadata(called))
        seen.append(call_metadata(other))  # another call's context: read from it
        return "done"

    handler = LoggingInterceptor.wrap(
        "/tablelog.v1.TablelogService/GetGame", grpc.unary_unary_rpc_method_handler(inner)
    )
    assert handler is not None
    wrapped: Any = handler.unary_unary  # (typed as grpc's, called with the test's context)
    assert asyncio.run(wrapped(object(), context)) == "done"
    assert context.reads == 1
    assert seen == [context.metadata, other.metadata]
    assert other.reads == 1
    # Outside a call, the context is asked.
    assert call_metadata(context) == context.metadata
    assert context.reads == 2
