"""Prometheus metrics: `/metrics` on the HTTP port, and `tablelog serve --metrics-address`
for a deployment without one (docs/deploy.md, Monitoring).

RED per method, from the one logging interceptor (`tablelog.service.api.interceptors`): calls by
method, transport (grpc, http) and status code, and a latency histogram by method and transport.
Beside them, read when scraped from what the server already keeps (nothing per call): the watchers
and watched games, the head cache's bytes, hits and misses, whether Redis answers (the health
probe's verdict) and whether the server is ready; and counted where they happen, off the per-move
path: refused calls by reason (the ErrorInfo reason), append retries and checkpoint writes.

Labels are bounded: a method is one of the API's (an unknown path never reaches the
interceptor), a code one of gRPC's seventeen, a reason one of the server's own constants;
never a game id, a club or a caller.

prometheus_client rather than OpenTelemetry: one small package without dependencies whose
counter costs a fraction of a microsecond; the SDK with a Prometheus exporter adds a dozen
packages and more work per call for the same text (`benchmarks/observability.py` measures
what the interceptor adds per call)."""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from tablelog.service.api.server import Built

# (no `_created` series: they double the scrape, nobody graphs them; the function is untyped)
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)
"""The process's metrics (one server per process in production; tests read deltas)."""

LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0,
)  # fmt: skip
"""Seconds: RecordMove answers in about a millisecond; a watch lasts minutes (its call's
whole duration is observed, as py-grpc-prometheus does: filter it out by method)."""

REFUSED = Counter(
    "tablelog_refused_calls",
    "Calls refused by the server, by reason (the ErrorInfo reason: RATE_LIMITED, "
    "ILLEGAL_MOVE, STALE_VERSION, ...).",
    ("reason",),
    registry=REGISTRY,
)
APPEND_RETRIES = Counter(
    "tablelog_append_retries",
    "Appends built again because other events came first (compare-and-append lost a race).",
    registry=REGISTRY,
)
CHECKPOINT_WRITES = Counter(
    "tablelog_checkpoint_writes",
    "Checkpoints of game heads, by result (written, failed).",
    ("result",),
    registry=REGISTRY,
)
for _result in ("written", "failed"):  # both series from the start: a rate() sees the first
    CHECKPOINT_WRITES.labels(_result)

# Club memory's projector (`tablelog.service.memory.projector`): observed once per game it
# projects, off the per-move path (prometheus_client's lock is no cost there).
PROJECTION_LAG = Histogram(
    "tablelog_projection_lag_seconds",
    "Time from a game's change being noted in its club's feed (right after the append that "
    "ended, reopened, abandoned or amended it; Redis's clock) to its projection written by "
    "this instance.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
    registry=REGISTRY,
)
PROJECTOR_PENDING_CLUBS = Gauge(
    "tablelog_projector_pending_clubs",
    "Flagged clubs this instance's projector has taken and not yet caught up.",
    registry=REGISTRY,
)
PROJECTOR_PENDING_GAMES = Gauge(
    "tablelog_projector_pending_games",
    "Changed games this instance's projector has read from the feeds and not yet projected.",
    registry=REGISTRY,
)


