"""Amending a move in the fold (`tablelog.replay.fold.amend`), held to an oracle that knows nothing
of amendments: the corrected move list recorded afresh, one `record` at a time. Whatever
is amended in whichever game, the corrected history is that fresh game up to the first
later move the rules refuse, and that move (with its rule) is the break reported."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, GameOver, HistoryError, IllegalMove, RulesError
from tablelog.replay.registry import all_games
from tablelog.v1 import events_pb2, game_pb2
from tests.support.play import choose, created, events_of, random_game

GAMES = sorted(all_games())
KINDS = (folding.REPLACE, folding.INSERT, folding.DELETE)


@dataclass
class Fresh:
    """The corrected move list recorded from scratch: how far it got, and why it stopped."""

    position: folding.Position
    applied: int
    refusal: RulesError | None


def record_fresh(body: events_pb2.GameCreated, moves: list[game_pb2.Move]) -> Fresh:
    position = folding.start(body)
    for index, move in enumerate(moves):
        try:
            inner = position.table.unwrap(move)
            folding.check_move(position, move)
            notation = position.game.format(inner, position.state)
            position = folding.record(position, move, notation)
        except RulesError as refused:
            return Fresh(position, index, refused)
    return Fresh(position, len(moves), None)


def same_history(amended: folding.Position, fresh: folding.Position) -> None:
    assert amended.state == fresh.state
    assert [a.notation for a in amended.moves()] == [a.notation for a in fresh.moves()]
    assert [a.chance for a in amended.moves()] == [a.chance for a in fresh.moves()]
    assert amended.move_count == fresh.move_count
    assert amended.chance_count == fresh.chance_count
    assert amended.to_move() == fresh.to_move()


def _recorded(name: str, seed: int, length: int) -> tuple[events_pb2.GameCreated, list[Any]]:
    played = random_game(name, len_players(name), seed, keep_states=True)
    return created(name, len_players(name)), played.moves[:length]


def len_players(name: str) -> int:
    game = all_games()[name]
    return max(game.min_players, min(3, game.max_players))


def _amend_and_check(
    body: events_pb2.GameCreated, moves: list[game_pb2.Move], rng: random.Random
) -> tuple[int, folding.Amended | None]:
    """One random amendment of `moves`, checked against the oracle; its kind and result."""
    position = record_fresh(body, moves).position
    index = rng.randrange(len(moves))
    kind = rng.choice(KINDS)
    target = position.moves()[index]
    new = None
    corrected = [*moves[:index]]
    if kind != folding.DELETE:
        new = position.table.wrap(choose(position.game, target.before, rng))
        corrected.append(new)
    corrected += moves[index + 1 :] if kind != folding.INSERT else moves[index:]
    fresh = record_fresh(body, corrected)
    changed = index + (kind != folding.DELETE)  # where the re-checked tail starts
    amended = folding.amend(position, kind, target.revision, new)
    same_history(amended.position, fresh.position)
    if fresh.refusal is None:
        assert amended.broken is None
    else:
        assert fresh.applied >= changed  # the change itself is legal: it is a legal move
        broken = amended.broken
        assert broken is not None
        assert broken.error.code == fresh.refusal.code
        assert broken.error.message == fresh.refusal.message
        assert broken.dropped == len(corrected) - fresh.applied
        assert broken.applied.move == corrected[fresh.applied]
    assert amended.position.revision == position.revision + 1
    assert amended.position.undone is None
    return kind, amended


@pytest.mark.parametrize("name", GAMES)
def test_an_amendment_is_the_corrected_game_recorded_afresh(name: str) -> None:
    """Random replacements, insertions and deletions in random games of every game: the
    corrected history equals the fresh game, and a refused tail is reported at the move
    the fresh game refuses, with the same rule and words."""
    rng = random.Random(name)
    seen: set[tuple[int, bool]] = set()
    for seed in range(8):
        body, moves = _recorded(name, seed, 60)
        for _ in range(6):
            kind, amended = _amend_and_check(body, moves, rng)
            seen.add((kind, amended is not None and amended.broken is not None))
    # Both outcomes of each kind came up, so neither path went unchecked.
    assert {kind for kind, _ in seen} == set(KINDS)
    assert {broken for _, broken in seen} == {True, False}


def _stored(
    body: events_pb2.GameCreated, moves: list[game_pb2.Move]
) -> tuple[list[events_pb2.Event], folding.Position]:
    position = record_fresh(body, moves).position
    notations = [a.notation for a in position.moves()]
    return events_of(body, moves, notations), position


def _append(events: list[events_pb2.Event], **body: Any) -> list[events_pb2.Event]:
    last = events[-1]
    return [
        *events,
        events_pb2.Event(sequence=last.sequence + 1, revision=last.revision + 1, **body),
    ]


def _amended_event(position: folding.Position, amended: folding.Amended, **body: Any) -> Any:
    broken = amended.broken
    return events_pb2.MoveAmended(
        notation=amended.notation,
        removed_notation=amended.removed.notation if amended.removed else "",
        dropped_from_revision=broken.applied.revision if broken else 0,
        dropped_moves=broken.dropped if broken else 0,
        **body,
    )


def test_a_stored_amendment_folds_strictly_to_the_corrected_history() -> None:
    body, moves = _recorded("splendor", 1, 50)
    events, position = _stored(body, moves)
    target = position.moves()[30]
    amended = folding.amend(position, folding.DELETE, target.revision)
    stored = _amended_event(
        position, amended, amended_revision=target.revision, kind=folding.DELETE
    )
    folded = folding.fold(_append(events, move_amended=stored), strict=True)
    same_history(folded, amended.position)


def test_a_stored_amendment_must_drop_exactly_the_tail_that_breaks() -> None:
    """An amendment that claims to keep a tail the rules refuse (or drops one they accept)
    is not a history: the fold names it (an import or a forged event cannot slip it in)."""
    rng = random.Random(5)
    body, moves = _recorded("splendor", 2, 60)
    events, position = _stored(body, moves)
    for _ in range(200):
        target = position.moves()[rng.randrange(20, 50)]
        amended = folding.amend(position, folding.DELETE, target.revision)
        if amended.broken is not None:
            break
    else:
        raise AssertionError("no deletion broke the tail")
    claims_all = events_pb2.MoveAmended(
        amended_revision=target.revision, kind=folding.DELETE, removed_notation=target.notation
    )
    with pytest.raises(HistoryError) as refused:
        folding.fold(_append(events, move_amended=claims_all))
    assert refused.value.code == "WRONG_TAIL_DROPPED"
    honest = _amended_event(
        position, amended, amended_revision=target.revision, kind=folding.DELETE
    )
    folded = folding.fold(_append(events, move_amended=honest), strict=True)
    assert folded.move_count == amended.position.move_count


def test_undo_and_redo_around_an_amendment() -> None:
    """Undo after an amendment takes back the last move of the corrected history (by its
    own name); redo re-applies it; an amendment clears redo, so a move it replaced, or an
    undone one, does not come back."""
    body, moves = _recorded("splendor", 4, 40)
    position = record_fresh(body, moves).position
    for index in range(39, 20, -1):
        target = position.moves()[index]
        amended = folding.amend(position, folding.DELETE, target.revision)
        if amended.broken is None:
            break
    else:
        raise AssertionError("no deletion kept the tail")
    after = amended.position
    last = after.applied
    assert last is not None
    undone = folding.undo(after)
    assert undone.undone is not None
    assert undone.undone.head is last.head
    again = folding.redo(undone)
    assert again.state == after.state
    # An amendment after an undo: the undone move is gone for good.
    first = undone.moves()[0]
    corrected = folding.amend(undone, folding.REPLACE, first.revision, first.move).position
    assert corrected.undone is None
    with pytest.raises(HistoryError) as refused:
        folding.redo(corrected)
    assert refused.value.code == "NOTHING_TO_REDO"


def test_only_a_move_in_effect_can_be_amended() -> None:
    body, moves = _recorded("splendor", 6, 30)
    position = record_fresh(body, moves).position
    last = position.moves()[-1]
    undone = folding.undo(position)
    for named in (last.revision, undone.revision, 999):
        with pytest.raises(HistoryError) as refused:
            folding.amend(undone, folding.DELETE, named)
        assert refused.value.code == "MOVE_NOT_IN_EFFECT"


def test_an_ended_table_game_reopens_and_a_closed_one_cannot_be_amended() -> None:
    played = random_game("splendor", 2, 7)
    position = played.position
    ended = folding.end(position, position.game.result(position.state))
    target = ended.moves()[-1]
    amended = folding.amend(ended, folding.DELETE, target.revision)
    assert amended.position.status is folding.Status.IN_PROGRESS
    assert amended.position.result is None
    abandoned = folding.end(position, position.game.result(position.state), abandoned=True)
    with pytest.raises(GameOver):
        folding.amend(abandoned, folding.DELETE, target.revision)
    dealt_body = created("splendor", 2, mode=DEALT)
    dealt = folding.end(
        folding.Position(folding.Table.from_created(dealt_body), position.state, 9, 9),
        position.game.result(position.state),
    )
    with pytest.raises(GameOver):
        folding.amend(dealt, folding.DELETE, 1)


def test_a_dealt_outcome_cannot_be_amended() -> None:
    body = created("splendor", 2, mode=DEALT)
    played = random_game("splendor", 2, 8, mode=DEALT)
    position = record_fresh(body, played.moves[:30]).position
    chance = next(a for a in position.moves() if a.chance)
    with pytest.raises(IllegalMove) as refused:
        folding.amend(position, folding.DELETE, chance.revision)
    assert refused.value.code == "DEALT_BY_SERVER"
