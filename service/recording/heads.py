"""Game heads: each game at the last event of its stream, folded once and cached.

The cache is an LRU bounded by the bytes its heads hold, and never decides anything alone:
a change is compare-and-appended on the head's sequence and hash (the append script
refuses a stale base), and a fresh load compares the cached sequence and hash with the
stored head (one small read; nothing more while they agree), catching up on what other
instances appended.

Whatever is read from the stream to make a head is verified first (`ChainWalk`: the keyed
seals and links of the events read), and a cached head is a receipt: when the stored head
no longer follows from it (the history cut off or rewritten under it), the game is refused
with TamperedHistory (DATA_LOSS) at the first bad event, and the cached head is kept, so
the game stays refused here rather than being rebuilt on what was left.

An edit in the middle of a stream that keeps the head and the last entry (both checked on
every load and append) would go unseen by a warm instance until a cold load or VerifyGame,
so a running server also verifies every cached game's whole stream against its cached head
once per `--cache-check-interval` (`Heads.check_cached`, `keep_checking`): a game found
edited is refused from then on, as above.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

from google.protobuf import timestamp_pb2
from google.protobuf.message import DecodeError, Message

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, HistoryError
from tablelog.service.limits import check_game_id
from tablelog.service.logs import get_logger
from tablelog.service.recording.building import ENDING_BODIES
from tablelog.service.recording.checkpoints import DEFAULT_INTERVAL, Checkpoints
from tablelog.service.recording.verification import ChainBroken, ChainWalk, foreign_history, held
from tablelog.service.store import (
    EventStore,
    GameNotFound,
    StoredHead,
    StoreUnavailable,
    TamperedHistory,
)
from tablelog.service.store.chain import Chain
from tablelog.v1 import events_pb2

MAX_REFUSED: Final = 2_048
"""Games remembered as refused (their stored history no longer holds their cached head)."""


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
    keyed: bool = False
    """Whether the chain has a keyed event (every later one must be keyed)."""

    @property
    def revision(self) -> int:
        return self.position.revision

    @property
    def sequence(self) -> int:
        return self.position.sequence


def advance(head: Head, events: Iterable[events_pb2.Event]) -> Head:
    """`head` after `events` (stored events that follow it)."""
    position, last_hash, updated = head.position, head.last_hash, head.updated_time
    revealed = False
    keyed = head.keyed
    for event in events:
        position = folding.advance(position, event)
        last_hash, updated = event.hash, event.time
        keyed = keyed or bool(event.chain_key_id)
        if event.WhichOneof("body") in ENDING_BODIES:
            revealed = True
    seed = None if revealed else head.seed
    return replace(
        head,
        position=position,
        last_hash=last_hash,
        updated_time=updated,
        seed=seed,
        keyed=keyed,
    )


DEFAULT_CACHE_BYTES: Final = 256 << 20
"""What the cached heads of one process may hold (`tablelog serve --head-cache-bytes`): a
finished game of 100-200 moves holds about 100-150 KB (each move in effect keeps the state
before and after it, sharing what did not change), so the default keeps some 2,000 games
in play, and some 250 finished games (`FINISHED_SHARE`)."""

FINISHED_SHARE: Final = 8
"""The finished games' heads hold at most 1/FINISHED_SHARE of the cache (32 MiB of the
default 256: about 250 finished games of 100-200 moves)."""

MAX_SHAPES: Final = 1_024
"""New games' shapes whose size the head cache keeps (`HeadCache._estimate`)."""

PER_MOVE_BYTES: Final = 1_024
"""What one more move (in effect or undone) adds to a head, measured as 650-1,400 bytes
across the games (`held_bytes` of finished random games): a head is counted with it
rather than walked move by move."""


def held_bytes(position: folding.Position) -> int:
    """The memory `position` holds, found by walking everything it reaches once."""
    return _walked_bytes(position, position.table.game)


def estimated_bytes(position: folding.Position) -> int:
    """What `position` holds, estimated without walking its moves: its state walked, and
    PER_MOVE_BYTES a move held (held to `held_bytes` in tests/service/test_head_cache.py)."""
    return _walked_bytes(position.state, position.table.game) + (
        _moves_held(position) * PER_MOVE_BYTES
    )


