"""Checking a game's history: the chain (`ChainWalk`: numbering, links and keyed seals,
over stored bytes or over exported events), the strict checks every imported history must
pass (`HistoryCheck`), and VerifyGame's check of what is stored (`verify_entries`): the
chain, the receipts clients kept, then the same strict checks.

Damaged stored data is answered as such (ok=false with the first bad sequence and
revision); a fault of the server's own (a bug in the rules) is not damage and propagates
(INTERNAL, logged), so it is never reported as a damaged history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace

from google.protobuf.message import DecodeError, Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, FULL, HistoryError, RulesError, Viewer
from tablelog.replay.variations import check_variation, start_before
from tablelog.service.errors import InvalidRequest
from tablelog.service.limits import check_game_id
from tablelog.service.recording.building import deal_key, deal_ticket
from tablelog.service.recording.offload import WorkerPool
from tablelog.service.store import EventStore, GameNotFound, StoredHead
from tablelog.service.store.chain import GENESIS_HASH, Chain, Sealing
from tablelog.v1 import events_pb2, service_pb2

MAX_RECEIPTS = 100
"""Receipts one VerifyGame may be given."""


class ChainBroken(Exception):
    """The event at `index` (its place in the history, 1-based) does not hold in the chain."""

    def __init__(self, index: int, revision: int, problem: str) -> None:
        super().__init__(problem)
        self.index = index
        self.revision = revision
        self.problem = problem


class ChainWalk:
    """Walks a chain event by event, from the start or from a head already checked: each
    event numbered next, linked to the one before, its hash keyed under a trusted key (or
    plain SHA-256 for the unkeyed events recorded before chains were keyed, which may only
    come before every keyed one: an unkeyed event after a keyed one was sealed again by
    someone without the key). Raises ChainBroken at the first event that does not hold.

    With `allow_unknown_keys` (imports), an event keyed with a key not trusted here is taken
    on its link alone, and the first one is remembered (`unverified_at`)."""

    def __init__(
        self,
        chain: Chain,
        *,
        after: int = 0,
        revision: int = 0,
        prev_hash: bytes = GENESIS_HASH,
        keyed: bool = False,
        allow_unknown_keys: bool = False,
    ) -> None:
        self.chain = chain
        self.index = after
        self.revision = revision
        self.prev_hash = prev_hash
        self.keyed = keyed
        """Whether a keyed event has been seen (no unkeyed one may follow)."""
        self.unkeyed = 0
        self.key_ids: set[str] = set()
        self.allow_unknown_keys = allow_unknown_keys
        self.unverified_at = 0
        """The index of the first event keyed with a key not trusted here (0: none)."""
        self.unverified_key = ""
        self.hashes: dict[int, bytes] = {}
        """The hash of every event walked, by sequence (to check receipts against)."""

    @classmethod
    def resuming(
        cls, chain: Chain, position: folding.Position, last_hash: bytes, keyed: bool
    ) -> ChainWalk:
        """A walk that continues after `position` (checked already, its event's hash
        `last_hash`; `keyed`: whether a keyed event came at or before it)."""
        return cls(
            chain,
            after=position.sequence,
            revision=position.revision,
            prev_hash=last_hash,
            keyed=keyed,
        )

    def _next(self, event: events_pb2.Event, sequence: int) -> tuple[int, int]:
        index = self.index + 1
        revision = event.revision or self.revision + 1
        if sequence != index or event.sequence != index:
            # A missing or moved entry: the revision it should have had is the next one.
            raise ChainBroken(
                index,
                self.revision + 1,
                f"event {index} is missing or out of place: entry {sequence} holds event "
                f"{event.sequence}",
            )
        if event.prev_hash != self.prev_hash:
            raise ChainBroken(index, revision, f"event {index} does not link to event {index - 1}")
        return index, revision

    def _sealed(
        self,
        index: int,
        revision: int,
        event: events_pb2.Event,
        expected: bytes | None,
        what: str,
    ) -> None:
        key_id = event.chain_key_id
        sealing = self.chain.sealing(key_id)
        if sealing is Sealing.UNKEYED:
            if self.keyed:
                raise ChainBroken(
                    index,
                    revision,
                    f"event {index} is not keyed, after keyed events: it was sealed again "
                    "without the chain key",
                )
            self.unkeyed += 1
        elif sealing is Sealing.UNKNOWN_KEY:
            if not self.allow_unknown_keys:
                raise ChainBroken(
                    index,
                    revision,
                    f"event {index} is keyed with chain key {key_id[:16]!r}, which this "
                    "server does not trust",
                )
            self.keyed = True
            if not self.unverified_at:
                self.unverified_at, self.unverified_key = index, key_id
        else:
            self.keyed = True
            self.key_ids.add(key_id)
        if sealing is not Sealing.UNKNOWN_KEY and (expected is None or event.hash != expected):
            raise ChainBroken(
                index,
                revision,
                f"event {index}'s hash does not match its {what} under its chain key",
            )
        self.index, self.revision, self.prev_hash = index, revision, event.hash
        self.hashes[index] = event.hash

    def stored(self, sequence: int, data: bytes) -> events_pb2.Event:
        """The stored entry `sequence` (from its entry id), decoded and checked. The hash
        covers the stored bytes themselves (`Chain.stored_hash`), not a copy re-serialized
        from what they decode to."""
        event = events_pb2.Event()
        try:
            event.ParseFromString(data)
        except DecodeError:
            index = self.index + 1
            raise ChainBroken(index, self.revision + 1, f"event {index} does not decode") from None
        index, revision = self._next(event, sequence)
        sealed = self.chain.stored_hash(data, event.chain_key_id)
        expected = None if sealed is None or sealed[0] != event.hash else sealed[1]
        self._sealed(index, revision, event, expected, "stored bytes")
        return event

    def exported(self, event: events_pb2.Event) -> None:
        """An event as exported (decoded: its deterministic serialization is what was
        hashed), checked."""
        index, revision = self._next(event, event.sequence)
        self._sealed(index, revision, event, self.chain.event_hash(event), "content")


def check_receipts(
    game_id: str, receipts: Sequence[service_pb2.Receipt], chain: Chain
) -> list[service_pb2.Receipt]:
    """The receipts a client gave, bounded and checked as issued by this service for this
    game (a receipt not issued here proves nothing, so it is refused rather than taken as
    evidence against the stored history)."""
    if len(receipts) > MAX_RECEIPTS:
        raise InvalidRequest("receipts", f"At most {MAX_RECEIPTS} receipts.")
    for number, receipt in enumerate(receipts):
        where = f"receipts[{number}]"
        if receipt.game_id != game_id:
            raise InvalidRequest(f"{where}.game_id", f"{where} is a receipt of another game.")
        if len(receipt.chain_hash) != 32 or len(receipt.key_id) > 64 or not receipt.sequence:
            raise InvalidRequest(where, f"{where} is not a receipt.")
        if not chain.genuine(receipt):
            raise InvalidRequest(
                where,
                f"{where} was not issued by this service (or not under a key it trusts): its "
                "tag does not hold.",
            )
    return list(receipts)


def held(
    walk: ChainWalk, receipts: Sequence[service_pb2.Receipt | StoredHead]
) -> tuple[int, int, str] | None:
    """The first receipt (or stored head: the event it names must be in the stream too) the
    walked events do not hold, as (index, revision, problem): an event cut off, or another
    event at its sequence. None when every one holds."""
    missing: list[tuple[int, int, str]] = []
    for receipt in receipts:
        if isinstance(receipt, StoredHead):
            sequence, revision, chain_hash = receipt.sequence, receipt.revision, receipt.last_hash
            what = "the stored head"
        else:
            sequence, revision = receipt.sequence, receipt.revision
            chain_hash, what = receipt.chain_hash, f"a receipt of revision {revision}"
        found = walk.hashes.get(sequence)
        if found is None and sequence > walk.index:
            missing.append(
                (
                    walk.index + 1,
                    walk.revision + 1,
                    f"events are missing at the end: {what} holds event {sequence}",
                )
            )
        elif found != chain_hash:
            missing.append(
                (
                    sequence,
                    revision,
                    f"event {sequence} is not the event {what} holds: the history was rewritten",
                )
            )
    return min(missing, default=None)


class HistoryCheck:
    """The checks a history must pass beyond its hash chain, event by event: the strict fold
    (every move re-validated, each stored notation canonical, each undo and redo naming the
    move it takes back, GameEnded only at the end with the rules' result), dealt moves
    exactly where chance moves are in dealt mode, and, once a dealt game is over, the
    revealed seed matching the commitment and every dealt outcome re-drawn from it.
    `add` and `finish` raise RulesError; `failed_at` is the (index, revision) it concerns.

    Each annotation's variation is checked by the rules from the position before the move
    it annotates, and must be stored as the rules write it (typed moves, canonical
    notation). `variation_viewer` (imports:
    `tablelog.service.recording.variations.variation_viewer`) also holds it to the rule
    AddAnnotation holds it to, checked from the view it gives for the game's last position;
    VerifyGame leaves it out (the full view), since whether a game shows everything changes with its
    history (a table game reopened by undo)."""

    def __init__(
        self, variation_viewer: Callable[[folding.Position], Viewer] | None = None
    ) -> None:
        self.variation_viewer = variation_viewer
        self.history: dict[int, folding.Position] = {}
        """The position after each history revision (they share their structure), but for
        the moves taken as the reader applied them: those are in `runs`."""
        self.runs: list[tuple[int, folding.Position]] = []
        """Each run of moves taken as checked, as (its first revision, the position after
        its last move): the position after any move of it is rebuilt from that one."""
        self.variations: list[tuple[int, int, folding.Position, events_pb2.Variation]] = []
        self._position: folding.Position | None = None
        self._taken: list[folding.Applied] = []
        """The moves taken as checked since `_position`, not yet folded into a position:
        one position is built for the whole run rather than one per move."""
        self._taken_sequence = 0
        self.index = 0
        self.dealt: list[tuple[int, int, bytes, list[tuple[Message, int]], Message]] = []
        self.seed = b""
        self.ending: tuple[int, int] | None = None
        self.failed_at = (0, 0)
        self.dealt_checked = 0

    @property
    def position(self) -> folding.Position | None:
        """The position after the events added so far."""
        if self._taken:
            self._fold_taken()
        return self._position

    def _fold_taken(self) -> None:
        start = self._position
        assert start is not None
        taken = self._taken
        self._position = folding.recorded_run(start, taken, self._taken_sequence)
        self.runs.append((taken[0].revision, self._position))
        self._taken = []

    def at(self, revision: int) -> folding.Position | None:
        """The position after history revision `revision`, None if the history has none."""
        at = self.history.get(revision)
        if at is not None:
            return at
        if self._taken:
            self._fold_taken()
        for first, end in self.runs:
            if first <= revision <= end.revision:
                return _within_run(end, revision)
        return None

    def add(self, event: events_pb2.Event, checked: folding.Applied | None = None) -> None:
        """`checked`: this MoveRecorded's move as the rules applied it in this process
        (ImportRecord's reader), taken as it is when it is this very move in this very
        position of a table game in progress, so the move is not applied, formatted and
        compared again, nor a position built for it (`_take`); anything else is checked in
        full."""
        self.index += 1
        if checked is not None and self._take(event, checked):
            return
        self.failed_at = (self.index, event.revision or self.index)
        body = event.WhichOneof("body")
        position = self.position
        if position is None:
            if body != "game_created" or event.sequence != 1:
                raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
            self._position = folding.start(event.game_created)
            self.history[1] = self._position
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
                key = deal_key(position, outcomes)
                self.dealt.append((self.index, event.revision, key, outcomes, inner))
        self._position = folding.advance(position, event, strict=True)
        if body in folding.HISTORY_BODIES:
            self.history[event.revision] = self._position
        elif body == "annotation_added" and event.annotation_added.variation.moves:
            note = event.annotation_added
            at = self.at(note.revision)
            if at is None:
                raise HistoryError(
                    "ANNOTATION_REVISION",
                    f"Event {self.index} annotates revision {note.revision}, which the history "
                    "before it does not have.",
                )
            start = start_before(at, note.revision)
            self.variations.append((self.index, event.revision, start, note.variation))
        if body == "game_ended":
            self.seed, self.ending = event.game_ended.seed, self.failed_at
        elif body == "game_abandoned":
            self.seed, self.ending = event.game_abandoned.seed, self.failed_at

    def _take(self, event: events_pb2.Event, checked: folding.Applied) -> bool:
        """Take `checked` as `event`'s move, with no position built for it, when it is
        the move `event` records, applied by the rules to the state it follows (the same
        object, or an equal one: the first move, whose start the reader set up on its
        own), as the next revision and sequence, in a table game in progress. Whether it
        was taken; nothing changes when it is not."""
        position = self._position
        if position is None or event.WhichOneof("body") != "move_recorded":
            return False
        taken = self._taken
        if taken:
            last = taken[-1]
            sequence, revision, state = self._taken_sequence, last.revision, last.after
        elif position.table.mode == DEALT or position.status is not folding.Status.IN_PROGRESS:
            return False
        else:
            sequence, revision, state = position.sequence, position.revision, position.state
        recorded = event.move_recorded
        if not (
            event.sequence == sequence + 1
            and event.revision == revision + 1 == checked.revision
            and (checked.before is state or checked.before == state)
            and not recorded.dealt
            and checked.notation == recorded.notation
            and checked.move == recorded.move
        ):
            return False
        taken.append(checked)
        self._taken_sequence = event.sequence
        return True

    def finish(self) -> None:
        """The checks that need the whole game: the variations (whether the game shows
        everything is known at its end) and the dealt checks (the seed is revealed there)."""
        position = self.position
        assert position is not None
        viewer = FULL if self.variation_viewer is None else self.variation_viewer(position)
        for index, revision, start, variation in self.variations:
            self.failed_at = (index, revision)
            if check_variation(start, variation, viewer) != variation:
                raise HistoryError(
                    "WRONG_VARIATION",
                    f"Event {index} stores a variation whose moves are not typed and written "
                    "as the rules write them.",
                )
        created = position.table.created
        if created.mode != DEALT or position.status is folding.Status.IN_PROGRESS:
            return
        if position.status is folding.Status.DELETED and self.ending is None:
            return  # deleted while in progress: its seed was never revealed
        assert self.ending is not None
        self.failed_at = self.ending
        if not self.seed or hashlib.sha256(self.seed).digest() != created.seed_commitment:
            raise HistoryError(
                "SEED_MISMATCH",
                f"Event {self.ending[0]} ends a dealt game without revealing the seed "
                "committed to at its creation.",
            )
        for index, revision, key, outcomes, inner in self.dealt:
            total = sum(weight for _, weight in outcomes)
            drawn = folding.pick_outcome(outcomes, deal_ticket(self.seed, key, total))
            if drawn != inner:
                self.failed_at = (index, revision)
                raise HistoryError(
                    "NOT_DEALT_BY_SEED", f"Event {index} is not what the seed dealt."
                )
            self.dealt_checked += 1


def _within_run(end: folding.Position, revision: int) -> folding.Position:
    """The position after the move named `revision` of a run of recorded moves (nothing
    but moves recorded, each clearing redo) that ends at `end`."""
    node = end.applied
    back = chances = 0
    while node is not None and node.head.revision != revision:
        chances += node.head.chance
        node = node.tail
        back += 1
    assert node is not None
    return replace(
        end,
        state=node.head.after,
        revision=revision,
        sequence=end.sequence - back,
        applied=node,
        move_count=end.move_count - back,
        chance_count=end.chance_count - chances,
    )


def foreign_history(game_id: str, first: events_pb2.Event) -> str:
    """Why a stored history is not `game_id`'s, or "" when it is: its GameCreated names
    another game. The chain seals the game id in that event, so a stream and head copied
    from another game under this game's id verify link by link but name the other game
    (games created before creations named their game say nothing: ""). An import names
    the new id and keeps the export's in `Imported.original_game_id`."""
    if first.WhichOneof("body") != "game_created":
        return ""
    named = first.game_created.game_id
    if named and named != game_id:
        return (
            f"event 1 creates game {named!r}, not {game_id!r}: this is another game's "
            "history stored under this game's id"
        )
    return ""


async def verify(
    store: EventStore,
    game_id: str,
    receipts: Sequence[service_pb2.Receipt] = (),
    offload: WorkerPool | None = None,
) -> service_pb2.VerifyGameResponse:
    """VerifyGame: the stored entries and head of `game_id`, checked (`verify_entries`, by
    a worker process of `offload` when given: a long game's check is tens of ms).
    The head is read first: appends that land between the two reads only lengthen the
    stream past it."""
    check_game_id(game_id)
    receipts = check_receipts(game_id, receipts, store.chain)
    stored_head = await store.head(game_id)
    raw = await store.read_raw(game_id)
    if not raw:
        raise GameNotFound(game_id)
    if offload is not None:
        return await offload.call(verify_entries, raw, stored_head, store.chain, receipts, game_id)
    return verify_entries(raw, stored_head, store.chain, receipts, game_id)


def verify_entries(
    raw: Sequence[tuple[int, bytes]],
    stored_head: StoredHead,
    chain: Chain,
    receipts: Sequence[service_pb2.Receipt] = (),
    game_id: str = "",
) -> service_pb2.VerifyGameResponse:
    """Recompute the chain from the stored bytes (`ChainWalk`), check that the history is
    `game_id`'s (`foreign_history`; unchecked without one), check the stored head and
    every receipt against it, re-fold every event strictly and, once a dealt game is over,
    check its seed and re-draw every dealt outcome (`HistoryCheck`). The first event that
    does not hold is reported. Anything else the rules raise is a fault of the server's
    own, not damage, and propagates."""
    response = service_pb2.VerifyGameResponse()
    walk = ChainWalk(chain)
    check = HistoryCheck()

    def bad(sequence: int, revision: int, problem: str) -> service_pb2.VerifyGameResponse:
        response.ok = False
        response.first_bad_sequence = sequence
        response.first_bad_revision = revision
        response.problem = problem
        return response

    first_event = None
    for sequence, data in raw:
        try:
            event = walk.stored(sequence, data)
        except ChainBroken as broken:
            # A receipt of an event before the break that no longer holds came first.
            earlier = held(walk, [r for r in receipts if r.sequence < broken.index])
            return bad(*(earlier or (broken.index, broken.revision, broken.problem)))
        if first_event is None and game_id and foreign_history(game_id, event):
            return bad(walk.index, walk.revision, foreign_history(game_id, event))
        first_event = first_event or event
        response.events_checked = walk.index
        try:
            check.add(event)
        except RulesError as exc:
            earlier = held(walk, [r for r in receipts if r.sequence < walk.index])
            return bad(
                *(
                    earlier
                    or (walk.index, walk.revision, f"event {walk.index} does not hold: {exc}")
                )
            )
    failed = held(walk, [*receipts, stored_head])
    if failed is not None:
        return bad(*failed)
    try:
        check.finish()
    except RulesError as exc:
        return bad(*check.failed_at, str(exc))
    response.dealt_moves_checked = check.dealt_checked
    response.receipts_checked = len(receipts)
    response.keyed = walk.unkeyed == 0
    response.unkeyed_events = walk.unkeyed
    response.key_ids.extend(sorted(walk.key_ids))
    assert first_event is not None
    response.imported_unverified = (
        first_event.HasField("imported") and not first_event.imported.verified
    )
    response.ok = True
    return response
