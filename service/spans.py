"""OpenTelemetry spans, one per RPC, exported over OTLP when an endpoint is configured
(`tablelog serve --otlp-endpoint`, else the standard `OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; OTLP over gRPC). An optional extra: `pip install
'tablelog[otlp]'` brings OpenTelemetry's SDK and its OTLP gRPC exporter; without an endpoint
nothing of it is imported and a call pays one test of a global.

The span of a call is the call's log line as a span (`tablelog.service.api.interceptors`
makes both when the call ends): its trace id is the one in the call's log lines
(`tablelog.service.tracing`: the caller's `traceparent`, else one made for the call), its
parent the caller's span named by that `traceparent` (whose sampled flag is honoured: a
caller that does not sample gets no span), its span id the `span_id` field of the log line.
Name and attributes follow OpenTelemetry's RPC conventions (`tablelog.v1.TablelogService/
RecordMove`, `rpc.system` grpc, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`) plus
`tablelog.transport` (grpc or http), `tablelog.game_id` and `tablelog.request_id`; the
status is an error for the codes that are the server's fault (UNKNOWN, INTERNAL,
UNAVAILABLE, DATA_LOSS, DEADLINE_EXCEEDED, UNIMPLEMENTED), not for a refusal. Spans leave
in batches from the SDK's own thread (BatchSpanProcessor), never on the loop; a collector
that is down loses spans, never a call."""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any, Final

SERVER_FAULTS: Final = frozenset(
    {"UNKNOWN", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "DEADLINE_EXCEEDED", "UNIMPLEMENTED"}
)
"""The codes OpenTelemetry's conventions mark as a server span's error."""
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
MISSING_EXTRA = (
    "OTLP export needs OpenTelemetry's SDK and OTLP exporter: pip install 'tablelog[otlp]'"
)


class SpanExportUnavailable(RuntimeError):
    """An endpoint is configured but the `otlp` extra is not installed."""


def configured_endpoint(option: str = "") -> str:
    """The endpoint spans go to: the option, else the standard variables, else "" (none)."""
    if option:
        return option
    for name in ENDPOINT_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return ""


def spans_available() -> None:
    """Raises SpanExportUnavailable when the `otlp` extra is not installed."""
    try:
        import opentelemetry.exporter.otlp.proto.grpc.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as missing:
        raise SpanExportUnavailable(MISSING_EXTRA) from missing


def _call_ids(preset: ContextVar[tuple[int, int] | None]) -> Any:
    """An OpenTelemetry IdGenerator handing out the ids the call already has (its trace id
    is in its log lines), preset just before the span is made, on the same thread."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class CallIds(IdGenerator):
        def generate_span_id(self) -> int:
            ids = preset.get(None)
            assert ids is not None, "a span is only made by SpanExport.record"
            return ids[1]

        def generate_trace_id(self) -> int:
            ids = preset.get(None)
            assert ids is not None, "a span is only made by SpanExport.record"
            return ids[0]

        def is_trace_id_random(self) -> bool:
            return True  # made random, or the caller's (W3C: random)

    return CallIds()


class SpanExport:
    """A tracer provider exporting to `endpoint` over OTLP/gRPC (`insecure` for an http://
    endpoint or one without a scheme, as the exporter itself reads it)."""

    def __init__(self, endpoint: str, service_name: str = "tablelog") -> None:
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as missing:
            raise SpanExportUnavailable(MISSING_EXTRA) from missing
        self.endpoint = endpoint
        self._ids: ContextVar[tuple[int, int] | None] = ContextVar("tablelog_span_ids")
        resource = Resource.create(
            {"service.name": os.environ.get("OTEL_SERVICE_NAME") or service_name}
        )
        self.provider = TracerProvider(resource=resource, id_generator=_call_ids(self._ids))
        insecure = not endpoint.startswith("https://")
        self.provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=insecure))
        )
        self.tracer = self.provider.get_tracer("tablelog.service")

    def record(
        self, fields: dict[str, Any], service: str, start_ns: int, end_ns: int, status: str
    ) -> None:
        """The span of one finished call, from its log fields (`trace_id`, `span_id`,
        `parent_span_id`, `method`, ...)."""
        import grpc
        from opentelemetry import trace
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        trace_id = int(fields["trace_id"], 16)
        context = None
        parent = fields.get("parent_span_id")
        if parent:
            # (a call under a parent that does not sample has no span_id: no span is made)
            flags = TraceFlags(TraceFlags.SAMPLED)
            remote = SpanContext(trace_id, int(parent, 16), is_remote=True, trace_flags=flags)
            context = trace.set_span_in_context(trace.NonRecordingSpan(remote))
        method = fields["method"]
        code = grpc.StatusCode[status] if status in grpc.StatusCode.__members__ else None
        attributes: dict[str, str | int] = {
            "rpc.system": "grpc",
            "rpc.service": service,
            "rpc.method": method,
            "tablelog.transport": fields.get("transport", "grpc"),
        }
        if code is not None:
            attributes["rpc.grpc.status_code"] = code.value[0]
        for key in ("game_id", "request_id"):
            if fields.get(key):
                attributes[f"tablelog.{key}"] = str(fields[key])
        token = self._ids.set((trace_id, int(fields["span_id"], 16)))
        try:
            span = self.tracer.start_span(
                f"{service}/{method}",
                context=context,
                kind=SpanKind.SERVER,
                attributes=attributes,
                start_time=start_ns,
            )
        finally:
            self._ids.reset(token)
        if status in SERVER_FAULTS:
            span.set_status(Status(StatusCode.ERROR, status))
        span.end(end_time=end_ns)

    def flush(self, timeout_ms: int = 5000) -> bool:
        """Sends the spans waiting in the batch (tests, and before the process stops)."""
        return bool(self.provider.force_flush(timeout_ms))

    def shutdown(self) -> None:
        self.provider.shutdown()


EXPORT: SpanExport | None = None
"""The process's span export, when configured (`configure_spans`); None: no spans."""


def configure_spans(endpoint: str) -> SpanExport | None:
    """Starts exporting spans to `endpoint` ("" stops and exports none); raises
    SpanExportUnavailable when the `otlp` extra is missing."""
    global EXPORT
    if EXPORT is not None:
        EXPORT.shutdown()
        EXPORT = None
    if endpoint:
        EXPORT = SpanExport(endpoint)
    return EXPORT


def new_span_id() -> str:
    """64 random bits in hex (W3C: a span id is random and not all zero)."""
    from random import getrandbits

    return f"{getrandbits(64) or 1:016x}"
