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

So an anonymous caller holds at most the 64 KiB uvicorn buffers per connection before it
is answered, and a member at most `total` bodies of `MAX_MESSAGE_BYTES` over the port
(measured in docs/benchmarks.md, "The HTTP port under a body flood")."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from starlette.types import Message, Receive, Send

from tablelog.service.access.anonymous import SAMPLER
from tablelog.service.access.authentication import Gate
from tablelog.service.api import interceptors
from tablelog.service.api.http_api import _peer, connect_error
from tablelog.service.errors import MAPPED, refusal, to_status
from tablelog.service.limits import MAX_MESSAGE_BYTES

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


def _method(ctx: RequestContext[Any, Any]) -> str:
    return ctx.method.name


def _log_refused(ctx: RequestContext[Any, Any], error: ConnectError, anonymous: bool) -> None:
    """The refused call's one line (the handler, which writes it for admitted calls, never
    runs): sampled when the caller had no valid token."""
    fields: dict[str, Any] = {
        "method": _method(ctx),
        "transport": "http",
        "status": error.code.name,
        "refused": "before the body",
        "duration_ms": 0.0,
    }
    if anonymous and not SAMPLER.admit(fields):
        return
    interceptors.log.warning("rpc", **fields)  # the one logger of every call's line


class HeadCheck:
    """The checks made on a call's headers, before its body (a connect-python metadata
    interceptor: its `on_start` runs before the library reads the body)."""

    def __init__(self, gate: Gate | None) -> None:
        self.gate = gate

    async def on_start(self, ctx: RequestContext[Any, Any]) -> None:
        length = ctx.request_headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            error = ConnectError(
                Code.RESOURCE_EXHAUSTED,
                f"The request body is {int(length)} bytes; the limit is {MAX_BODY_BYTES}.",
            )
            _log_refused(ctx, error, anonymous=False)
            raise error
        if self.gate is None:
            return
        try:
            await self.gate.identify(
                tuple(ctx.request_headers.allitems()), _peer(ctx.client_address)
            )
        except MAPPED as exc:
            error = connect_error(to_status(refusal(exc)))
            _log_refused(ctx, error, anonymous=True)
            raise error from None

    async def on_end(self, token: None, ctx: RequestContext[Any, Any], error: Any) -> None:
        del token, ctx, error


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
                raise ConnectError(
                    Code.RESOURCE_EXHAUSTED,
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
            raise ConnectError(
                Code.DEADLINE_EXCEEDED,
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
