"""Game heads: each game at the last event of its stream, folded once and cached.

The cache is a bounded LRU and never decides anything alone: a change is compare-and-
appended on the head's sequence and hash (the append script refuses a stale base), and a
fresh load compares the cached sequence with the stored one, catching up on what other
instances appended and rebuilding from the stream when the two disagree.
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
from service.store import EventStore, GameNotFound
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
    for event in events:
        position = folding.advance(position, event)
        last_hash, updated = event.hash, event.time
        if event.WhichOneof("body") in ENDING_BODIES:
            revealed = True
    seed = None if revealed else head.seed
    return replace(head, position=position, last_hash=last_hash, updated_time=updated, seed=seed)


class HeadCache:
    """The most recently used heads, at most `size` of them. Every operation is synchronous,
    so nothing can come between a look-up and its bookkeeping."""

    def __init__(self, size: int) -> None:
        self._heads: OrderedDict[str, Head] = OrderedDict()
        self._size = size

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
        while len(self._heads) > self._size:
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

    def remember(self, head: Head) -> Head:
        return self.cache.put(head)

    def cached(self, game_id: str) -> Head | None:
        return self.cache.peek(game_id)

    def forget(self, game_id: str) -> None:
        self.cache.forget(game_id)

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
            game_id, folding.start(first.game_created), first.hash, first.time, first.time, seed
        )
        return advance(head, events[1:])

    async def catch_up(self, head: Head) -> Head:
        """`head` with what was appended after it (remembered when anything was)."""
        newer = await self.store.read(head.game_id, head.sequence)
        if not newer:
            return head
        return self.remember(advance(head, newer))

    async def load(self, game_id: str, *, fresh: bool = True) -> Head:
        """The head of a game. With `fresh`, the cached head is checked against the stored
        last sequence (one small read) and caught up when another instance appended."""
        check_game_id(game_id)
        head = self.cache.get(game_id)
        if head is None:
            return self.remember(await self.rebuild(game_id))
        if fresh:
            stored = await self.store.head(game_id)
            if stored.sequence != head.sequence:
                head = await self.catch_up(head)
                if head.sequence != stored.sequence or head.last_hash != stored.last_hash:
                    head = self.remember(await self.rebuild(game_id))
        return head
