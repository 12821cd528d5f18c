"""A server interceptor that writes one structured log line per RPC: method, game id,
revision, request id, duration and status. Servicers add the game id and revision they
learn through `note()`.

It wraps each method's handler once. `Registrar` (or `add_logged_servicer`) applies it
when the service is registered, which keeps grpc's fast paths: going through
`grpc.aio.ServerInterceptor.intercept_service` on every call costs about 80 us of CPU per
RPC in grpc's own machinery (measured with benchmarks/record.py), more than the log line.
The same class also works as an ordinary `grpc.aio` server interceptor."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import Any

import grpc
from grpc import aio

from service.logs import get_logger

_rpc: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "tablelog_rpc", default=None
)
log = get_logger("tablelog.rpc")


def note(**fields: Any) -> None:
    """Add fields (game_id, revision, ...) to the current RPC's log line."""
    current = _rpc.get()
    if current is not None:
        for key, value in fields.items():
            if value is not None and value != "":
                current[key] = value


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


def _start(name: str, request: Any, context: aio.ServicerContext[Any, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {"method": name}
    game_id = getattr(request, "game_id", "")
    if game_id:
        fields["game_id"] = _clip(game_id)
    request_id = getattr(request, "request_id", "")
    if not request_id:
        for key, value in context.invocation_metadata() or ():
            if key == "x-request-id" and isinstance(value, str):
                request_id = value
    if request_id:
        fields["request_id"] = _clip(request_id)
    return fields


def _finish(fields: dict[str, Any], started: float, status: str) -> None:
    fields["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
    fields["status"] = status
    if status in ("OK", "CANCELLED"):
        log.info("rpc", **fields)
    elif status in ("UNKNOWN", "INTERNAL", "DATA_LOSS", "UNAVAILABLE"):
        log.error("rpc", **fields)
    else:
        log.warning("rpc", **fields)


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
    name = method.rsplit("/", 1)[-1]

    async def unary(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        started = time.perf_counter()
        fields = _start(name, request, context)
        token = _rpc.set(fields)
        error: BaseException | None = None
        try:
            return await inner(request, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            _rpc.reset(token)
            _finish(fields, started, _status(context, error))

    return unary


def _wrap_stream(method: str, inner: Any) -> Any:
    name = method.rsplit("/", 1)[-1]

    async def stream(request: Any, context: aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        started = time.perf_counter()
        fields = _start(name, request, context)
        token = _rpc.set(fields)
        error: BaseException | None = None
        sent = 0
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
            _finish(fields, started, _status(context, error))

    return stream


class _LoggedGenericHandler(grpc.GenericRpcHandler):
    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner
        self._wrapped: dict[str, grpc.RpcMethodHandler[Any, Any] | None] = {}

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = handler_call_details.method
        if method not in self._wrapped:
            handler = self._inner.service(handler_call_details)
            self._wrapped[method] = LoggingInterceptor.wrap(method, handler)
        return self._wrapped[method]


class Registrar:
    """Stands in for the server while generated code registers a servicer's handlers:
    wraps them with the logging interceptor (`log`), and passes to grpc as registered
    methods only those named in `registered` (None: all).

    Generated code registers every method twice: as a generic handler (looked up by
    path on each call) and as a registered method (matched by grpc's core). grpc.aio
    (1.85) keeps one pending request per registered method and, for every RPC the server
    receives, waits on all of them (`asyncio.wait` over N tasks): with the service's
    twenty-odd methods plus health and reflection that is 23 tasks, about 20 us of CPU per
    call (measured with benchmarks/record.py), more than the generic look-up costs. So
    only the call a recorder makes on every move keeps the registered path
    (`service.server.HOT_METHODS`); the others are served by the generic handler."""

    def __init__(
        self, server: aio.Server, *, log: bool = True, registered: Collection[str] | None = None
    ) -> None:
        self._server = server
        self._log = log
        self._registered = registered

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(
            [_LoggedGenericHandler(h) for h in handlers] if self._log else list(handlers)
        )

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        kept: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for name, handler in handlers.items():
            if self._registered is not None and name not in self._registered:
                continue
            logged = LoggingInterceptor.wrap(f"/{service}/{name}", handler) if self._log else None
            kept[name] = handler if logged is None else logged
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
