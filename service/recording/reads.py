"""The reads: everything a client can ask of a game without changing it (its state at any
revision, a replay, the legal moves, the audit log, the annotations, the list of games).
Each is a fold of the stream, or the cached head when it is asked at the head; a state at
a past revision and a replay fold from the nearest checkpoint
(`tablelog.service.recording.checkpoints`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, TypeVar

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, FULL, TERMINAL, Viewer
from tablelog.replay.picture import WIDE
from tablelog.replay.registry import all_games, describe
from tablelog.replay.touch import legal_touches
from tablelog.service.errors import InvalidRequest, OutOfRange, PermissionDenied
from tablelog.service.limits import page_bounds, page_token
from tablelog.service.recording import game_index, variations
from tablelog.service.recording.amending import amendment_words, mark_orphans
from tablelog.service.recording.appending import Outcome
from tablelog.service.recording.heads import Heads
from tablelog.service.recording.pictures import PictureLimits, Pictures
from tablelog.service.recording.priority import ChangesFirst
from tablelog.service.recording.views import (
    annotation_of,
    described,
    move_detail,
    move_number,
    replay_item,
    result_words,
    shown_event,
    shown_events,
    snapshot,
    to_move_message,
    viewer_of,
    viewer_words,
)
from tablelog.service.recording.watching import MoveLists
from tablelog.service.store import EventStore
from tablelog.v1 import events_pb2, game_pb2, service_pb2

Answer = TypeVar("Answer")


def _mover(before: folding.Position, event: events_pb2.Event) -> str:
    """Who made a recorded move: the seat it names, else the seat that was to move (empty for
    the table's chance outcomes)."""
    move = event.move_recorded.move
    seat = move.seat if move.HasField("seat") else before.to_move()
    return before.table.seat_name(seat) if seat >= 0 else ""


def _puts_a_move(event: events_pb2.Event) -> bool:
    """A MoveRecorded, or a MoveAmended that replaces or inserts a move."""
    body = event.WhichOneof("body")
    return body == "move_recorded" or (
        body == "move_amended" and event.move_amended.kind != folding.DELETE
    )


class EventWords:
    """The audit's one-line descriptions, naming who moved and who won: each event is
    described against the position before it, and undo and redo name the move they take
    back or re-apply by what was described when it was recorded."""

    def __init__(self) -> None:
        self.moves: dict[int, str] = {}

    def describe(self, event: events_pb2.Event, before: folding.Position, detail: str = "") -> str:
        """`detail`: what the event's move takes that its notation names by place only
        (`move_detail`), named after the notation."""
        who = event.actor.user or "someone"
        players = before.table.players
        body = event.WhichOneof("body")
        if body == "game_created":
            created = event.game_created
            names = ", ".join(p.name for p in created.players)
            mode = "dealt" if created.mode == DEALT else "table"
            return f"{who} created a {created.game} game ({mode} mode) for {names}"
        if body == "move_recorded":
            recorded = event.move_recorded
            if recorded.hidden:
                # A move redacted for this viewer: its words name nothing it dealt.
                self.moves[event.revision] = "a hidden move"
                if recorded.dealt:
                    return "the server dealt a hidden card or tile"
                return f"the table recorded a hidden move (recorded by {who})"
            if recorded.dealt:
                self.moves[event.revision] = f"the deal {recorded.notation}"
                return f"the server dealt {recorded.notation}"
            mover = _mover(before, event)
            notation = described(recorded.notation, detail)
            if mover:
                self.moves[event.revision] = f"{mover}'s {notation}"
                return f"{mover}: {notation} (recorded by {who})"
            self.moves[event.revision] = f"the table's {notation}"
            return f"table: {notation} (recorded by {who})"
        if body == "move_undone":
            undone = event.move_undone
            reason = f" ({undone.reason})" if undone.reason else ""
            words = self.moves.get(undone.undone_revision, "a move")
            return f"{who} undid {words} (revision {undone.undone_revision}){reason}"
        if body == "move_redone":
            redone = event.move_redone.redone_revision
            words = self.moves.get(redone, "a move")
            self.moves[event.revision] = words
            return f"{who} redid {words} (revision {redone})"
        if body == "move_amended":
            return amendment_words(event, before, self.moves, detail)
        if body == "annotation_added":
            note = event.annotation_added
            text = " ".join(t for t in (note.glyph, note.comment) if t)
            if note.variation.moves:
                line = variations.audit_words(note.variation)
                return f"{who} annotated revision {note.revision} {line}" + (
                    f" ({text})" if text else ""
                )
            return f"{who} annotated revision {note.revision}: {text}"
        if body == "annotation_removed":
            return f"{who} removed annotation {event.annotation_removed.annotation_id}"
        if body == "seat_bound":
            bound = event.seat_bound
            seat = (
                f"seat {bound.seat} ({players[bound.seat]})"
                if bound.seat < len(players)
                else f"seat {bound.seat}"
            )
            was = f" (was {bound.previous_member_id})" if bound.previous_member_id else ""
            if not bound.member_id:
                return f"{who} unbound {seat}{was}"
            return f"{who} bound {seat} to member {bound.member_id}{was}"
        if body == "game_ended":
            return f"the game ended: {result_words(event.game_ended.result, players)}"
        if body == "game_abandoned":
            reason = event.game_abandoned.reason
            return f"{who} abandoned the game" + (f" ({reason})" if reason else "")
        if body == "game_deleted":
            reason = event.game_deleted.reason
            return f"{who} deleted the game" + (f" ({reason})" if reason else "")
        return f"{who}: {body}"


def _unverified(event: events_pb2.Event) -> str:
    """What an audit line adds for an event imported unverified (accept_unverified): its
    actor and time are the export's word, which no key of this server vouches for."""
    if not event.HasField("imported") or event.imported.verified:
        return ""
    source = f" from {event.imported.source}" if event.imported.source else ""
    return (
        f" [imported unverified{source} by {event.imported.by.user or 'someone'}: "
        "who recorded it and when are the export's word, not checked by this server]"
    )


def live_annotations(
    events: Iterable[events_pb2.Event], notes: dict[str, service_pb2.Annotation] | None = None
) -> dict[str, service_pb2.Annotation]:
    """The annotations added and not removed, by id: of `events`, or of the events before
    them (`notes`, the live annotations then, updated in place) and `events`."""
    notes = {} if notes is None else notes
    for event in events:
        body = event.WhichOneof("body")
        if body == "annotation_added":
            notes[event.annotation_added.annotation_id] = annotation_of(event)
        elif body == "annotation_removed":
            notes.pop(event.annotation_removed.annotation_id, None)
    return notes


def audit_entries(
    events: Sequence[events_pb2.Event], viewer: service_pb2.Viewer | None
) -> list[service_pb2.AuditEntry]:
    """The audit of `events` (a whole game) as `viewer` may see it (`Reads.audit`)."""
    position = folding.start(events[0].game_created)
    seen = viewer_of(viewer, position.table.players, unset=FULL)
    words = EventWords()
    entries = []
    for index, event in enumerate(events):
        before = position
        if index:
            position = folding.advance(position, event)
        shown = shown_event(event, before, seen)
        detail = move_detail(event, before, seen)
        summary = words.describe(shown, before, detail) + _unverified(shown)
        number = move_number(event, before, position) if event.HasField("move_recorded") else 0
        if number:
            summary = f"{number}. {summary}"  # as the text record numbers the move
        entries.append((shown, summary, detail))
    in_effect = {applied.revision for applied in position.applied or ()}
    return [
        service_pb2.AuditEntry(
            event=event,
            summary=summary,
            undone=_puts_a_move(event) and event.revision not in in_effect,
            detail=detail,
        )
        for event, summary, detail in entries
    ]


def variation_items(
    events: Sequence[events_pb2.Event],
    asked: service_pb2.VariationPath,
    first: int,
    viewer: Viewer,
    drawn: bool,
    layout: str = WIDE,
) -> list[service_pb2.ReplayGameResponse]:
    """A variation's replay, whole (`Reads.replay_variation`)."""
    return list(variations.replay_into(events, asked, first, viewer, drawn=drawn, layout=layout))


class Reads:
    """The read use cases, on the store and the head cache."""

    def __init__(self, store: EventStore, heads: Heads, pictures: Pictures | None = None) -> None:
        self.store = store
        self.heads = heads
        self.pictures = pictures or Pictures(PictureLimits(workers=0))
        self.changes = ChangesFirst()
        """The changes in flight on this process, which the readers' steps let go first."""

    async def position_at(self, game_id: str, revision: int) -> folding.Position:
        """The game at `revision` (0: its head)."""
        return (await self.position_and_hash_at(game_id, revision))[0]

    async def position_and_hash_at(
        self, game_id: str, revision: int
    ) -> tuple[folding.Position, bytes]:
        """The game at `revision` (0: its head) and the hash of the last event folded."""
        head = await self.heads.load(game_id)
        if revision == 0 or revision == head.revision:
            return head.position, head.last_hash
        if revision > head.revision:
            raise OutOfRange(
                "REVISION_OUT_OF_RANGE",
                f"Revision {revision} is beyond the game's head, revision {head.revision}.",
                metadata={"head_revision": str(head.revision)},
            )
        return await self.heads.checkpoints.at(game_id, head.position.table, revision)

    async def state(
        self,
        game_id: str,
        revision: int,
        viewer: service_pb2.Viewer | None,
        *,
        drawn: bool,
        layout: str = WIDE,
    ) -> service_pb2.StateSnapshot:
        """The state at `revision` (0: its head) as `viewer` sees it, with its picture in
        `layout` when `drawn` (`tablelog.service.recording.pictures`: cached, drawn off the
        loop)."""
        position, chain_hash = await self.position_and_hash_at(game_id, revision)
        seen = viewer_of(viewer, position.table.players)
        view = position.game.view(position.state, seen)
        shown = snapshot(position, seen, view=view)
        if drawn:
            shown.picture = await self.pictures.picture(
                game_id, chain_hash, position, seen, view, layout
            )
        return shown

    def game_types(self) -> list[game_pb2.GameInfo]:
        return [describe(game) for game in all_games().values()]

    async def list_games(
        self, game: str, status: int, page_size: int, token: str, club: str = "", player: str = ""
    ) -> tuple[list[service_pb2.GameSummary], str]:
        return await game_index.list_games(self.store, club, game, status, page_size, token, player)

    async def events(self, game_id: str) -> list[events_pb2.Event]:
        """Every event of the game, its chain verified as it is read: a history changed
        outside the service is refused (TamperedHistory), never served as if intact."""
        return await self.heads.verified_events(game_id)

    async def annotations(self, game_id: str) -> list[service_pb2.Annotation]:
        events = await self.events(game_id)
        notes = live_annotations(events)
        mark_orphans(events, notes)
        return sorted(notes.values(), key=lambda a: (a.revision, a.time.ToNanoseconds()))

    async def audit(
        self, game_id: str, viewer: service_pb2.Viewer | None = None
    ) -> list[service_pb2.AuditEntry]:
        """Every event with its description, as `viewer` may see it (unset: the full view).
        A redacted entry is redacted as a replay redacts it (`shown_event`), and its
        description is made from what is shown."""
        events = await self.events(game_id)
        return await self.offload(audit_entries, events, viewer)

    async def offload(self, function: Callable[..., Answer], *arguments: Any) -> Answer:
        """`function(*arguments)`, a heavy pure read, run by a worker process when the
        instance has them (`tablelog.service.recording.offload`), else here."""
        pool = self.pictures.pool
        if pool is None:
            return function(*arguments)
        return await pool.call(function, *arguments)

    async def shown_change(self, outcome: Outcome, viewer: Viewer) -> Sequence[events_pb2.Event]:
        """The events a change appended as `viewer` (the one decided for whoever asked for
        the change) may see them: redacted as a replay redacts them, so a recorder, entitled
        to the spectator's view, is not answered a card the server dealt to a seat.

        The RecordMove path skips the work when nothing can be hidden: for the full view,
        and when the game after the change hides nothing from `viewer` (`Game.hides_from`):
        a move hidden from a viewer deals something into the state that stays hidden at
        least until the next player's decision, where a change ends (a game that ends in
        it reveals all, or keeps it hidden). An amendment, which can take a hidden move out,
        is always judged, as are a retry's original events."""
        events = outcome.events
        if viewer is FULL:
            return events
        before = outcome.before
        if before is None:
            before = await self._position_before(outcome.head.game_id, events[0].sequence)
        else:
            after = outcome.head.position
            amends = any(event.WhichOneof("body") == "move_amended" for event in events)
            if not amends and not after.game.hides_from(after.state, viewer):
                return events
        return shown_events(events, before, viewer)

    async def change_details(self, outcome: Outcome, viewer: Viewer) -> list[str]:
        """What each event of a change takes that its notation names by place only, as
        `viewer` may see it (`move_detail`; `buy 1.3` took `1k0:g3`), one per event; none
        when no event of the change has any (the common case costs one look per event)."""
        events = outcome.events
        if not any(_puts_a_move(event) for event in events):
            return []
        before = outcome.before
        if before is None:
            before = await self._position_before(outcome.head.game_id, events[0].sequence)
        details = []
        for index, event in enumerate(events):
            if index:
                before = folding.advance(before, events[index - 1])
            details.append(move_detail(event, before, viewer))
        return details if any(details) else []

    async def _position_before(self, game_id: str, sequence: int) -> folding.Position:
        """The game just before the event numbered `sequence`."""
        history = await self.events(game_id)
        position = folding.start(history[0].game_created)
        for event in history[1:]:
            if event.sequence >= sequence:
                break
            position = folding.advance(position, event)
        return position

    async def replay(
        self,
        game_id: str,
        first: int,
        last: int,
        viewer: service_pb2.Viewer | None,
        *,
        drawn: bool = False,
        layout: str = WIDE,
    ) -> AsyncIterator[service_pb2.ReplayGameResponse]:
        if last and first > last:
            raise InvalidRequest(
                "from_revision",
                f"from_revision {first} is after to_revision {last}: nothing to replay.",
            )
        head = await self.heads.load(game_id)
        head_revision = head.revision
        last = last or head_revision
        if first > head_revision or last > head_revision:
            raise OutOfRange(
                "REVISION_OUT_OF_RANGE",
                f"The game's head is revision {head_revision}.",
                field_name="from_revision" if first > head_revision else "to_revision",
                metadata={"head_revision": str(head_revision)},
            )
        table = head.position.table
        seen = viewer_of(viewer, table.players)
        lists = MoveLists()
        async for step in self.heads.checkpoints.steps(game_id, table, first, last):
            await self.changes.first()
            after = step.after
            view = after.game.view(after.state, seen)
            moves = lists.of(after, seen)
            item = replay_item(step.event, step.before, after, seen, moves, view=view)
            if drawn:
                item.state.picture = await self.pictures.picture(
                    game_id, step.event.hash, after, seen, view, layout
                )
            else:
                # A long replay lets the loop serve the calls behind it between steps.
                await asyncio.sleep(0)
            yield item

    async def replay_variation(
        self,
        game_id: str,
        asked: service_pb2.VariationPath,
        first: int,
        viewer: service_pb2.Viewer | None,
        *,
        drawn: bool = False,
        layout: str = WIDE,
    ) -> AsyncIterator[service_pb2.ReplayGameResponse]:
        """A replay into an annotation's variation
        (`tablelog.service.recording.variations.replay_into`); with `drawn`, each state's picture
        too."""
        events = await self.events(game_id)
        seen = viewer_of(viewer, [p.name for p in events[0].game_created.players])
        # Two folds of the game and the variation's pictures: in a worker.
        for item in await self.offload(variation_items, events, asked, first, seen, drawn, layout):
            yield item

    async def legal_moves(
        self,
        game_id: str,
        revision: int,
        page_size: int,
        token: str,
        viewer: service_pb2.Viewer | None = None,
    ) -> service_pb2.ListLegalMovesResponse:
        """The legal moves at `revision`, for `viewer` (unset: the full view). The seat to
        move sees all of its own; any other viewer sees another's decision only while the
        state hides nothing from it (`Game.hides_from`): such a list would name a hidden
        component (a seat's blind reserve it may buy) or betray it by leaving it out (the
        cards a dealt draw can still give), and is refused, PERMISSION_DENIED."""
        offset, size = page_bounds(page_size, token)
        position = await self.position_at(game_id, revision)
        seen = viewer_of(viewer, position.table.players, unset=FULL)
        response = service_pb2.ListLegalMovesResponse(to_move=to_move_message(position))
        if position.to_move() == TERMINAL:
            return response
        game, state = position.game, position.state
        who = position.to_move()
        # (SPECTATOR and CHANCE are both -1: only a seat index is a decision of one's own.)
        own_decision = who >= 0 and seen == who
        if not own_decision and game.hides_from(state, seen):
            whose = "the table's" if who == CHANCE else f"{position.table.seat_name(who)}'s"
            raise PermissionDenied(
                "LEGAL_MOVES_HIDDEN",
                f"The legal moves are {whose} decision and would show hidden information "
                f"to {viewer_words(seen)}; ask as the seat to move, or watch the game.",
                metadata={"asked": viewer_words(seen), "to_move": str(who)},
            )
        moves: Sequence[Any] = game.legal_moves(state)
        seat = who if who >= 0 else None
        response.total_size = len(moves)
        # Each move's touches are cut against every other move, so all are worked out even
        # for one page (a few milliseconds for the longest list, benchmarks/touches.py).
        touches = legal_touches(game, state, moves)
        for inner, touched in zip(
            moves[offset : offset + size], touches[offset : offset + size], strict=True
        ):
            response.moves.add(
                move=position.table.wrap(inner, seat),
                notation=game.format(inner, state),
                touches=touched.ids,
                touches_any_order=touched.any_order,
                detail=game.detail(inner, state),
                words=game.words(inner, state, seen),
            )
        if offset + size < len(moves):
            response.next_page_token = page_token(offset + size)
        return response
