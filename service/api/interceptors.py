"""A server interceptor that writes one structured log line per RPC: method, game id,
revision, request id, trace id, duration and status, and counts the call in the Prometheus
metrics (`tablelog.service.metrics`). Servicers add the game id and revision they learn through
`note()`. The request id (made when the caller sends none) goes back to the caller as
`x-request-id` (`tablelog.service.tracing`).

It wraps each method's handler once. `Registrar` (or `add_logged_servicer`) applies it
when the service is registered, which keeps grpc's fast paths: going through
`grpc.aio.ServerInterceptor.intercept_service` on every call costs about 80 us of CPU per
RPC in grpc's own machinery (measured with benchmarks/record.py), more than the log line.
The same class also works as an ordinary `grpc.aio` server interceptor.

Every handler registered through `Registrar` also decodes its request itself (`guard`):
grpc.aio answers a request deserializer that raises with UNKNOWN and a message naming a
Python class; here undecodable bytes are INVALID_ARGUMENT (INVALID_REQUEST, BadRequest on
`request`), and fields the schema does not know are dropped before anything can store
them."""

from __future__ import annotations

import contextlib
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import Any, Protocol

import grpc
from google.protobuf import descriptor_pb2
from grpc import aio

from tablelog.service import spans
from tablelog.service.access.admission import Admission
from tablelog.service.access.anonymous import SAMPLER
from tablelog.service.errors import InvalidRequest, refusal, to_status
from tablelog.service.logs import RpcLogger, get_logger, read_sample_rate
from tablelog.service.metrics import observe_call
from tablelog.service.tracing import (
    CALL_METADATA,
    CURRENT,
    REQUEST_ID_KEY,
    TRACEPARENT_KEY,
    new_request_id,
    new_trace_id,
    parent_of,
    returnable,
    trace_id_of,
)
from tablelog.v1 import clubs_pb2, service_pb2, standings_pb2

_rpc = CURRENT
log: Any = RpcLogger("tablelog.rpc")
faults = get_logger("tablelog.spans")
"""(structlog's chain, which writes a traceback: the RPC line's logger does not)"""


def _reads() -> frozenset[str]:
    """The API's methods that the .proto files mark `idempotency_level = NO_SIDE_EFFECTS`:
    the one list of what changes nothing, the marking by which the HTTP port also answers
    the unary ones to a GET (`http_api._idempotency`). VerifyGame is not one: it drops
    checkpoints that do not hold."""
    no_side_effects = descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS
    return frozenset(
        method.name
        for module in (service_pb2, clubs_pb2, standings_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
        if method.GetOptions().idempotency_level == no_side_effects
    )


SAMPLED_READS = _reads()
"""The reads whose successful calls `tablelog serve --log-sample-reads` may sample; every
change and every refusal is logged."""


def _status(context: aio.ServicerContext[Any, Any], error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if error is None:
        return "OK"
    if isinstance(error, (TimeoutError, _cancelled())):
        return "CANCELLED"
    return "UNKNOWN"


def _cancelled() -> type[BaseException]:
    import asyncio

    return asyncio.CancelledError


LOGGED_LENGTH = 80
"""Client-supplied strings (game id, request id) are logged cut to this many characters:
they are logged before the recorder validates them."""


def _clip(text: str) -> str:
    return text if len(text) <= LOGGED_LENGTH else text[:LOGGED_LENGTH] + "..."


def _start(
    name: str, request: Any, context: aio.ServicerContext[Any, Any], metadata: Any = None
) -> dict[str, Any]:
    """The call's log fields; `metadata`: the call's invocation metadata when already read."""
    fields: dict[str, Any] = {"method": name}
    # Calls through the HTTP port say so (`tablelog.service.api.http_api.CallContext`); gRPC's do
    # not.
    transport = getattr(context, "transport", "")
    if transport:
        fields["transport"] = transport
    game_id = getattr(request, "game_id", "")
    if game_id:
        fields["game_id"] = _clip(game_id)
    request_id = getattr(request, "request_id", "")
    trace_id = None
    traceparent = ""
    if metadata is None:
        metadata = context.invocation_metadata()
    for key, value in metadata or ():
        if key == REQUEST_ID_KEY and not request_id and isinstance(value, str):
            request_id = value
        elif key == TRACEPARENT_KEY and isinstance(value, str):
            trace_id = trace_id_of(value)
            traceparent = value
    if trace_id is None:
        trace_id = new_trace_id()
        made = trace_id[:16]  # random enough for an id: no second random number
    else:
        made = None
    fields["request_id"] = _clip(request_id) if request_id else made or new_request_id()
    fields["trace_id"] = trace_id
    if spans.EXPORT is not None:
        # The call's span (`tablelog.service.spans`), named in its log lines; none under a
        # caller's trace that is not sampled.
        parent = parent_of(traceparent) if traceparent else None
        if parent is not None or made is not None:
            fields["span_id"] = spans.new_span_id()
            if parent is not None:
                fields["parent_span_id"] = parent
    return fields


def _return_request_id(context: aio.ServicerContext[Any, Any], fields: dict[str, Any]) -> None:
    """The call's request id back to the caller (a refusal carries it in its status's
    trailing metadata instead: `tablelog.service.errors.to_status`)."""
    request_id = fields["request_id"]
    if returnable(request_id):  # (else invalid metadata: the call would fail INTERNAL)
        context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))


