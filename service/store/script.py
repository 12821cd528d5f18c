"""The append script (append.lua) as typed values: what a call passes in ARGV, what the
script answers, and the request-id entry it stores, each documented against the positions
the script reads and writes. Change this module and the script together.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple


class SeedOp(enum.Enum):
    """What the append does to dealt mode's secret seed (KEYS[4])."""

    KEEP = "-"
    SET = "set"
    DELETE = "del"


class AppendCall(NamedTuple):
    """One call of append.lua. ARGV[1] is a header of eight space-separated words (the
    script matches it with one pattern); the other arguments are binary-safe strings.
    (A named tuple: one is made on every append, and it is built in a fraction of a
    frozen dataclass's time.)"""

    expected_sequence: int
    """ARGV[1] word 1: the sequence the game must be at (0: it must not exist yet)."""
    expected_revision: int | None
    """ARGV[1] word 2: the revision it must be at; None ("-") when any will do."""
    new_revision: int
    """ARGV[1] word 3: the game's revision after the append (stored in the head)."""
    seed_op: SeedOp
    """ARGV[1] word 4."""
    fingerprint: str
    """ARGV[1] word 6: what the request asks (hex), stored with its request id ("-": none).
    Word 5, the number of events, is `len(events)`."""
    now_ms: int
    """ARGV[1] word 7: the caller's clock, milliseconds since the epoch: when the request id
    is stored (in its entry, and in KEYS[5]'s order)."""
    retention_ms: int
    """ARGV[1] word 8: how long request ids are kept (older ones are forgotten)."""
    request_id: str
    """ARGV[2], or ""."""
    prev_hash: bytes
    """ARGV[3]: the hash of the event at `expected_sequence` (b"" for a new game)."""
    last_hash: bytes
    """ARGV[4]: the hash of the last event appended (the new head's)."""
    seed: bytes
    """ARGV[5]: the seed, with SeedOp.SET."""
    summary: bytes
    """ARGV[6]: the GameSummary after the append (stored for listing)."""
    events: tuple[bytes, ...]
    """ARGV[7 .. 6+n]: the sealed events' stored bytes."""

    def argv(self) -> list[Any]:
        revision = "-" if self.expected_revision is None else self.expected_revision
        header = (
            f"{self.expected_sequence} {revision} {self.new_revision} "
            f"{self.seed_op.value} {len(self.events)} {self.fingerprint or '-'} "
            f"{self.now_ms} {self.retention_ms}"
        )
        return [
            header,
            self.request_id,
            self.prev_hash,
            self.last_hash,
            self.seed,
            self.summary,
            *self.events,
        ]


class ScriptStatus(enum.Enum):
    """The first word of the script's reply."""

    OK = "ok"
    """"ok <first> <last>": appended as sequences first..last."""
    DUPLICATE = "duplicate"
    """"duplicate <first>:<last>": this request id appended them before, same request."""
    REUSED = "reused"
    """"reused <first>:<last>": this request id appended them before, another request."""
    STALE = "stale"
    """"stale <sequence> <revision>": the expected revision is not the current one."""
    MOVED = "moved"
    """"moved <sequence> <revision>": the right revision, but other events came first."""
    MISSING = "missing"
    """"missing": no such game."""
    EXISTS = "exists"
    """"exists <sequence> <revision>": creating a game that exists."""
    CHAIN = "chain"
    """"chain <sequence> <revision>": the previous hash given is not the stored one."""
    DAMAGED = "damaged"
    """"damaged <sequence> <revision>": the stream does not end where the head says (its
    length, its last entry's id or hash): it was changed outside the script."""


def parse_range(text: bytes) -> tuple[int, int]:
    """(first, last) from "<first>:<last>"."""
    first, last = text.split(b":")
    return int(first), int(last)


_STATUS_OF_WORD = {status.value.encode(): status for status in ScriptStatus}


class ScriptReply(NamedTuple):
    """The script's one-string reply, read (a named tuple, as `AppendCall`)."""

    status: ScriptStatus
    first: int = 0
    """OK, DUPLICATE, REUSED: the first sequence the request appended."""
    last: int = 0
    """OK, DUPLICATE, REUSED: the last."""
    sequence: int = 0
    """STALE, MOVED, EXISTS, CHAIN, DAMAGED: the game's last sequence."""
    revision: int = 0
    """STALE, MOVED, EXISTS, CHAIN, DAMAGED: the game's revision."""

    @classmethod
    def parse(cls, reply: bytes) -> ScriptReply:
        words = reply.split()
        status = _STATUS_OF_WORD[words[0]]
        if status is ScriptStatus.OK:
            return cls(status, int(words[1]), int(words[2]))
        if status is ScriptStatus.MISSING:
            return cls(status)
        if status in (ScriptStatus.DUPLICATE, ScriptStatus.REUSED):
            first, last = parse_range(words[1])
            return cls(status, first, last)
        return cls(status, sequence=int(words[1]), revision=int(words[2]))


@dataclass(frozen=True, slots=True)
class RequestEntry:
    """What the script stores under a request id (KEYS[3]): "<first>:<last> <fingerprint>
    <ms>", the milliseconds since the epoch when it was stored. An entry stored before
    fingerprints existed has none (`fingerprint` is ""), one stored before request ids
    expired has no time (`stored_ms` is None)."""

    first: int
    last: int
    fingerprint: str
    stored_ms: int | None = None

    @classmethod
    def parse(cls, stored: bytes) -> RequestEntry:
        words = stored.split(b" ")
        first, last = parse_range(words[0])
        fingerprint = words[1].decode() if len(words) > 1 else ""
        stored_ms = int(words[2]) if len(words) > 2 else None
        return cls(first, last, fingerprint, stored_ms)

    def expired(self, now_ms: int, retention_ms: int) -> bool:
        """Whether the entry is past the retention (as the script decides it)."""
        return self.stored_ms is not None and self.stored_ms < now_ms - retention_ms

    def same_request(self, fingerprint: str) -> bool:
        """Whether a request with `fingerprint` is the one that stored this entry (as the
        script decides it: an entry without a fingerprint is taken as the same)."""
        return not self.fingerprint or self.fingerprint == (fingerprint or "-")
