"""The append protocol: the one path by which every change reaches the store.

A use case builds events on a head; what is to be appended is a `Plan` (the events, the
position they lead to, the base they follow and what the compare-and-append must check).
`Appender.append` stores a plan, creation and import included (a plan with no base
creates the game), and remembers the game's new head. `Appender.change` is the retry
loop of a change to an existing game: load the head, build, append; when another writer
came first it builds again on the new head, and a stale expected version is refused.

Idempotency: a request id is stored with a fingerprint of what its request asks
(`fingerprint`); a retry gets the original events back (`Appender.previous`), another
request under the same id is refused (IdempotencyKeyReused).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from google.protobuf import timestamp_pb2

from tablelog.replay import fold as folding
from tablelog.replay.core import RulesError
from tablelog.service.access.quotas import storage_club
from tablelog.service.errors import DeletedGame, InvalidRequest
from tablelog.service.limits import MAX_REQUEST_ID, check_game_id, check_length
from tablelog.service.metrics import APPEND_RETRIES
from tablelog.service.recording.building import ENDING_BODIES
from tablelog.service.recording.game_index import entry_of, index_after_append, index_club
from tablelog.service.recording.heads import Head, Heads
from tablelog.service.recording.memory_feed import note_after_append
from tablelog.service.recording.views import summarize
from tablelog.service.store import (
    ChainMismatch,
    EventStore,
    GameNotFound,
    SeedOp,
    SequenceMoved,
    StaleVersion,
)
from tablelog.v1 import events_pb2, service_pb2

APPEND_ATTEMPTS = 20
"""Builds of one change before it gives up to writers that keep coming first (ABORTED)."""


def now() -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(time.time_ns())
    return stamp


def new_game_id(request_id: str = "", club: str = "") -> str:
    """A short id; derived from the request id so a retried CreateGame finds its game.

    A request id names a change within one club: the id is derived from the club and the
    request id together (the club's length first, so no club and request id pair reads as
    another), so another club replaying the same request id makes a game of its own and
    never reaches this one (issue 23: a replayed CreateGame request id took over a game)."""
    scoped = len(club).to_bytes(4, "big") + club.encode() + request_id.encode()
    raw = (
        hashlib.sha256(b"tablelog/create-in-club/" + scoped).digest()
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


def deleted_refusal(game_id: str, tombstone: events_pb2.Event) -> DeletedGame:
    """The refusal of a change to a deleted game: who deleted it and when (UTC)."""
    when = tombstone.time.ToDatetime(tzinfo=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return DeletedGame(game_id, tombstone.actor.user, when)


@dataclass(frozen=True, slots=True)
class Origin:
    """Who asked for a change, and the request id (with its fingerprint) it was asked under."""

    actor: events_pb2.Actor
    request_id: str = ""
    fingerprint: str = ""
    """What the request asks (see `fingerprint`); stored with a non-empty request id."""


def stamp(events: Sequence[events_pb2.Event], origin: Origin, rules_version: str) -> None:
    """Mark new events with the time, who asked, the request id and the rules version."""
    stamped = now()
    for event in events:
        event.time.CopyFrom(stamped)
        event.actor.CopyFrom(origin.actor)
        event.request_id = origin.request_id
        event.rules_version = rules_version


@dataclass(frozen=True, slots=True)
class Plan:
    """One compare-and-append: `events` (numbered and stamped) after `base`, leading to
    `after`."""

    game_id: str
    base: Head | None
    """The head the events follow; None when their first event creates the game."""
    events: tuple[events_pb2.Event, ...]
    after: folding.Position
    expected_revision: int | None
    """The revision the game must be at; None when any will do (annotations, creation)."""
    origin: Origin
    seed: bytes | None = None
    """Dealt mode's secret seed of the game (dropped when the plan ends the game)."""

    @property
    def ending(self) -> bool:
        return self.events[-1].WhichOneof("body") in ENDING_BODIES


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a change appended, and the game after it."""

    head: Head
    events: tuple[events_pb2.Event, ...]
    duplicate: bool = False
    summary: service_pb2.GameSummary | None = None
    """The game after the change (computed once: stored for listing and answered)."""
    before: folding.Position | None = None
    """The position the events follow (None for a creation, and for a retry's original
    events, whose position is folded again when it is needed)."""

    def game(self) -> service_pb2.GameSummary:
        if self.summary is not None:
            return self.summary
        return summarize(self.head, self.events[-1] if self.events else None)


Built = tuple[list[events_pb2.Event], folding.Position]
"""The events a change made on a head, and the position after them."""
Build = Callable[[Head], Built]
"""How a change makes its events on a head (raising a rules error when it may not)."""


class Appender:
    """Appends plans to the store and keeps the head cache in step."""

    def __init__(self, store: EventStore, heads: Heads) -> None:
        self.store = store
        self.heads = heads

    async def previous(self, game_id: str, origin: Origin) -> Outcome | None:
        """The original result of a request id already appended (a retry); a request id
        already used by another request is refused (IdempotencyKeyReused)."""
        if not origin.request_id:
            return None
        original = await self.store.lookup_request(game_id, origin.request_id, origin.fingerprint)
        if original is None:
            return None
        return Outcome(await self.heads.load(game_id), tuple(original), duplicate=True)

    async def tombstone(self, head: Head) -> events_pb2.Event:
        """The GameDeleted event of a game deleted at `head`: its stream's last event (the
        fold refuses any event after it)."""
        last = await self.store.read(head.game_id, head.sequence - 1, 1)
        if not last or last[-1].WhichOneof("body") != "game_deleted":
            raise GameNotFound(head.game_id)  # not deleted at this head after all
        return last[-1]

    async def append(self, plan: Plan) -> Outcome:
        """Compare-and-append `plan`; raises what the store raises (StaleVersion,
        SequenceMoved, ChainMismatch, GameExists, ...). A duplicate request id answers the
        original events with the game's current head."""
        base = plan.base
        ending = plan.ending
        if base is None:
            seed_op = SeedOp.SET if plan.seed and not ending else SeedOp.KEEP
        else:
            seed_op = SeedOp.DELETE if ending else SeedOp.KEEP
        seed = None if ending else plan.seed
        created_time = base.created_time if base is not None else plan.events[0].time
        updated_time = plan.events[-1].time
        # The summary stored for listing is computed on the head as it will be.
        summary = summarize(
            Head(plan.game_id, plan.after, b"", created_time, updated_time, seed), plan.events[-1]
        )
        club = storage_club()
        if base is None:
            # Refused before the game is indexed: a creation with no room leaves no trace.
            await self.store.check_club_storage(club, plan.events)
            created = plan.events[0].game_created
            await self.store.index_games(index_club(created), [entry_of(summary)])
        result = await self.store.append(
            plan.game_id,
            plan.events,
            expected_sequence=base.sequence if base is not None else 0,
            prev_hash=base.last_hash if base is not None else b"",
            expected_revision=plan.expected_revision,
            request_id=plan.origin.request_id,
            summary=summary.SerializeToString(),
            seed_op=seed_op,
            seed=(plan.seed or b"") if seed_op is SeedOp.SET else b"",
            fingerprint=plan.origin.fingerprint,
            club=club,
        )
        if result.duplicate:
            self.heads.forget(plan.game_id)
            return Outcome(await self.heads.load(plan.game_id), result.events, duplicate=True)
        if base is not None and base.position.status is not plan.after.status:
            await index_after_append(self.store, plan.after.table.created, summary)
        await note_after_append(
            self.store,
            plan.game_id,
            plan.after.table.created,
            base.position.status if base is not None else None,
            plan.after.status,
        )
        last_hash = result.events[-1].hash
        head = Head(plan.game_id, plan.after, last_hash, created_time, updated_time, seed)
        self.heads.checkpoints.after_append(
            plan.game_id,
            base.sequence if base is not None else 0,
            plan.after,
            last_hash,
            keyed=bool(result.events[-1].chain_key_id),
        )
        return Outcome(
            self.heads.remember(head),
            result.events,
            summary=summary,
            before=base.position if base is not None else None,
        )

    async def change(
        self, game_id: str, build: Build, *, expected_revision: int | None, origin: Origin
    ) -> Outcome:
        """Load the game's head, build events on it, append them; build again on the new
        head when other events came first. A refused build or a stale version is first
        checked against the request id (a retry of a change that was appended)."""
        check_game_id(game_id)
        check_length("request_id", origin.request_id, MAX_REQUEST_ID)
        if expected_revision == 0:
            raise InvalidRequest(
                "expected_version", "expected_version is required: pass the game's version."
            )
        head = await self.heads.load(game_id, fresh=False)
        for _attempt in range(APPEND_ATTEMPTS):
            if head.position.status is folding.Status.DELETED:
                # One check for every change (moves, undo, amends, notes, seats): a deleted
                # game is closed for good. A retry of a change appended before still gets
                # its original answer.
                previous = await self.previous(game_id, origin)
                if previous is not None:
                    return previous
                raise deleted_refusal(game_id, await self.tombstone(head))
            try:
                if expected_revision is not None and expected_revision != head.revision:
                    head = await self.heads.catch_up(head)
                    if expected_revision != head.revision:
                        raise StaleVersion(game_id, expected_revision, head.revision)
                events, after = build(head)
            except (StaleVersion, RulesError):
                previous = await self.previous(game_id, origin)
                if previous is not None:
                    return previous
                raise
            stamp(events, origin, head.position.game.rules_version)
            plan = Plan(game_id, head, tuple(events), after, expected_revision, origin, head.seed)
            try:
                return await self.append(plan)
            except SequenceMoved as moved:
                APPEND_RETRIES.inc()
                # Behind the cached head: the stream was cut (verified: TamperedHistory).
                if moved.sequence < head.sequence:
                    head = await self.heads.reconcile(head)
                else:
                    head = await self.heads.catch_up(head)
            except ChainMismatch:
                APPEND_RETRIES.inc()
                # The cached head is not the stored one: only a verified history that still
                # holds it is built on (else TamperedHistory, DATA_LOSS).
                head = await self.heads.reconcile(head)
            except StaleVersion as stale:
                if stale.current < head.revision:  # the history went back: cut under us?
                    await self.heads.reconcile(head)
                self.heads.forget(game_id)
                raise
        raise SequenceMoved(game_id, head.sequence, head.revision)
