"""Game heads: each game at the last event of its stream, folded once and cached.

The cache is a bounded LRU and never decides anything alone: a change is compare-and-
appended on the head's sequence and hash (the append script refuses a stale base), and a
fresh load compares the cached sequence and hash with the stored head (one small read;
nothing more while they agree), catching up on what other instances appended.

Whatever is read from the stream to make a head is verified first (`ChainWalk`: the keyed
seals and links of the events read), and a cached head is a receipt: when the stored head
no longer follows from it (the history cut off or rewritten under it), the game is refused
with TamperedHistory (DATA_LOSS) at the first bad event, and the cached head is kept, so
the game stays refused here rather than being rebuilt on what was left.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from google.protobuf import timestamp_pb2

from replay import fold as folding
from replay.core import DEALT, HistoryError
from service.building import ENDING_BODIES
from service.limits import check_game_id
from service.store import EventStore, GameNotFound, StoredHead, TamperedHistory
from service.verification import ChainBroken, ChainWalk, held
from tablelog.v1 import events_pb2


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


class HeadCache:
    """The most recently used heads, at most `size` of them. Every operation is synchronous,
    so nothing can come between a look-up and its bookkeeping."""

    def __init__(self, size: int) -> None:
        self._heads: OrderedDict[str, Head] = OrderedDict()
        self.size = size

    def get(self, game_id: str) -> Head | None:
        """The cached head, marked as just used; None when it is not cached."""
        head = self._heads.get(game_id)
        if head is not None:
            self._heads.move_to_end(game_id)
        return head

    def peek(self, game_id: str) -> Head | None:
        """The cached head, leaving its place in the order alone."""
        return self._heads.get(game_id)

    def put(self, head: Head) -> Head:
        self._heads[head.game_id] = head
        self._heads.move_to_end(head.game_id)
        while len(self._heads) > self.size:
            self._heads.popitem(last=False)
        return head

    def forget(self, game_id: str) -> None:
        self._heads.pop(game_id, None)

    def __len__(self) -> int:
        return len(self._heads)


class Heads:
    """Loads game heads from the store through the cache."""

    def __init__(self, store: EventStore, cache_size: int = 2_048) -> None:
        self.store = store
        self.cache = HeadCache(cache_size)
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
        self, game_id: str, *, known: Head | None = None
    ) -> list[events_pb2.Event]:
        """Every event of the game, verified as it is read: every event's seal and link,
        and the stored head (read first: an append landing between the reads only
        lengthens the stream) and `known` (a head this instance had cached) still in the
        stream. TamperedHistory at the first bad event."""
        check_game_id(game_id)
        stored = await self.store.head(game_id)
        raw = await self.store.read_raw(game_id)
        if not raw:
            raise GameNotFound(game_id)
        walk = ChainWalk(self.store.chain)
        events: list[events_pb2.Event] = []
        try:
            for sequence, data in raw:
                events.append(walk.stored(sequence, data))
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

    async def catch_up(self, head: Head, stored: StoredHead | None = None) -> Head:
        """`head` with what was appended after it, verified as it is read (remembered when
        anything was), and holding `stored` (the stored head, read before) when given.
        Events that do not follow from `head` mean the history under it was changed: the
        whole stream is verified against it (`reconcile`)."""
        raw = await self.store.read_raw(head.game_id, head.sequence)
        if not raw:
            return head if stored is None else await self.reconcile(head)
        walk = ChainWalk(
            self.store.chain,
            after=head.sequence,
            revision=head.revision,
            prev_hash=head.last_hash,
            keyed=head.keyed,
        )
        try:
            newer = [walk.stored(sequence, data) for sequence, data in raw]
        except ChainBroken:
            return await self.reconcile(head)
        if stored is not None and held(walk, [stored]) is not None:
            return await self.reconcile(head)
        return self.remember(advance(head, newer))

    async def reconcile(self, head: Head) -> Head:
        """The game rebuilt from the whole stream, verified with the cached `head` as a
        receipt (a history that no longer holds it was cut or rewritten: TamperedHistory,
        and the cached head stays, so the game stays refused)."""
        game_id = head.game_id
        try:
            rebuilt = await self.rebuild(game_id, known=head)
        except TamperedHistory:
            if len(self._refused) >= self.cache.size:
                self._refused.clear()  # bounded: the cached heads still catch most
            self._refused.add(game_id)
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
            return self.remember(await self.rebuild(game_id))
        if game_id in self._refused:
            return await self.reconcile(head)
        if fresh:
            stored = await self.store.head(game_id)
            if stored.sequence > head.sequence:  # other instances appended
                head = await self.catch_up(head, stored)
            elif stored.sequence != head.sequence or stored.last_hash != head.last_hash:
                head = await self.reconcile(head)  # behind the cache, or another event
        return head
