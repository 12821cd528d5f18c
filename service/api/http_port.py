"""The HTTP port (`tablelog serve --http-address`, default 127.0.0.1:8080): the API to
browsers over the Connect protocol and gRPC-Web (`tablelog.service.api.http_api`), and the web app's
files from `/` (`tablelog.service.api.webapp_files`), in the process and event loop of the gRPC
server.

connect-python's ASGI application runs under uvicorn, started inside the running loop (not
`uvicorn.run`, which would make a loop of its own): both ports then share the one Recorder,
gate, caller limits and watch hub, with no thread or lock between them.

Bounds: the token is checked and a Content-Length past `MAX_MESSAGE_BYTES` refused before
a body is read, bodies in progress are bounded per peer and in all and must arrive at a
minimum rate (`tablelog.service.api.http_guard`); a request body is refused past `MAX_MESSAGE_BYTES`
(the gRPC port's limit) while it is read, before anything parses it, and so is a
compressed one once inflated past it;
the request line and headers are bounded by h11 (`MAX_HEAD_BYTES`) and must arrive within
`HEAD_SECONDS`; connections and requests in progress together by `max_connections` (past
it: 503 for a request, a connection closed as it is accepted); a WatchGame counts
against the same `WatchLimits` and caller limits as on the gRPC port. A browser calls the
API only from the page's own origin unless `cors_origins` names others (`--http-cors-origin`);
a call from any other origin is refused with 403 before it reaches the API."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import uvicorn
from connectrpc.server import ConnectASGIApplication
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from tablelog.service.access.authentication import Gate
from tablelog.service.api.http_api import (
    API_PREFIXES,
    CHANGING_ANSWER,
    CODECS,
    IMMUTABLE_ANSWER,
    endpoints,
    paths,
)
from tablelog.service.api.http_guard import (
    DEFAULT_BODY_LIMITS,
    BodyLimits,
    BodySlots,
    HeadCheck,
    MeteredBody,
)
from tablelog.service.api.interceptors import LOGGED_LENGTH, refused_before_handler
from tablelog.service.api.readiness import HEALTH_PATHS, Readiness, answer_health
from tablelog.service.api.transport import TlsFiles
from tablelog.service.api.webapp_files import WEBAPP_DIRECTORY, WebappFiles
from tablelog.service.limits import MAX_MESSAGE_BYTES
from tablelog.service.logs import get_logger
from tablelog.service.metrics import exposition, refused
from tablelog.service.tracing import (
    REQUEST_ID_KEY,
    TRACEPARENT_KEY,
    new_request_id,
    new_trace_id,
    returnable,
    trace_id_of,
)

MAX_HEAD_BYTES = 64 * 1024
"""The request line and headers together."""
DEFAULT_MAX_CONNECTIONS = 10_000
"""Connections and calls in progress together (`tablelog serve --http-max-connections`)."""
KEEP_ALIVE_SECONDS = 30
HEAD_SECONDS = 10.0
"""How long a connection may take to send a request's line and headers, from when it opens
or its last response ends; then it is closed (a caller trickling a head holds nothing)."""
REQUEST_HEADERS = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-tablelog-client",
    "x-request-id",
)
"""What a browser on another allowed origin may send (the Connect and gRPC-Web headers)."""
RESPONSE_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
    "content-encoding",
)
"""What a script on another allowed origin may read of a response."""


class TablelogApi(ConnectASGIApplication[None]):
    """connect-python's application over every method of the API (`http_api.endpoints`)."""

    def __init__(
        self, handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]], gate: Gate | None = None
    ) -> None:
        found = endpoints(handlers)
        super().__init__(
            service=None,
            endpoints=lambda _service: found,
            # First in the list, so run before the body is read (`tablelog.service.api.http_guard`).
            interceptors=[HeadCheck(gate)],
            read_max_bytes=MAX_MESSAGE_BYTES,
            codecs=CODECS,
        )

    @property
    def path(self) -> str:
        return "/"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def same_host(origin: str, scope: Scope) -> bool:
    """Whether `origin` names the host (and port) the request was sent to: the page's own
    origin. The scheme is left out: behind a TLS-terminating proxy the page is https while
    this port hears http, and one host and port serves one scheme."""
    host = _header(scope, b"host")
    return host is not None and origin.partition("://")[2] == host


CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The web app's policy (its index.html's meta tag), as a header so that it can also say
frame-ancestors, which a meta tag cannot: no page of another site may frame the app."""
HSTS = "max-age=31536000"
"""Under TLS: browsers keep to https for this name for a year."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


