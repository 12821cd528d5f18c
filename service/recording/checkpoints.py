"""Checkpoints: a game's folded position kept beside its stream every `interval` events, so
that a read at any revision folds only the events after the nearest one, not the whole
game (issue 14; DESIGN.md, "Events and the store": an optimisation, never the truth).

A checkpoint is the position after event `sequence` (a pure function of events 1..s, so
an undo, a redo or an amendment later in the stream never makes it wrong: a fold that
resumes from it re-applies them as a fold from the start does) as a snapshot
(`tablelog.replay.snapshots`), with the revision it reached, the hash of event `sequence` and
whether the chain was keyed by then, deflated and sealed with the chain key under a
domain of its own.
So whoever can write to Redis but has not the key can drop or damage a checkpoint (it is
then not used: the read falls back to the one before, or to the start, logs it, and the
fold makes it again) but cannot forge one; and the events read after it are verified as
a chain from its hash, exactly as the events after a cached head are.

Where: every `interval` sequences (the position after event k x interval), written by the
first fold that passes one without a checkpoint (a read, a watch), and after an append
whose events cross one (RecordMove's head, written once the append is answered: a task
of its own, never on the append's path). VerifyGame checks every checkpoint against a
fresh fold (`check_stored`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import struct
import zlib
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from tablelog.replay import fold as folding
from tablelog.replay import snapshots
from tablelog.service.logs import get_logger
from tablelog.service.metrics import CHECKPOINT_WRITES
from tablelog.service.recording.verification import ChainBroken, ChainWalk
from tablelog.service.store import EventStore, StoreError, TamperedHistory
from tablelog.service.store.chain import Chain
from tablelog.v1 import events_pb2

log = get_logger("tablelog.checkpoints")

DEFAULT_INTERVAL: Final = 100
"""Events between checkpoints (`tablelog serve --checkpoint-interval`), chosen with
benchmarks/long_games.py: a read at any revision folds at most this many events after a
checkpoint (about 1 ms), and the checkpoints of a long game (10 KB each, deflated, for a
position of some 200 moves) then take about what its stream takes in Redis."""

MAX_SNAPSHOT_BYTES: Final = 4 << 20
"""A position whose snapshot is larger is not checkpointed, and a stored checkpoint larger
than this is not read (whatever a game's moves in effect take, reads stay bounded)."""

MAX_PENDING_WRITES: Final = 64
"""Checkpoint writes in flight at once per process; more are skipped (the next fold past
the same place writes it)."""

READ_PAGE: Final = 256
"""Events read from the stream at a time while folding forward."""

_DOMAIN: Final = b"tablelog/checkpoint/v1\0"
_MAGIC: Final = b"TLCP1"
_HEADER: Final = struct.Struct(">QQ32s?B")  # sequence, revision, last hash, keyed, key id length
_TAG_BYTES: Final = 32


class DamagedCheckpoint(Exception):
    """Stored bytes that are not a sound checkpoint of this game at this sequence."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a checkpoint says, once its seal is checked."""

    sequence: int
    revision: int
    last_hash: bytes
    """The hash of event `sequence`: the event after it must link to it."""
    keyed: bool
    """Whether the chain had a keyed event by then (no unkeyed one may follow)."""
    snapshot: bytes


def _tag(secret: bytes, game_id: str, header: bytes, snapshot: bytes) -> bytes:
    game = game_id.encode()
    body = b"".join(
        (_DOMAIN, len(game).to_bytes(2, "big"), game, header, hashlib.sha256(snapshot).digest())
    )
    return hmac.digest(secret, body, "sha256")


def seal(chain: Chain, game_id: str, checkpoint: Checkpoint) -> bytes:
    """`checkpoint` as stored: a header, the tag under the chain's signing key (which
    covers the game, the header and the stored snapshot), the snapshot deflated (a
    snapshot repeats its structure move after move: it takes a fifth to a tenth)."""
    packed = zlib.compress(checkpoint.snapshot, 1)
    key_id = chain.signing.key_id.encode()
    header = (
        _MAGIC
        + _HEADER.pack(
            checkpoint.sequence,
            checkpoint.revision,
            checkpoint.last_hash,
            checkpoint.keyed,
            len(key_id),
        )
        + key_id
    )
    return header + _tag(chain.signing.secret, game_id, header, packed) + packed


def unseal(chain: Chain, game_id: str, sequence: int, data: bytes) -> Checkpoint:
    """The checkpoint stored for event `sequence` of `game_id`, its tag checked under the
    key it names (which must be trusted here). DamagedCheckpoint otherwise."""
    fixed = len(_MAGIC) + _HEADER.size
    if len(data) < fixed + _TAG_BYTES or not data.startswith(_MAGIC):
        raise DamagedCheckpoint("not a checkpoint")
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise DamagedCheckpoint("larger than any checkpoint is written")
    stored_sequence, revision, last_hash, keyed, id_length = _HEADER.unpack_from(data, len(_MAGIC))
    header_end = fixed + id_length
    key_id = data[fixed:header_end].decode("ascii", "replace")
    secret = chain.trusted.get(key_id)
    if secret is None:
        raise DamagedCheckpoint(f"sealed under chain key {key_id[:16]!r}, not trusted here")
    tag = data[header_end : header_end + _TAG_BYTES]
    packed = data[header_end + _TAG_BYTES :]
    if not hmac.compare_digest(tag, _tag(secret, game_id, data[:header_end], packed)):
        raise DamagedCheckpoint("its seal does not hold")
    if stored_sequence != sequence:
        raise DamagedCheckpoint(f"it holds event {stored_sequence}, stored as {sequence}")
    inflater = zlib.decompressobj()
    try:
        snapshot = inflater.decompress(packed, MAX_SNAPSHOT_BYTES)
    except zlib.error as exc:
        raise DamagedCheckpoint(f"its snapshot does not inflate: {exc}") from None
    if not inflater.eof or inflater.unconsumed_tail:
        raise DamagedCheckpoint("its snapshot is larger than any checkpoint is written")
    return Checkpoint(stored_sequence, revision, last_hash, keyed, snapshot)


@dataclass(frozen=True, slots=True)
class Resumed:
    """Where a fold starts: a checkpoint's position, or the game's creation."""

    position: folding.Position
    last_hash: bytes
    keyed: bool
    checkpointed: bool


@dataclass(frozen=True, slots=True)
class Step:
    """One event folded forward, with the positions around it."""

    event: events_pb2.Event
    before: folding.Position
    after: folding.Position


class Checkpoints:
    """The checkpoints of every game on `store`: finding the nearest, folding forward from
    it (verified), and writing the ones a fold passes."""

    def __init__(self, store: EventStore, interval: int = DEFAULT_INTERVAL) -> None:
        if interval < 1:
            raise ValueError("the checkpoint interval must be at least 1")
        self.store = store
        self.interval = interval
        self._pending: set[asyncio.Task[None]] = set()

    async def resume(
        self,
        game_id: str,
        table: folding.Table,
        revision: int,
        found: Sequence[tuple[int, bytes]] | None = None,
    ) -> Resumed | None:
        """The position of the latest sound checkpoint at `revision` or before (among
        `found`, when the caller has read them); None when there is none (the fold starts at
        the creation). A damaged one is logged, dropped (the fold past it writes it again)
        and the one before it tried."""
        chain = self.store.chain
        if found is None:
            found = await self.store.checkpoints.nearest(game_id, revision)
        for sequence, data in found:
            try:
                checkpoint = unseal(chain, game_id, sequence, data)
                position = snapshots.decode(table, checkpoint.snapshot)
                if (position.sequence, position.revision) != (sequence, checkpoint.revision):
                    raise DamagedCheckpoint("its position is not at its sequence and revision")
            except (DamagedCheckpoint, snapshots.Undecodable) as damaged:
                log.warning(
                    "checkpoint_damaged", game_id=game_id, sequence=sequence, problem=str(damaged)
                )
                await self.store.checkpoints.drop(game_id, sequence)
                continue
            return Resumed(position, checkpoint.last_hash, checkpoint.keyed, checkpointed=True)
        return None

    def _origin(self, table: folding.Table) -> Resumed:
        # The table's own start: the head's table, so no setup is computed again.
        start = folding.Position(table=table, state=table.initial, revision=1, sequence=1)
        return Resumed(start, b"", keyed=False, checkpointed=False)

    async def _start(self, game_id: str, table: folding.Table, revision: int) -> Resumed:
        """The latest sound checkpoint at `revision` or before, else the creation."""
        resumed = await self.resume(game_id, table, revision) if revision >= 1 else None
        return resumed or self._origin(table)

    async def forward(
        self, game_id: str, start: Resumed, until_revision: int | None
    ) -> AsyncIterator[Step]:
        """Every event after `start` up to the last at `until_revision` (None: the last
        of all), folded, verified
        as a chain from `start` as it is read (TamperedHistory at the first that does not
        hold: the creation, too, must be the one of `start`'s table). The checkpoints it
        passes that are not stored are written afterwards."""
        position = start.position
        table = position.table
        if start.checkpointed:
            walk = ChainWalk.resuming(self.store.chain, position, start.last_hash, start.keyed)
        else:
            walk = ChainWalk(self.store.chain)
        passed: list[tuple[folding.Position, bytes, bool]] = []
        # The next checkpoint, when stored, is past the revision asked for (else it would
        # have been the one resumed from): one interval's read is then enough.
        page = self.interval
        try:
            while True:
                raw = await self.store.read_raw(game_id, walk.index, min(page, READ_PAGE))
                page = READ_PAGE
                if not raw:
                    return
                for sequence, data in raw:
                    try:
                        event = walk.stored(sequence, data)
                    except ChainBroken as broken:
                        raise TamperedHistory(
                            game_id, broken.index, broken.revision, broken.problem
                        ) from None
                    if until_revision is not None and event.revision > until_revision:
                        return
                    if event.sequence == 1:
                        if event.game_created != table.created:
                            raise TamperedHistory(
                                game_id, 1, 1, "its creation is not the one it was read as"
                            )
                        after = position
                    else:
                        after = folding.advance(position, event)
                    if event.sequence % self.interval == 0:
                        passed.append((after, event.hash, walk.keyed))
                    yield Step(event, position, after)
                    position = after
        finally:
            if passed:  # (no await here: the fold may be closed part way, by its reader)
                self._spawn(self._write_missing(game_id, passed))

    async def _write_missing(
        self, game_id: str, passed: list[tuple[folding.Position, bytes, bool]]
    ) -> None:
        """Checkpoint the positions a fold passed that are not stored yet."""
        try:
            stored = set(await self.store.checkpoints.sequences(game_id))
        except StoreError:
            return
        for at, last_hash, keyed in passed:
            if at.sequence not in stored:
                await self.write(game_id, at, last_hash, keyed)

    async def steps(
        self, game_id: str, table: folding.Table, first_revision: int, last_revision: int
    ) -> AsyncIterator[Step]:
        """Every event whose revision is from `first_revision` to `last_revision`, with
        the positions before and after it, folded from the latest checkpoint before
        `first_revision` (the creation's event included when `first_revision` is 1 or
        less)."""
        start = await self._start(game_id, table, first_revision - 1)
        async for step in self.forward(game_id, start, last_revision):
            if step.event.revision >= first_revision:
                yield step

    async def position_at(
        self, game_id: str, table: folding.Table, revision: int
    ) -> folding.Position:
        """The game at `revision`, folded from the latest checkpoint at it or before (the
        position after the last event at `revision`, as `tablelog.replay.fold.fold` gives it)."""
        return (await self.at(game_id, table, revision))[0]

    async def at(
        self, game_id: str, table: folding.Table, revision: int
    ) -> tuple[folding.Position, bytes]:
        """`position_at`, with the hash of the last event folded (what names the history
        up to it: the key of its pictures, `tablelog.service.recording.pictures`)."""
        start = await self._start(game_id, table, revision)
        position, last_hash = start.position, start.last_hash
        async for step in self.forward(game_id, start, revision):
            position, last_hash = step.after, step.event.hash
        return position, last_hash

    def after_append(
        self,
        game_id: str,
        base_sequence: int,
        position: folding.Position,
        last_hash: bytes,
        keyed: bool,
    ) -> None:
        """An append took the game from `base_sequence` to `position`: when it passed a
        multiple of the interval, checkpoint the new head (in a task of its own)."""
        if position.sequence // self.interval > base_sequence // self.interval:
            self.write_later(game_id, position, last_hash, keyed)

    def write_later(
        self, game_id: str, position: folding.Position, last_hash: bytes, keyed: bool
    ) -> None:
        """Write a checkpoint of `position` in a task of its own (skipped when too many
        are in flight: a later fold past the same place writes it)."""
        self._spawn(self.write(game_id, position, last_hash, keyed))

    def _spawn(self, writing: Coroutine[None, None, None]) -> None:
        if len(self._pending) >= MAX_PENDING_WRITES:
            writing.close()
            return
        task = asyncio.get_running_loop().create_task(writing)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def write(
        self, game_id: str, position: folding.Position, last_hash: bytes, keyed: bool
    ) -> None:
        """Checkpoint `position` (the game after event `position.sequence`, whose hash is
        `last_hash`). A position that cannot be written is logged and skipped: it only
        makes reads slower."""
        await asyncio.sleep(0)  # after whatever answer the caller is about to give
        try:
            snapshot = snapshots.encode(position)
            if len(snapshot) > MAX_SNAPSHOT_BYTES:
                raise snapshots.Unencodable(f"a snapshot of {len(snapshot)} bytes")
            checkpoint = Checkpoint(
                position.sequence, position.revision, last_hash, keyed, snapshot
            )
            data = seal(self.store.chain, game_id, checkpoint)
            await self.store.checkpoints.put(game_id, position.sequence, position.revision, data)
            CHECKPOINT_WRITES.labels("written").inc()
        except (snapshots.Unencodable, StoreError) as failed:
            CHECKPOINT_WRITES.labels("failed").inc()
            log.warning(
                "checkpoint_not_written",
                game_id=game_id,
                sequence=position.sequence,
                problem=str(failed),
            )

    async def verify_stored(self, game_id: str) -> tuple[int, list[int]]:
        """VerifyGame's check of the game's checkpoints (`check_stored`), on its events read
        and verified again; the ones that do not hold are dropped, to be made again. Call it
        on a history VerifyGame found sound."""
        stored = await self.store.checkpoints.every(game_id)
        if not stored:
            return 0, []
        walk = ChainWalk(self.store.chain)
        try:
            events = [walk.stored(s, d) for s, d in await self.store.read_raw(game_id)]
        except ChainBroken as broken:
            raise TamperedHistory(game_id, broken.index, broken.revision, broken.problem) from None
        checked, bad = check_stored(self.store.chain, game_id, events, stored)
        for sequence in bad:
            log.warning("checkpoint_mismatch", game_id=game_id, sequence=sequence)
            await self.store.checkpoints.drop(game_id, sequence)
        return checked, bad

    async def settle(self) -> None:
        """Wait for the checkpoint writes in flight (tests, benchmarks, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)


def check_stored(
    chain: Chain,
    game_id: str,
    events: Sequence[events_pb2.Event],
    stored: Iterable[tuple[int, bytes]],
) -> tuple[int, list[int]]:
    """VerifyGame's check of the checkpoints `stored` beside the verified `events`: each
    sealed, at a sequence of the stream, with the revision and hash of the event there and
    a snapshot of what a fresh fold up to it gives (`tablelog.replay.snapshots.same_position`). How
    many were checked, and the sequences of those that do not hold."""
    wanted = dict(stored)
    if not wanted or not events:
        return len(wanted), sorted(wanted)
    bad: list[int] = []
    position = folding.start(events[0].game_created)
    by_sequence: dict[int, tuple[events_pb2.Event, folding.Position]] = {1: (events[0], position)}
    last = max(wanted)
    for event in events[1:]:
        if event.sequence > last:
            break
        position = folding.advance(position, event)
        if event.sequence in wanted:
            by_sequence[event.sequence] = (event, position)
    for sequence, data in sorted(wanted.items()):
        found = by_sequence.get(sequence)
        try:
            checkpoint = unseal(chain, game_id, sequence, data)
        except DamagedCheckpoint:
            bad.append(sequence)
            continue
        if found is None:
            bad.append(sequence)
            continue
        event, fresh = found
        try:
            kept = snapshots.decode(fresh.table, checkpoint.snapshot)
        except snapshots.Undecodable:
            bad.append(sequence)
            continue
        if (
            checkpoint.revision != fresh.revision
            or checkpoint.last_hash != event.hash
            or not snapshots.same_position(kept, fresh)
        ):
            bad.append(sequence)
    return len(wanted), bad
