"""Amending a move in the middle of a game (AmendMove): the use case, and what the reads
make of a stored MoveAmended (the audit's words, the annotations it leaves without their
move).

The corrected history is computed by the fold (`tablelog.replay.fold.amend`), so the service and
every later fold of the stream agree on it: the change is applied at the move named, every
later move in effect is re-checked with the rules in order, and the amendment is refused
with the first one that no longer applies, or (`drop_tail`) appended with that tail dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, RulesError, Viewer
from tablelog.service.errors import AmendRefused, InvalidRequest, OutOfRange
from tablelog.service.limits import MAX_NOTATION, MAX_REASON, check_length
from tablelog.service.recording.appending import Appender, Built, Origin, Outcome, fingerprint
from tablelog.service.recording.building import deal_and_end, next_event
from tablelog.service.recording.heads import Head
from tablelog.service.recording.refusals import worded_for
from tablelog.service.recording.views import HIDDEN_MOVE, described, shown_notation, viewer_of
from tablelog.v1 import events_pb2, game_pb2, service_pb2

KINDS: Mapping[str, int] = {
    "replace_move": folding.REPLACE,
    "insert_move": folding.INSERT,
    "delete_move": folding.DELETE,
}
"""The AmendMoveRequest `change` fields, and the kind of amendment each asks for."""


def mover_words(table: folding.Table, applied: folding.Applied) -> str:
    """Whose move `applied` is, with its notation: "Bob's take w u g", "the table's ..."."""
    if applied.chance:
        return f"the table's {applied.notation}"
    move = applied.move
    seat = move.seat if move.HasField("seat") else table.game.to_move(applied.before)
    return f"{table.seat_name(seat)}'s {applied.notation}"


def breaking_refusal(
    revision: int, table: folding.Table, broken: folding.TailBreak, viewer: Viewer
) -> AmendRefused:
    """The refusal naming the first later move that no longer applies, as `viewer` may see
    it: a move that dealt hidden information to another seat is named by its revision only,
    since its notation and the rule's words could name the hidden component."""
    moved, rule = broken.applied, broken.error
    after = broken.dropped - 1
    shown = shown_notation(table, moved, viewer)
    if shown == HIDDEN_MOVE:
        who, refusal = f"a move you may not see ({HIDDEN_MOVE})", "it breaks a rule"
    else:
        who, refusal = mover_words(table, moved), rule.message
    return AmendRefused(
        "AMEND_BREAKS_LATER_MOVE",
        f"Amending revision {revision} breaks a later move: revision {moved.revision}, "
        f"{who}, no longer applies: {refusal} (rule {rule.code}). "
        f"Drop the tail (--drop-tail; drop_tail in the API) to take it and the {after} move"
        f"{'' if after == 1 else 's'} after it out of the game.",
        metadata={
            "rule": rule.code,
            "refusal": refusal,
            "revision": str(moved.revision),
            "notation": shown,
            "moves_to_drop": str(broken.dropped),
        },
    )


def amended_in_view(
    position: folding.Position,
    kind: int,
    revision: int,
    *,
    move: game_pb2.Move | None,
    notation: str | None,
    seat: int | None,
    viewer: Viewer,
    drop_tail: bool,
) -> tuple[game_pb2.Move | None, folding.Amended]:
    """The move an amendment puts in (typed, `move`, or `notation` read where it goes;
    None for a deletion) and the history `position` corrected with it (`folding.amend`).

    Refused as `viewer` may see the game, as RecordMove's refusals are
    (`tablelog.service.recording.refusals`): the move is checked against everything
    recorded, hidden components included, so the rules' words could tell a hidden card from
    one not there (a recorder replacing a move with `buy <card>` for the seat that
    reserved blind was told "you are N short" for the hidden card alone). A refusal of the
    move put in is worded from the position before the amended move as `viewer` may know
    it; a later move that no longer applies (unless `drop_tail`) is named as
    `breaking_refusal` says, its rule's words likewise from the position before it."""
    folding.check_amendable(position)
    target = folding.amended_move(position, revision)
    table = position.table

    def put_in(state: Any) -> game_pb2.Move | None:
        if kind == folding.DELETE:
            return None
        if notation is not None:
            return table.wrap(table.game.parse(notation, state), seat)
        assert move is not None
        return table.wrap(table.unwrap(move), move.seat if move.HasField("seat") else seat)

    def checked_in(before: folding.Position) -> folding.Position:
        return folding.put_amendment(before, kind, target, put_in(before.state))

    try:
        new = put_in(target.before)
        amended = folding.amend(position, kind, revision, new)
    except RulesError as refused:
        told = worded_for(viewer, folding.history_before(position, revision), refused, checked_in)
        if told is refused:
            raise
        raise told from None
    broken = amended.broken
    if broken is not None and not drop_tail:
        moved = broken.applied.move
        rule = worded_for(
            viewer, amended.position, broken.error, lambda at: folding.check_move(at, moved)
        )
        raise breaking_refusal(revision, table, replace(broken, error=rule), viewer)
    return new, amended


