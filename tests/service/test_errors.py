"""The one table from domain errors to gRPC codes and google.rpc details."""

from __future__ import annotations

import grpc
import pytest

from tablelog.replay.core import (
    AmbiguousNotation,
    GameOver,
    HistoryError,
    IllegalMove,
    InvalidSetup,
    NotationError,
    NotYourTurn,
)
from tablelog.service.errors import InvalidRequest, OutOfRange, refusal, to_status
from tablelog.service.store import (
    CorruptEvent,
    GameNotFound,
    SequenceMoved,
    StaleVersion,
    StoreUnavailable,
)

C = grpc.StatusCode


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (IllegalMove("TAKE_TWO_NEEDS_FOUR", "Take 2 needs 4."), C.FAILED_PRECONDITION,
         "ILLEGAL_MOVE"),
        (NotYourTurn("It is Ann's turn."), C.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
        (GameOver(), C.FAILED_PRECONDITION, "GAME_OVER"),
        (HistoryError("NOTHING_TO_UNDO", "No."), C.FAILED_PRECONDITION, "NOTHING_TO_UNDO"),
        (HistoryError("NOTHING_TO_REDO", "No."), C.FAILED_PRECONDITION, "NOTHING_TO_REDO"),
        (HistoryError("SEQUENCE_GAP", "Gap."), C.INVALID_ARGUMENT, "INVALID_HISTORY"),
        (NotationError("What?", "xyz"), C.INVALID_ARGUMENT, "INVALID_NOTATION"),
        (InvalidSetup("UNKNOWN_GAME", "No chess."), C.INVALID_ARGUMENT, "UNKNOWN_GAME"),
        (InvalidSetup("PLAYER_COUNT", "2-4."), C.INVALID_ARGUMENT, "INVALID_SETUP"),
        (StaleVersion("g1", 3, 5), C.FAILED_PRECONDITION, "STALE_VERSION"),
        (GameNotFound("g1"), C.NOT_FOUND, "GAME_NOT_FOUND"),
        (CorruptEvent("g1", 4, "bad"), C.DATA_LOSS, "CORRUPT_HISTORY"),
        (StoreUnavailable("down"), C.UNAVAILABLE, "STORE_UNAVAILABLE"),
        (SequenceMoved("g1", 9, 4), C.ABORTED, "CONCURRENT_APPEND"),
        (InvalidRequest("notation", "Too long."), C.INVALID_ARGUMENT, "INVALID_REQUEST"),
        (OutOfRange("REVISION_OUT_OF_RANGE", "Beyond."), C.OUT_OF_RANGE, "REVISION_OUT_OF_RANGE"),
    ],
)  # fmt: skip
def test_each_error_has_one_code_and_reason(
    error: Exception, code: grpc.StatusCode, reason: str
) -> None:
    found = refusal(error)
    assert (found.code, found.reason) == (code, reason)
    assert found.message
    status = to_status(found)
    assert status.code == code
    assert status.details == found.message


def test_an_illegal_move_names_its_rule() -> None:
    assert refusal(IllegalMove("RESERVE_LIMIT", "At most 3.")).metadata == {"rule": "RESERVE_LIMIT"}


def test_a_stale_version_carries_the_current_version_and_a_precondition() -> None:
    found = refusal(StaleVersion("g1", 3, 5))
    assert found.metadata["current_version"] == "5"
    assert found.precondition is not None
    assert found.precondition[:2] == ("VERSION", "games/g1")


def test_ambiguous_notation_lists_its_candidates() -> None:
    found = refusal(AmbiguousNotation("Which one?", "buy 1", ["buy 1.1", "buy 1.2"]))
    assert found.reason == "INVALID_NOTATION"
    assert found.metadata["ambiguous"] == "true"
    assert found.metadata["candidates"] == "buy 1.1 | buy 1.2"
    assert found.bad_field == "notation"
    assert list(found.candidates) == ["buy 1.1", "buy 1.2"]


def test_something_unmapped_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        refusal(ValueError("not a domain error"))
