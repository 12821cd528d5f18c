"""The chain format: how a game's events are linked and sealed, in one place.

Each event carries `prev_hash` (the hash of the event before it; GENESIS_HASH for the first)
and its own `hash`: SHA-256 of its deterministic serialization with `hash` left empty. The
bytes stored for an event are exactly those hashed bytes followed by the `hash` field
(HASH_FIELD_TAG + 32 bytes), so verification hashes the stored bytes themselves
(`stored_hash`), never a copy re-serialized from what they decode to, and any changed byte
shows. The store seals what it appends (`seal`); verification and tests read the seal back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from tablelog.v1 import events_pb2

GENESIS_HASH = bytes(32)
"""The `prev_hash` of a game's first event."""

HASH_FIELD_TAG = b"\x42\x20"  # field 8 (`hash`), length-delimited, 32 bytes
SEAL_LENGTH = len(HASH_FIELD_TAG) + 32


def _digest(unhashed: bytes) -> bytes:
    return hashlib.sha256(unhashed).digest()


def event_hash(event: events_pb2.Event) -> bytes:
    """The hash `event` must carry: its deterministic serialization with `hash` left empty
    (what `seal` hashes when it stores an event)."""
    unhashed = events_pb2.Event()
    unhashed.CopyFrom(event)
    unhashed.ClearField("hash")
    return _digest(unhashed.SerializeToString(deterministic=True))


def stored_hash(data: bytes) -> tuple[bytes, bytes] | None:
    """(the hash the stored bytes carry, the hash of the bytes it covers), from the stored
    layout itself: body + HASH_FIELD_TAG + 32-byte hash. None when the bytes do not end in
    a seal."""
    if len(data) < SEAL_LENGTH or data[-SEAL_LENGTH:-32] != HASH_FIELD_TAG:
        return None
    return data[-32:], _digest(data[:-SEAL_LENGTH])


def seal(
    events: Sequence[events_pb2.Event], prev_hash: bytes
) -> list[tuple[events_pb2.Event, bytes]]:
    """Copies of `events` chained after `prev_hash` (each gets prev_hash and its own hash),
    with the bytes to store: the deterministic serialization without `hash` (which is what
    the hash covers) followed by the `hash` field. A parser reads fields in any order, and
    re-serializing what it read gives back the hashed bytes (`event_hash`)."""
    sealed: list[tuple[events_pb2.Event, bytes]] = []
    for event in events:
        copy = events_pb2.Event()
        copy.CopyFrom(event)
        copy.prev_hash = prev_hash
        copy.ClearField("hash")
        unhashed = copy.SerializeToString(deterministic=True)
        copy.hash = prev_hash = _digest(unhashed)
        sealed.append((copy, unhashed + HASH_FIELD_TAG + copy.hash))
    return sealed