def _finish(fields: dict[str, Any], started: float, status: str, service: str = "") -> None:
    seconds = time.perf_counter() - started
    observe_call(fields["method"], fields.get("transport", "grpc"), status, seconds)
    export = spans.EXPORT
    if export is not None and "span_id" in fields:  # every call's span, sampled lines or not
        ended = time.time_ns()
        try:
            export.record(fields, service, ended - int(seconds * 1e9), ended, status)
        except Exception:  # a span lost is never a call failed
            faults.warning("span_not_recorded", exc_info=True, **fields)
    # Every call is counted; only the log lines of successful reads may be sampled.
    if status == "OK" and fields["method"] in SAMPLED_READS:
        rate = read_sample_rate()
        if rate < 1.0 and random.random() >= rate:
            return
    fields["duration_ms"] = round(seconds * 1000, 3)
    fields["status"] = status
    # Refusals of callers without a valid token are sampled (`tablelog.service.access.anonymous`).
    if fields.get("anonymous") and not SAMPLER.admit(fields):
        return
    if status in ("OK", "CANCELLED"):
        log.info("rpc", **fields)
    elif status in ("UNKNOWN", "INTERNAL", "DATA_LOSS", "UNAVAILABLE"):
        log.error("rpc", **fields)
    else:
        log.warning("rpc", **fields)


class _Transport:
    """The part of a servicer context `_start` reads, for a call refused before it had one."""

    __slots__ = ("transport",)

    def __init__(self, transport: str) -> None:
        self.transport = transport


def refused_before_handler(
    path: str,
    metadata: Sequence[tuple[str, Any]],
    started: float,
    status: str,
    transport: str = "http",
    **extra: Any,
) -> dict[str, Any]:
    """A call of the API at `path` ("/tablelog.v1.TablelogService/GetGame") that a port
    refused before its handler ran (`tablelog.service.api.http_guard`: a body over the limit,
    a token refused from the headers, too many bodies in progress, a body too slow;
    `tablelog.service.api.http_port`: past its connections): counted, spanned and logged as
    every call is, by `_finish`, its trace id and request id read from `metadata` (made when
    it has none) and `extra` on its line. Its fields: the request id to send back."""
    service, _, name = path.strip("/").rpartition("/")
    context: Any = _Transport(transport)  # (all `_start` reads of it, given the metadata)
    fields = _start(name, None, context, metadata)
    fields.update(extra)
    _finish(fields, started, status, service)
    return fields