class Amending:
    """The AmendMove use case, on the one append path."""

    appender: Appender

    async def amend_move(
        self,
        game_id: str,
        *,
        revision: int,
        kind: int,
        move: game_pb2.Move | None,
        notation: str | None,
        seat: int | None,
        expected_version: int,
        request_id: str,
        reason: str,
        drop_tail: bool,
        actor: events_pb2.Actor,
        viewer: service_pb2.Viewer | None = None,
    ) -> Outcome:
        """Replace the move in effect recorded at `revision`, insert a move before it, or
        delete it (`kind`); the new move is typed (`move`) or `notation`, parsed in the
        position it goes into. Refused (AMEND_BREAKS_LATER_MOVE) when a later move no longer
        applies, unless `drop_tail`; nothing is appended then. `viewer` is the caller's
        (unset: the full view): a refusal is worded from what it may see
        (`amended_in_view`)."""
        check_length("reason", reason, MAX_REASON)
        if kind not in KINDS.values():
            raise InvalidRequest(
                "change", "Say how to amend the move: replace_move, insert_move or delete_move."
            )
        if kind != folding.DELETE:
            if notation is not None:
                check_length("notation", notation, MAX_NOTATION)
                if not notation.strip():
                    raise InvalidRequest("notation", "Type a move.")
            elif move is None:
                raise InvalidRequest("change", "Send the new move or its notation.")
        if revision <= 0:
            raise InvalidRequest(
                "revision", "Name the move to amend by the revision that recorded it."
            )

        def build(head: Head) -> Built:
            position = head.position
            if revision > head.revision:
                raise OutOfRange(
                    "REVISION_OUT_OF_RANGE",
                    f"Revision {revision} is beyond the game's head, revision {head.revision}.",
                    field_name="revision",
                    metadata={"head_revision": str(head.revision)},
                )
            seen = viewer_of(viewer, position.table.players, unset=FULL)
            new, amended = amended_in_view(
                position,
                kind,
                revision,
                move=move,
                notation=notation,
                seat=seat,
                viewer=seen,
                drop_tail=drop_tail,
            )
            broken = amended.broken
            body = events_pb2.MoveAmended(
                amended_revision=revision,
                kind=kind,  # type: ignore[arg-type]  # one of KINDS, checked above
                move=new,
                notation=amended.notation,
                removed_notation=amended.removed.notation if amended.removed else "",
                dropped_from_revision=broken.applied.revision if broken else 0,
                dropped_moves=broken.dropped if broken else 0,
                reason=reason,
            )
            event = next_event(position, move_amended=body)
            event.revision = position.revision + 1
            events = [event]
            after = replace(amended.position, sequence=event.sequence)
            return events, deal_and_end(after, events, head.seed)

        asked = fingerprint(
            "AmendMove",
            game_id,
            revision,
            kind,
            b"" if move is None else move.SerializeToString(deterministic=True),
            notation,
            seat,
            expected_version,
            reason,
            int(drop_tail),
        )
        return await self.appender.change(
            game_id,
            build,
            expected_revision=expected_version,
            origin=Origin(actor, request_id, asked),
        )


def amendment_words(
    event: events_pb2.Event, before: folding.Position, moves: dict[int, str], detail: str = ""
) -> str:
    """The audit's line for a MoveAmended, described against the position before it ("Ann
    amended revision 17: Bob's take w u g → take w u k (reason)"); the move it puts in is
    remembered in `moves` (by its revision, for a later undo or redo to name). `detail`:
    what the move it puts in takes by place only (`views.move_detail`)."""
    body = event.move_amended
    who = event.actor.user or "someone"
    table = before.table
    target = folding.amended_move(before, body.amended_revision)
    seat = body.move.seat if body.move.HasField("seat") else table.game.to_move(target.before)
    notation = described(body.notation, detail)
    if body.kind != folding.DELETE:
        moved = "the table's" if seat < 0 else f"{table.seat_name(seat)}'s"
        moves[event.revision] = f"{moved} {notation}"
    removed = mover_words(table, target)
    if body.kind == folding.REPLACE:
        words = f"{who} amended revision {body.amended_revision}: {removed} → {notation}"
    elif body.kind == folding.INSERT:
        words = (
            f"{who} inserted {moves[event.revision]} before {removed} "
            f"(revision {body.amended_revision})"
        )
    else:
        words = f"{who} deleted revision {body.amended_revision}: {removed}"
    if body.dropped_moves:
        plural = "s" if body.dropped_moves != 1 else ""
        words += (
            f"; dropped {body.dropped_moves} later move{plural} from revision "
            f"{body.dropped_from_revision}, which no longer applied"
        )
    return words + (f" ({body.reason})" if body.reason else "")


def mark_orphans(
    events: Iterable[events_pb2.Event], notes: Mapping[str, service_pb2.Annotation]
) -> None:
    """Flag each annotation (in place) whose move an amendment took out of the history.

    An annotation is anchored to a move: the move its revision names (recorded there, or
    put in by the amendment there), else the last move in effect at its revision (an undo,
    a redo, a deletion). A move that survives an amendment keeps its name, so its
    annotations stay with it; one that an amendment replaced, deleted or dropped never
    comes back (an amendment clears redo), so its annotations are `orphaned`, naming the
    amendment (`orphaned_by`). An undone move is not taken out: it may be redone."""
    events = list(events)
    if not notes or not any(e.WhichOneof("body") == "move_amended" for e in events):
        return
    anchors: dict[int, int] = {}
    taken_out: dict[int, int] = {}
    position: folding.Position | None = None
    for event in events:
        body = event.WhichOneof("body")
        if position is None:
            position = folding.start(event.game_created)
            continue
        before = {a.revision for a in position.applied or ()} if body == "move_amended" else None
        position = folding.advance(position, event)
        if body == "move_amended" and event.move_amended.kind != folding.DELETE:
            anchors[event.revision] = event.revision
        elif body in folding.HISTORY_BODIES:
            anchors[event.revision] = position.applied.head.revision if position.applied else 0
        if before is not None:
            for name in before - {a.revision for a in position.applied or ()}:
                taken_out[name] = event.revision
    for note in notes.values():
        moved = anchors.get(note.revision, 0)
        if moved in taken_out:
            note.orphaned = True
            note.orphaned_by = taken_out[moved]
