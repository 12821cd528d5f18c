"""What the store refuses or cannot do: the exceptions every backend raises (mapped to gRPC
codes by the one table in `tablelog.service.errors`)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of what the store refuses or cannot do."""


class GameNotFound(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"There is no game {game_id!r}.")
        self.game_id = game_id


class GameExists(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"A game {game_id!r} exists already.")
        self.game_id = game_id


class StaleVersion(StoreError):
    """The client's expected revision is not the game's current revision."""

    def __init__(self, game_id: str, expected: int, current: int) -> None:
        super().__init__(
            f"The game has moved on: you saw version {expected}, it is now at version "
            f"{current}. Fetch the game again and retry."
        )
        self.game_id = game_id
        self.expected = expected
        self.current = current


class SequenceMoved(StoreError):
    """The revision matched but other events (annotations, another instance) came first:
    the caller rebuilds its events on the new head and tries again."""

    def __init__(self, game_id: str, sequence: int, revision: int) -> None:
        super().__init__(f"Game {game_id!r} is now at event {sequence}.")
        self.sequence = sequence
        self.revision = revision


class ChainMismatch(StoreError):
    """The caller's previous hash is not the stored one, or the stream does not end where
    the stored head says: the cached head is not the truth (or the stream was changed
    outside the service); the caller verifies the stream against its cached head."""


class IdempotencyKeyReused(StoreError):
    """A request id already used for a different request (another fingerprint)."""

    def __init__(self, game_id: str, request_id: str) -> None:
        super().__init__(
            "This request id was used before for a different request; a retry must repeat "
            "the request exactly, and a new request needs a new request id."
        )
        self.game_id = game_id
        self.request_id = request_id


class CorruptEvent(StoreError):
    """A stored entry that does not read as the event its place in the stream says it is:
    damaged stored data (DATA_LOSS), never a fault of the caller or of the server."""

    def __init__(self, game_id: str, sequence: int, why: str, revision: int = 0) -> None:
        super().__init__(f"Event {sequence} of game {game_id!r} is unreadable: {why}")
        self.sequence = sequence
        self.revision = revision
        """The revision the damage concerns, when known (0: not known)."""


class TamperedHistory(CorruptEvent):
    """A stored history that does not verify: an event whose seal, link or numbering does
    not hold, one keyed with a key not trusted here, an unkeyed event after keyed ones, or
    events missing that this instance or a receipt saw. Changed outside tablelog (DATA_LOSS):
    nothing is appended onto it and no state of it is served."""

    def __init__(self, game_id: str, sequence: int, revision: int, problem: str) -> None:
        StoreError.__init__(
            self,
            f"Game {game_id!r} does not verify at event {sequence} (revision {revision}): "
            f"{problem}. Its stored history was changed outside tablelog; nothing more is "
            "recorded or served from it.",
        )
        self.sequence = sequence
        self.revision = revision
        self.problem = problem


class StoreUnavailable(StoreError):
    """Redis cannot be reached (or timed out)."""


class StoreFull(StoreError):
    """Redis refused a write at its `maxmemory` (the deployment's `noeviction` policy: it
    never drops a game to make room); nothing was written, reads go on
    (RESOURCE_EXHAUSTED, STORE_FULL)."""

    def __init__(self) -> None:
        super().__init__(
            "The server's Redis is full (maxmemory) and refuses new writes; nothing was "
            "recorded. Reading games still works: ask the server's operator for more memory "
            "(docs/deploy.md, Sizes)."
        )


class StoreDiskFailing(StoreUnavailable):
    """Redis cannot write to its data disk, most often because it is full: it refused the
    write (MISCONF: a snapshot or the append-only file failed), or, under
    ``appendfsync always``, it exited on a failed write of its append-only file and the
    embedded Redis's data directory says so (`tablelog.service.store.data_disk`). Nothing
    was written (UNAVAILABLE, STORE_DISK_FAILING; health NOT_SERVING until it clears). A
    kind of StoreUnavailable: whoever waits out an outage waits this one out too."""

    def __init__(self, detail: str) -> None:
        super().__init__(
            "The server's Redis cannot write to its data disk (full or failing), so the "
            "server refuses changes until it can; nothing was recorded. Ask the server's "
            f"operator to free space on that disk. {detail[:300]}"
        )


def write_refusal(exc: Exception) -> StoreError | None:
    """The store's error for a refusal Redis gave a command (a redis-py ResponseError), by
    its error code; None for one that is no state of Redis (a script's own error)."""
    text = str(exc)
    code = text.split(" ", 1)[0].upper()
    if code == "MISCONF":
        return StoreDiskFailing(f"Redis said: {text}")
    if code == "OOM":
        return StoreFull()
    if code in ("READONLY", "NOREPLICAS", "NOTREADY", "LOADING", "BUSY", "MASTERDOWN"):
        return StoreUnavailable(f"Redis cannot take writes now: {text[:200]}")
    return None


class ClubStorageFull(StoreError):
    """An append that would take the club's stored bytes past its quota; nothing was
    appended (RESOURCE_EXHAUSTED, CLUB_STORAGE_FULL)."""

    def __init__(self, club: str, limit: int, used: int, needed: int) -> None:
        super().__init__(
            f"Club {club!r} stores {used:,} bytes of its {limit:,}; this change needs "
            f"{needed:,} more. Nothing was recorded: ask the server's operator for a larger "
            "quota (tablelog serve --club-storage-bytes)."
        )
        self.club = club
        self.limit = limit
        self.used = used
        self.needed = needed
