"""The SDK: one `Client` per server address, one method per RPC, errors as `TablelogError`
with the server's stable reason and details.

Every change carries a fresh request id (an idempotency key); the client retries a change
that failed with UNAVAILABLE using the same id, so it is never stored twice."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import grpc

# googleapis-common-protos publishes no type stubs.
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.v1 import (
    clubs_pb2,
    clubs_pb2_grpc,
    events_pb2,
    game_pb2,
    service_pb2,
    service_pb2_grpc,
    standings_pb2,
    standings_pb2_grpc,
)
from tablelog_client.credentials import default_server, resolve_token, stored_ca

DEFAULT_ADDRESS = "127.0.0.1:50051"
CLIENT_NAME = "tablelog-python/0.1"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
T = TypeVar("T")

MODES = {"table": game_pb2.MODE_TABLE, "dealt": game_pb2.MODE_DEALT}
STATUSES = {
    "in-progress": service_pb2.GAME_STATUS_IN_PROGRESS,
    "ended": service_pb2.GAME_STATUS_ENDED,
    "abandoned": service_pb2.GAME_STATUS_ABANDONED,
}


AMEND_CHANGES = {"replace": "replace_move", "insert": "insert_move", "delete": "delete_move"}
"""`Client.amend`'s changes and the AmendMoveRequest field each sets."""


VariationItems = Sequence["str | VariationItems"]
"""A variation as notation: each string a move, each list an alternative line to the move
before it (from the same position), nested to any depth:
`["take w u k", ["take w u g"], "buy 1.2"]`."""


def variation_of(items: VariationItems) -> events_pb2.Variation:
    """The Variation `items` stand for (see `VariationItems`)."""
    variation = events_pb2.Variation()
    for item in items:
        if isinstance(item, str):
            variation.moves.add(notation=item)
        elif not variation.moves:
            raise ValueError("an alternative line follows the move it replaces")
        else:
            variation.moves[-1].variations.append(variation_of(item))
    return variation


def variation_path(text: str) -> service_pb2.VariationPath:
    """ "ID" (an annotation's variation) or "ID/3.1/2.2" (the first alternative to its
    move 3, then the second alternative to move 2 of that line)."""
    annotation_id, _, rest = text.partition("/")
    line: list[int] = []
    for part in rest.split("/") if rest else ():
        move, dot, alternative = part.partition(".")
        if not (dot and move.isdigit() and alternative.isdigit()):
            raise ValueError(
                f"{text!r}: a variation's line is MOVE.ALTERNATIVE, nested with '/' "
                "(e.g. ID/3.1 or ID/3.1/2.2)"
            )
        line += [int(move), int(alternative)]
    return service_pb2.VariationPath(annotation_id=annotation_id, line=line)


def variation_words(variation: events_pb2.Variation) -> str:
    """A variation in one line, nested lines in parentheses after the move they replace:
    "take w u k (take w u g) buy 1.2"."""
    words: list[str] = []
    for move in variation.moves:
        words.append(move.notation + (f" {move.glyph}" if move.glyph else ""))
        words.extend(f"({variation_words(nested)})" for nested in move.variations)
    return " ".join(words)