class LoggingInterceptor(aio.ServerInterceptor):
    """Wraps each tablelog method's handler once (cached by method), so a call costs one
    dictionary look-up here besides the log line itself."""

    def __init__(self) -> None:
        self._wrapped: dict[str, grpc.RpcMethodHandler[Any, Any] | None] = {}

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = handler_call_details.method
        if method in self._wrapped:
            return self._wrapped[method]
        handler = await continuation(handler_call_details)
        wrapped = self._wrap(method, handler)
        if method.startswith("/tablelog."):
            self._wrapped[method] = wrapped
        return wrapped

    @staticmethod
    def wrap(
        method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """`handler` with one log line per call (for tablelog's own methods)."""
        return LoggingInterceptor._wrap(method, handler)

    @staticmethod
    def _wrap(
        method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        if handler is None or not method.startswith("/tablelog."):
            return handler
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _wrap_unary(method, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _wrap_stream(method, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def _wrap_unary(method: str, inner: Any) -> Any:
    service, _, name = method.strip("/").rpartition("/")

    async def unary(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        started = time.perf_counter()
        metadata = context.invocation_metadata()
        fields = _start(name, request, context, metadata)
        token = _rpc.set(fields)
        # The gate reads the same tuple (`tracing.call_metadata`): grpc.aio builds it anew
        # on each `invocation_metadata()`.
        kept = CALL_METADATA.set((context, metadata))
        error: BaseException | None = None
        _return_request_id(context, fields)
        try:
            return await inner(request, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            CALL_METADATA.reset(kept)
            _rpc.reset(token)
            _finish(fields, started, _status(context, error), service)
            error = None  # (see the stream's)

    return unary


def _wrap_stream(method: str, inner: Any) -> Any:
    service, _, name = method.strip("/").rpartition("/")

    async def stream(request: Any, context: aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        started = time.perf_counter()
        fields = _start(name, request, context)
        token = _rpc.set(fields)
        error: BaseException | None = None
        sent = 0
        _return_request_id(context, fields)
        try:
            async for item in inner(request, context):
                sent += 1
                yield item
        except BaseException as exc:
            error = exc
            raise
        finally:
            fields["messages"] = sent
            # A cancelled generator may be closed from another context.
            with contextlib.suppress(ValueError):
                _rpc.reset(token)
            _finish(fields, started, _status(context, error), service)
            # The error's traceback holds this frame, and every frame of the call under it (a
            # watch's updates, a game's positions): kept here, it made a reference cycle that
            # only the server's rare full collection freed (issue 29).
            error = None

    return stream


class Undecodable:
    """What `guard`'s deserializer hands on for bytes that are not the request message."""

    __slots__ = ("method",)

    def __init__(self, method: str) -> None:
        self.method = method


def _decoding(deserializer: Callable[[bytes], Any] | None, method: str) -> Any:
    if deserializer is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            message = deserializer(data)
            # Unknown fields would be copied into stored events with the move they ride in.
            message.DiscardUnknownFields()
        except Exception:  # any failure to decode is the caller's bytes, not a fault
            return Undecodable(method)
        return message

    return decode


async def _refuse_undecodable(context: aio.ServicerContext[Any, Any], request: Undecodable) -> None:
    name = request.method.rsplit("/", 1)[-1]
    error = InvalidRequest("request", f"The request body is not a valid {name} request message.")
    await context.abort_with_status(to_status(refusal(error)))


def guard(
    method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
) -> grpc.RpcMethodHandler[Any, Any] | None:
    """`handler` decoding its own requests: undecodable bytes are refused INVALID_ARGUMENT
    before the servicer sees them, unknown fields are dropped. Handlers of other shapes
    (client streaming) keep grpc's own decoding: the service has none."""
    if handler is None:
        return None
    decode = _decoding(handler.request_deserializer, method)
    if handler.unary_unary is not None:
        unary_inner: Any = handler.unary_unary

        async def unary(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
            if isinstance(request, Undecodable):
                await _refuse_undecodable(context, request)
            return await unary_inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary,
            request_deserializer=decode,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
        stream_inner: Any = handler.unary_stream

        async def stream(
            request: Any, context: aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            if isinstance(request, Undecodable):
                await _refuse_undecodable(context, request)
            async for item in stream_inner(request, context):
                yield item

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=decode, response_serializer=handler.response_serializer
        )
    if handler.unary_stream is not None:  # a coroutine writing with context.write (health)
        writing_inner: Any = handler.unary_stream

        async def writing(request: Any, context: aio.ServicerContext[Any, Any]) -> None:
            if isinstance(request, Undecodable):
                await _refuse_undecodable(context, request)
            await writing_inner(request, context)

        return grpc.unary_stream_rpc_method_handler(
            writing, request_deserializer=decode, response_serializer=handler.response_serializer
        )
    if handler.stream_stream is not None and inspect.isasyncgenfunction(handler.stream_stream):
        streams_inner: Any = handler.stream_stream  # reflection

        async def streams(
            requests: AsyncIterator[Any], context: aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            async def decoded() -> AsyncIterator[Any]:
                async for request in requests:
                    if isinstance(request, Undecodable):
                        await _refuse_undecodable(context, request)
                    yield request

            async for item in streams_inner(decoded(), context):
                yield item

        return grpc.stream_stream_rpc_method_handler(
            streams, request_deserializer=decode, response_serializer=handler.response_serializer
        )
    return handler


class Gating(Protocol):
    """What puts a method's handler behind authentication
    (`tablelog.service.access.authentication.Gate`)."""

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
    ) -> grpc.RpcMethodHandler[Any, Any] | None: ...


def _prepare(
    method: str,
    handler: grpc.RpcMethodHandler[Any, Any] | None,
    log: bool,
    gate: Gating | None = None,
    admission: Admission | None = None,
) -> grpc.RpcMethodHandler[Any, Any] | None:
    prepared = guard(method, handler)
    # Inside out: the gate runs first (who is calling), then admission counts that caller
    # against its limits, then the method; all inside the log line, so a refusal is logged.
    if admission is not None:
        prepared = admission.wrap(method, prepared)
    if gate is not None:
        prepared = gate.wrap(method, prepared)
    return LoggingInterceptor.wrap(method, prepared) if log else prepared


class _GuardedGenericHandler(grpc.GenericRpcHandler):
    def __init__(
        self,
        inner: grpc.GenericRpcHandler,
        log: bool,
        gate: Gating | None,
        admission: Admission | None,
    ) -> None:
        self._inner = inner
        self._log = log
        self._gate = gate
        self._admission = admission
        self._wrapped: dict[str, grpc.RpcMethodHandler[Any, Any] | None] = {}

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = handler_call_details.method
        if method not in self._wrapped:
            handler = self._inner.service(handler_call_details)
            if handler is None:  # a path of no method: not remembered (callers choose it)
                return None
            self._wrapped[method] = _prepare(
                method, handler, self._log, self._gate, self._admission
            )
        return self._wrapped[method]


class HandlerSink(Protocol):
    """Where a `Registrar` puts the handlers it prepared: grpc's server, or the HTTP port's
    table of them (`tablelog.service.api.http_api.HandlerTable`)."""

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None: ...

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None: ...


class Registrar:
    """Stands in for the server while generated code registers a servicer's handlers:
    guards their decoding (`guard`), wraps them with the logging interceptor (`log`), and
    passes to grpc as registered methods only those named in `registered` (None: all),
    and puts them behind `gate` (authentication and authorization) when one is given.

    Generated code registers every method twice: as a generic handler (looked up by
    path on each call) and as a registered method (matched by grpc's core). grpc.aio
    (1.85) keeps one pending request per registered method and, for every RPC the server
    receives, waits on all of them (`asyncio.wait` over N tasks): with the service's
    twenty-odd methods plus health and reflection that is 23 tasks, about 20 us of CPU per
    call (measured with benchmarks/record.py), more than the generic look-up costs. So
    only the call a recorder makes on every move keeps the registered path
    (`tablelog.service.api.server.HOT_METHODS`); the others are served by the generic handler.

    With an `admission` (`tablelog.service.access.quotas`), every handler admits its caller
    first."""

    def __init__(
        self,
        server: HandlerSink,
        *,
        log: bool = True,
        registered: Collection[str] | None = None,
        gate: Gating | None = None,
        admission: Admission | None = None,
    ) -> None:
        self._server = server
        self._log = log
        self._registered = registered
        self._gate = gate
        self._admission = admission

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(
            [_GuardedGenericHandler(h, self._log, self._gate, self._admission) for h in handlers]
        )

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        kept: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for name, handler in handlers.items():
            if self._registered is not None and name not in self._registered:
                continue
            prepared = _prepare(
                f"/{service}/{name}", handler, self._log, self._gate, self._admission
            )
            if prepared is not None:
                kept[name] = prepared
        if kept:
            self._server.add_registered_method_handlers(service, kept)


def add_servicer(
    add_to_server: Callable[[Any, Any], None], servicer: Any, registrar: Registrar
) -> None:
    """Register `servicer` with its generated `add_..._to_server` through `registrar`."""
    add_to_server(servicer, registrar)


def add_logged_servicer(
    add_to_server: Callable[[Any, Any], None],
    servicer: Any,
    server: aio.Server,
    registered: Collection[str] | None = None,
) -> None:
    """Register `servicer` (with its generated `add_..._to_server`) so that every one of
    its RPCs goes through the logging interceptor (see `Registrar` for `registered`)."""
    add_servicer(add_to_server, servicer, Registrar(server, registered=registered))
