"""The API over the Connect protocol and gRPC-Web (the HTTP port, `tablelog.service.api.http_port`):
one adapter from connect-python's endpoints to the very handlers the gRPC server runs.

`build_server` registers each servicer a second time through a `Registrar` into a
`HandlerTable` instead of grpc's server, so every method gets the same guard (request
decoding), gate (authentication, authorization), admission (caller limits) and log line,
wrapped around the same servicer, sharing the one Recorder, Gate, Admission and WatchHub.
`endpoints` turns each of those handlers into a connect-python endpoint that calls it with
a `CallContext`: the gRPC servicer context the handlers use, made from the HTTP request
(headers as metadata, the Connect or gRPC-Web timeout as the deadline, the client's
address as the peer); an abort becomes the library's ConnectError with the same code,
message and google.rpc details, which it writes in each protocol's own way.

Nothing here is written per RPC: a new method of either service is served once it is in
the .proto and the servicer."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, NoReturn

import grpc
import orjson
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint
from google.protobuf import descriptor, descriptor_pb2, json_format, message, message_factory

# googleapis-common-protos publishes no type stubs.
from google.rpc import status_pb2  # type: ignore[import-untyped]
from grpc import aio
from protobuf.wkt import Any as WireAny

from tablelog.service.api.interceptors import Undecodable
from tablelog.v1 import clubs_pb2, service_pb2, standings_pb2

SERVICES: tuple[descriptor.ServiceDescriptor, ...] = (
    service_pb2.DESCRIPTOR.services_by_name["TablelogService"],
    clubs_pb2.DESCRIPTOR.services_by_name["ClubService"],
    clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"],
    standings_pb2.DESCRIPTOR.services_by_name["StandingsService"],
)
"""The services the HTTP port serves: the API, not health or reflection (gRPC's own)."""
API_PREFIXES = tuple(f"/{service.full_name}/" for service in SERVICES)
"""The paths of the API on the HTTP port; every other path is the web app's."""
STATUS_DETAILS_KEY = "grpc-status-details-bin"
IMMUTABLE_ANSWER = "private, max-age=31536000, immutable"
"""Cache-Control of a Connect GET answer that can never change (`CallContext.answer_never_changes`):
kept a year by the caller's own browser, never by a shared cache (`private`: the answer is
what this caller's token may see), and not asked again on reload (`immutable`)."""
CHANGING_ANSWER = "no-store"
"""Cache-Control of every other answer of the API to GET (the head moves; a refusal may not
hold a minute later): asked anew every time, and never written to a disk cache."""


class CallHead:
    """What the HTTP port knows of a call before its handler runs (made by
    `tablelog.service.api.http_guard.HeadCheck` before the body is read): when it started,
    and whether its handler was reached. A call refused before that has no log line or
    count of the interceptor's (`tablelog.service.api.interceptors`): the guard writes them."""

    __slots__ = ("handler_ran", "started")

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.handler_ran = False


CALL_HEAD: ContextVar[CallHead | None] = ContextVar("tablelog_http_call_head", default=None)
"""The running HTTP call's `CallHead` (set by the guard in the call's own task)."""


def _handler_reached() -> None:
    head = CALL_HEAD.get()
    if head is not None:
        head.handler_ran = True


class HandlerTable:
    """Stands in for grpc's server while a `tablelog.service.api.interceptors.Registrar` registers a
    servicer: keeps each method's prepared handler by its path ("/package.Service/Method")
    for the HTTP port. Generated code registers every method both ways; the registered
    methods are all of them, so the generic handlers add nothing here."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        del handlers  # the same methods as the registered ones below

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        for name, handler in handlers.items():
            self.handlers[f"/{service}/{name}"] = handler


class Aborted(aio.AbortError):
    """What `CallContext.abort` raises: an `aio.AbortError`, so the servicers and
    interceptors let it through as they let grpc's through, carrying the error to send."""

    def __init__(self, error: ConnectError) -> None:
        super().__init__(error.message)
        self.error = error


def connect_code(code: grpc.StatusCode) -> Code:
    """The Connect code of a gRPC status code (the same list; Connect spells one apart)."""
    return Code.CANCELED if code is grpc.StatusCode.CANCELLED else Code[code.name]


def connect_error(status: grpc.Status) -> ConnectError:
    """The ConnectError carrying `status`: its code, message and the google.rpc details
    of the google.rpc.Status in its trailing metadata (as `tablelog.service.errors.to_status`
    makes it), each detail passed on as the same Any."""
    details: list[ErrorDetail] = []
    for key, value in status.trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            rich = status_pb2.Status.FromString(value)
            details = [
                ErrorDetail(WireAny(type_url=d.type_url, value=d.value)) for d in rich.details
            ]
    return ConnectError(connect_code(status.code), status.details or "", details)


def _peer(client_address: str | None) -> str:
    """grpc's spelling of a peer ("ipv4:10.0.0.5:51234", "ipv6:[::1]:5123")."""
    if not client_address:
        return ""
    host, _, port = client_address.rpartition(":")
    return f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"


class CallContext:
    """The part of `grpc.aio.ServicerContext` the API's handlers use, for one HTTP call."""

    __slots__ = ("_code", "_request")
    transport = "http"
    """Written in the call's log line (`tablelog.service.api.interceptors`)."""

    def __init__(self, request: RequestContext[Any, Any]) -> None:
        self._request = request
        self._code: grpc.StatusCode | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        """The request's headers (lower-case names), as grpc gives its metadata."""
        return tuple(self._request.request_headers.allitems())

    def time_remaining(self) -> float | None:
        """Seconds to the deadline (connect-timeout-ms or grpc-timeout), None without."""
        remaining_ms = self._request.timeout_ms
        return None if remaining_ms is None else remaining_ms / 1000

    def peer(self) -> str:
        return _peer(self._request.client_address)

    def set_trailing_metadata(self, metadata: Sequence[tuple[str, str]]) -> None:
        """As response headers (the request id, `tablelog.service.tracing`): a Connect unary
        answer's trailers would be `trailer-` headers, which no proxy or log reads."""
        headers = self._request.response_headers
        for key, value in metadata:
            headers[key] = value

    def answer_never_changes(self) -> None:
        """Marks a Connect GET's answer as one that can never change (`IMMUTABLE_ANSWER`),
        by the caller's token (`vary: authorization`): the handler says so only of an
        answer that is a function of the request alone (docs/service.md, HTTP caching). A
        POST's answer is not cached by browsers: nothing is said there. The HTTP port turns
        the mark into `CHANGING_ANSWER` if the call ends refused after all."""
        if self._request.http_method == "GET":
            headers = self._request.response_headers
            headers["cache-control"] = IMMUTABLE_ANSWER
            headers["vary"] = "authorization"

    def code(self) -> grpc.StatusCode | None:
        """The code the call was aborted with (None while it was not)."""
        return self._code

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        del trailing_metadata  # the API's handlers abort with details only through a status
        self._code = code
        raise Aborted(ConnectError(connect_code(code), details))

    async def abort_with_status(self, status: grpc.Status) -> NoReturn:
        self._code = status.code
        raise Aborted(connect_error(status))


class Encoded:
    """A request body the codecs leave undecoded: the adapter decodes it with the method's
    own deserializer (`tablelog.service.api.interceptors.guard`'s), so that bytes that are not the
    request are refused as the gRPC port refuses them (INVALID_ARGUMENT with ErrorInfo
    and BadRequest), not with the library's bare message."""

    __slots__ = ("data", "json")

    def __init__(self, data: bytes, json: bool) -> None:
        self.data = data
        self.json = json


class Serialized:
    """A response message the handler yielded already serialized (WatchGame's updates are
    serialized once for all their watchers): passed on as it is in the binary codec."""

    __slots__ = ("data", "message_class")

    def __init__(self, data: bytes, message_class: type[message.Message]) -> None:
        self.data = data
        self.message_class = message_class


class BinaryCodec:
    """application/proto (Connect) and application/grpc-web(+proto)."""

    def name(self) -> str:
        return "proto"

    def encode(self, response: message.Message | Serialized) -> bytes:
        if isinstance(response, Serialized):
            return response.data
        return response.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Encoded:
        del message_class  # decoded by the method's deserializer, see `Encoded`
        return Encoded(bytes(data), json=False)


class JsonCodec:
    """application/json (Connect) and application/grpc-web+json: the proto3 JSON mapping."""

    def name(self) -> str:
        return "json"

    def encode(self, response: message.Message | Serialized) -> bytes:
        if isinstance(response, Serialized):
            response = response.message_class.FromString(response.data)
        return orjson.dumps(json_format.MessageToDict(response))

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Encoded:
        del message_class
        return Encoded(bytes(data), json=True)


CODECS = (BinaryCodec(), JsonCodec())


def _decoder(method: str, handler: grpc.RpcMethodHandler[Any, Any], request_class: Any) -> Any:
    deserialize = handler.request_deserializer

    def decode(body: Encoded) -> Any:
        if not body.json:
            return deserialize(body.data) if deserialize is not None else body.data
        request = request_class()
        try:
            # Unknown fields are dropped, as the binary decoding drops them (guard).
            json_format.Parse(body.data, request, ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError, UnicodeDecodeError):
            return Undecodable(method)
        return request

    return decode


def _unary(method: str, handler: grpc.RpcMethodHandler[Any, Any], request_class: Any) -> Any:
    decode = _decoder(method, handler, request_class)
    inner: Any = handler.unary_unary

    async def unary(body: Encoded, request: RequestContext[Any, Any]) -> Any:
        _handler_reached()
        try:
            return await inner(decode(body), CallContext(request))
        except Aborted as aborted:
            raise aborted.error from None

    return unary


def _server_stream(
    method: str,
    handler: grpc.RpcMethodHandler[Any, Any],
    request_class: Any,
    response_class: type[message.Message],
) -> Any:
    decode = _decoder(method, handler, request_class)
    inner: Any = handler.unary_stream

    async def stream(body: Encoded, request: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        _handler_reached()
        try:
            async for item in inner(decode(body), CallContext(request)):
                yield Serialized(item, response_class) if isinstance(item, bytes) else item
        except Aborted as aborted:
            raise aborted.error from None

    return stream


def _idempotency(method: descriptor.MethodDescriptor) -> IdempotencyLevel:
    """From the method's `option idempotency_level` (NO_SIDE_EFFECTS allows Connect GET). A
    stream that changes nothing is only IDEMPOTENT here: Connect GET is for unary calls, and
    connect-python would take a GET for a marked stream and answer it with an error inside
    a stream (200) instead of 405."""
    level = method.GetOptions().idempotency_level
    options = descriptor_pb2.MethodOptions
    if level == options.NO_SIDE_EFFECTS:
        if method.server_streaming:
            return IdempotencyLevel.IDEMPOTENT
        return IdempotencyLevel.NO_SIDE_EFFECTS
    if level == options.IDEMPOTENT:
        return IdempotencyLevel.IDEMPOTENT
    return IdempotencyLevel.UNKNOWN


def method_info(path: str) -> MethodInfo[Any, Any]:
    """The library's description of the API's method at `path` ("/package.Service/Method"),
    from the .proto's descriptors (the server's endpoints and the tests' clients use it)."""
    service_name, _, name = path.strip("/").partition("/")
    method = _methods()[service_name].methods_by_name[name]
    if method.client_streaming:
        raise TypeError(f"{path}: the HTTP port serves no client streams")
    return MethodInfo(
        name=method.name,
        service_name=service_name,
        input=message_factory.GetMessageClass(method.input_type),
        output=message_factory.GetMessageClass(method.output_type),
        idempotency_level=_idempotency(method),
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


def _methods() -> dict[str, descriptor.ServiceDescriptor]:
    return {service.full_name: service for service in SERVICES}


def paths() -> list[str]:
    """Every method's path on the HTTP port."""
    return [f"/{s.full_name}/{m.name}" for s in SERVICES for m in s.methods]


def endpoints(handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]]) -> dict[str, Any]:
    """An endpoint of the library for every method of `SERVICES`, by its path, calling
    that method's handler in `handlers` (a `HandlerTable`'s)."""
    found: dict[str, Any] = {}
    for path in paths():
        handler = handlers[path]
        info = method_info(path)
        if info.stream_type is StreamType.SERVER_STREAM:
            found[path] = Endpoint.server_stream(
                info, _server_stream(path, handler, info.input, info.output)
            )
        else:
            found[path] = Endpoint.unary(info, _unary(path, handler, info.input))
    return found
