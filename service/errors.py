"""The one table from domain errors (the rules core's, the store's, the service's) to gRPC
status codes with google.rpc details.

Every refusal carries an ErrorInfo (domain "tablelog.v1", a stable reason, metadata), and
where it helps a BadRequest (which field, why) or a PreconditionFailure (what must hold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import grpc
from google.protobuf import any_pb2, duration_pb2

# googleapis-common-protos publishes no type stubs.
from google.rpc import (  # type: ignore[import-untyped]
    code_pb2,
    error_details_pb2,
    status_pb2,
)
from grpc_status import rpc_status

from tablelog.replay.core import (
    AmbiguousNotation,
    GameOver,
    HistoryError,
    IllegalMove,
    InvalidSetup,
    NotationError,
    NotYourTurn,
    RulesError,
)
from tablelog.service.metrics import refused
from tablelog.service.store import (
    ChainMismatch,
    ClubStorageFull,
    CorruptEvent,
    GameExists,
    GameNotFound,
    IdempotencyKeyReused,
    SequenceMoved,
    StaleVersion,
    StoreDiskFailing,
    StoreError,
    StoreFull,
    StoreUnavailable,
)
from tablelog.service.tracing import REQUEST_ID_KEY, current_request_id

DOMAIN = "tablelog.v1"


class ServiceError(Exception):
    """A refusal decided by the service itself (not the rules core, not the store)."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        field_name: str = "",
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field_name = field_name
        self.metadata = dict(metadata or {})


class InvalidRequest(ServiceError):
    """A request field out of bounds (too long, negative, malformed)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__("INVALID_REQUEST", message, field_name=field_name)


class NotFound(ServiceError):
    """Something inside a game that does not exist (an annotation, a revision)."""


class NotAMove(ServiceError):
    """An annotation anchored to a revision that records no move (an undo, a redo, the
    game's end); metadata `move_revision` is the move to annotate instead."""

    def __init__(
        self, message: str, *, field_name: str = "", metadata: Mapping[str, str] | None = None
    ) -> None:
        super().__init__("NOT_A_MOVE", message, field_name=field_name, metadata=metadata)


class OutOfRange(ServiceError):
    """A revision beyond the head of the game."""


class ImportRefused(ServiceError):
    """An imported history refused at one of its events: the refusal of that event, with
    its line in the JSON-lines export (metadata `line`, 1-based: event N is line N)."""


class Unverifiable(ServiceError):
    """A check that needs something the game does not have yet (the dealt seed)."""


class PermissionDenied(ServiceError):
    """A call the caller may not make: its role or seats do not allow it (ROLE_FORBIDS,
    metadata role and rpc; or a narrower reason such as NOT_YOUR_SEAT), or it asks for more
    than it may see (a seat or the full view it is not entitled to, VIEW_NOT_ALLOWED; a list
    that would name what its view hides, LEGAL_MOVES_HIDDEN)."""


class AmendRefused(ServiceError):
    """An amendment the history cannot take as asked: a later move no longer applies
    (AMEND_BREAKS_LATER_MOVE, naming that move and the rule it breaks)."""


class VariationIllegal(ServiceError):
    """A variation with a move the rules refuse (ILLEGAL_VARIATION_MOVE, naming the move by
    its path, its notation and the rule it breaks)."""


class DeletedGame(ServiceError):
    """A change to a game its club's owner deleted (GAME_DELETED, metadata deleted_by and
    deleted_time): the game is kept and can be read, never changed again."""

    def __init__(self, game_id: str, by: str, when: str) -> None:
        who = by or "the club's owner"
        super().__init__(
            "GAME_DELETED",
            f"This game was deleted by {who} on {when}: it is kept "
            "and can be read and verified, but nothing can be recorded in it any more.",
            metadata={"game_id": game_id, "deleted_by": by, "deleted_time": when},
        )


class TypoWhileStale(ServiceError):
    """A move whose text reads as no move, sent at a version the game has moved on from:
    told as the typo it is (the text needs fixing at any version), the versions in the
    message and the metadata."""

    def __init__(self, typo: NotationError, stale: StaleVersion) -> None:
        super().__init__(
            "INVALID_NOTATION",
            f"{typo.message} (Also, the game has moved on since: you saw version "
            f"{stale.expected}, it is now at version {stale.current}.)",
            field_name="notation",
            metadata={
                "current_version": str(stale.current),
                "expected_version": str(stale.expected),
            },
        )


class RosterMoved(ServiceError):
    """A change of a club's roster made against a version it has moved on from (reason
    STALE_VERSION, metadata `current_version` and `expected_version`)."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(
            "STALE_VERSION",
            f"The club's players have changed since you looked: you saw version {expected}, "
            f"it is now at version {current}. List the players again and retry.",
            metadata={"current_version": str(current), "expected_version": str(expected)},
        )


class Unauthenticated(ServiceError):
    """A call without a token this server accepts (reason TOKEN_MISSING, TOKEN_UNKNOWN,
    TOKEN_EXPIRED, TOKEN_REVOKED)."""


class Exhausted(ServiceError):
    """A limit of this instance reached (watchers, watched games) or a watcher that fell
    too far behind; the metadata says how to come back (`resume_from_revision`)."""


class LimitReached(Exhausted):
    """A limit per caller or per club (`tablelog.service.access.quotas`): its metadata names the
    `limit` and its `scope`; `retry_after` (seconds) becomes a RetryInfo and `retry_after_ms`."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        limit: int,
        scope: str,
        retry_after: float,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            reason,
            message,
            metadata={
                "limit": str(limit),
                "scope": scope,
                "retry_after_ms": str(math.ceil(retry_after * 1000)),
                **(metadata or {}),
            },
        )
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Refusal:
    code: grpc.StatusCode
    reason: str
    message: str
    metadata: dict[str, str] = field(default_factory=dict)
    bad_field: str = ""
    precondition: tuple[str, str, str] | None = None  # (type, subject, description)
    candidates: Sequence[str] = ()
    retry_after: float | None = None
    """Seconds after which trying again may succeed (a RetryInfo)."""


