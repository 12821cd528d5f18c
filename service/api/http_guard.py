"""What the HTTP port checks before it reads a request's body, and how it reads it.

Before the body (`HeadCheck`, a connect-python metadata interceptor, which the library
runs before it reads or parses anything of the body):
* a Content-Length over `MAX_MESSAGE_BYTES` (plus the 5-byte envelope of a stream
  message) is refused RESOURCE_EXHAUSTED at once;
* the caller's token is checked from the headers (`Gate.identify`, behind the peer's
  budget of refused authentications, `tablelog.service.access.anonymous`): a call without a token
  this server accepts is refused UNAUTHENTICATED (or RESOURCE_EXHAUSTED past the budget) with none
  of its body read.

While the body is read (`MeteredBody`, around the ASGI `receive`):
* at most `BodyLimits.per_peer` bodies per peer address and `BodyLimits.total` in all are
  read at once (a body counts from its first byte read to its last): past either, the
  call is refused RESOURCE_EXHAUSTED (reason BODIES_IN_PROGRESS) without reading it;
* a body must keep to `BodyLimits.bytes_per_second` after a `BodyLimits.grace_seconds`
  start: by any moment t seconds into the body, at least (t - grace) x rate bytes must be
  in, else the call is refused DEADLINE_EXCEEDED (reason BODY_TOO_SLOW).

A call answered before its body was read to the end is answered with `connection: close`,
so the connection (and whatever the client still sends) is dropped with the answer.

A call refused before its handler ran (each of the above, and the library's own refusals of
a body: past `MAX_MESSAGE_BYTES` as it is read, an unknown compression) never reaches the
logging interceptor: `HeadCheck` counts it in `tablelog_rpc_calls_total`, spans it and writes
its line with its trace id and request id as the interceptor does for every other call
(`interceptors.refused_before_handler`), and returns the request id as `x-request-id`. The
guard's own refusals carry an ErrorInfo reason (BODY_TOO_LARGE, BODIES_IN_PROGRESS,
BODY_TOO_SLOW, or the token's), counted in `tablelog_refused_calls_total` by
`tablelog.service.errors.to_status`.

So an anonymous caller holds at most the 64 KiB uvicorn buffers per connection before it
is answered, and a member at most `total` bodies of `MAX_MESSAGE_BYTES` over the port
(measured in docs/benchmarks.md, "The HTTP port under a body flood")."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from starlette.types import Message, Receive, Send

from tablelog.service.access.authentication import Gate
from tablelog.service.api import interceptors
from tablelog.service.api.http_api import CALL_HEAD, CallHead, _peer, connect_error
from tablelog.service.errors import MAPPED, Refusal, refusal, to_status
from tablelog.service.limits import MAX_MESSAGE_BYTES
from tablelog.service.tracing import REQUEST_ID_KEY, returnable

ENVELOPE_BYTES = 5
"""The prefix of a message in a stream body (gRPC-Web, Connect streaming)."""
MAX_BODY_BYTES = MAX_MESSAGE_BYTES + ENVELOPE_BYTES


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """How request bodies are read on the HTTP port (see the module doc)."""

    per_peer: int = 4
    """Bodies one peer address may have in progress at once."""
    total: int = 32
    """Bodies in progress at once over the whole port: with `MAX_MESSAGE_BYTES` each, the
    most the port holds of bodies (512 MiB at 16 MiB)."""
    bytes_per_second: float = 64 * 1024
    """The slowest a body may arrive once `grace_seconds` have passed (a phone on a poor
    mobile link sends a move, a few hundred bytes, well inside the grace)."""
    grace_seconds: float = 10.0


DEFAULT_BODY_LIMITS = BodyLimits()


class BodySlots:
    """The bodies in progress, per peer and in all."""

    def __init__(self, limits: BodyLimits) -> None:
        self.limits = limits
        self.by_peer: Counter[str] = Counter()
        self.total = 0

    def take(self, peer: str) -> bool:
        if self.total >= self.limits.total or self.by_peer[peer] >= self.limits.per_peer:
            return False
        self.total += 1
        self.by_peer[peer] += 1
        return True

    def give(self, peer: str) -> None:
        self.total -= 1
        self.by_peer[peer] -= 1
        if self.by_peer[peer] <= 0:
            del self.by_peer[peer]


def refused_by_guard(code: grpc.StatusCode, reason: str, message: str) -> ConnectError:
    """A refusal of the guard's own, as the API's are made: an ErrorInfo with `reason`
    (counted by reason in `tablelog_refused_calls_total`)."""
    return connect_error(to_status(Refusal(code, reason, message)))


def status_name(error: BaseException) -> str:
    """The gRPC status code's name for the error a call ended with (as its log line and
    `tablelog_rpc_calls_total` spell codes)."""
    if not isinstance(error, ConnectError):
        return "UNKNOWN"
    return "CANCELLED" if error.code is Code.CANCELED else error.code.name


def _refused(
    ctx: RequestContext[Any, Any],
    head: CallHead,
    error: BaseException,
    stage: str,
    anonymous: bool = False,
) -> None:
    """A call refused before its handler ran: counted, spanned and logged with its ids, as
    the interceptor would have (see the module doc), its request id sent back."""
    extra: dict[str, Any] = {"refused": stage}
    if anonymous:
        extra["anonymous"] = True  # its line sampled (`tablelog.service.access.anonymous`)
    fields = interceptors.refused_before_handler(
        f"/{ctx.method.service_name}/{ctx.method.name}",
        tuple(ctx.request_headers.allitems()),
        head.started,
        status_name(error),
        **extra,
    )
    if returnable(fields["request_id"]):
        ctx.response_headers[REQUEST_ID_KEY] = fields["request_id"]


class HeadCheck:
    """The checks made on a call's headers, before its body (a connect-python metadata
    interceptor: its `on_start` runs before the library reads the body), and the account of
    the calls refused before their handler (`on_end`)."""

    def __init__(self, gate: Gate | None) -> None:
        self.gate = gate

    async def on_start(self, ctx: RequestContext[Any, Any]) -> CallHead:
        head = CallHead()
        CALL_HEAD.set(head)  # (the call's own task: the adapter marks its handler reached)
        length = ctx.request_headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            error = refused_by_guard(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "BODY_TOO_LARGE",
                f"The request body is {int(length)} bytes; the limit is {MAX_BODY_BYTES}.",
            )
            _refused(ctx, head, error, "before the body")
            raise error
        if self.gate is None:
            return head
        try:
            await self.gate.identify(
                tuple(ctx.request_headers.allitems()), _peer(ctx.client_address)
            )
        except MAPPED as exc:
            error = connect_error(to_status(refusal(exc)))
            _refused(ctx, head, error, "before the body", anonymous=True)
            raise error from None
        return head

    async def on_end(
        self, head: CallHead, ctx: RequestContext[Any, Any], error: Exception | None
    ) -> None:
        """A call that ended before its handler ran (its body refused as it was read, or
        past its deadline) is accounted here; every other call by its handler's interceptor."""
        if error is not None and not head.handler_ran:
            _refused(ctx, head, error, "with the body")


