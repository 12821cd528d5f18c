"""The gRPC servicer: thin. Each method bounds the request (`service.bounds`), converts it,
calls the recorder, converts the answer; every refusal goes through the one table in
`service.errors`."""

# ruff: noqa: N802  (the servicer's method names are the proto's CamelCase RPC names)

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from grpc import aio

from replay.core import SPECTATOR
from service import errors
from service.amending import KINDS
from service.appending import Outcome
from service.bounds import check_request
from service.interceptors import note
from service.limits import check_game_id, page_bounds, page_token
from service.logs import get_logger
from service.recorder import Recorder
from service.store import GameNotFound
from service.views import snapshot, summarize, viewer_of
from service.watching import WatchHub
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc

Request = TypeVar("Request")
Response = TypeVar("Response")
Context = aio.ServicerContext[Any, Any]
DEFAULT_HEARTBEAT = 15
MAX_HEARTBEAT = 300
log = get_logger("tablelog.service")


def actor_of(context: Context) -> events_pb2.Actor:
    """Who is calling, as the client says (metadata x-tablelog-user/-club/-client)."""
    actor = events_pb2.Actor()
    for key, value in context.invocation_metadata() or ():
        if not isinstance(value, str):
            continue
        if key == "x-tablelog-user":
            actor.user = value[:100]
        elif key == "x-tablelog-club":
            actor.club = value[:100]
        elif key == "x-tablelog-client":
            actor.client = value[:100]
        elif key == "user-agent" and not actor.client:
            actor.client = value.split(" ")[0][:100]
    return actor


async def refuse(context: Context, error: Exception) -> None:
    await context.abort_with_status(errors.to_status(errors.refusal(error)))


async def fault(context: Context, method: str) -> None:
    """A fault of the server's own: the traceback goes to the log, the client gets INTERNAL
    with reason INTERNAL and nothing of the internals."""
    log.error("unexpected error", method=method, exc_info=True)
    await context.abort_with_status(errors.to_status(errors.INTERNAL))


