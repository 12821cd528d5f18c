"""The changes a client can make to a game: create, record a move, undo, redo, abandon,
annotate, remove an annotation, import. Each bounds its input, says how its events are
built on a head, and hands them to the one append path (`tablelog.service.recording.appending`)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Collection, Sequence
from typing import Any

from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    FULL,
    TABLE,
    TERMINAL,
    AmbiguousNotation,
    GameOver,
    HistoryError,
    IllegalMove,
    InvalidSetup,
    NotationError,
    RulesError,
    Viewer,
)
from tablelog.replay.movers import check_named_mover, named_mover
from tablelog.replay.registry import find_game
from tablelog.service.bounds import check_record_tags
from tablelog.service.errors import (
    DeletedGame,
    ImportRefused,
    InvalidRequest,
    NotAMove,
    NotFound,
    OutOfRange,
    PermissionDenied,
    TypoWhileStale,
    Unverifiable,
    refusal,
)
from tablelog.service.limits import (
    GLYPHS,
    MAX_COMMENT,
    MAX_IMPORT_EVENTS,
    MAX_IMPORT_SOURCE,
    MAX_NOTATION,
    MAX_PLAYER_NAME,
    MAX_PLAYERS,
    MAX_REASON,
    MAX_REQUEST_ID,
    MAX_TITLE,
    check_components,
    check_game_id,
    check_length,
)
from tablelog.service.recording import variations
from tablelog.service.recording.appending import (
    APPEND_ATTEMPTS,
    Appender,
    Built,
    Origin,
    Outcome,
    Plan,
    fingerprint,
    new_game_id,
    now,
    stamp,
)
from tablelog.service.recording.building import (
    DEALING_SCHEME,
    deal_and_end,
    next_event,
    push,
    with_defaults,
)
from tablelog.service.recording.heads import Head, Heads
from tablelog.service.recording.reads import live_annotations
from tablelog.service.recording.refusals import worded_for
from tablelog.service.recording.verification import ChainBroken, ChainWalk, HistoryCheck
from tablelog.service.store import EventStore, GameNotFound, SequenceMoved, StaleVersion
from tablelog.v1 import events_pb2, game_pb2, service_pb2


def _last_move(position: folding.Position) -> int:
    """The revision of the last move in effect at `position` (a redone move keeps the
    revision that first recorded it); 1, the creation, when no move is."""
    return position.applied.head.revision if position.applied is not None else 1


def check_anchor(events: Sequence[events_pb2.Event], revision: int) -> None:
    """Annotations anchor to moves (and to the creation, a note on the whole game): a
    revision made by an undo, a redo or the game's end is refused, naming the move to
    annotate instead. A revision past the head is left to the build, which names the head;
    past revisions never change, so the check holds when the note is appended."""
    if revision > events[-1].revision:
        return
    made = next(
        event
        for event in events
        if event.revision == revision and event.WhichOneof("body") in folding.HISTORY_BODIES
    )
    body = made.WhichOneof("body")
    if body in ("game_created", "move_recorded") or (
        body == "move_amended" and made.move_amended.kind != events_pb2.AMEND_KIND_DELETE
    ):
        return  # the creation, or a move: recorded, or put in by an amendment
    if body == "move_undone":
        move = made.move_undone.undone_revision
        what, which = f"an undo (of revision {move})", "the move it took back"
    elif body == "move_redone":
        move = made.move_redone.redone_revision
        what, which = f"a redo (of revision {move})", "the move it re-applied"
    else:
        move = _last_move(folding.fold(events, until_revision=revision))
        what = (
            f"a deletion (of revision {made.move_amended.amended_revision})"
            if body == "move_amended"
            else "the end of the game"
        )
        which = "the last move in effect then"
    raise NotAMove(
        f"Revision {revision} is {what}, not a move: annotations anchor to moves. "
        f"Annotate revision {move}, {which}.",
        field_name="revision",
        metadata={"move_revision": str(move)},
    )


class _Recheck(Exception):
    """A removal built on a head other than the one its check was made on."""


class Commands:
    """The use cases that append. One per process; safe for many asyncio tasks."""

    def __init__(self, store: EventStore, heads: Heads, appender: Appender) -> None:
        self.store = store
        self.heads = heads
        self.appender = appender

    async def create_game(
        self, request: service_pb2.CreateGameRequest, actor: events_pb2.Actor
    ) -> Outcome:
        check_length("request_id", request.request_id, MAX_REQUEST_ID)
        check_length("title", request.title, MAX_TITLE)
        if len(request.players) > MAX_PLAYERS:
            raise InvalidRequest("players", f"At most {MAX_PLAYERS} players.")
        named: set[str] = set()
        for player in request.players:
            check_length("players.name", player.name, MAX_PLAYER_NAME)
            if not player.name.strip():
                raise InvalidRequest("players.name", "Every player needs a name.")
            # Answers name the players: two of one name would make them ambiguous.
            name = " ".join(player.name.split()).casefold()
            if name in named:
                raise InvalidRequest(
                    "players.name",
                    f"Two players are called {player.name.strip()!r}: give each a name of "
                    "their own (an initial, a number).",
                )
            named.add(name)
        check_components("components", request.components)
        check_record_tags("record_tags", request.record_tags)
        game = find_game(request.game)
        mode = request.mode or TABLE
        game_id = new_game_id(request.request_id, actor.club)
        origin = Origin(actor, request.request_id)
        if request.request_id:
            asked = service_pb2.CreateGameRequest()
            asked.CopyFrom(request)
            asked.ClearField("request_id")
            asked.mode = mode
            origin = Origin(
                actor,
                request.request_id,
                fingerprint("CreateGame", asked.SerializeToString(deterministic=True)),
            )
            previous = await self.appender.previous(game_id, origin)
            if previous is not None:
                return previous
        seed = secrets.token_bytes(32) if mode == DEALT else None
        created = events_pb2.GameCreated(
            game_id=game_id,
            game=game.name,
            players=list(request.players),
            options=request.options,
            mode=mode,
            components=with_defaults(request.components, game.default_components()),
            seed_commitment=hashlib.sha256(seed).digest() if seed else b"",
            title=request.title,
            rules_version=game.rules_version,
            dealing_scheme=DEALING_SCHEME if mode == DEALT else 0,
            club=actor.club,
            record_tags=list(request.record_tags),
        )
        events = [events_pb2.Event(sequence=1, revision=1, game_created=created)]
        position = folding.start(created)  # validates players, mode, options, components
        position = deal_and_end(position, events, seed)
        stamp(events, origin, game.rules_version)
        plan = Plan(game_id, None, tuple(events), position, None, origin, seed)
        return await self.appender.append(plan)

    async def record_move(
        self,
        game_id: str,
        *,
        move: game_pb2.Move | None,
        notation: str | None,
        seat: int | None,
        expected_version: int,
        request_id: str,
        actor: events_pb2.Actor,
        seats: Collection[int] | None = None,
        viewer: Viewer = FULL,
    ) -> Outcome:
        """`seats`: the seats the caller may move for (None: any), checked against the move
        as it is built on the head it is appended to. `viewer`: what the caller may see; a
        refusal is worded from it (`tablelog.service.recording.refusals`)."""
        if notation is not None:
            check_length("notation", notation, MAX_NOTATION)
            if not notation.strip():
                raise InvalidRequest("notation", "Type a move.")
        elif move is None:
            raise InvalidRequest("input", "Send a move or its notation.")

        def one_move(
            position: folding.Position,
            inner: Message,
            chosen_seat: int | None,
            events: list[events_pb2.Event],
        ) -> folding.Position:
            if position.to_move() == TERMINAL:
                raise GameOver()
            table, game, state = position.table, position.game, position.state
            if table.mode == DEALT and game.is_chance(inner):
                raise IllegalMove(
                    "DEALT_BY_SERVER",
                    "This game is dealt by the server: reveals and draws are not typed in.",
                )
            envelope = table.wrap(inner, chosen_seat)
            if seats is not None:
                mover = envelope.seat if envelope.HasField("seat") else position.to_move()
                if mover not in seats:
                    raise PermissionDenied(
                        "NOT_YOUR_SEAT",
                        f"A player records only for their own seats; this move is "
                        f"{table.seat_name(mover)}'s.",
                        metadata={"seat": str(mover)},
                    )
            try:
                text = game.format(inner, state)
            except RulesError:
                # A move the game refuses to write down (each game checks a move's bounds
                # before formatting it) may also break a rule: let the rules say which. Any
                # other exception is a bug in the game, answered INTERNAL, not hidden here.
                folding.check_move(position, envelope)
                raise
            recorded = events_pb2.MoveRecorded(move=envelope, notation=text)
            return push(position, events, next_event(position, move_recorded=recorded))

        def moves(position: folding.Position, events: list[events_pb2.Event]) -> Any:
            if notation is None:
                assert move is not None
                chosen_seat = move.seat if move.HasField("seat") else seat
                return one_move(position, position.table.unwrap(move), chosen_seat, events)
            # A line may name its mover ("Cleo: take u g k"): checked against whose
            # decision it is, like `seat`, so a line meant for one player never lands on
            # another's turn.
            named, text = named_mover(notation, position.table.players)
            first_seat = seat
            if named is not None:
                if seat is not None and named != seat:
                    raise InvalidRequest(
                        "seat",
                        f"The line names {position.table.seat_name(named)} as the mover but "
                        f"the request's seat is {position.table.seat_name(seat)}.",
                    )
                check_named_mover(named, position.to_move(), position.table.players)
                first_seat = None if named == CHANCE else named
            # One line may stand for several moves (a game's shorthand for one table
            # event): each is read in the state the ones before it lead to, all are
            # recorded in one change or none is, and `seat` names the first one's mover.
            for index, line in enumerate(position.game.split(text, position.state)):
                if index and position.to_move() == TERMINAL:
                    raise GameOver("The game ended before the end of this line.")
                inner = position.game.parse(line, position.state)
                position = one_move(position, inner, first_seat if index == 0 else None, events)
            return position

        def build(head: Head) -> Built:
            events: list[events_pb2.Event] = []
            try:
                position = moves(head.position, events)
            except RulesError as refused:
                # Worded from what the caller may see (`tablelog.service.recording.refusals`).
                told = worded_for(viewer, head.position, refused, lambda seen: moves(seen, []))
                if told is refused:
                    raise
                raise told from None
            return events, deal_and_end(position, events, head.seed)

        asked = (
            fingerprint(
                "RecordMove",
                game_id,
                b"" if move is None else move.SerializeToString(deterministic=True),
                notation,
                seat,
                expected_version,
            )
            if request_id
            else ""
        )
        try:
            return await self.appender.change(
                game_id,
                build,
                expected_revision=expected_version,
                origin=Origin(actor, request_id, asked),
            )
        except StaleVersion as stale:
            if notation is not None:
                await self._refuse_a_typo(game_id, notation, stale)
            raise

    async def _refuse_a_typo(self, game_id: str, notation: str, stale: StaleVersion) -> None:
        """A recorder must not be told "stale" for a typo: text that reads as no move (in
        the game as it is now) is refused as a typo, saying the version moved too. Text
        that reads as a move, or only as several, is left to the stale refusal."""
        position = (await self.heads.load(game_id, fresh=False)).position
        try:
            first = position.game.split(notation, position.state)[0]
            position.game.parse(first, position.state)
        except AmbiguousNotation:
            return
        except NotationError as typo:
            raise TypoWhileStale(typo, stale) from stale
        except RulesError:
            return

    async def undo(
        self,
        game_id: str,
        *,
        expected_version: int,
        request_id: str,
        reason: str,
        actor: events_pb2.Actor,
    ) -> Outcome:
        check_length("reason", reason, MAX_REASON)

        def build(head: Head) -> Built:
            position = head.position
            events: list[events_pb2.Event] = []
            take_back = 1
            if position.table.mode == DEALT and position.status is folding.Status.IN_PROGRESS:
                # The server's chance moves go back together with the player's move before.
                take_back = 0
                for applied in position.applied or ():
                    take_back += 1
                    if not position.game.is_chance(position.table.unwrap(applied.move)):
                        break
                else:
                    raise HistoryError("NOTHING_TO_UNDO", "There is no player's move to take back.")
            for _ in range(take_back):
                last = position.applied.head.revision if position.applied else 0
                undone = events_pb2.MoveUndone(undone_revision=last, reason=reason)
                position = push(position, events, next_event(position, move_undone=undone))
            return events, position

        asked = fingerprint("UndoMove", game_id, expected_version, reason)
        return await self.appender.change(
            game_id,
            build,
            expected_revision=expected_version,
            origin=Origin(actor, request_id, asked),
        )

    async def redo(
        self, game_id: str, *, expected_version: int, request_id: str, actor: events_pb2.Actor
    ) -> Outcome:
        def build(head: Head) -> Built:
            position = head.position
            events: list[events_pb2.Event] = []
            while True:
                again = position.undone.head.revision if position.undone else 0
                redone = events_pb2.MoveRedone(redone_revision=again)
                position = push(position, events, next_event(position, move_redone=redone))
                following = position.undone
                if (
                    position.table.mode != DEALT
                    or following is None
                    or not position.game.is_chance(position.table.unwrap(following.head.move))
                ):
                    break
            return events, deal_and_end(position, events, head.seed)

        asked = fingerprint("RedoMove", game_id, expected_version)
        return await self.appender.change(
            game_id,
            build,
            expected_revision=expected_version,
            origin=Origin(actor, request_id, asked),
        )

    async def abandon(
        self,
        game_id: str,
        *,
        expected_version: int,
        request_id: str,
        reason: str,
        actor: events_pb2.Actor,
    ) -> Outcome:
        check_length("reason", reason, MAX_REASON)

        def build(head: Head) -> Built:
            position = head.position
            if position.status is not folding.Status.IN_PROGRESS:
                raise GameOver("The game is over already.")
            events: list[events_pb2.Event] = []
            body = events_pb2.GameAbandoned(reason=reason, seed=head.seed or b"")
            position = push(position, events, next_event(position, game_abandoned=body))
            return events, position

        asked = fingerprint("AbandonGame", game_id, expected_version, reason)
        return await self.appender.change(
            game_id,
            build,
            expected_revision=expected_version,
            origin=Origin(actor, request_id, asked),
        )

    async def delete_game(
        self, game_id: str, *, request_id: str, reason: str, actor: events_pb2.Actor
    ) -> Outcome:
        """The club's owner deletes the game (the role table lets no one else): a
        GameDeleted tombstone appended through the chain, whatever the game's status. The
        stream is kept and verifies; the status the tombstone gives (DELETED) takes the game
        out of its club's listing (`tablelog.service.store.game_index`) and memory (no
        outcome: `tablelog.service.memory.standings.outcome_of`), and `Appender.change`
        refuses every later change. Deleting a deleted game answers its tombstone again
        (idempotent, whoever asks and under whatever request id)."""
        check_length("reason", reason, MAX_REASON)

        def build(head: Head) -> Built:
            events: list[events_pb2.Event] = []
            body = events_pb2.GameDeleted(reason=reason)
            position = push(head.position, events, next_event(head.position, game_deleted=body))
            return events, position

        origin = Origin(actor, request_id, fingerprint("DeleteGame", game_id, reason))
        try:
            return await self.appender.change(game_id, build, expected_revision=None, origin=origin)
        except DeletedGame:
            head = await self.heads.load(game_id)
            tombstone = await self.appender.tombstone(head)
            return Outcome(head, (tombstone,), duplicate=True)

    async def annotate(
        self,
        game_id: str,
        *,
        revision: int,
        comment: str,
        glyph: str,
        request_id: str,
        actor: events_pb2.Actor,
        variation: events_pb2.Variation | None = None,
    ) -> Outcome:
        """`variation`: an alternative line instead of the annotated move, checked by the
        rules from the position before it (`tablelog.service.recording.variations`); at revision 1,
        the whole game, it replaces the first move. Given with revision 0, the annotation is pinned
        to the last move in effect when the line is checked."""
        check_length("comment", comment, MAX_COMMENT)
        if glyph not in GLYPHS:
            raise InvalidRequest(
                "glyph", f"A glyph is one of {' '.join(sorted(g for g in GLYPHS if g))}."
            )
        line = variation if variation is not None and variation.moves else None
        if not comment.strip() and not glyph and line is None:
            raise InvalidRequest(
                "comment", "An annotation needs a comment, a glyph or a variation."
            )
        annotation_id = secrets.token_hex(6)
        asked = fingerprint("AddAnnotation", game_id, revision, comment, glyph)
        if line is not None:
            asked = fingerprint(asked, line.SerializeToString(deterministic=True))

        # Read once, for the anchor's check and the variation's.
        events = (
            await self.heads.verified_events(game_id) if revision > 1 or line is not None else []
        )
        if revision > 1:
            check_anchor(events, revision)
        checked_line: events_pb2.Variation | None = None
        if line is not None:
            head = await self.heads.load(game_id)
            revision = revision or _last_move(head.position)
            if revision > head.revision:
                raise OutOfRange(
                    "REVISION_OUT_OF_RANGE",
                    f"Revision {revision} is beyond the game's head, revision {head.revision}.",
                    metadata={"head_revision": str(head.revision)},
                )
            checked_line = variations.checked(
                events,
                revision,
                line,
                variations.variation_viewer(head.position),
            )

        def build(head: Head) -> Built:
            anchor = revision or _last_move(head.position)
            if anchor > head.revision:
                raise OutOfRange(
                    "REVISION_OUT_OF_RANGE",
                    f"Revision {anchor} is beyond the game's head, revision {head.revision}.",
                    metadata={"head_revision": str(head.revision)},
                )
            note = events_pb2.AnnotationAdded(
                annotation_id=annotation_id,
                revision=anchor,
                comment=comment,
                glyph=glyph,
                variation=checked_line,
            )
            events: list[events_pb2.Event] = []
            position = push(head.position, events, next_event(head.position, annotation_added=note))
            return events, position

        return await self.appender.change(
            game_id, build, expected_revision=None, origin=Origin(actor, request_id, asked)
        )

    async def remove_annotation(
        self,
        game_id: str,
        *,
        annotation_id: str,
        request_id: str,
        actor: events_pb2.Actor,
        may_remove: Callable[[events_pb2.Actor], bool] | None = None,
    ) -> Outcome:
        """Atomic: the removal is appended at the very sequence its annotation was found
        live at, so of two concurrent removals the second finds the stream moved, looks
        again and is refused (ANNOTATION_NOT_FOUND). The stream is read once; looking
        again reads only the events appended since. `may_remove`, given an annotation's
        actor, says whether the caller may remove it (None: any)."""
        check_game_id(game_id)
        check_length("request_id", request_id, MAX_REQUEST_ID)
        origin = Origin(actor, request_id, fingerprint("RemoveAnnotation", game_id, annotation_id))
        events = await self.store.read(game_id)
        if not events:
            raise GameNotFound(game_id)
        notes = live_annotations(events)
        checked_at = events[-1].sequence
        for _attempt in range(APPEND_ATTEMPTS):
            if annotation_id not in notes:
                previous = await self.appender.previous(game_id, origin)
                if previous is not None:
                    return previous
                raise NotFound(
                    "ANNOTATION_NOT_FOUND",
                    f"Game {game_id} has no annotation {annotation_id!r}.",
                    metadata={"annotation_id": annotation_id},
                )
            if may_remove is not None and not may_remove(notes[annotation_id].actor):
                raise PermissionDenied(
                    "NOT_YOUR_ANNOTATION",
                    f"Annotation {annotation_id} is {notes[annotation_id].actor.user or 'someone'}"
                    "'s: you may remove only your own.",
                    metadata={"annotation_id": annotation_id},
                )

            def build(head: Head, checked_at: int = checked_at) -> Built:
                if head.sequence != checked_at:  # the stream moved since the check
                    raise _Recheck
                body = events_pb2.AnnotationRemoved(annotation_id=annotation_id)
                events: list[events_pb2.Event] = []
                position = push(
                    head.position, events, next_event(head.position, annotation_removed=body)
                )
                return events, position

            try:
                return await self.appender.change(
                    game_id, build, expected_revision=None, origin=origin
                )
            except _Recheck:
                newer = await self.store.read(game_id, checked_at)
                live_annotations(newer, notes)
                checked_at = newer[-1].sequence if newer else checked_at
                await self.heads.load(game_id)  # bring the cached head up to the stream
        raise SequenceMoved(game_id, 0, 0)

    async def import_game(
        self,
        events: Sequence[events_pb2.Event],
        request_id: str,
        actor: events_pb2.Actor,
        *,
        accept_unverified: bool = False,
        source: str = "",
        checked_moves: Sequence[folding.Applied] = (),
    ) -> Outcome:
        """A new game from exported events. The export's chain is checked first (each
        event's seal under a key trusted here, its link and numbering, from the event's
        own deterministic bytes): a broken one is refused with the line of the first bad
        event; one that cannot be verified here (an unknown key, unkeyed, or no hashes)
        is refused unless `accept_unverified`, and then marked unverified. Then every move
        is re-validated (`HistoryCheck`). The imported events keep their actors and times,
        are marked `imported` (by whom, when, from where, and everything the import
        changed, so the export can be given back byte for byte) and are sealed again under
        this server's key.

        `checked_moves`: the moves of `events` as the rules already applied them in this
        process (a text record just read, `tablelog.service.recording.records`), each taken as it is
        where it is that very move in that very position (`HistoryCheck.add`); never given for
        events from outside the process (ImportGame checks every move)."""
        check_length("request_id", request_id, MAX_REQUEST_ID)
        check_length("source", source, MAX_IMPORT_SOURCE)
        if not events:
            raise InvalidRequest("events", "Nothing to import.")
        if len(events) > MAX_IMPORT_EVENTS:
            raise InvalidRequest("events", f"At most {MAX_IMPORT_EVENTS} events per import.")
        if events[0].WhichOneof("body") == "game_created":
            check_components("events[0].game_created.components", events[0].game_created.components)
        game_id = new_game_id(request_id, actor.club)
        origin = Origin(actor, request_id)
        if request_id:
            origin = Origin(
                actor,
                request_id,
                fingerprint(
                    "ImportGame",
                    int(accept_unverified),
                    source,
                    *(event.SerializeToString(deterministic=True) for event in events),
                ),
            )
            previous = await self.appender.previous(game_id, origin)
            if previous is not None:
                return previous
        verified = self._check_exported_chain(events, accept_unverified)
        imported = events_pb2.Imported(
            by=actor,
            time=now(),
            source=source,
            original_game_id=events[0].game_created.game_id,
            verified=verified,
        )
        copies: list[events_pb2.Event] = []
        for event in events:
            copy = events_pb2.Event()
            copy.CopyFrom(event)
            copy.imported.CopyFrom(imported)
            copy.imported.original_hash = event.hash
            copy.imported.original_chain_key_id = event.chain_key_id
            copy.imported.original_prev_hash = event.prev_hash
            if event.HasField("imported"):
                copy.imported.original_imported.CopyFrom(event.imported)
                copy.imported.original_imported.SetInParent()
            for sealing in ("prev_hash", "hash", "chain_key_id"):
                copy.ClearField(sealing)
            copies.append(copy)
        if copies[0].WhichOneof("body") != "game_created":
            raise ImportRefused(
                "INVALID_HISTORY",
                "Event 1 (line 1 of its export): an imported game must start with GameCreated.",
                metadata={"rule": "NO_CREATION", "line": "1"},
            )
        copies[0].game_created.game_id = game_id
        # The game is the importer's club's; the exporting server's members are not ours.
        # What the import changes is kept in `imported`, so the export can be given back.
        marks = copies[0].imported
        marks.original_club = copies[0].game_created.club
        copies[0].game_created.club = actor.club
        if any(player.member_id for player in copies[0].game_created.players):
            marks.original_member_ids.extend(p.member_id for p in copies[0].game_created.players)
        for player in copies[0].game_created.players:
            player.member_id = ""
        if not copies[0].game_created.rules_version:  # exported before the field existed
            marks.rules_version_filled = True
            copies[0].game_created.rules_version = find_game(
                copies[0].game_created.game
            ).rules_version
        created = copies[0].game_created
        # Re-validates every move, the numbering, each stored notation, every undo/redo
        # and ending, and (dealt) the revealed seed and every outcome drawn from it.
        check = HistoryCheck(variations.variation_viewer)
        checked = {applied.revision: applied for applied in checked_moves}
        try:
            for event in copies:
                check.add(event, checked.get(event.revision))
            check.finish()
        except RulesError as exc:
            line = check.failed_at[0]
            found = refusal(exc)
            raise ImportRefused(
                found.reason,
                f"Event {line} (line {line} of its export): {found.message}",
                metadata={**found.metadata, "line": str(line)},
            ) from exc
        assert check.position is not None
        position = check.position
        if created.mode == DEALT and position.status is folding.Status.IN_PROGRESS:
            raise InvalidSetup(
                "DEALT_IN_PROGRESS",
                "A dealt game can be imported only once it has ended: its seed is secret.",
            )
        for event in copies:
            if not event.HasField("time"):
                event.imported.time_filled = True
                event.time.CopyFrom(now())
            if not event.actor.user:
                event.imported.actor_filled = True
                if event.HasField("actor"):
                    event.imported.original_actor.CopyFrom(event.actor)
                    event.imported.original_actor.SetInParent()
                event.actor.CopyFrom(actor)
        plan = Plan(game_id, None, tuple(copies), position, None, origin)
        return await self.appender.append(plan)

    def _check_exported_chain(
        self, events: Sequence[events_pb2.Event], accept_unverified: bool
    ) -> bool:
        """Whether the export's chain verifies under a key trusted here; refused when it is
        broken (at the line of its first bad event) or, unless `accept_unverified`, when it
        cannot be verified."""
        unverified: tuple[int, str] | None = None
        if not any(event.hash for event in events):
            unverified = (1, "it carries no hashes")
        else:
            walk = ChainWalk(self.store.chain, allow_unknown_keys=True)
            try:
                for event in events:
                    walk.exported(event)
            except ChainBroken as broken:
                raise ImportRefused(
                    "INVALID_HISTORY",
                    f"Event {broken.index} (line {broken.index} of its export): "
                    f"{broken.problem}; it was changed after it was exported.",
                    metadata={"rule": "BROKEN_CHAIN", "line": str(broken.index)},
                ) from None
            if walk.unverified_at:
                unverified = (
                    walk.unverified_at,
                    f"it is keyed with chain key {walk.unverified_key[:16]!r}, which this "
                    "server does not trust",
                )
            elif walk.unkeyed:
                unverified = (1, "it was recorded before chains were keyed (plain SHA-256)")
        if unverified is None:
            return True
        if not accept_unverified:
            line, why = unverified
            raise Unverifiable(
                "UNVERIFIED_HISTORY",
                f"Event {line} (line {line} of its export) cannot be verified here: {why}. "
                "Import it as unverified (accept_unverified; tablelog import "
                "--accept-unverified) to keep it marked so.",
                metadata={"line": str(line)},
            )
        return False
