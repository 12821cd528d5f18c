"""The gRPC servicer: thin. Each method bounds the request (`tablelog.service.bounds`), converts it,
calls the recorder, converts the answer; every refusal goes through the one table in
`tablelog.service.errors`."""

# ruff: noqa: N802  (the servicer's method names are the proto's CamelCase RPC names)

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import Any, TypeVar

import grpc
from grpc import aio

from tablelog.replay import fold as folding
from tablelog.replay.core import SPECTATOR
from tablelog.replay.picture import PHONE, WIDE
from tablelog.service import errors
from tablelog.service.access.authentication import GameClubs, Gate, current_caller
from tablelog.service.access.authorization import TABLELOG, Access, row
from tablelog.service.access.identity import Caller, Role
from tablelog.service.access.members import MemberStore
from tablelog.service.access.watch_rights import WatchRights
from tablelog.service.api.http_api import CallContext
from tablelog.service.bounds import check_request
from tablelog.service.limits import MAX_PAGE_SIZE, check_game_id, page_bounds, page_token
from tablelog.service.logs import get_logger, note
from tablelog.service.recording import records
from tablelog.service.recording.amending import KINDS
from tablelog.service.recording.appending import Outcome
from tablelog.service.recording.entitlement import entitled_viewer, viewer_for
from tablelog.service.recording.game_index import index_club
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.views import (
    annotation_of,
    snapshot,
    summarize,
    viewer_message,
)
from tablelog.service.recording.watching import WatchHub
from tablelog.service.store import GameNotFound
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc

Request = TypeVar("Request")
Response = TypeVar("Response")
Context = aio.ServicerContext[Any, Any]
DEFAULT_HEARTBEAT = 15
MAX_HEARTBEAT = 300
log = get_logger("tablelog.service")


def actor_of(context: Context) -> events_pb2.Actor:
    """Who is calling: the member the gate authenticated
    (`tablelog.service.access.authentication`)."""
    return current_caller().actor()


async def refuse(context: Context, error: Exception) -> None:
    await context.abort_with_status(errors.to_status(errors.refusal(error)))


async def fault(context: Context, method: str) -> None:
    """A fault of the server's own: the traceback goes to the log, the client gets INTERNAL
    with reason INTERNAL and nothing of the internals."""
    log.error("unexpected error", method=method, exc_info=True)
    await context.abort_with_status(errors.to_status(errors.INTERNAL))


def answer_never_changes(context: Context) -> None:
    """Lets the HTTP port tell browsers to keep this answer for good (`CallContext`'s
    `answer_never_changes`); nothing on the gRPC port, which has no HTTP caches."""
    if isinstance(context, CallContext):
        context.answer_never_changes()