class TablelogError(Exception):
    """A refusal from the server: gRPC code, stable reason (ILLEGAL_MOVE, STALE_VERSION, ...),
    metadata (rule, current_version, candidates ...) and field violations."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        metadata: dict[str, str] | None = None,
        violations: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.violations = list(violations)

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> TablelogError:
        call: Any = error
        code = call.code() if hasattr(call, "code") else grpc.StatusCode.UNKNOWN
        message = call.details() if hasattr(call, "details") else str(error)
        reason, metadata, violations = "", {}, []
        try:
            status = rpc_status.from_call(call)
        except (ValueError, AttributeError):
            status = None
        if status is not None:
            message = status.message or message
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason, metadata = info.reason, dict(info.metadata)
                elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    violations += [(v.field, v.description) for v in bad.field_violations]
        return cls(code, message or code.name, reason, metadata, violations)

    def __str__(self) -> str:
        return self.message

    @property
    def current_version(self) -> int | None:
        value = self.metadata.get("current_version")
        return int(value) if value else None


RESUMABLE_REASONS = frozenset({"WATCHER_TOO_SLOW"})
"""Refusals after which a watch is opened again at once (besides UNAVAILABLE)."""


def _resumable(error: TablelogError) -> bool:
    return error.code == grpc.StatusCode.UNAVAILABLE or error.reason in RESUMABLE_REASONS


def resolve_address(address: str | None = None) -> str:
    """The server to call: the one given, else $TABLELOG_ADDRESS, else the last one
    `tablelog login` kept a token for, else the local default."""
    return address or os.environ.get("TABLELOG_ADDRESS") or default_server() or DEFAULT_ADDRESS


def open_channel(address: str, ca: str | None = None) -> grpc.Channel:
    """A channel to `address`: TLS verified against the CA in the PEM file `ca`, else
    plaintext (the server allows that only on loopback unless told otherwise)."""
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # A name that resolves to several servers (a headless Kubernetes Service) gets a
        # connection to each and the calls spread over them, not all on the first.
        ("grpc.lb_policy_name", "round_robin"),
    ]
    if ca is None:
        return grpc.insecure_channel(address, options=options)
    try:
        with open(ca, "rb") as pem:
            roots = pem.read()
    except OSError as exc:
        raise TablelogError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"cannot read the CA file {ca}: {exc.strerror or exc}",
            "CA_UNREADABLE",
        ) from exc
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(roots), options=options)


class BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer <token>` to every call on a channel."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _with_token(self, details: Any) -> Any:
        return details._replace(metadata=[*(details.metadata or ()), self._header])

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)


class Client:
    """A connection to one tablelog server, as the member its token names (`token`, else
    found as `tablelog_client.credentials` says)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        client_name: str = CLIENT_NAME,
        ca: str | None = None,
    ) -> None:
        """`ca`: connect with TLS, trusting the server's certificate when this CA (a PEM
        file; for a self-signed server, its certificate) signed it (default: $TABLELOG_CA,
        else the CA `tablelog login --ca` kept for the address; without any, plaintext)."""
        self.address = resolve_address(address)
        self.timeout = timeout
        self.token = resolve_token(self.address, token)
        """The token sent and where it was found (None: none was, and the server will say
        TOKEN_MISSING)."""
        # The local owner's token goes only over its server's socket (`credentials`).
        target = self.token.target if self.token is not None and self.token.target else ""
        self._channel = (
            grpc.insecure_channel(target)
            if target
            else open_channel(
                self.address, ca or os.environ.get("TABLELOG_CA") or stored_ca(self.address)
            )
        )
        # On the channel, so that every call through `stub` and `clubs` carries it.
        calls: grpc.Channel = self._channel
        if self.token is not None:
            calls = grpc.intercept_channel(self._channel, BearerToken(self.token.value))
        self.stub = service_pb2_grpc.TablelogServiceStub(calls)
        self.clubs = clubs_pb2_grpc.ClubServiceStub(calls)
        self.operators = clubs_pb2_grpc.OperatorServiceStub(calls)
        self.standings_stub = standings_pb2_grpc.StandingsServiceStub(calls)
        self.metadata: tuple[tuple[str, str], ...] = (("x-tablelog-client", client_name),)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- plumbing

    def _call(self, method: Callable[..., T], request: Any, *, retry: bool = False) -> T:
        attempts = 3 if retry else 1
        for attempt in range(attempts):
            try:
                return method(request, timeout=self.timeout, metadata=self.metadata)
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                if code == grpc.StatusCode.UNAVAILABLE and attempt + 1 < attempts:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                raise TablelogError.from_rpc_error(exc) from None
        raise AssertionError("unreachable")

    def _stream(self, method: Callable[..., Any], request: Any, timeout: float | None) -> Any:
        try:
            yield from method(request, timeout=timeout, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise TablelogError.from_rpc_error(exc) from None

    @staticmethod
    def request_id() -> str:
        return uuid.uuid4().hex

    def _version(self, game_id: str, expected_version: int | None) -> int:
        """The version to expect: the caller's, else the game's current one (GetGame)."""
        if expected_version is not None:
            return expected_version
        return int(self.get_game(game_id).version)

    # -------------------------------------------------------------- games

    def game_types(self) -> list[game_pb2.GameInfo]:
        response = self._call(self.stub.ListGameTypes, service_pb2.ListGameTypesRequest())
        return list(response.games)

    def create_game(
        self,
        game: str,
        players: Sequence[str],
        *,
        mode: str = "table",
        title: str = "",
        options: game_pb2.GameOptions | None = None,
        components: Sequence[game_pb2.ComponentFile] = (),
        request_id: str | None = None,
        seat_members: Sequence[str] = (),
        record_tags: Sequence[tuple[str, str]] = (),
    ) -> service_pb2.GameSummary:
        """Create a game; `components` replace the game's default component files of the
        same names (a transcribed board, a corrected deck); `seat_members` are the member
        ids of the club members playing the seats, in seat order (a player records for
        their own seats); `record_tags` the text record's tags, (name, value) in order
        (`("Event", "Thursday club night")`)."""
        if len(seat_members) > len(players):
            raise ValueError("more seat members than players")
        bound = [*seat_members, *[""] * (len(players) - len(seat_members))]
        request = service_pb2.CreateGameRequest(
            game=game,
            players=[
                events_pb2.Player(name=p, member_id=m) for p, m in zip(players, bound, strict=True)
            ],
            mode=MODES[mode],
            title=title,
            options=options,
            components=list(components),
            request_id=request_id or self.request_id(),
            record_tags=[events_pb2.RecordTag(name=n, value=v) for n, v in record_tags],
        )
        return self._call(self.stub.CreateGame, request, retry=True).game

    def get_game(self, game_id: str) -> service_pb2.GameSummary:
        return self._call(self.stub.GetGame, service_pb2.GetGameRequest(game_id=game_id)).game

    def list_games(
        self, game: str = "", status: str = "", page_size: int = 100, player: str = ""
    ) -> Iterator[service_pb2.GameSummary]:
        """The games newest first; `player`: only those where a seat has that name (whole
        names, ignoring case and surrounding whitespace, as ListGamesRequest.player says)."""
        token = ""
        while True:
            response = self._call(
                self.stub.ListGames,
                service_pb2.ListGamesRequest(
                    game=game,
                    status=STATUSES.get(status, service_pb2.GAME_STATUS_UNSPECIFIED),
                    page_size=page_size,
                    page_token=token,
                    player=player,
                ),
            )
            yield from response.games
            token = response.next_page_token
            if not token:
                return

    # -------------------------------------------------------------- changes

    def record(
        self,
        game_id: str,
        notation: str | None = None,
        *,
        move: game_pb2.Move | None = None,
        expected_version: int | None = None,
        seat: int | None = None,
        request_id: str | None = None,
    ) -> service_pb2.RecordMoveResponse:
        """Record a move by notation (or typed). Without `expected_version` the current
        version is fetched first (GetGame)."""
        request = service_pb2.RecordMoveRequest(
            game_id=game_id,
            expected_version=self._version(game_id, expected_version),
            request_id=request_id or self.request_id(),
            seat=seat,
        )
        if move is not None:
            request.move.CopyFrom(move)
        else:
            request.notation = notation or ""
        return self._call(self.stub.RecordMove, request, retry=True)

    def undo(
        self,
        game_id: str,
        *,
        expected_version: int | None = None,
        reason: str = "",
        request_id: str | None = None,
    ) -> service_pb2.UndoMoveResponse:
        request = service_pb2.UndoMoveRequest(
            game_id=game_id,
            expected_version=self._version(game_id, expected_version),
            request_id=request_id or self.request_id(),
            reason=reason,
        )
        return self._call(self.stub.UndoMove, request, retry=True)

    def redo(
        self, game_id: str, *, expected_version: int | None = None, request_id: str | None = None
    ) -> service_pb2.RedoMoveResponse:
        request = service_pb2.RedoMoveRequest(
            game_id=game_id,
            expected_version=self._version(game_id, expected_version),
            request_id=request_id or self.request_id(),
        )
        return self._call(self.stub.RedoMove, request, retry=True)

    def amend(
        self,
        game_id: str,
        revision: int,
        notation: str | None = None,
        *,
        change: str = "replace",
        move: game_pb2.Move | None = None,
        seat: int | None = None,
        reason: str = "",
        drop_tail: bool = False,
        expected_version: int | None = None,
        request_id: str | None = None,
    ) -> service_pb2.AmendMoveResponse:
        """Correct the move recorded at `revision`: `change` "replace" (by `notation` or
        the typed `move`), "insert" (that move before it) or "delete". Refused with
        AMEND_BREAKS_LATER_MOVE, naming the first later move that no longer applies,
        unless `drop_tail` (then that move and the ones after it are dropped)."""
        if change not in AMEND_CHANGES:
            raise ValueError(f"change is one of {', '.join(AMEND_CHANGES)}, not {change!r}")
        request = service_pb2.AmendMoveRequest(
            game_id=game_id,
            revision=revision,
            expected_version=self._version(game_id, expected_version),
            request_id=request_id or self.request_id(),
            reason=reason,
            drop_tail=drop_tail,
        )
        if change == "delete":
            request.delete_move.SetInParent()
        else:
            new = getattr(request, AMEND_CHANGES[change])
            if move is not None:
                new.move.CopyFrom(move)
            else:
                new.notation = notation or ""
            if seat is not None:
                new.seat = seat
        return self._call(self.stub.AmendMove, request, retry=True)

    def abandon(
        self, game_id: str, *, expected_version: int | None = None, reason: str = ""
    ) -> service_pb2.GameSummary:
        request = service_pb2.AbandonGameRequest(
            game_id=game_id,
            expected_version=self._version(game_id, expected_version),
            request_id=self.request_id(),
            reason=reason,
        )
        return self._call(self.stub.AbandonGame, request, retry=True).game

    def delete_game(self, game_id: str, *, reason: str = "") -> service_pb2.GameSummary:
        """The club's owner deletes the game: kept and verifiable, out of the listings and
        the club's memory, closed to every change (deleting it again answers the same)."""
        request = service_pb2.DeleteGameRequest(
            game_id=game_id, request_id=self.request_id(), reason=reason
        )
        return self._call(self.stub.DeleteGame, request, retry=True).game

    def annotate(
        self,
        game_id: str,
        comment: str = "",
        *,
        glyph: str = "",
        revision: int = 0,
        variation: VariationItems | events_pb2.Variation | None = None,
    ) -> service_pb2.Annotation:
        """`variation`: a line played instead of the annotated move (`variation_of`), the
        server checks it by the rules and answers with its moves typed and canonical."""
        request = service_pb2.AddAnnotationRequest(
            game_id=game_id,
            revision=revision,
            comment=comment,
            glyph=glyph,
            request_id=self.request_id(),
            variation=(
                variation
                if isinstance(variation, events_pb2.Variation) or variation is None
                else variation_of(variation)
            ),
        )
        return self._call(self.stub.AddAnnotation, request, retry=True).annotation

    def remove_annotation(self, game_id: str, annotation_id: str) -> None:
        request = service_pb2.RemoveAnnotationRequest(
            game_id=game_id, annotation_id=annotation_id, request_id=self.request_id()
        )
        self._call(self.stub.RemoveAnnotation, request, retry=True)

    def import_events(
        self,
        events: Sequence[events_pb2.Event],
        request_id: str | None = None,
        *,
        accept_unverified: bool = False,
        source: str = "",
    ) -> service_pb2.GameSummary:
        """A new game from exported events. An export whose chain this server cannot verify
        (another server's key, or recorded before chains were keyed) is refused unless
        `accept_unverified`; `source` says where it came from."""
        request = service_pb2.ImportGameRequest(
            events=list(events),
            request_id=request_id or self.request_id(),
            accept_unverified=accept_unverified,
            source=source,
        )
        return self._call(self.stub.ImportGame, request, retry=True).game

    def import_record(
        self, text: str, request_id: str | None = None, *, source: str = ""
    ) -> list[service_pb2.GameSummary]:
        """New games from a text record (docs/record-format.md): every game's moves and
        variations are checked before any is stored; each game is stored whole or not at
        all. A refusal names the line and column (metadata `line`, `column`, `rule`)."""
        request = service_pb2.ImportRecordRequest(
            text=text, request_id=request_id or self.request_id(), source=source
        )
        return list(self._call(self.stub.ImportRecord, request, retry=True).games)

    # -------------------------------------------------------------- reads

    @staticmethod
    def viewer(seat: int | None = None, full: bool = False) -> service_pb2.Viewer:
        if full:
            return service_pb2.Viewer(full=True)
        if seat is not None:
            return service_pb2.Viewer(seat=seat)
        return service_pb2.Viewer(spectator=True)

    def state(
        self,
        game_id: str,
        revision: int = 0,
        *,
        seat: int | None = None,
        full: bool = False,
        picture: bool = False,
        entitled: bool = False,
        phone: bool = False,
    ) -> service_pb2.StateSnapshot:
        """The state at `revision` (0: the head); with its SVG picture when `picture` (laid
        out for a phone's width when `phone`). With `entitled` and neither `seat` nor `full`,
        as the server decides for the caller (the most its role may see: everything for an
        owner); else the spectator's view."""
        viewer = None if entitled and seat is None and not full else self.viewer(seat, full)
        layout = (
            service_pb2.PICTURE_LAYOUT_PHONE if phone else service_pb2.PICTURE_LAYOUT_UNSPECIFIED
        )
        request = service_pb2.GetStateRequest(
            game_id=game_id,
            revision=revision,
            viewer=viewer,
            picture=picture,
            picture_layout=layout,
        )
        return self._call(self.stub.GetState, request).state

    def legal_moves(
        self, game_id: str, revision: int = 0, *, viewer: service_pb2.Viewer | None = None
    ) -> tuple[game_pb2.ToMove, list[service_pb2.LegalMove]]:
        """The legal moves; `viewer` (default: the server's) names whose eyes they are for."""
        moves: list[service_pb2.LegalMove] = []
        token = ""
        while True:
            response = self._call(
                self.stub.ListLegalMoves,
                service_pb2.ListLegalMovesRequest(
                    game_id=game_id,
                    revision=revision,
                    page_size=1000,
                    page_token=token,
                    viewer=viewer,
                ),
            )
            moves += response.moves
            token = response.next_page_token
            if not token:
                return response.to_move, moves

    def replay(
        self,
        game_id: str,
        from_revision: int = 0,
        to_revision: int = 0,
        *,
        seat: int | None = None,
        full: bool = False,
        picture: bool = False,
        variation: str | service_pb2.VariationPath | None = None,
    ) -> Iterator[service_pb2.ReplayGameResponse]:
        """`variation` steps into an annotation's variation (`variation_path`: "ID" or
        "ID/3.1"): the main line up to the annotated move, then the variation's moves,
        each response marked by its `variation`."""
        request = service_pb2.ReplayGameRequest(
            game_id=game_id,
            from_revision=from_revision,
            to_revision=to_revision,
            viewer=self.viewer(seat, full),
            picture=picture,
            variation=variation_path(variation) if isinstance(variation, str) else variation,
        )
        stream: Iterator[service_pb2.ReplayGameResponse] = self._stream(
            self.stub.ReplayGame, request, self.timeout * 10
        )
        return stream

    def watch(
        self,
        game_id: str,
        from_revision: int = 0,
        *,
        heartbeat_seconds: int = 15,
        seat: int | None = None,
        timeout: float | None = None,
        resume: bool = True,
        resume_seconds: float = 60.0,
    ) -> Iterator[service_pb2.WatchGameResponse]:
        """Updates (and heartbeats) of a game as they happen, from `from_revision` (0: from
        now on), until `timeout` seconds have passed (None: for ever).

        With `resume`, a stream the server ends in a way worth retrying (UNAVAILABLE: the
        server restarting or its Redis away; WATCHER_TOO_SLOW: this reader fell behind) is
        opened again from the last revision seen, retrying for up to `resume_seconds`
        without news; events seen already (by sequence) are skipped, so each comes once.
        A server that never answered is not retried (a wrong address fails at once)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen_sequence = 0
        answered = False
        since_news = time.monotonic()
        attempt = 0
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            request = service_pb2.WatchGameRequest(
                game_id=game_id,
                from_revision=from_revision,
                heartbeat_seconds=heartbeat_seconds,
                viewer=self.viewer(seat),
            )
            try:
                for item in self.stub.WatchGame(request, timeout=remaining, metadata=self.metadata):
                    answered, since_news, attempt = True, time.monotonic(), 0
                    if item.WhichOneof("item") == "update":
                        event = item.update.event
                        if event.sequence <= seen_sequence:
                            continue
                        # Annotations share their move's revision: watch again from it.
                        seen_sequence, from_revision = event.sequence, event.revision
                    elif not seen_sequence:
                        from_revision = item.heartbeat.head_revision + 1
                    yield item
                return
            except grpc.RpcError as exc:
                error = TablelogError.from_rpc_error(exc)
                if not (resume and answered and _resumable(error)):
                    raise error from None
                if error.code == grpc.StatusCode.UNAVAILABLE:
                    if time.monotonic() - since_news > resume_seconds:
                        raise error from None
                    attempt += 1
                    time.sleep(min(2.0, 0.1 * 2**attempt))

    def annotations(self, game_id: str) -> list[service_pb2.Annotation]:
        found: list[service_pb2.Annotation] = []
        token = ""
        while True:
            response = self._call(
                self.stub.ListAnnotations,
                service_pb2.ListAnnotationsRequest(
                    game_id=game_id, page_size=1000, page_token=token
                ),
            )
            found += response.annotations
            token = response.next_page_token
            if not token:
                return found

    def audit(
        self, game_id: str, *, viewer: service_pb2.Viewer | None = None
    ) -> list[service_pb2.AuditEntry]:
        """Every event; `viewer` (default: the server's) redacts what it may not see."""
        entries: list[service_pb2.AuditEntry] = []
        token = ""
        while True:
            response = self._call(
                self.stub.GetAuditLog,
                service_pb2.GetAuditLogRequest(
                    game_id=game_id, page_size=1000, page_token=token, viewer=viewer
                ),
            )
            entries += response.entries
            token = response.next_page_token
            if not token:
                return entries

    def export(
        self, game_id: str, *, viewer: service_pb2.Viewer | None = None
    ) -> list[events_pb2.Event]:
        """The events (a redacted export, for a viewer that is not full, cannot be imported:
        its hashes cover what was left out)."""
        return [entry.event for entry in self.audit(game_id, viewer=viewer)]

    def export_record(
        self,
        game_ids: Sequence[str] = (),
        *,
        game: str = "",
        status: str = "",
        viewer: service_pb2.Viewer | None = None,
    ) -> str:
        """Games as a text record: those named, else every game of the club of type `game`
        and `status` (as `list_games` filters). Moves `viewer` may not see read `hidden`."""
        request = service_pb2.ExportRecordRequest(
            game_ids=list(game_ids),
            game=game,
            status=STATUSES.get(status, service_pb2.GAME_STATUS_UNSPECIFIED),
            viewer=viewer,
        )
        return self._call(self.stub.ExportRecord, request).text

    def verify(
        self, game_id: str, receipts: Sequence[service_pb2.Receipt] = ()
    ) -> service_pb2.VerifyGameResponse:
        """The game's history checked; with `receipts` (kept from earlier changes), also
        that it still holds each of them (nothing cut off or rewritten before them)."""
        request = service_pb2.VerifyGameRequest(game_id=game_id, receipts=list(receipts))
        return self._call(self.stub.VerifyGame, request)

    # -------------------------------------------------------------- club

    def whoami(self) -> clubs_pb2.WhoAmIResponse:
        return self._call(self.clubs.WhoAmI, clubs_pb2.WhoAmIRequest())

    def members(self) -> list[clubs_pb2.Member]:
        return list(self._call(self.clubs.ListMembers, clubs_pb2.ListMembersRequest()).members)

    def add_member(self, display_name: str, role: str) -> clubs_pb2.Member:
        request = clubs_pb2.AddMemberRequest(display_name=display_name, role=ROLES[role])
        return self._call(self.clubs.AddMember, request).member

    def remove_member(self, member_id: str) -> int:
        """Removes a member; how many of their tokens were revoked."""
        request = clubs_pb2.RemoveMemberRequest(member_id=member_id)
        return self._call(self.clubs.RemoveMember, request).tokens_revoked

    def set_role(self, member_id: str, role: str) -> clubs_pb2.Member:
        request = clubs_pb2.SetRoleRequest(member_id=member_id, role=ROLES[role])
        return self._call(self.clubs.SetRole, request).member

    def create_token(
        self, member_id: str = "", expires_in_seconds: int = 0
    ) -> clubs_pb2.CreateTokenResponse:
        request = clubs_pb2.CreateTokenRequest(
            member_id=member_id, expires_in_seconds=expires_in_seconds
        )
        return self._call(self.clubs.CreateToken, request)

    def tokens(self, member_id: str = "") -> list[clubs_pb2.TokenInfo]:
        request = clubs_pb2.ListTokensRequest(member_id=member_id)
        return list(self._call(self.clubs.ListTokens, request).tokens)

    def revoke_token(self, token_id: str) -> clubs_pb2.TokenInfo:
        return self._call(
            self.clubs.RevokeToken, clubs_pb2.RevokeTokenRequest(token_id=token_id)
        ).token

    def create_link_token(
        self, game_id: str, expires_in_seconds: int = 0
    ) -> clubs_pb2.CreateLinkTokenResponse:
        request = clubs_pb2.CreateLinkTokenRequest(
            game_id=game_id, expires_in_seconds=expires_in_seconds
        )
        return self._call(self.clubs.CreateLinkToken, request)

    def bind_seat(self, game_id: str, seat: int, member_id: str) -> list[str]:
        request = clubs_pb2.BindSeatRequest(game_id=game_id, seat=seat, member_id=member_id)
        return list(self._call(self.clubs.BindSeat, request).seat_member_ids)

    def update_club(
        self, *, name: str | None = None, players_may_record: bool | None = None
    ) -> clubs_pb2.Club:
        request = clubs_pb2.UpdateClubRequest()
        if name is not None:
            request.name = name
        if players_may_record is not None:
            request.players_may_record = players_may_record
        return self._call(self.clubs.UpdateClub, request).club

    # -------------------------------------------------------------- the operator's clubs

    def create_club(
        self, name: str, owner_name: str = "", expires_in_seconds: int = 0
    ) -> clubs_pb2.CreateClubResponse:
        """A new club and its first owner, whose token is answered only here (the
        operator only)."""
        request = clubs_pb2.CreateClubRequest(
            name=name, owner_name=owner_name, expires_in_seconds=expires_in_seconds
        )
        return self._call(self.operators.CreateClub, request)

    def list_clubs(self) -> list[clubs_pb2.Club]:
        """Every club of the server (all pages)."""
        clubs: list[clubs_pb2.Club] = []
        token = ""
        while True:
            request = clubs_pb2.ListClubsRequest(page_size=1000, page_token=token)
            page = self._call(self.operators.ListClubs, request, retry=True)
            clubs += page.clubs
            token = page.next_page_token
            if not token:
                return clubs

    def suspend_club(self, club_id: str) -> clubs_pb2.Club:
        request = clubs_pb2.SuspendClubRequest(club_id=club_id)
        return self._call(self.operators.SuspendClub, request).club

    def resume_club(self, club_id: str) -> clubs_pb2.Club:
        request = clubs_pb2.ResumeClubRequest(club_id=club_id)
        return self._call(self.operators.ResumeClub, request).club

    def delete_club(self, club_id: str) -> int:
        """Deletes the club and all it owns; how many games were deleted."""
        request = clubs_pb2.DeleteClubRequest(club_id=club_id)
        return self._call(self.operators.DeleteClub, request).games_deleted

    # -------------------------------------------------------------- players (issue 28)

    def players(self) -> clubs_pb2.ListPlayersResponse:
        return self._call(self.clubs.ListPlayers, clubs_pb2.ListPlayersRequest())

    def rename_player(
        self, name: str, new_name: str, expected_version: int = 0
    ) -> clubs_pb2.RenamePlayerResponse:
        request = clubs_pb2.RenamePlayerRequest(
            name=name, new_name=new_name, expected_version=expected_version
        )
        return self._call(self.clubs.RenamePlayer, request)

    def merge_players(
        self, name: str, merged_name: str, expected_version: int = 0
    ) -> clubs_pb2.MergePlayersResponse:
        request = clubs_pb2.MergePlayersRequest(
            name=name, merged_name=merged_name, expected_version=expected_version
        )
        return self._call(self.clubs.MergePlayers, request)

    def bind_player(
        self, name: str, member_id: str, expected_version: int = 0
    ) -> clubs_pb2.BindPlayerResponse:
        request = clubs_pb2.BindPlayerRequest(
            name=name, member_id=member_id, expected_version=expected_version
        )
        return self._call(self.clubs.BindPlayer, request)

    def roster_changes(self) -> clubs_pb2.ListRosterChangesResponse:
        return self._call(self.clubs.ListRosterChanges, clubs_pb2.ListRosterChangesRequest())

    # -------------------------------------------------------------- club memory (issue 28)

    def standings(self, game: str, season: str = "") -> standings_pb2.GetStandingsResponse:
        request = standings_pb2.GetStandingsRequest(game=game, season=season)
        return self._call(self.standings_stub.GetStandings, request, retry=True)

    def player_record(
        self, name: str, game: str = "", season: str = ""
    ) -> standings_pb2.GetPlayerRecordResponse:
        request = standings_pb2.GetPlayerRecordRequest(name=name, game=game, season=season)
        return self._call(self.standings_stub.GetPlayerRecord, request, retry=True)

    def game_type_stats(
        self, game: str, season: str = ""
    ) -> standings_pb2.GetGameTypeStatsResponse:
        request = standings_pb2.GetGameTypeStatsRequest(game=game, season=season)
        return self._call(self.standings_stub.GetGameTypeStats, request, retry=True)

    def seasons(self) -> list[standings_pb2.Season]:
        request = standings_pb2.ListSeasonsRequest()
        return list(self._call(self.standings_stub.ListSeasons, request, retry=True).seasons)

    def set_season(self, name: str, first_day: str, last_day: str) -> standings_pb2.Season:
        request = standings_pb2.SetSeasonRequest(name=name, first_day=first_day, last_day=last_day)
        return self._call(self.standings_stub.SetSeason, request).season

    def rebuild_projections(self, refold: bool = False) -> standings_pb2.RebuildProjectionsResponse:
        """Rebuild the club's projections: each game from its sealed result when sound and
        current, else folded; `refold`: every game folded from its events."""
        request = standings_pb2.RebuildProjectionsRequest(refold=refold)
        return self._call(self.standings_stub.RebuildProjections, request)


ROLES = {
    "owner": clubs_pb2.ROLE_OWNER,
    "recorder": clubs_pb2.ROLE_RECORDER,
    "player": clubs_pb2.ROLE_PLAYER,
    "spectator": clubs_pb2.ROLE_SPECTATOR,
}
ROLE_NAMES = {number: name for name, number in ROLES.items()}
