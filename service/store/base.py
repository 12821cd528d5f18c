"""The abstract event store: what the service needs from storage, whatever the backend.
Every backend passes tests/service/test_store_contract.py."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from tablelog.service.store.chain import Chain
from tablelog.service.store.checkpoint_storage import CheckpointStorage
from tablelog.service.store.game_index import IndexEntry
from tablelog.service.store.script import SeedOp
from tablelog.v1 import events_pb2


@dataclass(frozen=True, slots=True)
class StoredHead:
    sequence: int
    revision: int
    last_hash: bytes


@dataclass(frozen=True, slots=True)
class AppendResult:
    events: tuple[events_pb2.Event, ...]
    """The events as stored, hashes included (for a duplicate: the ones first stored)."""
    duplicate: bool


class EventStore(abc.ABC):
    """What the service needs from storage. Every backend passes tests/service/
    test_store_contract.py; the only backend is Redis (embedded, standalone or cluster)."""

    chain: Chain
    """The chain keys the store seals appended events with (see `tablelog.service.store.chain`)."""
    checkpoints: CheckpointStorage
    """The games' checkpoints, beside their streams (see
    `tablelog.service.recording.checkpoints`)."""

    @abc.abstractmethod
    async def append(
        self,
        game_id: str,
        events: Sequence[events_pb2.Event],
        *,
        expected_sequence: int,
        prev_hash: bytes,
        expected_revision: int | None,
        request_id: str = "",
        summary: bytes = b"",
        seed_op: SeedOp = SeedOp.KEEP,
        seed: bytes = b"",
        fingerprint: str = "",
        club: str = "",
    ) -> AppendResult:
        """Seal `events` (sequences expected_sequence+1, ...) after `prev_hash` with the
        store's chain key and append
        them atomically, if the game is at `expected_sequence` (0: create it) and, unless
        None, at `expected_revision`. A request id seen before with the same `fingerprint`
        (a short hex digest of what the request asks) returns the original events. The
        stored bytes count against `club`'s quota, when the store has one.

        Raises StaleVersion, SequenceMoved, GameNotFound, GameExists, ChainMismatch,
        IdempotencyKeyReused (the request id was used with another fingerprint),
        ClubStorageFull (nothing appended)."""

    @abc.abstractmethod
    async def check_club_storage(self, club: str, events: Sequence[events_pb2.Event]) -> None:
        """Raise ClubStorageFull if `club` has no room for `events` as a new game's first
        events (asked before a creation touches anything; `append` decides for good)."""

    @abc.abstractmethod
    async def lookup_request(
        self, game_id: str, request_id: str, fingerprint: str = ""
    ) -> tuple[events_pb2.Event, ...] | None:
        """The events a request id appended, if it appended any to this game; raises
        IdempotencyKeyReused when it did so for a request with another fingerprint."""

    @abc.abstractmethod
    async def head(self, game_id: str) -> StoredHead:
        """The last sequence, revision and hash; GameNotFound when there is no game."""

    @abc.abstractmethod
    async def read(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[events_pb2.Event]:
        """Events after `after_sequence`, in order (at most `count`)."""

    @abc.abstractmethod
    async def read_raw(
        self, game_id: str, after_sequence: int = 0, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        """The entries after `after_sequence` as stored (at most `count`): (sequence from
        the entry id, the bytes). For verification."""

    @abc.abstractmethod
    async def wait(
        self, game_id: str, after_sequence: int, timeout_seconds: float
    ) -> list[events_pb2.Event]:
        """Events after `after_sequence`, blocking up to `timeout_seconds` for the first one
        to arrive (an empty list on time-out). Works across service instances."""

    @abc.abstractmethod
    async def summary(self, game_id: str) -> bytes | None:
        """The GameSummary stored with the last append (None when there is no game)."""

    @abc.abstractmethod
    async def summaries(self, game_ids: Sequence[str]) -> list[bytes | None]: ...

    @abc.abstractmethod
    async def seed(self, game_id: str) -> bytes | None:
        """Dealt mode's seed while it is secret."""

    @abc.abstractmethod
    async def index_games(self, club: str, entries: Sequence[IndexEntry]) -> None:
        """Write `entries` into `club`'s listing index, each replacing the game's entry
        unless that one is of a later revision (idempotent, in any order)."""

    @abc.abstractmethod
    async def indexed(self, club: str, game_id: str) -> bool:
        """Whether `club`'s listing index holds the game (one small read, the same for a
        game of another club as for no game)."""

    @abc.abstractmethod
    async def list_game_ids(
        self, club: str, kind: str, status: int, after: str | None, count: int, player: str = ""
    ) -> list[str]:
        """Up to `count` positions (`tablelog.service.store.game_index.position_of`) of `club`'s
        indexed games of `kind` in `status` with a seat of the player whose key
        (`tablelog.service.recording.game_index.player_key`) is `player` (each: any when empty or
        0), newest first, after the position `after` if given."""

    @abc.abstractmethod
    async def listing_signature(self, club: str) -> tuple[int, str]:
        """How many games `club`'s index holds and the newest one's position: what changes
        whenever a game is indexed in the club (a game's seats never change, and no game
        leaves a club but with the club), so a view of the club's seats is kept by it."""

    @abc.abstractmethod
    def game_ids(self, count: int) -> AsyncIterator[list[str]]:
        """Every stored game, in batches of about `count` (a game may be seen twice; on a
        Redis Cluster, every primary's games)."""

    @abc.abstractmethod
    async def creations(self, game_ids: Sequence[str]) -> list[events_pb2.GameCreated | None]:
        """Each game's GameCreated (None when it has no events), in one round trip."""

    @abc.abstractmethod
    async def clear_game_index(self) -> None:
        """Delete every club's listing index and its version (a rebuild follows)."""

    @abc.abstractmethod
    async def game_index_version(self) -> int:
        """The listing index layout the stored indexes were built for (0: none)."""

    @abc.abstractmethod
    async def mark_game_index_version(self, version: int) -> None: ...

    @abc.abstractmethod
    async def ping(self) -> bool: ...

    @abc.abstractmethod
    async def close(self) -> None: ...