def before_append(context: Context) -> None:
    """A change whose caller has given up is not appended (its deadline passed)."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise DeadlineExceeded


class DeadlineExceeded(Exception):
    pass


def unary(
    method: Callable[[Any, Request, Context], Awaitable[Response]],
) -> Callable[[Any, Request, Context], Awaitable[Response]]:
    @functools.wraps(method)
    async def wrapper(self: Any, request: Request, context: Context) -> Response:
        try:
            check_request(request)  # type: ignore[arg-type]
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


class TablelogServicer(service_pb2_grpc.TablelogServiceServicer):
    def __init__(self, recorder: Recorder, watching: WatchHub | None = None) -> None:
        self.recorder = recorder
        self.watching = watching or WatchHub(recorder.store)

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
        outcome = await self.recorder.create_game(request, actor_of(context))
        return service_pb2.CreateGameResponse(
            game=_outcome(outcome), receipt=self.recorder.receipt(outcome)
        )

    @unary
    async def GetGame(
        self, request: service_pb2.GetGameRequest, context: Context
    ) -> service_pb2.GetGameResponse:
        head = await self.recorder.load(request.game_id)
        note(revision=head.revision)
        return service_pb2.GetGameResponse(game=summarize(head))

    @unary
    async def ListGames(
        self, request: service_pb2.ListGamesRequest, context: Context
    ) -> service_pb2.ListGamesResponse:
        games, token = await self.recorder.list_games(
            request.game, request.status, request.page_size, request.page_token
        )
        return service_pb2.ListGamesResponse(games=games, next_page_token=token)

    @unary
    async def RecordMove(
        self, request: service_pb2.RecordMoveRequest, context: Context
    ) -> service_pb2.RecordMoveResponse:
        before_append(context)
        which = request.WhichOneof("input")
        outcome = await self.recorder.record_move(
            request.game_id,
            move=request.move if which == "move" else None,
            notation=request.notation if which == "notation" else None,
            seat=request.seat if request.HasField("seat") else None,
            expected_version=request.expected_version,
            request_id=request.request_id,
            actor=actor_of(context),
        )
        response = service_pb2.RecordMoveResponse(
            game=_outcome(outcome), events=outcome.events, receipt=self.recorder.receipt(outcome)
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
            game=_outcome(outcome), events=outcome.events, receipt=self.recorder.receipt(outcome)
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
            game=_outcome(outcome), events=outcome.events, receipt=self.recorder.receipt(outcome)
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
        )
        return service_pb2.AmendMoveResponse(
            game=_outcome(outcome),
            events=outcome.events,
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
    async def GetState(
        self, request: service_pb2.GetStateRequest, context: Context
    ) -> service_pb2.GetStateResponse:
        position = await self.recorder.position_at(request.game_id, request.revision)
        note(revision=position.revision)
        viewer = viewer_of(
            request.viewer if request.HasField("viewer") else None, position.table.players
        )
        return service_pb2.GetStateResponse(state=snapshot(position, viewer))

    @unary
    async def ListLegalMoves(
        self, request: service_pb2.ListLegalMovesRequest, context: Context
    ) -> service_pb2.ListLegalMovesResponse:
        return await self.recorder.legal_moves(
            request.game_id,
            request.revision,
            request.page_size,
            request.page_token,
            request.viewer if request.HasField("viewer") else None,
        )

    @streaming
    async def ReplayGame(
        self, request: service_pb2.ReplayGameRequest, context: Context
    ) -> AsyncIterator[service_pb2.ReplayGameResponse]:
        viewer = request.viewer if request.HasField("viewer") else None
        async for item in self.recorder.replay(
            request.game_id, request.from_revision, request.to_revision, viewer
        ):
            yield item

    @streaming
    async def WatchGame(  # type: ignore[override]  # yields the messages' bytes, see below
        self, request: service_pb2.WatchGameRequest, context: Context
    ) -> AsyncIterator[bytes]:
        """Yields each message serialized: an update is rendered once per viewer kind and
        the same bytes go to every watcher of that kind (see `service.watching`)."""
        heartbeat = float(request.heartbeat_seconds or DEFAULT_HEARTBEAT)
        heartbeat = min(heartbeat, MAX_HEARTBEAT)
        viewer = request.viewer if request.HasField("viewer") else None
        async with self.watching.watch(request.game_id, request.from_revision, viewer) as watcher:
            note(revision=watcher.revision)
            for earlier in watcher.backlog():
                yield watcher.rendered(earlier)
            while True:
                remaining = context.time_remaining()
                wait = heartbeat if remaining is None else max(0.001, min(heartbeat, remaining))
                update = await watcher.next(wait)
                if update is not None:
                    yield watcher.rendered(update)
                    continue
                if remaining is not None and remaining <= wait:
                    await context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED, "The watch reached its deadline."
                    )
                yield service_pb2.WatchGameResponse(
                    heartbeat=service_pb2.Heartbeat(head_revision=watcher.revision, time=_now())
                ).SerializeToString()

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
        )
        _outcome(outcome)
        event = outcome.events[-1]
        added = event.annotation_added
        return service_pb2.AddAnnotationResponse(
            annotation=service_pb2.Annotation(
                annotation_id=added.annotation_id,
                revision=added.revision,
                comment=added.comment,
                glyph=added.glyph,
                actor=event.actor,
                time=event.time,
            ),
            receipt=self.recorder.receipt(outcome),
        )

    @unary
    async def RemoveAnnotation(
        self, request: service_pb2.RemoveAnnotationRequest, context: Context
    ) -> service_pb2.RemoveAnnotationResponse:
        before_append(context)
        outcome = await self.recorder.remove_annotation(
            request.game_id,
            annotation_id=request.annotation_id,
            request_id=request.request_id,
            actor=actor_of(context),
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
        viewer = request.viewer if request.HasField("viewer") else None
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


def _now() -> Any:
    from service.appending import now

    return now()


__all__ = ["GameNotFound", "TablelogServicer"]
