"""The chain format: how a game's events are linked and sealed, in one place.

Each event carries `prev_hash` (the hash of the event before it; GENESIS_HASH for the first)
and its own `hash`, computed over its deterministic serialization with `hash` left empty:
HMAC-SHA256 under the service's chain key, whose id the event names in `chain_key_id` (so
the id is covered too), or plain SHA-256 for an event recorded before chains were keyed
(`chain_key_id` empty: still read and verified, reported as unkeyed). The key is kept
outside Redis (`tablelog.service.store.chain_keys`), so whoever can write to Redis can neither edit
an event and seal it again nor seal a forged one.

The bytes stored for an event are exactly the hashed bytes followed by the `hash` field
(HASH_FIELD_TAG + 32 bytes), so verification hashes the stored bytes themselves
(`Chain.stored_hash`), never a copy re-serialized from what they decode to, and any changed
byte shows. The store seals what it appends (`Chain.seal`); verification reads the seal back.

A receipt (`Chain.receipt`) is the head after a change, tagged with the signing key: a
client keeps it, and VerifyGame, given it back, detects a history cut off or rewritten
before it.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tablelog.v1 import events_pb2, service_pb2

GENESIS_HASH = bytes(32)
"""The `prev_hash` of a game's first event."""

HASH_FIELD_TAG = b"\x42\x20"  # field 8 (`hash`), length-delimited, 32 bytes
SEAL_LENGTH = len(HASH_FIELD_TAG) + 32

MIN_KEY_BYTES = 32
"""A chain key is at least as long as its HMAC-SHA256 output."""

_KEY_ID_DOMAIN = b"tablelog/chain-key-id/v1\0"
_RECEIPT_DOMAIN = b"tablelog/receipt/v1\0"


def key_id_of(secret: bytes) -> str:
    """The public id of a chain key: 16 hex digits of a domain-separated SHA-256 of it
    (enough to tell keys apart, nothing to learn the key from)."""
    return hashlib.sha256(_KEY_ID_DOMAIN + secret).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class ChainKey:
    secret: bytes
    key_id: str

    @classmethod
    def of(cls, secret: bytes) -> ChainKey:
        if len(secret) < MIN_KEY_BYTES:
            raise ValueError(f"a chain key needs at least {MIN_KEY_BYTES} bytes")
        return cls(secret, key_id_of(secret))

    def __repr__(self) -> str:  # never the secret, in a log or a traceback
        return f"ChainKey({self.key_id})"


class Sealing(enum.Enum):
    """How an event's hash was made."""

    KEYED = "keyed"
    """HMAC-SHA256 under a trusted chain key."""
    UNKEYED = "unkeyed"
    """Plain SHA-256: recorded before chains were keyed."""
    UNKNOWN_KEY = "unknown key"
    """Keyed with a key this server does not trust: it cannot be checked here."""


class Chain:
    """The service's chain keys: `signing` seals every new event and receipt; `trusted`
    (the signing key, and older keys kept after a rotation) verify what is stored."""

    def __init__(self, signing: ChainKey, older: Iterable[ChainKey] = ()) -> None:
        self.signing = signing
        self.trusted = {key.key_id: key.secret for key in (signing, *older)}
        self._signing_id = signing.key_id

    def __repr__(self) -> str:
        return f"Chain(signing={self.signing.key_id}, trusted={sorted(self.trusted)})"

    def _digest(self, key_id: str, unhashed: bytes) -> bytes | None:
        """The hash of `unhashed` sealed under `key_id` ("" for plain SHA-256); None when
        the key is not trusted here."""
        if not key_id:
            return hashlib.sha256(unhashed).digest()
        secret = self.trusted.get(key_id)
        if secret is None:
            return None
        return hmac.digest(secret, unhashed, "sha256")

    def sealing(self, key_id: str) -> Sealing:
        if not key_id:
            return Sealing.UNKEYED
        return Sealing.KEYED if key_id in self.trusted else Sealing.UNKNOWN_KEY

    def event_hash(self, event: events_pb2.Event) -> bytes | None:
        """The hash `event` must carry under the key it names: its deterministic
        serialization with `hash` left empty (what `seal` hashes when it stores an event).
        None when it names a key not trusted here."""
        unhashed = events_pb2.Event()
        unhashed.CopyFrom(event)
        unhashed.ClearField("hash")
        return self._digest(event.chain_key_id, unhashed.SerializeToString(deterministic=True))

    def stored_hash(self, data: bytes, key_id: str) -> tuple[bytes, bytes | None] | None:
        """(the hash the stored bytes carry, the hash of the bytes it covers under `key_id`,
        the key the decoded event names), from the stored layout itself: body +
        HASH_FIELD_TAG + 32-byte hash. The second is None for a key not trusted here; the
        whole is None when the bytes do not end in a seal."""
        if len(data) < SEAL_LENGTH or data[-SEAL_LENGTH:-32] != HASH_FIELD_TAG:
            return None
        return data[-32:], self._digest(key_id, data[:-SEAL_LENGTH])

    def seal(
        self, events: Sequence[events_pb2.Event], prev_hash: bytes
    ) -> list[tuple[events_pb2.Event, bytes]]:
        """Copies of `events` chained after `prev_hash` and keyed with the signing key (each
        gets prev_hash, the key id and its own hash), with the bytes to store: the
        deterministic serialization without `hash` (which is what the hash covers) followed
        by the `hash` field. A parser reads fields in any order, and re-serializing what it
        read gives back the hashed bytes (`event_hash`)."""
        secret, key_id = self.signing.secret, self._signing_id
        sealed: list[tuple[events_pb2.Event, bytes]] = []
        for event in events:
            copy = events_pb2.Event()
            copy.CopyFrom(event)
            copy.prev_hash = prev_hash
            copy.chain_key_id = key_id
            copy.ClearField("hash")
            unhashed = copy.SerializeToString(deterministic=True)
            copy.hash = prev_hash = hmac.digest(secret, unhashed, "sha256")
            sealed.append((copy, unhashed + HASH_FIELD_TAG + copy.hash))
        return sealed

    def receipt(self, game_id: str, event: events_pb2.Event) -> service_pb2.Receipt:
        """The receipt of a game whose head is `event` (as this server appended it)."""
        receipt = service_pb2.Receipt(
            game_id=game_id,
            sequence=event.sequence,
            revision=event.revision,
            chain_hash=event.hash,
            key_id=self._signing_id,
        )
        receipt.tag = hmac.digest(self.signing.secret, _receipt_body(receipt), "sha256")
        return receipt

    def genuine(self, receipt: service_pb2.Receipt) -> bool:
        """Whether `receipt` was issued under a key trusted here, unaltered."""
        secret = self.trusted.get(receipt.key_id)
        if secret is None:
            return False
        expected = hmac.digest(secret, _receipt_body(receipt), "sha256")
        return hmac.compare_digest(expected, receipt.tag)


def _receipt_body(receipt: service_pb2.Receipt) -> bytes:
    game_id = receipt.game_id.encode()
    return b"".join(
        (
            _RECEIPT_DOMAIN,
            len(game_id).to_bytes(2, "big"),
            game_id,
            receipt.sequence.to_bytes(8, "big"),
            receipt.revision.to_bytes(8, "big"),
            len(receipt.chain_hash).to_bytes(2, "big"),
            receipt.chain_hash,
            receipt.key_id.encode(),
        )
    )