def _walked_bytes(root: Any, shared: Any) -> int:
    """sys.getsizeof of everything `root` reaches, each object once (and a message's
    serialized size), but `shared` (the game's rules object, which every game shares)."""
    seen = {id(shared)}
    total = 0
    stack: list[Any] = [root]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        total += sys.getsizeof(value)
        if isinstance(value, Message):
            total += value.ByteSize()
        elif isinstance(value, tuple | list | set | frozenset):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack.extend(getattr(value, f.name) for f in dataclasses.fields(value))
    return total


def _moves_held(position: folding.Position) -> int:
    undone = 0
    node = position.undone
    while node is not None:
        undone, node = undone + 1, node.tail
    return position.move_count + undone


@dataclass(slots=True)
class _Entry:
    head: Head
    size: int
    measured: tuple[int, int]
    """(bytes, moves held) when the game's head entered the cache (`estimated_bytes`)."""


class HeadCache:
    """The most recently used heads, holding at most `max_bytes` together (the head last
    put is kept even when it alone holds more). A game's head is counted when it enters
    the cache (`estimated_bytes`: its state walked, PER_MOVE_BYTES a move), and as it then
    grows by a change, PER_MOVE_BYTES a move from there. Every operation is synchronous,
    so nothing can come between a look-up and its bookkeeping.

    The heads of finished games (ended, abandoned, deleted) hold at most
    `max_bytes // FINISHED_SHARE` of it, and go first when the cache is full: a finished
    game is changed rarely (an undo or an amend just after its end), and its reads fold
    from its checkpoints, where every RecordMove of a game in play needs its head. Without
    this the heads of a night's finished games filled the cache game after game, and the
    server's memory rose all night (docs/benchmarks.md, "The long night")."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError("the head cache needs at least one byte")
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        """Heads of games in play, least recently used first."""
        self._finished: OrderedDict[str, _Entry] = OrderedDict()
        """Heads of finished games, least recently used first."""
        self.max_bytes = max_bytes
        self.finished_max_bytes = max(1, max_bytes // FINISHED_SHARE)
        self.bytes = 0
        self.finished_bytes = 0
        self._set_up: dict[tuple[Any, ...], int] = {}
        """`estimated_bytes` of a game no player has moved in yet, by its shape (see
        `_estimate`)."""
        self.hits = 0
        self.misses = 0
        """Look-ups (`get`) that found a head, and that did not (read by service/metrics.py)."""

    def get(self, game_id: str) -> Head | None:
        """The cached head, marked as just used; None when it is not cached."""
        for entries in (self._entries, self._finished):
            entry = entries.get(game_id)
            if entry is not None:
                self.hits += 1
                entries.move_to_end(game_id)
                return entry.head
        self.misses += 1
        return None

    def peek(self, game_id: str) -> Head | None:
        """The cached head, leaving its place in the order alone."""
        entry = self._entries.get(game_id) or self._finished.get(game_id)
        return entry.head if entry is not None else None

    def _pop(self, game_id: str) -> _Entry | None:
        entry = self._entries.pop(game_id, None)
        if entry is None:
            entry = self._finished.pop(game_id, None)
            if entry is not None:
                self.finished_bytes -= entry.size
        if entry is not None:
            self.bytes -= entry.size
        return entry

    def put(self, head: Head) -> Head:
        game_id = head.game_id
        entry = self._pop(game_id)
        moves = _moves_held(head.position)
        if entry is not None and entry.head.position.table is head.position.table:
            measured_bytes, measured_moves = entry.measured
            size = max(1, measured_bytes + (moves - measured_moves) * PER_MOVE_BYTES)
            measured = entry.measured
        else:
            size = self._estimate(head.position, moves)
            measured = (size, moves)
        finished = head.position.status is not folding.Status.IN_PROGRESS
        (self._finished if finished else self._entries)[game_id] = _Entry(head, size, measured)
        self.bytes += size
        if finished:
            self.finished_bytes += size
        while self.finished_bytes > self.finished_max_bytes and self._evict(game_id, True):
            pass
        while self.bytes > self.max_bytes and self._evict(game_id):
            pass
        return head

    def _evict(self, kept: str, finished_only: bool = False) -> bool:
        """Drops the least recently used head, a finished game's first, but never `kept`
        (the head just put, the newest of its kind: when it is the oldest, it is alone);
        False when there is nothing else to drop."""
        for entries in (self._finished,) if finished_only else (self._finished, self._entries):
            oldest = next(iter(entries), None)
            if oldest is not None and oldest != kept:
                self._pop(oldest)
                return True
        return False

    def _estimate(self, position: folding.Position, moves: int) -> int:
        """`estimated_bytes(position)`, walked once per shape of a game no player has
        moved in yet (a creation: the game, its rules version, players, mode, options and
        components, and the chance moves dealt at setup), which every new game of that
        shape holds alike: walking each new game's state was about a third of CreateGame's
        CPU (benchmarks/record_inprocess.py). Any other head (a cold load, a game rebuilt)
        is walked."""
        if position.move_count != position.chance_count or position.undone is not None:
            return estimated_bytes(position)
        created = position.table.created
        shape = (
            created.game,
            created.rules_version,
            len(created.players),
            created.mode,
            created.options.SerializeToString(deterministic=True),
            len(created.components),
            sum(component.ByteSize() for component in created.components),
            moves,
        )
        size = self._set_up.get(shape)
        if size is None:
            if len(self._set_up) >= MAX_SHAPES:
                self._set_up.clear()
            size = self._set_up[shape] = estimated_bytes(position)
        return size

    def forget(self, game_id: str) -> None:
        self._pop(game_id)

    def game_ids(self) -> list[str]:
        """The cached games: the finished ones, then those in play, each least recently
        used first."""
        return [*self._finished, *self._entries]

    def __len__(self) -> int:
        return len(self._entries) + len(self._finished)


def _sealed_event(
    chain: Chain, raw: list[tuple[int, bytes]], sequence: int
) -> events_pb2.Event | None:
    """The stored event `sequence` in `raw` when its own seal holds under a trusted key."""
    if len(raw) != 1 or raw[0][0] != sequence:
        return None
    data = raw[0][1]
    event = events_pb2.Event()
    try:
        event.ParseFromString(data)
    except DecodeError:
        return None
    sealed = chain.stored_hash(data, event.chain_key_id)
    if sealed is None or not event.chain_key_id or sealed[1] is None:
        return None
    if event.sequence != sequence or not sealed[0] == sealed[1] == event.hash:
        return None
    return event


class Heads:
    """Loads game heads from the store through the cache."""

    def __init__(
        self,
        store: EventStore,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        checkpoint_interval: int = DEFAULT_INTERVAL,
    ) -> None:
        self.store = store
        self.cache = HeadCache(cache_bytes)
        self.checkpoints = Checkpoints(store, checkpoint_interval)
        self._refused: set[str] = set()
        """Games whose stored history was found not to hold their cached head: verified
        again on every use, until it holds again (restored) or the head is forgotten."""

    def remember(self, head: Head) -> Head:
        return self.cache.put(head)

    def cached(self, game_id: str) -> Head | None:
        return self.cache.peek(game_id)

    def forget(self, game_id: str) -> None:
        self.cache.forget(game_id)
        self._refused.discard(game_id)

    def _tampered(self, game_id: str, broken: ChainBroken) -> TamperedHistory:
        return TamperedHistory(game_id, broken.index, broken.revision, broken.problem)

    async def verified_events(
        self, game_id: str, *, known: Head | None = None, slice_events: int = 0
    ) -> list[events_pb2.Event]:
        """Every event of the game, verified as it is read: every event's seal and link,
        and the stored head (read first: an append landing between the reads only
        lengthens the stream) and `known` (a head this instance had cached) still in the
        stream. TamperedHistory at the first bad event. With `slice_events`, the loop is
        let go every that many events (a background check must not hold up the calls)."""
        check_game_id(game_id)
        stored = await self.store.head(game_id)
        raw = await self.store.read_raw(game_id)
        if not raw:
            raise GameNotFound(game_id)
        walk = ChainWalk(self.store.chain)
        events: list[events_pb2.Event] = []
        try:
            for index, (sequence, data) in enumerate(raw, 1):
                events.append(walk.stored(sequence, data))
                if slice_events and index % slice_events == 0:
                    await asyncio.sleep(0)
        except ChainBroken as broken:
            raise self._tampered(game_id, broken) from None
        receipts = [stored]
        if known is not None:
            receipts.append(StoredHead(known.sequence, known.revision, known.last_hash))
        failed = held(walk, receipts)
        if failed is not None:
            raise TamperedHistory(game_id, *failed)
        return events

    async def rebuild(self, game_id: str, *, known: Head | None = None) -> Head:
        """A fresh fold of the whole stream, verified as it is read (`verified_events`;
        also what the cache is tested against)."""
        events = await self.verified_events(game_id, known=known)
        first = events[0]
        if first.WhichOneof("body") != "game_created" or first.sequence != 1:
            raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
        if foreign_history(game_id, first):
            raise TamperedHistory(game_id, 1, first.revision, foreign_history(game_id, first))
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
            keyed=bool(first.chain_key_id),
        )
        return advance(head, events[1:])

    async def from_checkpoint(self, game_id: str) -> Head | None:
        """The head made from the game's latest checkpoint and the events after it (None
        when it has none): its creation event, the event the checkpoint ends at and those
        after it are read and verified (the checkpoint's seal vouches for the events before
        it, as a cached head does), and the stored head must be among them."""
        stored = await self.store.head(game_id)
        if stored.sequence < 2 * self.checkpoints.interval:
            return None  # a fold of so few events costs less than reading a checkpoint
        found = await self.store.checkpoints.nearest(game_id, stored.revision)
        if not found:
            return None
        first_raw = await self.store.read_raw(game_id, 0, 1)
        if not first_raw:
            raise GameNotFound(game_id)
        try:
            first = ChainWalk(self.store.chain).stored(*first_raw[0])
        except ChainBroken as broken:
            raise self._tampered(game_id, broken) from None
        if first.WhichOneof("body") != "game_created":
            raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
        if foreign_history(game_id, first):
            raise TamperedHistory(game_id, 1, first.revision, foreign_history(game_id, first))
        start = folding.start(first.game_created)
        checkpoints = self.checkpoints
        resumed = await checkpoints.resume(game_id, start.table, stored.revision, found)
        if resumed is None or resumed.position.sequence > stored.sequence:
            return None
        position = resumed.position
        at_raw = await self.store.read_raw(game_id, position.sequence - 1, 1)
        at = _sealed_event(self.store.chain, at_raw, position.sequence)
        if at is None or at.hash != resumed.last_hash:
            return None  # not the event it was made at: the whole stream decides
        last_hash, updated, keyed = at.hash, at.time, resumed.keyed
        holds = stored.sequence == position.sequence and stored.last_hash == last_hash
        async for step in checkpoints.forward(game_id, resumed, until_revision=None):
            event = step.event
            position, last_hash, updated = step.after, event.hash, event.time
            keyed = keyed or bool(event.chain_key_id)
            holds = holds or (event.sequence, event.hash) == (stored.sequence, stored.last_hash)
        if not holds:
            return None
        seed = None
        if first.game_created.mode == DEALT and position.status is folding.Status.IN_PROGRESS:
            seed = await self.store.seed(game_id)
        return Head(game_id, position, last_hash, first.time, updated, seed, keyed)

    async def catch_up(self, head: Head, stored: StoredHead | None = None) -> Head:
        """`head` with what was appended after it, verified as it is read (remembered when
        anything was), and holding `stored` (the stored head, read before) when given.
        Events that do not follow from `head` mean the history under it was changed: the
        whole stream is verified against it (`reconcile`)."""
        raw = await self.store.read_raw(head.game_id, head.sequence)
        if not raw:
            return head if stored is None else await self.reconcile(head)
        walk = ChainWalk.resuming(self.store.chain, head.position, head.last_hash, head.keyed)
        try:
            newer = [walk.stored(sequence, data) for sequence, data in raw]
        except ChainBroken:
            return await self.reconcile(head)
        if stored is not None and held(walk, [stored]) is not None:
            return await self.reconcile(head)
        return self.remember(advance(head, newer))

    def _refuse(self, game_id: str) -> None:
        if len(self._refused) >= MAX_REFUSED:
            self._refused.clear()  # bounded: the cached heads still catch most
        self._refused.add(game_id)

    async def check_cached(self, pause: float = 0.0) -> list[str]:
        """Verifies the whole stream of every cached game (each event's seal and link) with
        its cached head as a receipt, `pause` seconds between two games; the games found
        changed, refused from then on (TamperedHistory at their first bad event, at their
        next use). A game deleted meanwhile is forgotten. Each game's stream is read
        once: no fold, and nothing is cached anew."""
        found: list[str] = []
        for game_id in self.cache.game_ids():
            head = self.cache.peek(game_id)
            if head is not None and game_id not in self._refused:
                try:
                    await self.verified_events(game_id, known=head, slice_events=CHECK_SLICE)
                except TamperedHistory:
                    self._refuse(game_id)
                    found.append(game_id)
                except GameNotFound:
                    self.forget(game_id)
            if pause:
                await asyncio.sleep(pause)
        return found

    async def reconcile(self, head: Head) -> Head:
        """The game rebuilt from the whole stream, verified with the cached `head` as a
        receipt (a history that no longer holds it was cut or rewritten: TamperedHistory,
        and the cached head stays, so the game stays refused)."""
        game_id = head.game_id
        try:
            rebuilt = await self.rebuild(game_id, known=head)
        except TamperedHistory:
            self._refuse(game_id)
            raise
        self._refused.discard(game_id)
        return self.remember(rebuilt)

    async def load(self, game_id: str, *, fresh: bool = True) -> Head:
        """The head of a game. With `fresh`, the cached head is checked against the stored
        head's sequence and hash (one small read) and caught up when another instance
        appended, or reconciled when they disagree otherwise."""
        check_game_id(game_id)
        head = self.cache.get(game_id)
        if head is None:
            resumed = await self.from_checkpoint(game_id)
            return self.remember(resumed or await self.rebuild(game_id))
        if game_id in self._refused:
            return await self.reconcile(head)
        if fresh:
            stored = await self.store.head(game_id)
            if stored.sequence > head.sequence:  # other instances appended
                head = await self.catch_up(head, stored)
            elif stored.sequence != head.sequence or stored.last_hash != head.last_hash:
                head = await self.reconcile(head)  # behind the cache, or another event
        return head


CHECK_SLICE: Final = 32
"""Events the periodic check verifies between two turns of the loop: a long game's whole
stream in one piece would hold up every call for milliseconds (a cold load of a
1,000-move game, its walk and fold, takes 12 ms: docs/benchmarks.md)."""

DEFAULT_CHECK_INTERVAL: Final = 3600.0
"""Seconds in which a running server verifies every cached game's stream once
(`serve --cache-check-interval`)."""


async def keep_checking(heads: Heads, interval: float = DEFAULT_CHECK_INTERVAL) -> None:
    """`Heads.check_cached` until cancelled, its games spread over `interval` seconds (a
    round takes longer only when verifying them one after another does); an outage of the
    store ends a round, and the next one starts after `interval`."""
    log = get_logger("tablelog.heads")
    while True:
        count = len(heads.cache)
        started = asyncio.get_running_loop().time()
        try:
            for game_id in await heads.check_cached(pause=interval / max(1, count)):
                log.error("history changed under a cached game: refused", game_id=game_id)
        except StoreUnavailable as exc:
            log.warning("cached games not verified", error=str(exc))
        except Exception:  # a fault of the check's own must not end every later round
            log.exception("cached games not verified: the check failed")
        elapsed = asyncio.get_running_loop().time() - started
        await asyncio.sleep(max(0.0, interval - elapsed))
