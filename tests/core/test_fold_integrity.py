"""The fold refuses a history that does not hold together, whoever wrote it (an import, a
byte changed in Redis, a buggy client): each check names the first event that is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, TERMINAL, GameOver, HistoryError
from tablelog.replay.registry import find_game
from tablelog.v1 import events_pb2
from tests.support.play import created, events_of, random_game

GAME = "splendor"


def _history(seed: int = 3) -> tuple[list[events_pb2.Event], folding.Position]:
    played = random_game(GAME, 2, seed=seed)
    events = events_of(created(GAME, 2), played.moves, played.notations)
    return events, played.position


def _appended(events: list[events_pb2.Event], **body: Any) -> list[events_pb2.Event]:
    last = events[-1]
    extra = events_pb2.Event(sequence=last.sequence + 1, revision=last.revision + 1, **body)
    return [*events, extra]


def _code(events: list[events_pb2.Event], strict: bool = False) -> str:
    with pytest.raises(HistoryError) as refused:
        folding.fold(events, strict=strict)
    return refused.value.code


def test_a_well_formed_history_folds_strictly() -> None:
    events, end = _history()
    ended = _appended(events, game_ended=events_pb2.GameEnded(result=end.game.result(end.state)))
    assert folding.fold(ended, strict=True).status is folding.Status.ENDED


def test_a_game_cannot_be_ended_before_the_rules_end_it() -> None:
    events, _ = _history()
    early = events[:20]
    forged = _appended(early, game_ended=events_pb2.GameEnded())
    assert _code(forged) == "PREMATURE_END"


def test_a_game_cannot_end_with_another_result() -> None:
    events, end = _history()
    result = end.game.result(end.state)
    result.scores[0].total += 1
    assert _code(_appended(events, game_ended=events_pb2.GameEnded(result=result))) == (
        "WRONG_RESULT"
    )


def test_an_undo_must_name_the_move_it_takes_back() -> None:
    events, _ = _history()
    prefix = events[:10]
    right = _appended(prefix, move_undone=events_pb2.MoveUndone(undone_revision=10))
    assert folding.fold(right).revision == 11
    wrong = _appended(prefix, move_undone=events_pb2.MoveUndone(undone_revision=999))
    assert _code(wrong) == "WRONG_REVISION_NAMED"


def test_a_redo_must_name_the_move_it_reapplies() -> None:
    events, _ = _history()
    undone = _appended(events[:10], move_undone=events_pb2.MoveUndone(undone_revision=10))
    assert (
        folding.fold(
            _appended(undone, move_redone=events_pb2.MoveRedone(redone_revision=10))
        ).move_count
        == 9
    )
    wrong = _appended(undone, move_redone=events_pb2.MoveRedone(redone_revision=9))
    assert _code(wrong) == "WRONG_REVISION_NAMED"


def test_strict_folding_checks_the_stored_notation() -> None:
    events, _ = _history()
    tampered = [events_pb2.Event.FromString(e.SerializeToString()) for e in events[:15]]
    tampered[7].move_recorded.notation = "take EVERYTHING"
    assert folding.fold(tampered).revision == 15  # reads are not charged for the check
    assert _code(tampered, strict=True) == "WRONG_NOTATION"


def test_a_table_mode_game_has_no_dealt_moves() -> None:
    events, _ = _history()
    tampered = [events_pb2.Event.FromString(e.SerializeToString()) for e in events[:5]]
    tampered[3].move_recorded.dealt = True
    assert _code(tampered) == "DEALT_IN_TABLE_MODE"


def test_a_game_recorded_under_other_rules_is_not_silently_refolded() -> None:
    events, _ = _history()
    body = created(GAME, 2)
    body.rules_version = find_game(GAME).rules_version
    assert folding.fold([events_pb2.Event(sequence=1, revision=1, game_created=body)])
    body.rules_version = "splendor-0-draft"
    creation = events_pb2.Event(sequence=1, revision=1, game_created=body)
    assert _code([creation, *events[1:]]) == "RULES_VERSION"


def test_sequences_and_revisions_have_no_gaps() -> None:
    events, _ = _history()
    skipped = [*events[:5], *events[6:9]]
    assert _code(skipped) == "SEQUENCE_GAP"
    renumbered = [events_pb2.Event.FromString(e.SerializeToString()) for e in events[:5]]
    renumbered[4].revision = 9
    assert _code(renumbered) == "REVISION_GAP"


def test_a_table_game_reopens_when_its_final_move_is_taken_back() -> None:
    events, end = _history()
    ended = _appended(events, game_ended=events_pb2.GameEnded(result=end.game.result(end.state)))
    last_move = events[-1].revision
    reopened = _appended(ended, move_undone=events_pb2.MoveUndone(undone_revision=last_move))
    position = folding.fold(reopened, strict=True)
    assert position.status is folding.Status.IN_PROGRESS
    assert position.result is None
    assert position.state == folding.fold(events[:-1]).state
    # Redone, the game is over again and must be ended again by its own event.
    redone = _appended(reopened, move_redone=events_pb2.MoveRedone(redone_revision=last_move))
    again = folding.fold(redone)
    assert again.status is folding.Status.IN_PROGRESS
    assert again.to_move() == TERMINAL


def test_a_dealt_game_stays_closed_once_its_seed_is_revealed() -> None:
    played = random_game(GAME, 2, seed=5, mode=DEALT)
    events = events_of(created(GAME, 2, mode=DEALT), played.moves, played.notations)
    end = played.position
    ended = _appended(events, game_ended=events_pb2.GameEnded(result=end.game.result(end.state)))
    with pytest.raises(GameOver):
        folding.undo(folding.fold(ended))
