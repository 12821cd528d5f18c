"""Callers without a token this server accepts ("anonymous"): a budget of refused calls per
peer, spent before any token is looked up, and sampled log lines for their refusals.

A token lookup costs Redis round trips and every refusal a log line; an outsider without a
token could otherwise make both as fast as the network carries calls (about 1,270 refused
calls a second from one client, each a Redis GET and a warning line). So each peer (its
address without the port; an IPv6 peer by its /64, as one machine usually holds a whole
/64) has a budget of `ANONYMOUS_BURST` refused authentications, refilled at
`ANONYMOUS_PER_SECOND`: each call refused UNAUTHENTICATED spends one; while the budget is
spent, a call whose token this process has not resolved before (`Gate.resolved_before`)
is refused RESOURCE_EXHAUSTED (reason ANONYMOUS_RATE_LIMITED, with RetryInfo) before its
token is looked up or, on the HTTP port, its body read. A member whose token resolved is
never counted: only refusals spend.

Behind a proxy every caller is the proxy's address (the ports do not trust forwarded
headers), so the budget is then the proxy's: put the limit at the proxy instead.

Refusals of anonymous callers are logged at most `SAMPLED_LINES_PER_SECOND` lines a second
per process; the next line logged says how many were left out (`suppressed`)."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from typing import Any

from tablelog.service.access.quotas import TokenBuckets, peer_host
from tablelog.service.errors import LimitReached

ANONYMOUS_PER_SECOND = 5.0
"""Refused authentications a peer earns back per second."""
ANONYMOUS_BURST = 20
"""Refused authentications a peer may make at once (a mistyped token, a client retrying)."""
TRACKED_PEERS = 100_000
SAMPLED_LINES_PER_SECOND = 10
"""Log lines for anonymous refusals per second and process; the rest are counted."""


def peer_of(peer: str) -> str:
    """Who a peer is for the budget: grpc's peer string ("ipv4:10.0.0.5:51234") without
    its port, an IPv6 address cut to its /64."""
    host = peer_host(peer)
    if host.startswith("ipv6:["):
        try:
            address = ipaddress.IPv6Address(host[len("ipv6:[") : -1])
        except ValueError:
            return host
        network = ipaddress.IPv6Network((address, 64), strict=False)
        return f"ipv6:{network}"
    return host


class AnonymousBudget:
    """The refused-authentication budget of each peer (see the module doc)."""

    def __init__(
        self,
        per_second: float = ANONYMOUS_PER_SECOND,
        burst: int = ANONYMOUS_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.buckets = TokenBuckets(per_second, burst, TRACKED_PEERS, clock)
        self._clock = clock

    def check(self, peer: str) -> None:
        """Raise LimitReached when `peer` has spent its budget (before a token lookup)."""
        wait = self._wait(peer_of(peer))
        if wait > 0:
            raise LimitReached(
                "ANONYMOUS_RATE_LIMITED",
                f"Too many calls without a valid token from this address: at most "
                f"{self.buckets.rate:g} a second (bursts of {self.buckets.burst}). Send a "
                f"token this server accepts, or try again in {wait:.1f} s.",
                limit=self.buckets.burst,
                scope="peer",
                retry_after=wait,
            )

    def spend(self, peer: str) -> None:
        """Count one refused authentication of `peer`."""
        self.buckets.take(peer_of(peer))

    def _wait(self, key: str) -> float:
        # A peek at the bucket TokenBuckets.take would empty: the same arithmetic.
        counted = self.buckets._buckets.get(key)
        if counted is None:
            return 0.0
        tokens = min(
            self.buckets.burst, counted[0] + (self._clock() - counted[1]) * self.buckets.rate
        )
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.buckets.rate


class LogSampler:
    """At most `per_second` lines a second pass; the others are counted, and the next line
    that passes carries how many were left out."""

    def __init__(
        self,
        per_second: int = SAMPLED_LINES_PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_second = per_second
        self._clock = clock
        self._second = -1
        self._passed = 0
        self.suppressed = 0

    def admit(self, fields: dict[str, Any]) -> bool:
        """Whether to write this line; adds `suppressed` to it when lines were left out."""
        second = int(self._clock())
        if second != self._second:
            self._second, self._passed = second, 0
        if self._passed >= self.per_second:
            self.suppressed += 1
            return False
        self._passed += 1
        if self.suppressed:
            fields["suppressed"] = self.suppressed
            self.suppressed = 0
        return True


SAMPLER = LogSampler()
"""The process's sampler of anonymous refusals' log lines (both ports)."""
