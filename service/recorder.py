"""The recording use cases: every change to a game is validated by `replay.fold` and
appended by the store's compare-and-append; every read is a fold of the stream.

Nothing here knows any particular game. The head position of each game is cached; the cache
is checked against the stream's last sequence (the append script refuses a stale base, and
reads compare the cached sequence with the stored one), so it never decides anything alone.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from replay import fold as folding
from replay.core import (
    CHANCE,
    DEALT,
    FULL,
    SPECTATOR,
    TABLE,
    TERMINAL,
    GameOver,
    HistoryError,
    IllegalMove,
    InvalidSetup,
    RulesError,
    Viewer,
)
from replay.registry import all_games, describe, find_game
from service.errors import InvalidRequest, NotFound, OutOfRange
from service.store import (
    GENESIS_HASH,
    ChainMismatch,
    EventStore,
    GameNotFound,
    SeedOp,
    SequenceMoved,
    StaleVersion,
    stored_hash,
)
from tablelog.v1 import events_pb2, game_pb2, service_pb2

# Input limits (refused with INVALID_ARGUMENT + BadRequest).
MAX_NOTATION = 200
MAX_COMMENT = 4_000
MAX_REASON = 500
MAX_TITLE = 200
MAX_PLAYER_NAME = 64
MAX_PLAYERS = 16
MAX_REQUEST_ID = 128
MAX_PAGE_SIZE = 1_000
DEFAULT_PAGE_SIZE = 100
MAX_IMPORT_EVENTS = 100_000
MAX_COMPONENT_BYTES = 1 << 20
"""One component file's content (1 MiB)."""
MAX_COMPONENTS_BYTES = 4 << 20
"""All the component files of one CreateGame or ImportGame together (4 MiB)."""
GLYPHS = frozenset({"", "!", "?", "!!", "??", "!?", "?!"})
GAME_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
APPEND_ATTEMPTS = 20


def now() -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(time.time_ns())
    return stamp


def new_game_id(request_id: str = "") -> str:
    """A short id; derived from the request id so a retried CreateGame finds its game."""
    raw = (
        hashlib.sha256(b"tablelog/create/" + request_id.encode()).digest()
        if request_id
        else secrets.token_bytes(10)
    )
    return base64.b32encode(raw[:10]).decode().lower()[:12]


def fingerprint(*parts: str | bytes | int | None) -> str:
    """What a request asks, as a hex SHA-256 stored with its request id: a retry has the
    same fingerprint, another request reusing the id has not (IDEMPOTENCY_KEY_REUSED).
    Each part is tagged with its type and length-prefixed, so no two different part lists
    hash alike."""
    chunks: list[bytes] = []
    for part in parts:
        if isinstance(part, bytes):
            kind, data = b"b", part
        elif part is None:
            kind, data = b"n", b""
        else:
            kind, data = (b"s", part.encode()) if isinstance(part, str) else (b"i", b"%d" % part)
        chunks += (kind, len(data).to_bytes(4, "big"), data)
    return hashlib.sha256(b"".join(chunks)).hexdigest()


def deal_ticket(seed: bytes, revision: int, total: int) -> int:
    """The ticket of the chance move recorded at `revision` in dealt mode: HMAC-SHA256 of
    the revision under the seed, reduced to the outcomes' total weight. Deterministic, so
    VerifyGame re-draws every dealt outcome once the seed is revealed."""
    digest = hmac.new(seed, b"tablelog/deal/" + revision.to_bytes(8, "big"), "sha256").digest()
    return int.from_bytes(digest, "big") % total


def check_game_id(game_id: str) -> str:
    if not GAME_ID.match(game_id):
        raise InvalidRequest("game_id", "A game id is 1-64 lowercase letters, digits, '-' or '_'.")
    return game_id


def check_length(name: str, value: str, limit: int) -> str:
    if len(value) > limit:
        raise InvalidRequest(name, f"{name} is {len(value)} characters; the limit is {limit}.")
    return value


def check_components(field_name: str, components: Sequence[game_pb2.ComponentFile]) -> None:
    """Each file at most MAX_COMPONENT_BYTES, all together at most MAX_COMPONENTS_BYTES."""
    total = 0
    for index, component in enumerate(components):
        size = len(component.content)
        if size > MAX_COMPONENT_BYTES:
            raise InvalidRequest(
                f"{field_name}[{index}].content",
                f"Component file {component.name[:80]!r} is {size:,} bytes; "
                f"the limit is {MAX_COMPONENT_BYTES:,} per file.",
            )
        total += size
    if total > MAX_COMPONENTS_BYTES:
        raise InvalidRequest(
            field_name,
            f"The component files are {total:,} bytes together; the limit is "
            f"{MAX_COMPONENTS_BYTES:,}.",
        )