class CallStats:
    """Calls and their latency histogram, kept as plain integers by the event loop's thread
    (every call runs there) and turned into Prometheus samples when scraped:
    prometheus_client's own Counter and Histogram take a lock each time (about 1 us a call,
    measured by benchmarks/observability.py); a dictionary look-up and a bisect do not."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.calls: dict[tuple[str, str, str], int] = {}
        self.latency: dict[tuple[str, str], list[float]] = {}
        """Per (method, transport): a count per bucket (the last: above them all), then
        the sum of seconds."""

    def observe(self, method: str, transport: str, code: str, seconds: float) -> None:
        key = (method, transport, code)
        calls = self.calls
        calls[key] = calls.get(key, 0) + 1
        counts = self.latency.get((method, transport))
        if counts is None:
            counts = self.latency[(method, transport)] = [0.0] * (len(self.buckets) + 2)
        counts[bisect_left(self.buckets, seconds)] += 1
        counts[-1] += seconds

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily(
            "tablelog_rpc_calls",
            "RPCs finished, by method, transport (grpc, http) and gRPC status code.",
            labels=("method", "transport", "code"),
        )
        for key, count in list(self.calls.items()):
            calls.add_metric(key, count)
        yield calls
        latency = HistogramMetricFamily(
            "tablelog_rpc_duration_seconds",
            "Time from a call's start to its status, by method and transport.",
            labels=("method", "transport"),
        )
        for (method, transport), counts in list(self.latency.items()):
            cumulative = 0.0
            buckets: list[tuple[str, float]] = []
            for bound, in_bucket in zip((*self.buckets, math.inf), counts[:-1], strict=True):
                cumulative += in_bucket
                buckets.append(("+Inf" if math.isinf(bound) else repr(bound), cumulative))
            latency.add_metric((method, transport), buckets, counts[-1])
        yield latency


CALL_STATS = CallStats()
observe_call = CALL_STATS.observe
"""One finished call (from `tablelog.service.api.interceptors`)."""


def refused(reason: str) -> None:
    REFUSED.labels(reason).inc()


class ServerState(Collector):
    """Gauges and counters read from the running servers when scraped (summed: tests run
    several in one process)."""

    def __init__(self) -> None:
        # By identity (a Built is a dataclass: compared by value, so unhashable).
        self._servers: weakref.WeakValueDictionary[int, Built] = weakref.WeakValueDictionary()

    def add(self, built: Built) -> None:
        self._servers[id(built)] = built

    def discard(self, built: Built) -> None:
        self._servers.pop(id(built), None)

    def collect(self) -> Iterator[Metric]:
        servers = list(self._servers.values())
        caches = [built.recorder.heads.cache for built in servers]

        def gauge(name: str, text: str, value: float) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, text, value=value)

        yield gauge(
            "tablelog_watchers", "Open WatchGame calls.", sum(b.watching.watchers for b in servers)
        )
        yield gauge(
            "tablelog_watched_games",
            "Games with at least one watcher (one stream tail each).",
            sum(b.watching.watched_games for b in servers),
        )
        yield gauge(
            "tablelog_head_cache_bytes",
            "Estimated bytes held by the cached game heads.",
            sum(c.bytes for c in caches),
        )
        yield gauge(
            "tablelog_head_cache_limit_bytes",
            "The head cache's bound (--head-cache-bytes).",
            sum(c.max_bytes for c in caches),
        )
        yield CounterMetricFamily(
            "tablelog_head_cache_hits",
            "Game heads found in the cache.",
            value=sum(c.hits for c in caches),
        )
        yield CounterMetricFamily(
            "tablelog_head_cache_misses",
            "Game heads loaded from Redis (not cached, or evicted).",
            value=sum(c.misses for c in caches),
        )
        up = [b.probe.serving for b in servers if b.probe is not None]
        yield gauge(
            "tablelog_redis_up",
            "1 while the health probe hears Redis within its limit, else 0.",
            float(bool(up) and all(up)),
        )
        yield gauge(
            "tablelog_ready",
            "1 while /readyz says ready, else 0.",
            float(bool(servers) and all(b.readiness.why_not() is None for b in servers)),
        )


SERVERS = ServerState()
REGISTRY.register(SERVERS)
REGISTRY.register(CALL_STATS)


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def start_metrics_server(host: str, port: int) -> Any:
    """`--metrics-address HOST:PORT`: `/metrics` on a port of its own, in a thread (for a
    deployment with the HTTP port off). The server's `shutdown()` stops it."""
    from prometheus_client import start_http_server

    server, _thread = start_http_server(port, addr=host, registry=REGISTRY)
    return server