def before_append(context: Context) -> None:
    """A change whose caller has given up is not appended (its deadline passed)."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise DeadlineExceeded


class DeadlineExceeded(Exception):
    pass


CHANGES = frozenset(
    {
        "CreateGame",
        "RecordMove",
        "UndoMove",
        "RedoMove",
        "AmendMove",
        "AddAnnotation",
        "RemoveAnnotation",
        "AbandonGame",
        "DeleteGame",
        "ImportGame",
        "ImportRecord",
    }
)
"""The methods that append to a game (the readers step aside for them)."""


def unary(
    method: Callable[[Any, Request, Context], Awaitable[Response]],
) -> Callable[[Any, Request, Context], Awaitable[Response]]:
    # A change is served before the readers' next steps (`tablelog.service.recording.priority`).
    first = method.__name__ in CHANGES

    @functools.wraps(method)
    async def wrapper(self: Any, request: Request, context: Context) -> Response:
        try:
            check_request(request)  # type: ignore[arg-type]
            if first:
                with self.recorder.changes.change():
                    return await method(self, request, context)
            return await method(self, request, context)
        except errors.MAPPED as exc:
            await refuse(context, exc)
        except DeadlineExceeded:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "The deadline has passed.")
        except aio.AbortError:
            raise
        except Exception:
            await fault(context, method.__name__)
        raise AssertionError("abort returned")  # pragma: no cover

    return wrapper


def streaming(
    method: Callable[[Any, Request, Context], AsyncIterator[Response]],
) -> Callable[[Any, Request, Context], AsyncIterator[Response]]:
    @functools.wraps(method)
    async def wrapper(self: Any, request: Request, context: Context) -> AsyncIterator[Response]:
        try:
            check_request(request)  # type: ignore[arg-type]
            async for item in method(self, request, context):
                yield item
        except errors.MAPPED as exc:
            await refuse(context, exc)
        except aio.AbortError:
            raise
        except Exception:
            await fault(context, method.__name__)

    return wrapper


def _outcome(outcome: Outcome) -> service_pb2.GameSummary:
    note(game_id=outcome.head.game_id, revision=outcome.head.revision)
    return outcome.game()


def picture_layout(layout: service_pb2.PictureLayout.ValueType) -> str:
    """The games' name of a requested picture layout (`tablelog.replay.picture.LAYOUTS`).
    A value the schema does not define is refused, INVALID_ARGUMENT, before anything is read
    (an open enum keeps it; drawn as the wide picture, a past revision's answer would be
    kept for good under an address no client means)."""
    if layout == service_pb2.PICTURE_LAYOUT_PHONE:
        return PHONE
    if layout == service_pb2.PICTURE_LAYOUT_UNSPECIFIED:
        return WIDE
    raise errors.InvalidRequest(
        "picture_layout", f"picture_layout {layout} is no layout: PHONE, or unset for wide."
    )


def _owns_only(rpc: str, caller: Caller) -> bool:
    """Whether the table lets the caller call `rpc` only on what is their own."""
    return row(_PATHS[rpc]).access(caller.role) is Access.OWN


_PATHS = {rpc: f"/{TABLELOG}/{rpc}" for rpc in ("RecordMove", "RemoveAnnotation")}


class TablelogServicer(service_pb2_grpc.TablelogServiceServicer):
    def __init__(
        self,
        recorder: Recorder,
        watching: WatchHub | None = None,
        members: MemberStore | None = None,
        games: GameClubs | None = None,
        gate: Gate | None = None,
    ) -> None:
        self.gate = gate
        """Re-checks an open watch's caller (`tablelog.service.access.watch_rights`); None:
        never."""
        self.charge: Callable[[str, Context, int], None] | None = None
        """Counts a call's extra work against the caller's rate (`Admission.charge`)."""
        self.recorder = recorder
        self.watching = watching or WatchHub(
            recorder.store, heads=recorder.heads, changes=recorder.changes
        )
        self.members = members
        self.games = games

    async def _check_seat_members(self, request: service_pb2.CreateGameRequest) -> None:
        """Every member a new game's seat is bound to is a member of the caller's club."""
        bound = [p.member_id for p in request.players if p.member_id]
        if not bound:
            return
        if self.members is None:
            raise RuntimeError("seats bound to members need the member store")
        club_id = current_caller().club_id
        for member_id in bound:
            await self.members.member(club_id, member_id)

    async def _own_seats(self, game_id: str, caller: Caller) -> set[int]:
        """The seats of a game bound to the caller (CreateGame's players, then BindSeat)."""
        if not caller.club.players_may_record:
            raise errors.PermissionDenied(
                "PLAYERS_MAY_NOT_RECORD",
                "This club lets only recorders record moves (an owner can allow players "
                "to record their own seats: tablelog club --players-may-record).",
                metadata={"role": caller.role.value, "rpc": "RecordMove"},
            )
        head = await self.recorder.load(game_id, fresh=False)
        return await self._bound_seats(game_id, head.position, caller)

    async def _bound_seats(
        self, game_id: str, position: folding.Position, caller: Caller
    ) -> set[int]:
        """The seats of a game bound to the caller (CreateGame's players, then BindSeat)."""
        if not caller.member_id:
            return set()  # a link token is no one's seat
        if self.members is None:
            raise RuntimeError("a player's seats need the member store")
        seats = {
            seat: player.member_id for seat, player in enumerate(position.table.created.players)
        }
        seats.update(await self.members.seat_bindings(game_id))
        return {seat for seat, member in seats.items() if member == caller.member_id}

    async def _shown(
        self, outcome: Outcome, caller: Caller, seats: Collection[int] = ()
    ) -> Sequence[events_pb2.Event]:
        """A change's events as its caller may see them: the viewer its role and `seats`
        (the seats of a player recording for them) entitle it to at the game's new head,
        as the reads decide it (a recorder gets the spectator's view)."""
        viewer = entitled_viewer(outcome.head.position, caller.role, seats, None)
        return await self.recorder.shown_change(outcome, viewer)

    async def _viewer(self, game_id: str, asked: service_pb2.Viewer | None) -> service_pb2.Viewer:
        """The view this caller gets of a game: what its role and bound seats entitle it to
        (`tablelog.service.recording.entitlement`), the most of it when it asks for nothing, refused
        (VIEW_NOT_ALLOWED) when it asks for more. Never what it merely asks for."""
        check_game_id(game_id)
        caller = current_caller()
        head = await self.recorder.load(game_id, fresh=False)
        seats = (
            await self._bound_seats(game_id, head.position, caller)
            if caller.role is Role.PLAYER
            else set()
        )
        role = caller.role if caller.member_id else Role.SPECTATOR  # a link token reads
        return viewer_message(entitled_viewer(head.position, role, seats, asked))

    @unary
    async def ListGameTypes(
        self, request: service_pb2.ListGameTypesRequest, context: Context
    ) -> service_pb2.ListGameTypesResponse:
        return service_pb2.ListGameTypesResponse(games=self.recorder.game_types())

    @unary
    async def CreateGame(
        self, request: service_pb2.CreateGameRequest, context: Context
    ) -> service_pb2.CreateGameResponse:
        before_append(context)
        await self._check_seat_members(request)
        outcome = await self.recorder.create_game(request, actor_of(context))
        if self.games is not None:
            # The club the game's own history names, never the caller's (a retry answers
            # the game it made; issue 23: learning the caller's club here once moved a game).
            self.games.learn(outcome.head.game_id, index_club(outcome.head.position.table.created))
        return service_pb2.CreateGameResponse(
            game=_outcome(outcome), receipt=self.recorder.receipt(outcome)
        )

    @unary
    async def GetGame(
        self, request: service_pb2.GetGameRequest, context: Context
    ) -> service_pb2.GetGameResponse:
        head = await self.recorder.load(request.game_id)
        note(revision=head.revision)
        deleted = head.position.status is folding.Status.DELETED
        tombstone = await self.recorder.appender.tombstone(head) if deleted else None
        return service_pb2.GetGameResponse(game=summarize(head, tombstone))

    @unary
    async def ListGames(
        self, request: service_pb2.ListGamesRequest, context: Context
    ) -> service_pb2.ListGamesResponse:
        games, token = await self.recorder.list_games(
            request.game,
            request.status,
            request.page_size,
            request.page_token,
            current_caller().club_id,
            request.player,
        )
        return service_pb2.ListGamesResponse(games=games, next_page_token=token)

    @unary
    async def RecordMove(
        self, request: service_pb2.RecordMoveRequest, context: Context
    ) -> service_pb2.RecordMoveResponse:
        before_append(context)
        which = request.WhichOneof("input")
        caller = current_caller()
        seats = (
            await self._own_seats(request.game_id, caller)
            if _owns_only("RecordMove", caller)
            else None
        )
        outcome = await self.recorder.record_move(
            request.game_id,
            move=request.move if which == "move" else None,
            notation=request.notation if which == "notation" else None,
            seat=request.seat if request.HasField("seat") else None,
            expected_version=request.expected_version,
            request_id=request.request_id,
            actor=caller.actor(),
            seats=seats,
            viewer=viewer_for(caller.role, seats or (), revealed=False),
        )
        # The events as the caller may see them, and what each takes by place only (the
        # card of a `buy 1.3`), judged for the same viewer (`Reads.change_details`).
        shown = entitled_viewer(outcome.head.position, caller.role, seats or (), None)
        response = service_pb2.RecordMoveResponse(
            game=_outcome(outcome),
            events=await self.recorder.shown_change(outcome, shown),
            receipt=self.recorder.receipt(outcome),
            details=await self.recorder.change_details(outcome, shown),
        )
        if request.include_state:
            response.state.CopyFrom(snapshot(outcome.head.position, SPECTATOR))
        return response

    @unary
    async def UndoMove(
        self, request: service_pb2.UndoMoveRequest, context: Context
    ) -> service_pb2.UndoMoveResponse:
        before_append(context)
        outcome = await self.recorder.undo(
            request.game_id,
            expected_version=request.expected_version,
            request_id=request.request_id,
            reason=request.reason,
            actor=actor_of(context),
        )
        return service_pb2.UndoMoveResponse(
            game=_outcome(outcome),
            events=await self._shown(outcome, current_caller()),
            receipt=self.recorder.receipt(outcome),
        )

    @unary
    async def RedoMove(
        self, request: service_pb2.RedoMoveRequest, context: Context
    ) -> service_pb2.RedoMoveResponse:
        before_append(context)
        outcome = await self.recorder.redo(
            request.game_id,
            expected_version=request.expected_version,
            request_id=request.request_id,
            actor=actor_of(context),
        )
        return service_pb2.RedoMoveResponse(
            game=_outcome(outcome),
            events=await self._shown(outcome, current_caller()),
            receipt=self.recorder.receipt(outcome),
        )

    @unary
    async def AmendMove(
        self, request: service_pb2.AmendMoveRequest, context: Context
    ) -> service_pb2.AmendMoveResponse:
        before_append(context)
        change = request.WhichOneof("change") or ""
        new = getattr(request, change) if change in ("replace_move", "insert_move") else None
        which = new.WhichOneof("input") if new is not None else None
        outcome = await self.recorder.amend_move(
            request.game_id,
            revision=request.revision,
            kind=KINDS.get(change, 0),
            move=new.move if new is not None and which == "move" else None,
            notation=new.notation if new is not None and which == "notation" else None,
            seat=new.seat if new is not None and new.HasField("seat") else None,
            expected_version=request.expected_version,
            request_id=request.request_id,
            reason=request.reason,
            drop_tail=request.drop_tail,
            actor=actor_of(context),
            viewer=await self._viewer(request.game_id, None),
        )
        return service_pb2.AmendMoveResponse(
            game=_outcome(outcome),
            events=await self._shown(outcome, current_caller()),
            receipt=self.recorder.receipt(outcome),
            dropped_moves=outcome.events[0].move_amended.dropped_moves,
        )

    @unary
    async def AbandonGame(
        self, request: service_pb2.AbandonGameRequest, context: Context
    ) -> service_pb2.AbandonGameResponse:
        before_append(context)
        outcome = await self.recorder.abandon(
            request.game_id,
            expected_version=request.expected_version,
            request_id=request.request_id,
            reason=request.reason,
            actor=actor_of(context),
        )
        return service_pb2.AbandonGameResponse(
            game=_outcome(outcome), receipt=self.recorder.receipt(outcome)
        )

    @unary
    async def DeleteGame(
        self, request: service_pb2.DeleteGameRequest, context: Context
    ) -> service_pb2.DeleteGameResponse:
        before_append(context)
        outcome = await self.recorder.delete_game(
            request.game_id,
            request_id=request.request_id,
            reason=request.reason,
            actor=actor_of(context),
        )
        return service_pb2.DeleteGameResponse(
            game=_outcome(outcome), receipt=self.recorder.receipt(outcome)
        )

    @unary
    async def GetState(
        self, request: service_pb2.GetStateRequest, context: Context
    ) -> service_pb2.GetStateResponse:
        layout = picture_layout(request.picture_layout)
        asked = request.viewer if request.HasField("viewer") else None
        decided = await self._viewer(request.game_id, asked)
        state = await self.recorder.state(
            request.game_id, request.revision, decided, drawn=request.picture, layout=layout
        )
        note(revision=state.revision)
        if asked is not None and asked.WhichOneof("kind") is not None and request.revision:
            # A past revision seen by a viewer the request names is a function of the request
            # alone: the events up to it are never rewritten (undo and amendments are later
            # events), and a named viewer is granted as asked or refused, whatever the game's
            # end reveals later (an unnamed one is not: it can grow to the full view). The
            # head is not: a move recorded after this read is read from it.
            head = await self.recorder.load(request.game_id, fresh=False)
            if request.revision < head.revision:
                answer_never_changes(context)
        return service_pb2.GetStateResponse(state=state)

    @unary
    async def ListLegalMoves(
        self, request: service_pb2.ListLegalMovesRequest, context: Context
    ) -> service_pb2.ListLegalMovesResponse:
        return await self.recorder.legal_moves(
            request.game_id,
            request.revision,
            request.page_size,
            request.page_token,
            await self._viewer(
                request.game_id, request.viewer if request.HasField("viewer") else None
            ),
        )

    @streaming
    async def ReplayGame(
        self, request: service_pb2.ReplayGameRequest, context: Context
    ) -> AsyncIterator[service_pb2.ReplayGameResponse]:
        layout = picture_layout(request.picture_layout)
        viewer = await self._viewer(
            request.game_id, request.viewer if request.HasField("viewer") else None
        )
        steps = (
            self.recorder.replay_variation(
                request.game_id,
                request.variation,
                request.from_revision,
                viewer,
                drawn=request.picture,
                layout=layout,
            )
            if request.HasField("variation")
            else self.recorder.replay(
                request.game_id,
                request.from_revision,
                request.to_revision,
                viewer,
                drawn=request.picture,
                layout=layout,
            )
        )
        async for item in steps:
            yield item

    @streaming
    async def WatchGame(  # type: ignore[override]  # yields the messages' bytes, see below
        self, request: service_pb2.WatchGameRequest, context: Context
    ) -> AsyncIterator[bytes]:
        """Yields each message serialized: an update is rendered once per viewer kind and
        the same bytes go to every watcher of that kind (see
        `tablelog.service.recording.watching`)."""
        heartbeat = float(request.heartbeat_seconds or DEFAULT_HEARTBEAT)
        heartbeat = min(heartbeat, MAX_HEARTBEAT)
        asked = request.viewer if request.HasField("viewer") else None
        viewer = await self._viewer(request.game_id, asked)
        # Rights are checked again before each delivery (`tablelog.service.access.watch_rights`).
        rights = WatchRights(
            self.gate, request, context, lambda: self._viewer(request.game_id, asked), viewer
        )
        from_revision = request.from_revision
        while True:
            async with self.watching.watch(request.game_id, from_revision, viewer) as watcher:
                note(revision=watcher.revision)
                switched: int | None = None
                if watcher.has_backlog():
                    # A catch-up (every watcher of a long game opening at once) waits for a
                    # turn, holds it while the server works for it, not while its reader is
                    # slow to take a message, and lets the changes in flight go first.
                    async with self.watching.catch_ups.turn() as catch_up:
                        for earlier in watcher.backlog():
                            await catch_up.working()
                            await self.watching.changes.first()
                            if await rights.current() != viewer:
                                switched = earlier.event.revision
                                break
                            catch_up.sending()
                            yield watcher.rendered(earlier)
                while switched is None:
                    remaining = context.time_remaining()
                    wait = heartbeat if remaining is None else max(0.001, min(heartbeat, remaining))
                    update = await watcher.next(wait)
                    allowed = await rights.current()
                    if update is not None:
                        if allowed != viewer:
                            switched = update.event.revision
                            break
                        yield watcher.rendered(update)
                        continue
                    if remaining is not None and remaining <= wait:
                        await context.abort(
                            grpc.StatusCode.DEADLINE_EXCEEDED, "The watch reached its deadline."
                        )
                    if allowed != viewer:
                        switched = watcher.revision + 1
                        break
                    yield service_pb2.WatchGameResponse(
                        heartbeat=service_pb2.Heartbeat(head_revision=watcher.revision, time=_now())
                    ).SerializeToString()
            # Entitled to another view now: watch on in it from what was not delivered.
            viewer, from_revision = rights.viewer, switched or 0

    @unary
    async def AddAnnotation(
        self, request: service_pb2.AddAnnotationRequest, context: Context
    ) -> service_pb2.AddAnnotationResponse:
        before_append(context)
        outcome = await self.recorder.annotate(
            request.game_id,
            revision=request.revision,
            comment=request.comment,
            glyph=request.glyph,
            request_id=request.request_id,
            actor=actor_of(context),
            variation=request.variation if request.HasField("variation") else None,
        )
        _outcome(outcome)
        return service_pb2.AddAnnotationResponse(
            annotation=annotation_of(outcome.events[-1]),
            receipt=self.recorder.receipt(outcome),
        )

    @unary
    async def RemoveAnnotation(
        self, request: service_pb2.RemoveAnnotationRequest, context: Context
    ) -> service_pb2.RemoveAnnotationResponse:
        before_append(context)
        caller = current_caller()
        outcome = await self.recorder.remove_annotation(
            request.game_id,
            annotation_id=request.annotation_id,
            request_id=request.request_id,
            actor=caller.actor(),
            may_remove=caller.owns if _owns_only("RemoveAnnotation", caller) else None,
        )
        _outcome(outcome)
        return service_pb2.RemoveAnnotationResponse(receipt=self.recorder.receipt(outcome))

    @unary
    async def ListAnnotations(
        self, request: service_pb2.ListAnnotationsRequest, context: Context
    ) -> service_pb2.ListAnnotationsResponse:
        offset, size = page_bounds(request.page_size, request.page_token)
        notes = await self.recorder.annotations(request.game_id)
        token = page_token(offset + size) if offset + size < len(notes) else ""
        return service_pb2.ListAnnotationsResponse(
            annotations=notes[offset : offset + size], next_page_token=token
        )

    @unary
    async def GetAuditLog(
        self, request: service_pb2.GetAuditLogRequest, context: Context
    ) -> service_pb2.GetAuditLogResponse:
        offset, size = page_bounds(request.page_size, request.page_token)
        viewer = await self._viewer(
            request.game_id, request.viewer if request.HasField("viewer") else None
        )
        entries = await self.recorder.audit(request.game_id, viewer)
        token = page_token(offset + size) if offset + size < len(entries) else ""
        return service_pb2.GetAuditLogResponse(
            entries=entries[offset : offset + size], next_page_token=token
        )

    @unary
    async def VerifyGame(
        self, request: service_pb2.VerifyGameRequest, context: Context
    ) -> service_pb2.VerifyGameResponse:
        check_game_id(request.game_id)
        result = await self.recorder.verify(request.game_id, request.receipts)
        note(ok=result.ok, first_bad_revision=result.first_bad_revision or None)
        return result

    @unary
    async def ImportGame(
        self, request: service_pb2.ImportGameRequest, context: Context
    ) -> service_pb2.ImportGameResponse:
        before_append(context)
        outcome = await self.recorder.import_game(
            request.events,
            request.request_id,
            actor_of(context),
            accept_unverified=request.accept_unverified,
            source=request.source,
        )
        return service_pb2.ImportGameResponse(
            game=_outcome(outcome), receipt=self.recorder.receipt(outcome)
        )

    async def _in_scope(self, game_id: str) -> None:
        """NOT_FOUND for a game a request names in a list (the gate scopes only a request's
        own `game_id`): one of another club, or for a link token any but its own."""
        check_game_id(game_id)
        caller = current_caller()
        if (caller.link and game_id != caller.game_id) or (
            self.games is not None and not await self.games.in_club(game_id, caller.club_id)
        ):
            raise GameNotFound(game_id)

    async def _exported_ids(self, request: service_pb2.ExportRecordRequest) -> list[str]:
        """The games an export names, or that its filter selects in the caller's club."""
        caller = current_caller()
        if request.game_ids:
            return list(request.game_ids)
        if caller.link:
            return [caller.game_id]
        ids: list[str] = []
        token = ""
        while True:
            games, token = await self.recorder.list_games(
                request.game, request.status, MAX_PAGE_SIZE, token, caller.club_id
            )
            ids += [game.game_id for game in games]
            records.check_export_count(len(ids))
            if not token:
                return ids

    @unary
    async def ExportRecord(
        self, request: service_pb2.ExportRecordRequest, context: Context
    ) -> service_pb2.ExportRecordResponse:
        # Each game once, and each counted against the caller's rate: one call naming a
        # game a thousand times cost a second of the server's time.
        ids = list(dict.fromkeys(await self._exported_ids(request)))
        if self.charge is not None:
            self.charge("ExportRecord", context, len(ids) - 1)
        asked = request.viewer if request.HasField("viewer") else None
        games = []
        for game_id in ids:
            await self.recorder.changes.first()  # a long export lets changes go first
            await self._in_scope(game_id)
            viewer = await self._viewer(game_id, asked)
            games.append(await records.game_record(self.recorder, game_id, viewer))
        return service_pb2.ExportRecordResponse(text=records.written(games), games=len(games))

    @unary
    async def ImportRecord(
        self, request: service_pb2.ImportRecordRequest, context: Context
    ) -> service_pb2.ImportRecordResponse:
        before_append(context)
        games = records.read_record(request.text, request.request_id, request.source)
        outcomes = await records.import_record(
            self.recorder, games, request.request_id, actor_of(context), request.source
        )
        if self.games is not None:
            for outcome in outcomes:
                self.games.learn(
                    outcome.head.game_id, index_club(outcome.head.position.table.created)
                )
        return service_pb2.ImportRecordResponse(games=[_outcome(o) for o in outcomes])


def _now() -> Any:
    from tablelog.service.recording.appending import now

    return now()


__all__ = ["GameNotFound", "TablelogServicer"]
