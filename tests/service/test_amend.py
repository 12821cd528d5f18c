"""AmendMove through a live server on real Redis: a move in the middle of a game replaced,
preceded by an inserted move or deleted, the later moves re-checked with the rules.

Which amendments keep the tail and which break it (and where, under which rule) is decided
here by an oracle that knows nothing of amendments: the corrected move list recorded
afresh with the rules core, one move at a time."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, RulesError
from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client import Client
from tests.service.helpers import play_random, refused, splendor_line
from tests.support.play import new_position

pytestmark = pytest.mark.slow

PLAYERS = ("Ann", "Bob")
SEED = 21
DELETION_SEED = 22
"""A game in which deleting a move can keep the moves after it: in Splendor a deleted move
usually breaks the next one (a reveal nobody waits for, a turn's tokens over ten)."""
LENGTH = 40
"""Moves recorded before each amendment (12 setup reveals, then play)."""


@dataclass
class Fresh:
    position: folding.Position
    applied: int
    refusal: RulesError | None


def me(client: Client) -> str:
    """The name the audit gives the caller: the authenticated member's."""
    return str(client.whoami().member.display_name)


def record_fresh(line: Sequence[str]) -> Fresh:
    """`line` recorded from scratch in table mode: how far it got, and why it stopped."""
    position = new_position("splendor", list(PLAYERS))
    for index, text in enumerate(line):
        game = position.game
        try:
            inner = game.parse(text, position.state)
            envelope = position.table.wrap(inner)
            folding.check_move(position, envelope)
            position = folding.record(position, envelope, game.format(inner, position.state))
        except RulesError as refusal:
            return Fresh(position, index, refusal)
    return Fresh(position, len(line), None)


def _revision(index: int) -> int:
    """The revision that recorded the move at `index` of the line (GameCreated is 1)."""
    return index + 2


@dataclass
class Case:
    index: int
    corrected: list[str]
    fresh: Fresh
    notation: str | None = None


def find_replacement(line: list[str], *, breaks: bool, tail: int = 4) -> Case:
    """A player's move of `line` and another legal move in its place whose corrected line
    keeps every later move (`breaks` False) or refuses one of them (True)."""
    for index in range(len(line) - tail, 12, -1):
        before = record_fresh(line[:index]).position
        if before.to_move() == CHANCE:
            continue
        game = before.game
        for move in game.legal_moves(before.state):
            text = game.format(move, before.state)
            if text == line[index]:
                continue
            corrected = [*line[:index], text, *line[index + 1 :]]
            fresh = record_fresh(corrected)
            if (fresh.refusal is not None) == breaks and (not breaks or fresh.applied > index):
                return Case(index, corrected, fresh, text)
    raise AssertionError(f"no replacement that {'breaks' if breaks else 'keeps'} the tail")


def find_deletion(line: list[str], *, breaks: bool) -> Case:
    for index in range(len(line) - 2, 12, -1):
        corrected = [*line[:index], *line[index + 1 :]]
        fresh = record_fresh(corrected)
        if (fresh.refusal is not None) == breaks:
            return Case(index, corrected, fresh)
    raise AssertionError("no such deletion")


def find_insertion(line: list[str]) -> Case:
    """A move inserted before a player's move that keeps every later move."""
    for index in range(len(line) - 3, 12, -1):
        before = record_fresh(line[:index]).position
        if before.to_move() == CHANCE:
            continue
        game = before.game
        for move in game.legal_moves(before.state):
            text = game.format(move, before.state)
            corrected = [*line[:index], text, *line[index:]]
            fresh = record_fresh(corrected)
            if fresh.refusal is None:
                return Case(index, corrected, fresh, text)
    raise AssertionError("no insertion keeps the tail")


def recorded(client: Client, seed: int = SEED) -> tuple[str, int, list[str]]:
    """A table-mode Splendor game with the first moves of a seeded random game recorded;
    its id, version and line."""
    line = splendor_line(seed)[:LENGTH]
    game = client.create_game("splendor", list(PLAYERS))
    version = game.version
    for text in line:
        version = client.record(game.game_id, text, expected_version=version).game.version
    return game.game_id, version, line


def assert_head_is(client: Client, game_id: str, fresh: folding.Position) -> None:
    """The game's head, as the server serves it and as its exported events fold, is the
    fresh game: same moves, same state."""
    full = client.state(game_id, full=True)
    assert list(full.moves) == [a.notation for a in fresh.moves()]
    folded = folding.fold(client.export(game_id), strict=True)
    assert folded.state == fresh.state
    assert [a.notation for a in folded.moves()] == [a.notation for a in fresh.moves()]
    assert client.get_game(game_id).move_count == fresh.move_count


def test_a_replacement_that_keeps_the_tail_becomes_the_history(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    answer = client.amend(
        game_id,
        _revision(case.index),
        case.notation,
        reason="misheard the colours",
        expected_version=version,
    )
    assert answer.dropped_moves == 0
    assert answer.game.version == version + 1
    [event] = answer.events
    amended = event.move_amended
    assert amended.kind == events_pb2.AMEND_KIND_REPLACE
    assert (amended.amended_revision, amended.notation) == (_revision(case.index), case.notation)
    assert amended.removed_notation == line[case.index]
    assert amended.reason == "misheard the colours"
    assert_head_is(client, game_id, case.fresh.position)
    assert client.verify(game_id).ok


def test_an_insertion_and_a_deletion_that_keep_the_tail(client: Client) -> None:
    game_id, version, line = recorded(client)
    inserted = find_insertion(line)
    answer = client.amend(
        game_id,
        _revision(inserted.index),
        inserted.notation,
        change="insert",
        expected_version=version,
    )
    assert answer.events[0].move_amended.kind == events_pb2.AMEND_KIND_INSERT
    assert_head_is(client, game_id, inserted.fresh.position)
    mover = PLAYERS[record_fresh(line[: inserted.index]).position.to_move()]
    assert client.audit(game_id)[-1].summary == (
        f"{me(client)} inserted {mover}'s {inserted.notation} before {mover}'s "
        f"{line[inserted.index]} (revision {_revision(inserted.index)})"
    )

    game_id, version, line = recorded(client, DELETION_SEED)
    deleted = find_deletion(line, breaks=False)
    answer = client.amend(
        game_id, _revision(deleted.index), change="delete", expected_version=version
    )
    assert answer.events[0].move_amended.removed_notation == line[deleted.index]
    mover = PLAYERS[record_fresh(line[: deleted.index]).position.to_move()]
    assert client.audit(game_id)[-1].summary == (
        f"{me(client)} deleted revision {_revision(deleted.index)}: {mover}'s {line[deleted.index]}"
    )
    assert_head_is(client, game_id, deleted.fresh.position)
    assert client.verify(game_id).ok


def test_an_amendment_that_breaks_a_later_move_is_refused_and_changes_nothing(
    client: Client,
) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=True)
    before = client.export(game_id)
    error = refused(
        lambda: client.amend(
            game_id, _revision(case.index), case.notation, expected_version=version
        )
    )
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "AMEND_BREAKS_LATER_MOVE"
    breaking = case.fresh.applied  # the first later move the rules refuse
    assert case.fresh.refusal is not None
    assert error.metadata["revision"] == str(_revision(breaking))
    assert error.metadata["notation"] == line[breaking - (len(case.corrected) - len(line))]
    assert error.metadata["rule"] == case.fresh.refusal.code
    assert case.fresh.refusal.message in error.message
    assert error.metadata["moves_to_drop"] == str(len(case.corrected) - breaking)
    assert client.export(game_id) == before
    assert client.get_game(game_id).version == version


def test_drop_tail_drops_the_tail_from_the_first_move_that_breaks(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=True)
    answer = client.amend(
        game_id,
        _revision(case.index),
        case.notation,
        drop_tail=True,
        reason="wrong card",
        expected_version=version,
    )
    breaking = case.fresh.applied
    assert answer.dropped_moves == len(case.corrected) - breaking
    amended = answer.events[0].move_amended
    assert amended.dropped_from_revision == _revision(breaking)
    assert_head_is(client, game_id, case.fresh.position)
    words = client.audit(game_id)[-1].summary
    assert f"dropped {answer.dropped_moves} later move" in words
    assert f"from revision {_revision(breaking)}" in words
    # The dropped moves are flagged in the audit, like undone ones.
    flagged = {e.event.revision for e in client.audit(game_id) if e.undone}
    replaced = _revision(case.index)
    assert flagged == {replaced} | {_revision(i) for i in range(breaking, len(line))}
    assert client.verify(game_id).ok


def test_a_stale_version_is_refused(client: Client) -> None:
    game_id, version, line = recorded(client, DELETION_SEED)
    case = find_deletion(line, breaks=False)
    error = refused(
        lambda: client.amend(
            game_id, _revision(case.index), change="delete", expected_version=version - 1
        )
    )
    assert error.reason == "STALE_VERSION"
    assert error.metadata["current_version"] == str(version)
    assert client.get_game(game_id).version == version


def test_a_retry_returns_the_first_answer_and_stores_nothing(client: Client) -> None:
    game_id, version, line = recorded(client, DELETION_SEED)
    case = find_deletion(line, breaks=False)
    first = client.amend(
        game_id,
        _revision(case.index),
        change="delete",
        expected_version=version,
        request_id="amend-1",
    )
    again = client.amend(
        game_id,
        _revision(case.index),
        change="delete",
        expected_version=version,
        request_id="amend-1",
    )
    assert list(again.events) == list(first.events)
    assert len(client.export(game_id)) == len(line) + 2
    other = refused(
        lambda: client.amend(
            game_id,
            _revision(case.index),
            change="delete",
            reason="another",
            expected_version=version,
            request_id="amend-1",
        )
    )
    assert other.reason == "IDEMPOTENCY_KEY_REUSED"


def test_the_audit_says_who_amended_what_and_why(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    revision = _revision(case.index)
    mover = PLAYERS[record_fresh(line[: case.index]).position.to_move()]
    client.amend(game_id, revision, case.notation, reason="typo", expected_version=version)
    entries = client.audit(game_id)
    assert entries[-1].summary == (
        f"{me(client)} amended revision {revision}: {mover}'s {line[case.index]} → "
        f"{case.notation} (typo)"
    )
    replaced = next(e for e in entries if e.event.revision == revision)
    assert replaced.undone
    assert not entries[-1].undone  # the new move is in effect


def test_replays_and_watchers_follow_an_amendment(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    received: list[service_pb2.WatchGameResponse] = []
    ready = threading.Event()

    def watch() -> None:
        for item in client.watch(game_id, heartbeat_seconds=1, timeout=30):
            ready.set()
            if item.WhichOneof("item") == "update":
                received.append(item)
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert ready.wait(20)  # the first heartbeat: the watcher is following
    client.amend(game_id, _revision(case.index), case.notation, expected_version=version)
    watcher.join(30)
    [update] = received
    assert update.update.event.WhichOneof("body") == "move_amended"
    expected = [a.notation for a in case.fresh.position.moves()]
    assert list(update.update.state.moves) == expected
    *_, last = client.replay(game_id)
    assert last.event.WhichOneof("body") == "move_amended"
    assert list(last.state.moves) == expected
    # Time travel still shows the history as it stood before the amendment.
    old = client.state(game_id, revision=version, full=True)
    assert list(old.moves) == line


def test_an_annotation_on_a_replaced_move_is_orphaned_one_on_a_kept_move_is_not(
    client: Client,
) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    on_replaced = client.annotate(game_id, "bold", revision=_revision(case.index))
    on_kept = client.annotate(game_id, "later", revision=_revision(case.index + 2))
    on_earlier = client.annotate(game_id, "earlier", revision=_revision(case.index - 1))
    answer = client.amend(game_id, _revision(case.index), case.notation, expected_version=version)
    notes = {n.annotation_id: n for n in client.annotations(game_id)}
    assert notes[on_replaced.annotation_id].orphaned
    assert notes[on_replaced.annotation_id].orphaned_by == answer.game.version
    assert not notes[on_kept.annotation_id].orphaned
    assert not notes[on_earlier.annotation_id].orphaned
    # The new move is named by the amendment's revision: annotated there, it is the one
    # annotated, and replacing it in turn orphans the annotation.
    on_new = client.annotate(game_id, "the real move", revision=answer.game.version)
    assert not {n.annotation_id: n for n in client.annotations(game_id)}[
        on_new.annotation_id
    ].orphaned
    again = client.amend(
        game_id, answer.game.version, line[case.index], expected_version=answer.game.version
    )
    notes = {n.annotation_id: n for n in client.annotations(game_id)}
    assert notes[on_new.annotation_id].orphaned_by == again.game.version
    assert not notes[on_kept.annotation_id].orphaned


def test_undo_after_an_amendment_and_no_redo_of_a_replaced_move(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    undone = client.undo(game_id, expected_version=version)  # the last move, line[-1]
    amended = client.amend(
        game_id, _revision(case.index), case.notation, expected_version=undone.game.version
    )
    error = refused(lambda: client.redo(game_id, expected_version=amended.game.version))
    assert error.reason == "NOTHING_TO_REDO"
    # Undo names the last move of the corrected history by its revision.
    again = client.undo(game_id, expected_version=amended.game.version)
    assert again.events[0].move_undone.undone_revision == _revision(len(line) - 2)
    fresh = record_fresh(case.corrected[:-2])
    assert_head_is(client, game_id, fresh.position)
    # An undone move cannot be amended; a revision past the head is out of range.
    gone = refused(
        lambda: client.amend(
            game_id, _revision(len(line) - 2), change="delete", expected_version=again.game.version
        )
    )
    assert (gone.code, gone.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MOVE_NOT_IN_EFFECT")
    beyond = refused(
        lambda: client.amend(game_id, 10_000, change="delete", expected_version=again.game.version)
    )
    assert beyond.code == grpc.StatusCode.OUT_OF_RANGE
    assert client.verify(game_id).ok


def test_a_game_with_amendments_exports_and_imports(client: Client) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=True)
    answer = client.amend(
        game_id, _revision(case.index), case.notation, drop_tail=True, expected_version=version
    )
    deleted = record_fresh(case.corrected[: case.fresh.applied]).position.moves()[13]
    client.amend(
        game_id,
        deleted.revision,
        change="delete",
        expected_version=answer.game.version,
        drop_tail=True,
    )
    exported = client.export(game_id)
    imported = client.import_events(exported)
    assert client.verify(imported.game_id).ok
    assert list(client.state(imported.game_id, full=True).moves) == list(
        client.state(game_id, full=True).moves
    )
    assert client.get_game(imported.game_id).version == client.get_game(game_id).version


def test_an_illegal_replacement_is_refused_by_its_own_rule(client: Client) -> None:
    game_id, version, line = recorded(client, DELETION_SEED)
    case = find_deletion(line, breaks=False)
    error = refused(
        lambda: client.amend(game_id, _revision(case.index), "frobnicate", expected_version=version)
    )
    assert error.reason == "INVALID_NOTATION"
    assert client.get_game(game_id).version == version


def test_a_typed_move_past_the_bounds_is_refused_before_anything(client: Client) -> None:
    game_id, version, line = recorded(client)
    move = game_pb2.Move()
    move.splendor.returned.red = 4_294_967_295
    error = refused(lambda: client.amend(game_id, 20, move=move, expected_version=version))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.violations[0][0] == "replace_move.move.splendor.returned.red"
    long_reason = refused(
        lambda: client.amend(
            game_id, 20, change="delete", reason="x" * 501, expected_version=version
        )
    )
    assert long_reason.violations[0][0] == "reason"
    assert len(client.export(game_id)) == len(line) + 1


def _waiting_for_a_deal(
    position: folding.Position,
) -> tuple[int, game_pb2.Move, folding.Amended] | None:
    """A player's move and a replacement whose corrected history, its tail dropped, waits
    for the table (found with the fold: what is tested is that the server then deals)."""
    for applied in reversed(position.moves()):
        if applied.chance:
            continue
        for inner in position.game.legal_moves(applied.before):
            move = position.table.wrap(inner)
            trial = folding.amend(position, folding.REPLACE, applied.revision, move)
            if trial.broken is not None and trial.position.to_move() == CHANCE:
                return applied.revision, move, trial
    return None


def test_in_dealt_mode_the_deals_stay_and_the_server_deals_what_is_missing(
    client: Client,
) -> None:
    """A dealt outcome cannot be amended; a player's move can, and when the corrected
    history (its tail dropped) waits for a deal, the server deals it from the seed."""
    game = client.create_game("splendor", list(PLAYERS), mode="dealt")
    version = play_random(client, game.game_id, 40, seed=5)
    events = client.export(game.game_id)
    dealt = [e for e in events if e.WhichOneof("body") == "move_recorded" and e.move_recorded.dealt]
    error = refused(
        lambda: client.amend(
            game.game_id, dealt[-1].revision, change="delete", expected_version=version
        )
    )
    assert (error.reason, error.metadata["rule"]) == ("ILLEGAL_MOVE", "DEALT_BY_SERVER")
    # An amendment whose corrected history, its tail dropped, waits for a deal (a buy put
    # in, whose card the next deal no longer fills): the server deals it from the seed.
    position = folding.fold(events)
    found = _waiting_for_a_deal(position)
    assert found is not None, "no amendment leaves a deal waiting"
    target, move, trial = found
    assert trial.broken is not None
    answer = client.amend(game.game_id, target, move=move, drop_tail=True, expected_version=version)
    first, *dealt_after = answer.events
    assert first.move_amended.dropped_moves == trial.broken.dropped
    assert dealt_after
    assert all(e.move_recorded.dealt for e in dealt_after)
    head = client.get_game(game.game_id)
    assert head.to_move.WhichOneof("who") == "seat"  # nothing left waiting for a deal
    assert client.verify(game.game_id).ok
    folded = folding.fold(client.export(game.game_id), strict=True)
    assert folded.move_count == head.move_count


def test_an_ended_table_game_reopens_and_ends_again(client: Client) -> None:
    """Amending a finished table game reopens it, as an undo does; a corrected history
    that is over ends it again, with a new GameEnded."""
    line = splendor_line(11)
    game = client.create_game("splendor", list(PLAYERS))
    version = game.version
    for text in line:
        version = client.record(game.game_id, text, expected_version=version).game.version
    assert client.get_game(game.game_id).status == service_pb2.GAME_STATUS_ENDED
    final = _revision(len(line) - 1)
    again = client.amend(game.game_id, final, line[-1], expected_version=version)
    assert [e.WhichOneof("body") for e in again.events] == ["move_amended", "game_ended"]
    assert again.game.status == service_pb2.GAME_STATUS_ENDED
    # The final move, put in again, is now named by the amendment's revision.
    final = again.events[0].revision
    reopened = client.amend(
        game.game_id, final, change="delete", expected_version=again.game.version
    )
    assert [e.WhichOneof("body") for e in reopened.events] == ["move_amended"]
    assert reopened.game.status == service_pb2.GAME_STATUS_IN_PROGRESS
    last = client.record(game.game_id, line[-1], expected_version=reopened.game.version)
    assert last.game.status == service_pb2.GAME_STATUS_ENDED
    assert client.verify(game.game_id).ok