class MeteredBody:
    """A call's ASGI `receive` and `send`, reading its body within `BodyLimits` (see the
    module doc): one per call."""

    def __init__(
        self, receive: Receive, send: Send, slots: BodySlots, peer: str, has_body: bool
    ) -> None:
        self._receive = receive
        self._send = send
        self.slots = slots
        self.peer = peer
        self.done = not has_body
        self.holding = False
        self.started = 0.0
        self.received = 0

    async def receive(self) -> Message:
        if self.done:
            return await self._receive()
        limits = self.slots.limits
        if not self.holding:
            if not self.slots.take(self.peer):
                raise refused_by_guard(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "BODIES_IN_PROGRESS",
                    f"Too many request bodies in progress (at most {limits.per_peer} from "
                    f"one address, {limits.total} in all): try again shortly.",
                )
            self.holding = True
            self.started = time.monotonic()
        allowed = (
            self.started
            + limits.grace_seconds
            + self.received / limits.bytes_per_second
            - time.monotonic()
        )
        try:
            message = await asyncio.wait_for(self._receive(), max(allowed, 0.0))
        except TimeoutError:
            self.release()
            raise refused_by_guard(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                "BODY_TOO_SLOW",
                f"The request body arrived too slowly: at least "
                f"{limits.bytes_per_second / 1024:g} KiB a second after the first "
                f"{limits.grace_seconds:g} s.",
            ) from None
        self.received += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.done = True
            self.release()
        return message

    def release(self) -> None:
        if self.holding:
            self.holding = False
            self.slots.give(self.peer)

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not self.done:
            # Answered before the whole body came: drop the connection with the answer.
            headers = [*message.get("headers", ()), (b"connection", b"close")]
            message = {**message, "headers": headers}
        await self._send(message)