def served_names(address: str, names: Collection[str]) -> frozenset[str] | None:
    """The host names a request's Host (and a browser's Origin) may name: `names`
    (`--http-host`), the address the port listens on, and the loopback names when it
    listens there; None (any) for a wildcard address given no names, where the names are
    a proxy's or the operator's to check. A page of another name, its DNS pointed at this
    port (DNS rebinding), is then refused."""
    host, _port = parse_address(address)
    wildcard = host in ("0.0.0.0", "::", "")
    if wildcard and not names:
        return None
    found = {name.lower() for name in names}
    if not wildcard:
        found.add(host.lower())
        found.add(f"[{host.lower()}]" if ":" in host else host.lower())
    if wildcard or host in LOOPBACK_NAMES or host.startswith("127."):
        found.update(LOOPBACK_NAMES)
    return frozenset(found)


def security_headers(tls: bool) -> dict[bytes, bytes]:
    """The headers every answer of the port carries."""
    headers = {
        b"content-security-policy": CONTENT_SECURITY_POLICY.encode(),
        b"x-frame-options": b"DENY",
        b"referrer-policy": b"no-referrer",
    }
    if tls:
        headers[b"strict-transport-security"] = HSTS.encode()
    return headers


def _host_name(host: str) -> str:
    """A Host header or an origin's authority without its port ("[::1]:8080" -> "[::1]")."""
    if host.startswith("["):
        return host.partition("]")[0].lower() + "]"
    return host.rpartition(":")[0].lower() if ":" in host else host.lower()


class HttpApp:
    """The ASGI application of the port: the API under its services' paths, guarded by
    the origin rule; the web app's files everywhere else. Every answer carries the
    security headers (`CONTENT_SECURITY_POLICY`, X-Frame-Options, HSTS under TLS); a
    request for the web app or the API naming a host the port does not serve
    (`served_names`) is answered 421 (the health and metrics paths answer any host), one
    whose path holds a NUL 400."""

    def __init__(
        self,
        handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]],
        *,
        cors_origins: Collection[str] = (),
        webapp: Path = WEBAPP_DIRECTORY,
        readiness: Readiness | None = None,
        gate: Gate | None = None,
        body_limits: BodyLimits = DEFAULT_BODY_LIMITS,
        tls: bool = False,
        hosts: frozenset[str] | None = None,
    ) -> None:
        self.cors_origins = frozenset(cors_origins)
        self.readiness = readiness or Readiness()
        self.bodies = BodySlots(body_limits)
        self.hosts = hosts
        self.security_headers = security_headers(tls)
        api: ASGIApp = TablelogApi(handlers, gate)
        if self.cors_origins:
            api = CORSMiddleware(
                api,
                allow_origins=sorted(self.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=list(REQUEST_HEADERS),
                expose_headers=list(RESPONSE_HEADERS),
                max_age=7200,
            )
        self.api = api
        self.files = WebappFiles(webapp)

    def allowed(self, scope: Scope) -> bool:
        """Whether a call may reach the API: from no browser (no Origin), from the page's
        own origin, or from one of `cors_origins`."""
        origin = _header(scope, b"origin")
        return origin is None or same_host(origin, scope) or origin in self.cors_origins

    def host_served(self, scope: Scope) -> bool:
        """Whether the request's Host is a name this port serves (any, without names)."""
        if self.hosts is None:
            return True
        host = _header(scope, b"host")
        return host is not None and _host_name(host) in self.hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # No websockets; lifespan events are not sent (uvicorn runs with lifespan off).
            raise RuntimeError(f"the HTTP port serves no {scope['type']} connections")
        headers = self.security_headers

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *headers.items()]}
            await send(message)

        if scope.get(OVER_CAPACITY):
            await answer_over_capacity(scope, guarded)
            return
        await self._route(scope, receive, guarded)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "\x00" in scope["path"]:
            # No file or method has a NUL in its name (the files' stat raised on it).
            await PlainTextResponse("A path may not hold a NUL.", status_code=400)(
                scope, receive, send
            )
            return
        # Health and metrics before the names: load balancers and Prometheus reach a pod by
        # its address, and neither answer needs a token or tells anything of a club.
        if scope["path"] in HEALTH_PATHS:
            await answer_health(self.readiness, scope, receive, send)
        elif scope["path"] == METRICS_PATH:
            await answer_metrics(scope, receive, send)
        elif not self.host_served(scope):
            refused = PlainTextResponse(
                "This server does not answer to that name (--http-host, $TABLELOG_HTTP_HOSTS).",
                status_code=421,
            )
            await refused(scope, receive, send)
        elif not scope["path"].startswith(API_PREFIXES):
            await self.files(scope, receive, send)
        elif self.allowed(scope):
            client = scope.get("client")
            body = MeteredBody(
                receive,
                send,
                self.bodies,
                str(client[0]) if client else "",
                has_body=scope["method"] == "POST",
            )
            send_answer = body.send if scope["method"] != "GET" else cache_checked(body.send)
            try:
                await self.api(scope, body.receive, send_answer)
            finally:
                body.release()
        else:
            refused = PlainTextResponse(
                "Calls from this origin are not allowed (--http-cors-origin).", status_code=403
            )
            await refused(scope, receive, send)


