"""Admission of each call of the API: the caller's keys (`tablelog.service.access.quotas.KeysOf`), a
token of its rate bucket, a watch slot for a WatchGame, and the club its appends count against
(`tablelog.service.access.quotas.storage_club`), all before the handler runs, so a refused call
changes nothing.

A refusal is RESOURCE_EXHAUSTED with an ErrorInfo (reason RATE_LIMITED or
TOO_MANY_WATCHES, metadata `limit`, `scope`, `retry_after_ms`) and a RetryInfo saying when
to try again. The club's stored bytes are refused by the store (CLUB_STORAGE_FULL)."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from grpc import aio

from tablelog.service.access.quotas import (
    CHANGE_METHODS,
    WATCH_METHODS,
    WATCH_RETRY_SECONDS,
    CallerKeys,
    CallerLimits,
    KeysOf,
    TokenBuckets,
    WatchCounts,
    count_storage_for,
    peer_keys,
    reset_storage_club,
)
from tablelog.service.errors import LimitReached, refusal, to_status

Context = aio.ServicerContext[Any, Any]


class Admission:
    """Wraps each of the API's handlers (through `tablelog.service.api.interceptors.Registrar`); see
    the module's docstring."""

    def __init__(
        self,
        limits: CallerLimits,
        keys_of: KeysOf = peer_keys,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.keys_of = keys_of
        self.changes = TokenBuckets(
            limits.changes_per_second, limits.change_burst, limits.tracked_callers, clock
        )
        self.reads = TokenBuckets(
            limits.reads_per_second, limits.read_burst, limits.tracked_callers, clock
        )
        self.watches = WatchCounts(limits.watches_per_caller, limits.watches_per_club)

    def admit(self, name: str, keys: CallerKeys, calls: int = 1) -> None:
        """Take the call's token (`calls` of them, all or none), or raise LimitReached."""
        change = name in CHANGE_METHODS
        buckets = self.changes if change else self.reads
        wait = buckets.take(keys.caller, calls)
        if wait:
            kind = "changes" if change else "reads"
            counted = f" (this counts as {calls})" if calls > 1 else ""
            raise LimitReached(
                "RATE_LIMITED",
                f"Too many {kind}{counted}: at most {buckets.rate:g} a second (bursts of "
                f"{buckets.burst}) per caller. Try again in {_shown(wait)}.",
                limit=buckets.burst,
                scope="caller",
                retry_after=wait,
                metadata={"kind": kind, "per_second": f"{buckets.rate:g}"},
            )

    def _open_watch(self, keys: CallerKeys) -> None:
        over = self.watches.open(keys)
        if over is not None:
            scope, limit = over
            raise LimitReached(
                "TOO_MANY_WATCHES",
                f"This {scope} has {limit} games watched at once on this server, its "
                "limit: close a watch before opening another.",
                limit=limit,
                scope=scope,
                retry_after=WATCH_RETRY_SECONDS,
            )

    def charge(self, name: str, context: Context, calls: int) -> None:
        """Count `calls` more calls of `name` against the caller's rate (a call that does
        the work of several: ExportRecord per game), all or none: LimitReached past it,
        with nothing taken but the call's own token."""
        if calls > 0:
            self.admit(name, self.keys_of(context), calls)

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """`handler` admitted first (the API's own methods; others as they are)."""
        if handler is None or not method.startswith("/tablelog."):
            return handler
        name = method.rsplit("/", 1)[-1]
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(name, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(name, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    def _unary(self, name: str, inner: Any) -> Any:
        async def unary(request: Any, context: Context) -> Any:
            keys = self.keys_of(context)
            try:
                self.admit(name, keys)
            except LimitReached as refused:
                await context.abort_with_status(to_status(refusal(refused)))
            token = count_storage_for(keys.club)
            try:
                return await inner(request, context)
            finally:
                reset_storage_club(token)

        return unary

    def _stream(self, name: str, inner: Any) -> Any:
        watch = name in WATCH_METHODS

        async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
            keys = self.keys_of(context)
            try:
                self.admit(name, keys)
                if watch:
                    self._open_watch(keys)
            except LimitReached as refused:
                await context.abort_with_status(to_status(refusal(refused)))
            try:
                async for item in inner(request, context):
                    yield item
            finally:
                if watch:
                    self.watches.close(keys)

        return stream


def _shown(seconds: float) -> str:
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)} ms"
    return f"{seconds:.1f} s"
