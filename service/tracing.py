"""Which call a log line belongs to: a W3C trace id and a request id for every RPC.

- The trace id comes from the caller's `traceparent` (W3C Trace Context, gRPC metadata or an
  HTTP header: ``00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>``), so the server's
  lines join the caller's trace; a call without a valid one gets a new random trace id.
- The request id is the request's own `request_id` field (the idempotency key of a change),
  else the `x-request-id` metadata, else one the server makes; the server returns it as
  `x-request-id` (gRPC trailing metadata; an HTTP response header) so a caller can quote it.

Both are in the call's own log line (`tablelog.service.api.interceptors`) and, through `CURRENT` and
the `add_call_ids` processor (`tablelog.service.logs`), in every other line logged while the call
runs. Making them costs about a microsecond a call (`benchmarks/observability.py`)."""

from __future__ import annotations

import contextvars
import re
from random import getrandbits
from typing import Any

from structlog.typing import EventDict, WrappedLogger

CURRENT: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "tablelog_rpc", default=None
)
"""The running call's log fields (set by `tablelog.service.api.interceptors` for the call's
duration)."""

CALL_METADATA: contextvars.ContextVar[tuple[Any, Any] | None] = contextvars.ContextVar(
    "tablelog_call_metadata", default=None
)
"""(the running call's servicer context, its invocation metadata), as the logging interceptor
read them for the call's duration: grpc.aio builds the metadata's tuple anew on every
`invocation_metadata()` (about 4 us of CPU each), so the gate takes the same tuple from here
(`call_metadata`)."""


def call_metadata(context: Any) -> Any:
    """`context.invocation_metadata()`, read once per call: the tuple the logging interceptor
    kept for this very context, else read now."""
    kept = CALL_METADATA.get()
    if kept is not None and kept[0] is context:
        return kept[1]
    return context.invocation_metadata()


REQUEST_ID_KEY = "x-request-id"
TRACEPARENT_KEY = "traceparent"
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-.*)?")
"""Version, trace id, parent id, flags (a later version may append fields: kept)."""


def trace_id_of(traceparent: str) -> str | None:
    """The trace id of a W3C `traceparent` value, None when it is not a valid one (wrong
    shape, version ff, or an all-zero id, which the recommendation says to ignore)."""
    found = _TRACEPARENT.fullmatch(traceparent.strip())
    if found is None or traceparent.lstrip().startswith("ff"):
        return None
    trace_id, parent_id = found.groups()
    if trace_id == "0" * 32 or parent_id == "0" * 16:
        return None
    return trace_id


def parent_of(traceparent: str) -> str | None:
    """The caller's span id in a valid `traceparent` whose flags say it is sampled, None
    otherwise (`tablelog.service.spans` makes a span only under a sampled parent or none)."""
    if trace_id_of(traceparent) is None:
        return None
    fields = traceparent.strip().split("-")
    return fields[2] if int(fields[3][:2], 16) & 1 else None


def new_trace_id() -> str:
    """128 random bits in hex (W3C: the trace id is random)."""
    return f"{getrandbits(128):032x}"


def new_request_id() -> str:
    """64 random bits in hex, for a call that came without a request id (and with a
    trace id: a call whose trace id is made here uses its first half instead, one random
    number a call)."""
    return f"{getrandbits(64):016x}"


def returnable(request_id: str) -> bool:
    """Whether `request_id` can go back as a metadata value or a header: printable ASCII
    only (a request's own `request_id` field may hold any text; one that cannot is only
    logged)."""
    return request_id.isascii() and request_id.isprintable()


def current_request_id() -> str | None:
    """The running call's request id, when it can be returned (`returnable`)."""
    fields = CURRENT.get()
    request_id = None if fields is None else fields.get("request_id")
    return request_id if request_id and returnable(request_id) else None


def add_call_ids(logger: WrappedLogger, name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: the running call's trace and request ids on every line."""
    fields = CURRENT.get()
    if fields is not None:
        for key in ("trace_id", "request_id", "span_id"):
            if key in fields and key not in event_dict:
                event_dict[key] = fields[key]
    return event_dict