def page_bounds(page_size: int, page_token: str) -> tuple[int, int]:
    """(offset, size) from a request's page_size and opaque page_token."""
    if page_size < 0 or page_size > MAX_PAGE_SIZE:
        raise InvalidRequest("page_size", f"page_size must be 0-{MAX_PAGE_SIZE}.")
    offset = 0
    if page_token:
        try:
            offset = int(base64.urlsafe_b64decode(page_token.encode()).decode().removeprefix("o:"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidRequest("page_token", "That page_token was not issued here.") from exc
        if offset < 0:
            raise InvalidRequest("page_token", "That page_token was not issued here.")
    return offset, page_size or DEFAULT_PAGE_SIZE


def page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


@dataclass(frozen=True, slots=True)
class Head:
    """A game at the last event of its stream."""

    game_id: str
    position: folding.Position
    last_hash: bytes
    created_time: timestamp_pb2.Timestamp
    updated_time: timestamp_pb2.Timestamp
    seed: bytes | None = None
    """Dealt mode's secret seed while the game is in progress (never sent to clients)."""

    @property
    def revision(self) -> int:
        return self.position.revision

    @property
    def sequence(self) -> int:
        return self.position.sequence


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a change appended, and the game after it."""

    head: Head
    events: tuple[events_pb2.Event, ...]
    duplicate: bool = False
    summary: service_pb2.GameSummary | None = None
    """The game after the change (computed once: stored for listing and answered)."""

    def game(self) -> service_pb2.GameSummary:
        return self.summary if self.summary is not None else summarize(self.head)


Build = Callable[[Head], tuple[list[events_pb2.Event], folding.Position]]


def with_defaults(
    given: Sequence[game_pb2.ComponentFile], defaults: Sequence[game_pb2.ComponentFile]
) -> list[game_pb2.ComponentFile]:
    """The component files a new game records: each given file replaces the default of the
    same name, and the other defaults are kept, so a stored game never depends on the data
    files packaged with a later version of its rules. Unknown names are left for the game
    to refuse."""
    replacing = {component.name: component for component in given}
    kept = [replacing.pop(default.name, default) for default in defaults]
    return kept + list(replacing.values())


def to_move_message(position: folding.Position) -> game_pb2.ToMove:
    who = position.to_move()
    if who == TERMINAL:
        return game_pb2.ToMove(terminal=True)
    if who == CHANCE:
        return game_pb2.ToMove(chance=True)
    return game_pb2.ToMove(seat=who)


STATUS = {
    folding.Status.IN_PROGRESS: service_pb2.GAME_STATUS_IN_PROGRESS,
    folding.Status.ENDED: service_pb2.GAME_STATUS_ENDED,
    folding.Status.ABANDONED: service_pb2.GAME_STATUS_ABANDONED,
}


_TEMPLATES: dict[int, tuple[folding.Table, service_pb2.GameSummary]] = {}


def _template(head: Head) -> service_pb2.GameSummary:
    """The parts of a game's summary that never change, built once per game table."""
    table = head.position.table
    cached = _TEMPLATES.get(id(table))
    if cached is not None and cached[0] is table:
        return cached[1]
    created = table.created
    notes = [c.approximate_note or c.name for c in created.components if c.approximate]
    template = service_pb2.GameSummary(
        game_id=head.game_id,
        game=created.game,
        title=created.title,
        players=list(created.players),
        mode=created.mode,
        created_time=head.created_time,
        options=created.options,
        approximate_components=bool(notes),
        approximate_notes=notes,
    )
    if len(_TEMPLATES) > 4096:
        _TEMPLATES.clear()
    _TEMPLATES[id(table)] = (table, template)
    return template


def summarize(head: Head) -> service_pb2.GameSummary:
    position = head.position
    summary = service_pb2.GameSummary()
    summary.CopyFrom(_template(head))
    summary.game_id = head.game_id
    summary.status = STATUS[position.status]
    summary.version = position.revision
    summary.move_count = position.move_count
    summary.to_move.CopyFrom(to_move_message(position))
    summary.updated_time.CopyFrom(head.updated_time)
    if position.result is not None:
        summary.result.CopyFrom(position.result)
    return summary


def viewer_of(viewer: service_pb2.Viewer | None, players: int) -> Viewer:
    kind = viewer.WhichOneof("kind") if viewer is not None else None
    if kind is None or kind == "spectator":
        return SPECTATOR
    if kind == "full":
        return FULL
    assert viewer is not None
    if viewer.seat >= players:
        raise InvalidRequest("viewer.seat", f"This game has seats 0-{players - 1}.")
    return int(viewer.seat)


HIDDEN_MOVE = "(hidden)"
"""What a viewer sees in place of a move that deals hidden information to someone else."""


def _visible(table: folding.Table, move: game_pb2.Move, before: Any, viewer: Viewer) -> bool:
    return viewer is None or table.game.visible_to(table.unwrap(move), before, viewer)


def shown_notation(table: folding.Table, applied: folding.Applied, viewer: Viewer) -> str:
    """A move in effect as `viewer` sees it in a move list."""
    return (
        applied.notation if _visible(table, applied.move, applied.before, viewer) else HIDDEN_MOVE
    )


def snapshot(
    position: folding.Position, viewer: Viewer, moves: Sequence[str] | None = None
) -> service_pb2.StateSnapshot:
    """The state at `position` as `viewer` sees it. `moves`, when given, is the move list
    already computed (`shown_notation` of each move in effect: a watch tail keeps it up to
    date one move at a time)."""
    game = position.game
    table = position.table
    view = game.view(position.state, viewer)
    result = position.result if position.result is not None else game.result(position.state)
    return service_pb2.StateSnapshot(
        revision=position.revision,
        view=table.wrap_view(view),
        text=game.render(view),
        to_move=to_move_message(position),
        result=result,
        moves=(
            moves
            if moves is not None
            else [shown_notation(table, applied, viewer) for applied in position.moves()]
        ),
    )


def replay_item(
    event: events_pb2.Event,
    before: folding.Position,
    after: folding.Position,
    viewer: Viewer,
    moves: Sequence[str] | None = None,
) -> service_pb2.ReplayGameResponse:
    """One step of a replay or a watch: the event as `viewer` may see it (a move that deals
    hidden information to another seat keeps its place, revision and hashes, not its
    content) and the state after it (`moves`: its move list, if known)."""
    body = event.move_recorded if event.WhichOneof("body") == "move_recorded" else None
    if body is not None and not _visible(after.table, body.move, before.state, viewer):
        shown = events_pb2.Event()
        shown.CopyFrom(event)
        shown.move_recorded.ClearField("move")
        shown.move_recorded.notation = HIDDEN_MOVE
        shown.move_recorded.hidden = True
        event = shown
    return service_pb2.ReplayGameResponse(event=event, state=snapshot(after, viewer, moves))


def _describe_event(event: events_pb2.Event, players: Sequence[str]) -> str:
    who = event.actor.user or "someone"
    body = event.WhichOneof("body")
    if body == "game_created":
        created = event.game_created
        names = ", ".join(p.name for p in created.players)
        mode = "dealt" if created.mode == DEALT else "table"
        return f"{who} created a {created.game} game ({mode} mode) for {names}"
    if body == "move_recorded":
        recorded = event.move_recorded
        seat = recorded.move.seat if recorded.move.HasField("seat") else None
        mover = players[seat] if seat is not None and seat < len(players) else ""
        if recorded.dealt:
            return f"the server dealt {recorded.notation}"
        return f"{who} recorded {recorded.notation}" + (f" for {mover}" if mover else "")
    if body == "move_undone":
        reason = f" ({event.move_undone.reason})" if event.move_undone.reason else ""
        return f"{who} undid revision {event.move_undone.undone_revision}{reason}"
    if body == "move_redone":
        return f"{who} redid revision {event.move_redone.redone_revision}"
    if body == "annotation_added":
        note = event.annotation_added
        text = " ".join(t for t in (note.glyph, note.comment) if t)
        return f"{who} annotated revision {note.revision}: {text}"
    if body == "annotation_removed":
        return f"{who} removed annotation {event.annotation_removed.annotation_id}"
    if body == "game_ended":
        winners = ", ".join(
            players[w] if w < len(players) else str(w) for w in event.game_ended.result.winners
        )
        return f"the game ended; winners: {winners or 'none'}"
    if body == "game_abandoned":
        reason = event.game_abandoned.reason
        return f"{who} abandoned the game" + (f" ({reason})" if reason else "")
    return f"{who}: {body}"


class _Recheck(Exception):
    """A removal built on a head other than the one its check was made on."""


def live_annotations(events: Iterable[events_pb2.Event]) -> dict[str, service_pb2.Annotation]:
    """The annotations added and not removed, by id."""
    notes: dict[str, service_pb2.Annotation] = {}
    for event in events:
        body = event.WhichOneof("body")
        if body == "annotation_added":
            added = event.annotation_added
            notes[added.annotation_id] = service_pb2.Annotation(
                annotation_id=added.annotation_id,
                revision=added.revision,
                comment=added.comment,
                glyph=added.glyph,
                actor=event.actor,
                time=event.time,
            )
        elif body == "annotation_removed":
            notes.pop(event.annotation_removed.annotation_id, None)
    return notes


class Recorder:
    """The use cases behind the gRPC API. One per process; safe for many asyncio tasks."""

    def __init__(self, store: EventStore, cache_size: int = 2_048) -> None:
        self.store = store
        self._cache: OrderedDict[str, Head] = OrderedDict()
        self._cache_size = cache_size

    # ----------------------------------------------------------------- game heads

    def _remember(self, head: Head) -> Head:
        self._cache[head.game_id] = head
        self._cache.move_to_end(head.game_id)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return head

    def cached(self, game_id: str) -> Head | None:
        return self._cache.get(game_id)

    def forget(self, game_id: str) -> None:
        self._cache.pop(game_id, None)

    async def _advance(self, head: Head, events: Iterable[events_pb2.Event]) -> Head:
        position, last_hash, updated = head.position, head.last_hash, head.updated_time
        revealed = False
        for event in events:
            position = folding.advance(position, event)
            last_hash, updated = event.hash, event.time
            body = event.WhichOneof("body")
            if body in ("game_ended", "game_abandoned"):
                revealed = True
        seed = None if revealed else head.seed
        return replace(
            head, position=position, last_hash=last_hash, updated_time=updated, seed=seed
        )

    async def rebuild(self, game_id: str) -> Head:
        """A fresh fold of the whole stream (also what the cache is tested against)."""
        events = await self.store.read(game_id)
        if not events:
            raise GameNotFound(game_id)
        first = events[0]
        if first.WhichOneof("body") != "game_created" or first.sequence != 1:
            raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
        seed = None
        if first.game_created.mode == DEALT:
            seed = await self.store.seed(game_id)
        head = Head(
            game_id,
            folding.start(first.game_created),
            first.hash,
            first.time,
            first.time,
            seed,
        )
        return await self._advance(head, events[1:])

    async def _catch_up(self, head: Head) -> Head:
        newer = await self.store.read(head.game_id, head.sequence)
        if not newer:
            return head
        return self._remember(await self._advance(head, newer))

    async def load(self, game_id: str, *, fresh: bool = True) -> Head:
        """The head of a game. With `fresh`, the cached head is checked against the stored
        last sequence (one small read) and caught up when another instance appended."""
        check_game_id(game_id)
        head = self._cache.get(game_id)
        if head is None:
            return self._remember(await self.rebuild(game_id))
        if fresh:
            stored = await self.store.head(game_id)
            if stored.sequence != head.sequence:
                head = await self._catch_up(head)
                if head.sequence != stored.sequence or head.last_hash != stored.last_hash:
                    head = self._remember(await self.rebuild(game_id))
        self._cache.move_to_end(game_id)
        return head

    async def position_at(self, game_id: str, revision: int) -> folding.Position:
        head = await self.load(game_id)
        if revision == 0 or revision == head.revision:
            return head.position
        if revision > head.revision:
            raise OutOfRange(
                "REVISION_OUT_OF_RANGE",
                f"Revision {revision} is beyond the game's head, revision {head.revision}.",
                metadata={"head_revision": str(head.revision)},
            )
        events = await self.store.read(game_id)
        return folding.fold(events, until_revision=revision)

    # ----------------------------------------------------------------- appending

    def _stamp(
        self, events: list[events_pb2.Event], actor: events_pb2.Actor, request_id: str, head: Head
    ) -> None:
        stamp = now()
        rules_version = head.position.game.rules_version
        for event in events:
            event.time.CopyFrom(stamp)
            event.actor.CopyFrom(actor)
            event.request_id = request_id
            event.rules_version = rules_version

    async def _previous(
        self, game_id: str, request_id: str, request_fingerprint: str
    ) -> Outcome | None:
        """The original result of a request id already appended (a retry); a request id
        already used by another request is refused (IdempotencyKeyReused)."""
        if not request_id:
            return None
        original = await self.store.lookup_request(game_id, request_id, request_fingerprint)
        if original is None:
            return None
        return Outcome(await self.load(game_id), tuple(original), duplicate=True)

    async def _change(
        self,
        game_id: str,
        build: Build,
        *,
        expected_revision: int | None,
        request_id: str,
        actor: events_pb2.Actor,
        request_fingerprint: str = "",
    ) -> Outcome:
        """Build events on the head and compare-and-append them; rebuild on a moved head.
        `request_fingerprint` (see `fingerprint`) is stored with a non-empty request id."""
        check_game_id(game_id)
        check_length("request_id", request_id, MAX_REQUEST_ID)
        if expected_revision is not None and expected_revision == 0:
            raise InvalidRequest(
                "expected_version", "expected_version is required: pass the game's version."
            )
        head = await self.load(game_id, fresh=False)
        for _attempt in range(APPEND_ATTEMPTS):
            try:
                if expected_revision is not None and expected_revision != head.revision:
                    head = await self._catch_up(head)
                    if expected_revision != head.revision:
                        raise StaleVersion(game_id, expected_revision, head.revision)
                events, after = build(head)
            except (StaleVersion, RulesError):
                previous = await self._previous(game_id, request_id, request_fingerprint)
                if previous is not None:
                    return previous
                raise
            self._stamp(events, actor, request_id, head)
            ending = events[-1].WhichOneof("body") in ("game_ended", "game_abandoned")
            try:
                result = await self._append(
                    head, events, after, expected_revision, request_id, ending, request_fingerprint
                )
            except SequenceMoved:
                head = await self._catch_up(head)
                continue
            except ChainMismatch:  # the cached head is not the stored one: start afresh
                self.forget(game_id)
                head = self._remember(await self.rebuild(game_id))
                continue
            except StaleVersion:
                self.forget(game_id)
                raise
            return result
        raise SequenceMoved(game_id, head.sequence, head.revision)

    async def _append(
        self,
        head: Head,
        events: list[events_pb2.Event],
        after: folding.Position,
        expected_revision: int | None,
        request_id: str,
        ending: bool,
        request_fingerprint: str = "",
    ) -> Outcome:
        # The summary stored for listing is computed on the head as it will be.
        provisional = Head(
            head.game_id,
            after,
            head.last_hash,
            head.created_time,
            events[-1].time,
            None if ending else head.seed,
        )
        summary = summarize(provisional)
        result = await self.store.append(
            head.game_id,
            events,
            expected_sequence=head.sequence,
            prev_hash=head.last_hash,
            expected_revision=expected_revision,
            request_id=request_id,
            summary=summary.SerializeToString(),
            seed_op=SeedOp.DELETE if ending else SeedOp.KEEP,
            fingerprint=request_fingerprint,
        )
        if result.duplicate:
            self.forget(head.game_id)
            return Outcome(await self.load(head.game_id), result.events, duplicate=True)
        new_head = Head(
            head.game_id,
            after,
            result.events[-1].hash,
            head.created_time,
            provisional.updated_time,
            provisional.seed,
        )
        return Outcome(self._remember(new_head), result.events, summary=summary)

    # ----------------------------------------------------------------- building

    @staticmethod
    def _event(position: folding.Position, **body: Message) -> events_pb2.Event:
        return events_pb2.Event(sequence=position.sequence + 1, **body)  # type: ignore[arg-type]

    def _push(
        self, position: folding.Position, events: list[events_pb2.Event], event: events_pb2.Event
    ) -> folding.Position:
        """Set the event's revision, apply it through the fold, keep it."""
        body = event.WhichOneof("body")
        event.revision = position.revision + (1 if body in folding.HISTORY_BODIES else 0)
        after = folding.advance(position, event)
        events.append(event)
        return after

    def _deal_and_end(
        self, position: folding.Position, events: list[events_pb2.Event], seed: bytes | None
    ) -> folding.Position:
        """Dealt mode: the chance moves that follow, drawn from the seed. Then GameEnded
        when the game is over (revealing the seed)."""
        game = position.game
        while position.table.mode == DEALT and position.to_move() == CHANCE:
            if seed is None:
                raise HistoryError("NO_SEED", "This dealt game has lost its seed.")
            outcomes = game.chance_outcomes(position.state)
            total = sum(weight for _, weight in outcomes)
            inner = folding.pick_outcome(outcomes, deal_ticket(seed, position.revision + 1, total))
            recorded = events_pb2.MoveRecorded(
                move=position.table.wrap(inner),
                notation=game.format(inner, position.state),
                dealt=True,
            )
            position = self._push(position, events, self._event(position, move_recorded=recorded))
        if position.status is folding.Status.IN_PROGRESS and position.to_move() == TERMINAL:
            ended = events_pb2.GameEnded(result=game.result(position.state), seed=seed or b"")
            position = self._push(position, events, self._event(position, game_ended=ended))
        return position

    # ----------------------------------------------------------------- use cases

    async def create_game(
        self, request: service_pb2.CreateGameRequest, actor: events_pb2.Actor
    ) -> Outcome:
        check_length("request_id", request.request_id, MAX_REQUEST_ID)
        check_length("title", request.title, MAX_TITLE)
        if len(request.players) > MAX_PLAYERS:
            raise InvalidRequest("players", f"At most {MAX_PLAYERS} players.")
        for player in request.players:
            check_length("players.name", player.name, MAX_PLAYER_NAME)
            if not player.name.strip():
                raise InvalidRequest("players.name", "Every player needs a name.")
        check_components("components", request.components)
        game = find_game(request.game)
        mode = request.mode or TABLE
        game_id = new_game_id(request.request_id)
        request_fingerprint = ""
        if request.request_id:
            asked = service_pb2.CreateGameRequest()
            asked.CopyFrom(request)
            asked.ClearField("request_id")
            asked.mode = mode
            request_fingerprint = fingerprint(
                "CreateGame", asked.SerializeToString(deterministic=True)
            )
            previous = await self._previous(game_id, request.request_id, request_fingerprint)
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
        )
        first = events_pb2.Event(sequence=1, revision=1, game_created=created)
        position = folding.start(created)  # validates players, mode, options, components
        events = [first]
        position = self._deal_and_end(position, events, seed)
        self._stamp(events, actor, request.request_id, Head(game_id, position, b"", now(), now()))
        head = Head(game_id, position, b"", first.time, events[-1].time, seed)
        ending = position.status is not folding.Status.IN_PROGRESS
        await self.store.index_game(game_id)
        result = await self.store.append(
            game_id,
            events,
            expected_sequence=0,
            prev_hash=b"",
            expected_revision=None,
            request_id=request.request_id,
            summary=summarize(head).SerializeToString(),
            seed_op=SeedOp.SET if seed and not ending else SeedOp.KEEP,
            seed=seed or b"",
            fingerprint=request_fingerprint,
        )
        if result.duplicate:
            return Outcome(await self.load(game_id), result.events, duplicate=True)
        return Outcome(
            self._remember(replace(head, last_hash=result.events[-1].hash)), result.events
        )

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
    ) -> Outcome:
        if notation is not None:
            check_length("notation", notation, MAX_NOTATION)
            if not notation.strip():
                raise InvalidRequest("notation", "Type a move.")
        elif move is None:
            raise InvalidRequest("input", "Send a move or its notation.")

        def build(head: Head) -> tuple[list[events_pb2.Event], folding.Position]:
            position = head.position
            if position.to_move() == TERMINAL:
                raise GameOver()
            table, game, state = position.table, position.game, position.state
            if notation is not None:
                inner = game.parse(notation, state)
                chosen_seat = seat
            else:
                assert move is not None
                inner = table.unwrap(move)
                chosen_seat = move.seat if move.HasField("seat") else seat
            if table.mode == DEALT and game.is_chance(inner):
                raise IllegalMove(
                    "DEALT_BY_SERVER",
                    "This game is dealt by the server: reveals and draws are not typed in.",
                )
            envelope = table.wrap(inner, chosen_seat)
            try:
                text = game.format(inner, state)
            except Exception:
                # An illegal move may not be formattable: let the rules say why it is illegal.
                folding.check_move(position, envelope)
                raise
            recorded = events_pb2.MoveRecorded(move=envelope, notation=text)
            events: list[events_pb2.Event] = []
            after = self._push(position, events, self._event(position, move_recorded=recorded))
            return events, self._deal_and_end(after, events, head.seed)

        request_fingerprint = (
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
        return await self._change(
            game_id,
            build,
            expected_revision=expected_version,
            request_id=request_id,
            actor=actor,
            request_fingerprint=request_fingerprint,
        )

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

        def build(head: Head) -> tuple[list[events_pb2.Event], folding.Position]:
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
                position = self._push(position, events, self._event(position, move_undone=undone))
            return events, position

        return await self._change(
            game_id,
            build,
            expected_revision=expected_version,
            request_id=request_id,
            actor=actor,
            request_fingerprint=fingerprint("UndoMove", game_id, expected_version, reason),
        )

    async def redo(
        self, game_id: str, *, expected_version: int, request_id: str, actor: events_pb2.Actor
    ) -> Outcome:
        def build(head: Head) -> tuple[list[events_pb2.Event], folding.Position]:
            position = head.position
            events: list[events_pb2.Event] = []
            while True:
                again = position.undone.head.revision if position.undone else 0
                redone = events_pb2.MoveRedone(redone_revision=again)
                position = self._push(position, events, self._event(position, move_redone=redone))
                following = position.undone
                if (
                    position.table.mode != DEALT
                    or following is None
                    or not position.game.is_chance(position.table.unwrap(following.head.move))
                ):
                    break
            return events, self._deal_and_end(position, events, head.seed)

        return await self._change(
            game_id,
            build,
            expected_revision=expected_version,
            request_id=request_id,
            actor=actor,
            request_fingerprint=fingerprint("RedoMove", game_id, expected_version),
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

        def build(head: Head) -> tuple[list[events_pb2.Event], folding.Position]:
            position = head.position
            if position.status is not folding.Status.IN_PROGRESS:
                raise GameOver("The game is over already.")
            events: list[events_pb2.Event] = []
            body = events_pb2.GameAbandoned(reason=reason, seed=head.seed or b"")
            position = self._push(position, events, self._event(position, game_abandoned=body))
            return events, position

        return await self._change(
            game_id,
            build,
            expected_revision=expected_version,
            request_id=request_id,
            actor=actor,
            request_fingerprint=fingerprint("AbandonGame", game_id, expected_version, reason),
        )

    async def annotate(
        self,
        game_id: str,
        *,
        revision: int,
        comment: str,
        glyph: str,
        request_id: str,
        actor: events_pb2.Actor,
    ) -> Outcome:
        check_length("comment", comment, MAX_COMMENT)
        if glyph not in GLYPHS:
            raise InvalidRequest(
                "glyph", f"A glyph is one of {' '.join(sorted(g for g in GLYPHS if g))}."
            )
        if not comment.strip() and not glyph:
            raise InvalidRequest("comment", "An annotation needs a comment or a glyph.")
        annotation_id = secrets.token_hex(6)

        def build(head: Head) -> tuple[list[events_pb2.Event], folding.Position]:
            anchor = revision or head.revision
            if anchor > head.revision:
                raise OutOfRange(
                    "REVISION_OUT_OF_RANGE",
                    f"Revision {anchor} is beyond the game's head, revision {head.revision}.",
                    metadata={"head_revision": str(head.revision)},
                )
            note = events_pb2.AnnotationAdded(
                annotation_id=annotation_id, revision=anchor, comment=comment, glyph=glyph
            )
            events: list[events_pb2.Event] = []
            position = self._push(
                head.position, events, self._event(head.position, annotation_added=note)
            )
            return events, position

        return await self._change(
            game_id,
            build,
            expected_revision=None,
            request_id=request_id,
            actor=actor,
            request_fingerprint=fingerprint("AddAnnotation", game_id, revision, comment, glyph),
        )

    async def remove_annotation(
        self, game_id: str, *, annotation_id: str, request_id: str, actor: events_pb2.Actor
    ) -> Outcome:
        """Atomic: the removal is appended at the very sequence its annotation was found
        live at, so of two concurrent removals the second finds the stream moved, looks
        again and is refused (ANNOTATION_NOT_FOUND)."""
        check_game_id(game_id)
        check_length("request_id", request_id, MAX_REQUEST_ID)
        request_fingerprint = fingerprint("RemoveAnnotation", game_id, annotation_id)
        for _attempt in range(APPEND_ATTEMPTS):
            events = await self.events(game_id)
            checked_at = events[-1].sequence
            if annotation_id not in live_annotations(events):
                previous = await self._previous(game_id, request_id, request_fingerprint)
                if previous is not None:
                    return previous
                raise NotFound(
                    "ANNOTATION_NOT_FOUND",
                    f"Game {game_id} has no annotation {annotation_id!r}.",
                    metadata={"annotation_id": annotation_id},
                )

            def build(
                head: Head, checked_at: int = checked_at
            ) -> tuple[list[events_pb2.Event], folding.Position]:
                if head.sequence != checked_at:  # the stream moved since the check
                    raise _Recheck
                body = events_pb2.AnnotationRemoved(annotation_id=annotation_id)
                events: list[events_pb2.Event] = []
                position = self._push(
                    head.position, events, self._event(head.position, annotation_removed=body)
                )
                return events, position

            try:
                return await self._change(
                    game_id,
                    build,
                    expected_revision=None,
                    request_id=request_id,
                    actor=actor,
                    request_fingerprint=request_fingerprint,
                )
            except _Recheck:
                await self.load(game_id)  # bring the cached head up to the stream
        raise SequenceMoved(game_id, 0, 0)

    # ----------------------------------------------------------------- reads

    def game_types(self) -> list[game_pb2.GameInfo]:
        return [describe(game) for game in all_games().values()]

    async def list_games(
        self, game: str, status: int, page_size: int, token: str
    ) -> tuple[list[service_pb2.GameSummary], str]:
        offset, size = page_bounds(page_size, token)
        wanted = find_game(game).name if game else ""
        before = offset or None
        found: list[service_pb2.GameSummary] = []
        while len(found) < size:
            batch = await self.store.list_game_ids(before, max(size, 50))
            if not batch:
                return found, ""
            blobs = await self.store.summaries([gid for gid, _ in batch])
            for (_gid, rank), blob in zip(batch, blobs, strict=True):
                before = rank
                if blob is None:
                    continue
                summary = service_pb2.GameSummary.FromString(blob)
                if (wanted and summary.game != wanted) or (status and summary.status != status):
                    continue
                found.append(summary)
                if len(found) == size:
                    return found, page_token(rank)
        return found, ""

    async def events(self, game_id: str) -> list[events_pb2.Event]:
        check_game_id(game_id)
        events = await self.store.read(game_id)
        if not events:
            raise GameNotFound(game_id)
        return events

    async def annotations(self, game_id: str) -> list[service_pb2.Annotation]:
        notes = live_annotations(await self.events(game_id))
        return sorted(notes.values(), key=lambda a: (a.revision, a.time.ToNanoseconds()))

    async def audit(self, game_id: str) -> list[service_pb2.AuditEntry]:
        events = await self.events(game_id)
        final = folding.fold(events)
        in_effect = {applied.revision for applied in final.applied or ()}
        players = final.table.players
        return [
            service_pb2.AuditEntry(
                event=event,
                summary=_describe_event(event, players),
                undone=event.WhichOneof("body") == "move_recorded"
                and event.revision not in in_effect,
            )
            for event in events
        ]

    async def replay(
        self, game_id: str, first: int, last: int, viewer: service_pb2.Viewer | None
    ) -> AsyncIterator[service_pb2.ReplayGameResponse]:
        if last and first > last:
            raise InvalidRequest(
                "from_revision",
                f"from_revision {first} is after to_revision {last}: nothing to replay.",
            )
        events = await self.events(game_id)
        head_revision = max(e.revision for e in events)
        last = last or head_revision
        if first > head_revision or last > head_revision:
            raise OutOfRange(
                "REVISION_OUT_OF_RANGE",
                f"The game's head is revision {head_revision}.",
                field_name="from_revision" if first > head_revision else "to_revision",
                metadata={"head_revision": str(head_revision)},
            )
        position = folding.start(events[0].game_created)
        seen = viewer_of(viewer, len(position.table.players))
        for index, event in enumerate(events):
            before = position
            if index:
                position = folding.advance(position, event)
            if event.revision > last:
                return
            if event.revision >= first:
                yield replay_item(event, before, position, seen)

    async def legal_moves(
        self, game_id: str, revision: int, page_size: int, token: str
    ) -> service_pb2.ListLegalMovesResponse:
        offset, size = page_bounds(page_size, token)
        position = await self.position_at(game_id, revision)
        response = service_pb2.ListLegalMovesResponse(to_move=to_move_message(position))
        if position.to_move() == TERMINAL:
            return response
        game, state = position.game, position.state
        moves: Sequence[Any] = game.legal_moves(state)
        who = position.to_move()
        seat = who if who >= 0 else None
        response.total_size = len(moves)
        for inner in moves[offset : offset + size]:
            response.moves.add(
                move=position.table.wrap(inner, seat), notation=game.format(inner, state)
            )
        if offset + size < len(moves):
            response.next_page_token = page_token(offset + size)
        return response

    async def import_game(
        self, events: Sequence[events_pb2.Event], request_id: str, actor: events_pb2.Actor
    ) -> Outcome:
        check_length("request_id", request_id, MAX_REQUEST_ID)
        if not events:
            raise InvalidRequest("events", "Nothing to import.")
        if len(events) > MAX_IMPORT_EVENTS:
            raise InvalidRequest("events", f"At most {MAX_IMPORT_EVENTS} events per import.")
        if events[0].WhichOneof("body") == "game_created":
            check_components("events[0].game_created.components", events[0].game_created.components)
        game_id = new_game_id(request_id)
        request_fingerprint = ""
        if request_id:
            request_fingerprint = fingerprint(
                "ImportGame", *(event.SerializeToString(deterministic=True) for event in events)
            )
            previous = await self._previous(game_id, request_id, request_fingerprint)
            if previous is not None:
                return previous
        copies: list[events_pb2.Event] = []
        for event in events:
            copy = events_pb2.Event()
            copy.CopyFrom(event)
            copy.ClearField("prev_hash")
            copy.ClearField("hash")
            copies.append(copy)
        if copies[0].WhichOneof("body") != "game_created":
            raise HistoryError("NO_CREATION", "An imported game must start with GameCreated.")
        copies[0].game_created.game_id = game_id
        if not copies[0].game_created.rules_version:  # exported before the field existed
            copies[0].game_created.rules_version = find_game(
                copies[0].game_created.game
            ).rules_version
        created = copies[0].game_created
        # Re-validates every move, the numbering, each stored notation, every undo/redo
        # and ending, and (dealt) the revealed seed and every outcome drawn from it.
        check = HistoryCheck()
        for event in copies:
            check.add(event)
        check.finish()
        assert check.position is not None
        position = check.position
        if created.mode == DEALT and position.status is folding.Status.IN_PROGRESS:
            raise InvalidSetup(
                "DEALT_IN_PROGRESS",
                "A dealt game can be imported only once it has ended: its seed is secret.",
            )
        for event in copies:
            if not event.HasField("time"):
                event.time.CopyFrom(now())
            if not event.actor.user:
                event.actor.CopyFrom(actor)
        head = Head(game_id, position, b"", copies[0].time, copies[-1].time)
        await self.store.index_game(game_id)
        result = await self.store.append(
            game_id,
            copies,
            expected_sequence=0,
            prev_hash=b"",
            expected_revision=None,
            request_id=request_id,
            summary=summarize(head).SerializeToString(),
            fingerprint=request_fingerprint,
        )
        if result.duplicate:
            return Outcome(await self.load(game_id), result.events, duplicate=True)
        return Outcome(
            self._remember(replace(head, last_hash=result.events[-1].hash)), result.events
        )

    async def verify(self, game_id: str) -> service_pb2.VerifyGameResponse:
        check_game_id(game_id)
        raw = await self.store.read_raw(game_id)
        if not raw:
            raise GameNotFound(game_id)
        return verify_entries(raw, await self.store.head(game_id))


class HistoryCheck:
    """The checks a history must pass beyond its hash chain, event by event: the strict fold
    (every move re-validated, each stored notation canonical, each undo and redo naming the
    move it takes back, GameEnded only at the end with the rules' result), dealt moves
    exactly where chance moves are in dealt mode, and, once a dealt game is over, the
    revealed seed matching the commitment and every dealt outcome re-drawn from it.
    `add` and `finish` raise RulesError; `failed_at` is the (index, revision) it concerns."""

    def __init__(self) -> None:
        self.position: folding.Position | None = None
        self.index = 0
        self.dealt: list[tuple[int, int, list[tuple[Message, int]], Message]] = []
        self.seed = b""
        self.ending: tuple[int, int] | None = None
        self.failed_at = (0, 0)
        self.dealt_checked = 0

    def add(self, event: events_pb2.Event) -> None:
        self.index += 1
        self.failed_at = (self.index, event.revision or self.index)
        body = event.WhichOneof("body")
        position = self.position
        if position is None:
            if body != "game_created" or event.sequence != 1:
                raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
            self.position = folding.start(event.game_created)
            return
        if body == "move_recorded" and position.table.mode == DEALT:
            recorded = event.move_recorded
            inner = position.table.unwrap(recorded.move)
            chance = position.to_move() == CHANCE
            if recorded.dealt != chance:
                raise HistoryError(
                    "DEALT_MISMATCH",
                    f"Event {self.index}: in dealt mode the server deals every chance move "
                    "and nothing else.",
                )
            if chance:
                outcomes = list(position.game.chance_outcomes(position.state))
                self.dealt.append((self.index, event.revision, outcomes, inner))
        self.position = folding.advance(position, event, strict=True)
        if body == "game_ended":
            self.seed, self.ending = event.game_ended.seed, self.failed_at
        elif body == "game_abandoned":
            self.seed, self.ending = event.game_abandoned.seed, self.failed_at

    def finish(self) -> None:
        """The dealt checks that need the whole game (the seed is revealed at its end)."""
        position = self.position
        assert position is not None
        created = position.table.created
        if created.mode != DEALT or position.status is folding.Status.IN_PROGRESS:
            return
        assert self.ending is not None
        self.failed_at = self.ending
        if not self.seed or hashlib.sha256(self.seed).digest() != created.seed_commitment:
            raise HistoryError(
                "SEED_MISMATCH",
                f"Event {self.ending[0]} ends a dealt game without revealing the seed "
                "committed to at its creation.",
            )
        for index, revision, outcomes, inner in self.dealt:
            total = sum(weight for _, weight in outcomes)
            drawn = folding.pick_outcome(outcomes, deal_ticket(self.seed, revision, total))
            if drawn != inner:
                self.failed_at = (index, revision)
                raise HistoryError(
                    "NOT_DEALT_BY_SEED", f"Event {index} is not what the seed dealt."
                )
            self.dealt_checked += 1


def verify_entries(
    raw: Sequence[tuple[int, bytes]], stored_head: Any
) -> service_pb2.VerifyGameResponse:
    """Recompute the chain from the stored bytes, re-fold every event strictly and, once a
    dealt game is over, check its seed and re-draw every dealt outcome (`HistoryCheck`).
    The first event that does not hold is reported."""
    response = service_pb2.VerifyGameResponse()
    prev_hash = GENESIS_HASH
    check = HistoryCheck()

    def bad(sequence: int, revision: int, problem: str) -> service_pb2.VerifyGameResponse:
        response.ok = False
        response.first_bad_sequence = sequence
        response.first_bad_revision = revision
        response.problem = problem
        return response

    for index, (sequence, data) in enumerate(raw, start=1):
        position = check.position
        expected_revision = position.revision + 1 if position else 1
        event = events_pb2.Event()
        try:
            event.ParseFromString(data)
        except Exception:  # DecodeError: the bytes were damaged
            return bad(index, expected_revision, f"event {index} does not decode")
        response.events_checked = index
        revision = event.revision or expected_revision
        if sequence != index or event.sequence != index:
            return bad(index, revision, f"event {index} is numbered {event.sequence}")
        if event.prev_hash != prev_hash:
            return bad(index, revision, f"event {index} does not link to event {index - 1}")
        # The hash covers the stored bytes themselves (see `stored_hash`), not a copy
        # re-serialized from what they decode to.
        sealed = stored_hash(data)
        if sealed is None or sealed[0] != sealed[1] or event.hash != sealed[0]:
            return bad(index, revision, f"event {index}'s hash does not match its stored bytes")
        prev_hash = event.hash
        try:
            check.add(event)
        except RulesError as exc:
            return bad(index, revision, f"event {index} does not hold: {exc}")
        except Exception as exc:  # damaged content the rules cannot even read
            return bad(index, revision, f"event {index} does not apply ({type(exc).__name__})")
    final = check.position
    assert final is not None
    if stored_head.sequence != len(raw) or stored_head.last_hash != prev_hash:
        return bad(len(raw) + 1, final.revision + 1, "events are missing at the end")
    try:
        check.finish()
    except RulesError as exc:
        return bad(*check.failed_at, str(exc))
    response.dealt_moves_checked = check.dealt_checked
    response.ok = True
    return response