OVER_CAPACITY = "tablelog.over_capacity"
"""Set in a request's scope by the port's protocol (`_BoundedH11`) when the request is past
`--http-max-connections`."""
API_PATHS = frozenset(paths())
log = get_logger("tablelog.http")


def _text_headers(scope: Scope) -> tuple[tuple[str, str], ...]:
    return tuple(
        (bytes(key).decode("latin-1"), bytes(value).decode("latin-1"))
        for key, value in scope.get("headers", ())
    )


async def answer_over_capacity(scope: Scope, send: Send) -> None:
    """A request past `--http-max-connections`, answered 503 as uvicorn answers it (which
    neither counted nor named it): counted in `tablelog_refused_calls_total` (reason
    TOO_MANY_CONNECTIONS); a call of the API also in `tablelog_rpc_calls_total` (UNAVAILABLE),
    spanned and logged as every call is, with its trace id and request id; a request for
    anything else gets a line with the two ids. The request id goes back as `x-request-id`."""
    started = time.perf_counter()
    refused("TOO_MANY_CONNECTIONS")
    metadata = _text_headers(scope)
    path = scope["path"]
    if path in API_PATHS:
        fields = refused_before_handler(
            path, metadata, started, "UNAVAILABLE", refused="past the connection limit"
        )
        request_id = fields["request_id"]
    else:
        sent = dict(metadata)
        trace_id = trace_id_of(sent.get(TRACEPARENT_KEY, "")) or new_trace_id()
        request_id = sent.get(REQUEST_ID_KEY, "")[:LOGGED_LENGTH] or new_request_id()
        log.warning(
            "over_capacity",
            path=path[:LOGGED_LENGTH],
            request_id=request_id,
            trace_id=trace_id,
            status=503,
            reason="TOO_MANY_CONNECTIONS",
        )
    body = b"Service Unavailable"
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if returnable(request_id):
        headers.append((REQUEST_ID_KEY.encode(), request_id.encode()))
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def cache_checked(send: Send) -> Send:
    """`send` for a Connect GET: its answer says `IMMUTABLE_ANSWER` only when the handler
    marked it so (`CallContext.answer_never_changes`) and the call succeeded; every other
    answer, a refusal included, says `CHANGING_ANSWER`, so that no cache, the browser's or
    a proxy's, keeps an answer about the head or a refusal that may not hold."""

    async def checked(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (key, value)
                for key, value in message.get("headers", ())
                if bytes(key).lower() != b"cache-control"
            ]
            marked = (b"cache-control", IMMUTABLE_ANSWER.encode()) in [
                (bytes(key).lower(), bytes(value)) for key, value in message.get("headers", ())
            ]
            kept = IMMUTABLE_ANSWER if marked and message["status"] == 200 else CHANGING_ANSWER
            message = {**message, "headers": [*headers, (b"cache-control", kept.encode())]}
        await send(message)

    return checked


METRICS_PATH = "/metrics"


async def answer_metrics(scope: Scope, receive: Receive, send: Send) -> None:
    """Prometheus' scrape (`tablelog.service.metrics`): counts summed over every club, never one
    club's; no token (as a scraper calls it; docs/deploy.md, Monitoring)."""
    response: Response
    if scope["method"] not in ("GET", "HEAD"):
        response = PlainTextResponse("GET only\n", status_code=405, headers={"allow": "GET, HEAD"})
    else:
        body, content_type = exposition()
        response = Response(body, headers={"content-type": content_type})
    await response(scope, receive, send)


