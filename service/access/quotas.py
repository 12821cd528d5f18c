"""Limits per caller, so that one caller cannot starve a club or a club the server: a
request rate per caller (changes and reads counted apart), concurrent watches per caller
and per club, and (in the store, across instances) the bytes a club may store. This
module counts; `tablelog.service.access.admission` refuses.

Who a caller is comes from one function, `KeysOf`: today `peer_keys` (the peer's address
without its port, everyone in the one local club); once callers authenticate, a function
returning the member and their club replaces it where the server is built (`build_server
(keys_of=...)`), and nothing else changes.

The rate and watch counts live in the process: with N server processes (`--workers`,
replicas) a caller gets up to N times the rate and the watches, as each process serves
it. The club's stored bytes are a counter in Redis (`RedisEventStore`), shared by all.

Light on imports: `tablelog serve`'s options take their defaults from `CallerLimits`, and
every `tablelog` command builds those options.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grpc import aio

    Context = aio.ServicerContext[Any, Any]

LOCAL_CLUB = "local"
"""The one club of a server without identities: every caller's club key."""

CHANGE_METHODS = frozenset(
    {
        "CreateGame",
        "RecordMove",
        "UndoMove",
        "RedoMove",
        "AbandonGame",
        "DeleteGame",
        "AddAnnotation",
        "RemoveAnnotation",
        "ImportGame",
    }
)
"""The calls that append; every other call of the API counts as a read."""
WATCH_METHODS = frozenset({"WatchGame"})
"""The calls that hold a watch slot for as long as they stream."""
WATCH_RETRY_SECONDS = 5.0
"""The RetryInfo of a refused watch: a slot frees only when another watch of the caller
ends, which the server cannot foresee, so this is a pace for retries, not a promise."""


@dataclass(frozen=True, slots=True)
class CallerKeys:
    """Who is asking, for counting: the caller and the club it acts for."""

    caller: str
    club: str


KeysOf = Callable[["Context"], CallerKeys]
"""How the server tells callers apart (see the module's docstring)."""


def peer_host(peer: str) -> str:
    """The caller part of grpc's peer string: its address without the port, since every
    new connection of the same machine has a port of its own ("ipv4:10.0.0.5:51234" ->
    "ipv4:10.0.0.5", "ipv6:[::1]:5123" -> "ipv6:[::1]"; a unix socket as it is)."""
    if peer.startswith(("ipv4:", "ipv6:")):
        host, colon, port = peer.rpartition(":")
        if colon and port.isdigit():
            return host
    return peer


def peer_keys(context: Context) -> CallerKeys:
    """Until callers authenticate: the calling machine, in the local club."""
    return CallerKeys(peer_host(context.peer() or ""), LOCAL_CLUB)


_club: contextvars.ContextVar[str] = contextvars.ContextVar("tablelog_club", default="")


def storage_club() -> str:
    """The club whose stored bytes the current call's appends count against ("" outside a
    call admitted by `tablelog.service.access.admission`: tools appending directly count against
    none)."""
    return _club.get()


def count_storage_for(club: str) -> contextvars.Token[str]:
    """From now on in this call, appends count against `club` (undo with `reset`)."""
    return _club.set(club)


def reset_storage_club(token: contextvars.Token[str]) -> None:
    _club.reset(token)


@dataclass(frozen=True, slots=True)
class CallerLimits:
    """What each caller may do on one server process (`tablelog serve --changes-per-second`
    ...). The defaults are far above what a club's recorders and viewers need (a move every
    few seconds per table, a viewer's reads when it opens a game) and far below what a
    runaway script would send."""

    changes_per_second: float = 50.0
    change_burst: int = 200
    reads_per_second: float = 200.0
    read_burst: int = 1_000
    watches_per_caller: int = 100
    watches_per_club: int = 1_000
    tracked_callers: int = 100_000
    """Rate buckets kept; past it the idle ones (full again, so equal to a new one) are
    dropped, and if that is not enough the oldest."""

    def __post_init__(self) -> None:
        for name in ("changes_per_second", "reads_per_second"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        for name in (
            "change_burst",
            "read_burst",
            "watches_per_caller",
            "watches_per_club",
            "tracked_callers",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


class TokenBuckets:
    """A token bucket per key: `burst` tokens, refilled at `rate` a second; a call takes
    one. Bounded to `tracked` keys (see `CallerLimits.tracked_callers`)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        tracked: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tracked = tracked
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        """key -> (tokens, when they were counted)"""

    def take(self, key: str, count: int = 1) -> float:
        """Take `count` tokens for `key`, all or none: 0.0 when taken, else the seconds
        until they are there. More than the burst (a call that does the work of many) is
        taken from a full bucket, which it leaves in debt, repaid at the rate."""
        now = self._clock()
        counted = self._buckets.get(key)
        tokens = (
            float(self.burst)
            if counted is None
            else min(self.burst, counted[0] + (now - counted[1]) * self.rate)
        )
        needed = min(count, self.burst)
        if tokens < needed:
            self._buckets[key] = (tokens, now)
            return (needed - tokens) / self.rate
        self._buckets[key] = (tokens - count, now)
        if counted is None and len(self._buckets) > self.tracked:
            self._forget(now)
        return 0.0

    def _forget(self, now: float) -> None:
        full = [
            key
            for key, (tokens, when) in self._buckets.items()
            if tokens + (now - when) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        keep = self.tracked * 9 // 10
        if len(self._buckets) > keep:  # all busy: the oldest get a fresh bucket
            for key in list(self._buckets)[: len(self._buckets) - keep]:
                del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)


class WatchCounts:
    """Watches open now, per caller and per club."""

    def __init__(self, per_caller: int, per_club: int) -> None:
        self.per_caller = per_caller
        self.per_club = per_club
        self._callers: dict[str, int] = {}
        self._clubs: dict[str, int] = {}

    def open(self, keys: CallerKeys) -> tuple[str, int] | None:
        """Count one more watch of `keys`; or, counting nothing, the scope ("caller" or
        "club") whose limit it would pass, with that limit."""
        for counts, key, limit, scope in (
            (self._callers, keys.caller, self.per_caller, "caller"),
            (self._clubs, keys.club, self.per_club, "club"),
        ):
            if counts.get(key, 0) >= limit:
                return scope, limit
        self._callers[keys.caller] = self._callers.get(keys.caller, 0) + 1
        self._clubs[keys.club] = self._clubs.get(keys.club, 0) + 1
        return None

    def close(self, keys: CallerKeys) -> None:
        for counts, key in ((self._callers, keys.caller), (self._clubs, keys.club)):
            left = counts[key] - 1
            if left:
                counts[key] = left
            else:
                del counts[key]

    def of_caller(self, caller: str) -> int:
        return self._callers.get(caller, 0)

    def of_club(self, club: str) -> int:
        return self._clubs.get(club, 0)