C = grpc.StatusCode

# The table: (error class, rules code or None for any) -> (status code, reason).
# The first row that matches an error (in order) applies; subclasses come first.
TABLE: tuple[tuple[type[Exception], str | None, grpc.StatusCode, str], ...] = (
    (AmbiguousNotation, None, C.INVALID_ARGUMENT, "INVALID_NOTATION"),
    (NotationError, None, C.INVALID_ARGUMENT, "INVALID_NOTATION"),
    (NotYourTurn, None, C.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
    (GameOver, None, C.FAILED_PRECONDITION, "GAME_OVER"),
    (IllegalMove, None, C.FAILED_PRECONDITION, "ILLEGAL_MOVE"),
    (HistoryError, "NOTHING_TO_UNDO", C.FAILED_PRECONDITION, "NOTHING_TO_UNDO"),
    (HistoryError, "NOTHING_TO_REDO", C.FAILED_PRECONDITION, "NOTHING_TO_REDO"),
    (HistoryError, "MOVE_NOT_IN_EFFECT", C.FAILED_PRECONDITION, "MOVE_NOT_IN_EFFECT"),
    (HistoryError, None, C.INVALID_ARGUMENT, "INVALID_HISTORY"),
    (InvalidSetup, "UNKNOWN_GAME", C.INVALID_ARGUMENT, "UNKNOWN_GAME"),
    (InvalidSetup, None, C.INVALID_ARGUMENT, "INVALID_SETUP"),
    (RulesError, None, C.INVALID_ARGUMENT, "RULES_ERROR"),
    (StaleVersion, None, C.FAILED_PRECONDITION, "STALE_VERSION"),
    (IdempotencyKeyReused, None, C.FAILED_PRECONDITION, "IDEMPOTENCY_KEY_REUSED"),
    (GameNotFound, None, C.NOT_FOUND, "GAME_NOT_FOUND"),
    (GameExists, None, C.ALREADY_EXISTS, "GAME_EXISTS"),
    (CorruptEvent, None, C.DATA_LOSS, "CORRUPT_HISTORY"),
    (ChainMismatch, None, C.ABORTED, "CONCURRENT_APPEND"),
    (SequenceMoved, None, C.ABORTED, "CONCURRENT_APPEND"),
    # (A kind of StoreUnavailable: before it.)
    (StoreDiskFailing, None, C.UNAVAILABLE, "STORE_DISK_FAILING"),
    (StoreUnavailable, None, C.UNAVAILABLE, "STORE_UNAVAILABLE"),
    (ClubStorageFull, None, C.RESOURCE_EXHAUSTED, "CLUB_STORAGE_FULL"),
    (StoreFull, None, C.RESOURCE_EXHAUSTED, "STORE_FULL"),
    (StoreError, None, C.INTERNAL, "STORE_ERROR"),
    (InvalidRequest, None, C.INVALID_ARGUMENT, "INVALID_REQUEST"),
    (ImportRefused, None, C.INVALID_ARGUMENT, ""),
    (NotFound, None, C.NOT_FOUND, ""),
    (OutOfRange, None, C.OUT_OF_RANGE, ""),
    (Unverifiable, None, C.FAILED_PRECONDITION, ""),
    (DeletedGame, None, C.FAILED_PRECONDITION, ""),
    (RosterMoved, None, C.FAILED_PRECONDITION, ""),
    (AmendRefused, None, C.FAILED_PRECONDITION, ""),
    (VariationIllegal, None, C.FAILED_PRECONDITION, ""),
    (Exhausted, None, C.RESOURCE_EXHAUSTED, ""),
    (PermissionDenied, None, C.PERMISSION_DENIED, ""),
    (Unauthenticated, None, C.UNAUTHENTICATED, ""),
    (ServiceError, None, C.INVALID_ARGUMENT, ""),
)

MAPPED: tuple[type[Exception], ...] = (RulesError, StoreError, ServiceError)


def refusal(error: Exception) -> Refusal:
    """How `error` is told to a client."""
    for cls, rules_code, code, reason in TABLE:
        if not isinstance(error, cls):
            continue
        if rules_code is not None and getattr(error, "code", None) != rules_code:
            continue
        return _details(error, code, reason)
    raise TypeError(f"no status for {type(error).__name__}") from error


def _details(error: Exception, code: grpc.StatusCode, reason: str) -> Refusal:
    message = getattr(error, "message", None) or str(error)
    metadata: dict[str, str] = {}
    if isinstance(error, ServiceError):
        reason = reason or error.reason
        metadata.update(error.metadata)
        retry_after = error.retry_after if isinstance(error, LimitReached) else None
        return Refusal(
            code, reason, message, metadata, bad_field=error.field_name, retry_after=retry_after
        )
    if isinstance(error, ClubStorageFull):
        # No RetryInfo: waiting frees no bytes; deleting games or a larger quota does.
        metadata.update(
            club=error.club, limit=str(error.limit), used=str(error.used), needed=str(error.needed)
        )
        return Refusal(code, reason, message, metadata)
    if isinstance(error, AmbiguousNotation):
        metadata.update(ambiguous="true", candidates=" | ".join(error.candidates))
        return Refusal(code, reason, message, metadata, "notation", candidates=error.candidates)
    if isinstance(error, NotationError):
        return Refusal(code, reason, message, metadata, "notation")
    if isinstance(error, RulesError):
        metadata["rule"] = error.code
        return Refusal(code, reason, message, metadata)
    if isinstance(error, StaleVersion):
        metadata.update(current_version=str(error.current), expected_version=str(error.expected))
        return Refusal(
            code,
            reason,
            message,
            metadata,
            precondition=(
                "VERSION",
                f"games/{error.game_id}",
                f"expected_version must be the current version {error.current}",
            ),
        )
    if isinstance(error, IdempotencyKeyReused):
        metadata.update(game_id=error.game_id, request_id=error.request_id)
        return Refusal(
            code,
            reason,
            message,
            metadata,
            precondition=(
                "REQUEST_ID",
                f"games/{error.game_id}",
                "a request id names one request: repeat it exactly or use a new id",
            ),
        )
    if isinstance(error, (GameNotFound, GameExists)):
        metadata["game_id"] = error.game_id
    if isinstance(error, CorruptEvent):
        metadata["sequence"] = str(error.sequence)
        if error.revision:
            metadata["revision"] = str(error.revision)
    return Refusal(code, reason, message, metadata)


INTERNAL = Refusal(
    C.INTERNAL,
    "INTERNAL",
    "The server failed to handle this request; the fault has been logged.",
)
"""What a client is told about a fault of the server's own (no internals: they are logged)."""


def _pack(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


def to_status(found: Refusal) -> grpc.Status:
    """The rich status (google.rpc.Status in the trailing metadata) for a refusal, counted
    by reason (`tablelog.service.metrics`) and carrying the call's request id
    (`tablelog.service.tracing`)."""
    refused(found.reason)
    details = [
        _pack(
            error_details_pb2.ErrorInfo(
                reason=found.reason, domain=DOMAIN, metadata=dict(found.metadata)
            )
        )
    ]
    if found.bad_field:
        violations = [
            error_details_pb2.BadRequest.FieldViolation(
                field=found.bad_field, description=found.message
            )
        ]
        violations += [
            error_details_pb2.BadRequest.FieldViolation(
                field=found.bad_field, description=f"did you mean: {c}"
            )
            for c in found.candidates
        ]
        details.append(_pack(error_details_pb2.BadRequest(field_violations=violations)))
    if found.precondition is not None:
        kind, subject, description = found.precondition
        details.append(
            _pack(
                error_details_pb2.PreconditionFailure(
                    violations=[
                        error_details_pb2.PreconditionFailure.Violation(
                            type=kind, subject=subject, description=description
                        )
                    ]
                )
            )
        )
    if found.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(math.ceil(found.retry_after * 1e9))
        details.append(_pack(error_details_pb2.RetryInfo(retry_delay=delay)))
    status = status_pb2.Status(
        code=getattr(code_pb2, found.code.name), message=found.message, details=details
    )
    packed = rpc_status.to_status(status)
    request_id = current_request_id()
    if request_id is None:
        return packed
    # An abort's trailing metadata replaces what the call set before: the id goes here too.
    return _Answered(
        packed.code,
        packed.details,
        (*packed.trailing_metadata, (REQUEST_ID_KEY, request_id)),
    )


@dataclass(frozen=True)
class _Answered(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]