def parse_address(address: str) -> tuple[str, int]:
    """HOST:PORT or [IPv6]:PORT."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise ValueError(f"expected HOST:PORT, not {address!r}")
    return host.removeprefix("[").removesuffix("]"), int(port)


def bind(address: str, reuse_port: bool = False) -> socket.socket:
    """A listening socket on `address` (port 0: a free one); OSError when it cannot be.

    Made with protocol IPPROTO_TCP, not 0 as `socket.create_server` makes it: asyncio
    turns Nagle's algorithm off only on sockets that say they are TCP, and with it on,
    each response (status line and headers, then the body) waits out the client's
    delayed ACK, about 40 ms a call."""
    host, port = parse_address(address)
    family, _type, _proto, _name, where = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listening.bind(where)
        listening.listen(2048)
        listening.setblocking(False)
    except OSError:
        listening.close()
        raise
    return listening


class _BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with the two bounds it lacks: it counts a connection against
    `limit_concurrency` only once a request's head is in, so a connection past the limit is
    closed here as it is accepted; and it waits for a head without end, so one must arrive
    within `HEAD_SECONDS` (then the keep-alive and the call's own limits take over).

    A request past the limit is answered 503 by the port's app (`answer_over_capacity`,
    which counts and logs it), not by uvicorn's own app (which does neither): uvicorn's check
    is turned off here and made by `_admitted` instead, with the same bound."""

    _head_timer: asyncio.TimerHandle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_connections: int | None = self.limit_concurrency
        if self.max_connections is not None:
            self.limit_concurrency = None
            self._inner_app = self.app
            self.app = self._admitted

    async def _admitted(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.max_connections
        assert limit is not None  # (set only with a limit)
        # uvicorn's own test, made before this request's task was added to `tasks`.
        if scope["type"] == "http" and (len(self.connections) >= limit or len(self.tasks) > limit):
            scope = {**scope, OVER_CAPACITY: True}
        await self._inner_app(scope, receive, send)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.max_connections is not None and len(self.connections) > self.max_connections:
            transport.close()
            return
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's head arrived
            self._stop_waiting()

    def on_response_complete(self) -> None:
        # Before uvicorn's own, which starts the next pipelined request (its head is in).
        if not self.transport.is_closing():
            self._await_head()
        super().on_response_complete()

    def _await_head(self) -> None:
        self._stop_waiting()
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_overdue)

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, minus its signal handling: `tablelog serve` stops both ports on
    its own signal handlers, and a test's server runs outside the main thread."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class HttpPort:
    """A running HTTP port (see `start_http_port`)."""

    server: uvicorn.Server
    listening: socket.socket
    task: asyncio.Task[None]
    port: int
    tls: bool

    @property
    def url(self) -> str:
        """The web app's address as a browser on this machine opens it (a wildcard
        address shown as the loopback address)."""
        host = self.listening.getsockname()[0]
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        shown = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{shown}:{self.port}/"

    async def stop(self, grace: float) -> None:
        """Stop accepting connections, let calls in progress finish for up to `grace`
        seconds, then end the rest (watches included)."""
        self.server.config.timeout_graceful_shutdown = max(1, round(grace))
        self.server.should_exit = True
        await self.task


async def start_http_port(
    handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]],
    address: str,
    *,
    tls: TlsFiles | None = None,
    cors_origins: Collection[str] = (),
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    reuse_port: bool = False,
    webapp: Path = WEBAPP_DIRECTORY,
    readiness: Readiness | None = None,
    gate: Gate | None = None,
    body_limits: BodyLimits = DEFAULT_BODY_LIMITS,
    hosts: Collection[str] = (),
) -> HttpPort:
    """Serve `handlers` (`tablelog.service.api.server.Built.handlers`) and the web app on `address`,
    in the running event loop, until `HttpPort.stop`; `/healthz` and `/readyz` as
    `readiness` says (`tablelog.service.api.readiness`). With `gate` (`Built.gate`), a call's token
    is checked before its body is read (`tablelog.service.api.http_guard`)."""
    app = HttpApp(
        handlers,
        cors_origins=cors_origins,
        webapp=webapp,
        readiness=readiness,
        gate=gate,
        body_limits=body_limits,
        tls=tls is not None,
        hosts=served_names(address, hosts),
    )
    listening = bind(address, reuse_port)
    config = uvicorn.Config(
        app,
        http=_BoundedH11,
        ws="none",
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        lifespan="off",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        limit_concurrency=max_connections,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ssl_certfile=str(tls.certificate) if tls is not None else None,
        ssl_keyfile=str(tls.key) if tls is not None else None,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[listening]), name="tablelog-http")
    while not server.started:
        if task.done():
            listening.close()
            task.result()  # raises what stopped it
            raise OSError(f"the HTTP port on {address} stopped while starting")
        await asyncio.sleep(0.005)
    port = listening.getsockname()[1]
    return HttpPort(server, listening, task, port, tls is not None)
