"""Live watching: one tail per watched game per service instance, shared by all of the
instance's watchers of that game.

A tail is a single reader that blocks on the game's stream (XREAD on a Redis connection of
its own, so appends made through any instance arrive, and no number of watchers holds a
connection the request path needs) and folds each new event once. It hands the event to
every local watcher as an `Update`, which renders the message a viewer kind sees (the
spectator, each seat, the full view) once, when the first watcher of that kind asks, and
keeps the bytes for the others. A tail starts at the game's head
(`tablelog.service.recording.heads`), a new watcher at the tail's position (no fold of its own), and
one catches up from `from_revision` out of the tail's recent updates, or, for an older revision, out
of the tail's history: the game's events folded once per tail (from the stored events, through
`tablelog.service.recording.checkpoints`), yielding to the loop as it goes, and shared by every
watcher that starts further back, whatever revision it asks from, with the messages rendered for
each viewer kind. So a game's history is folded at most once per instance while it is watched, and a
new game's first watchers cost what its later ones do. The history is let go with the tail (when its
last watcher leaves): it holds about 1 KB of positions a move, plus what was rendered of it for each
viewer kind.

Each watcher has a bounded queue. One that falls `WatchLimits.queue` updates behind is
dropped by the tail at once (the others never wait for it) and its stream ends with
RESOURCE_EXHAUSTED, reason WATCHER_TOO_SLOW, and `resume_from_revision`: the revision to
watch from again. The tail stops, and its connection closes, when its last watcher leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass

from tablelog.replay import fold as folding
from tablelog.replay.core import Viewer
from tablelog.service.errors import Exhausted, InvalidRequest
from tablelog.service.limits import check_game_id
from tablelog.service.recording.heads import Heads
from tablelog.service.recording.priority import CatchUps, ChangesFirst
from tablelog.service.recording.verification import ChainBroken, ChainWalk
from tablelog.service.recording.views import replay_item, shown_notation, viewer_of
from tablelog.service.store import EventStore, TamperedHistory
from tablelog.v1 import events_pb2, service_pb2

TAIL_BLOCK_SECONDS = 30.0
"""How long one blocking read of a tail waits before it asks again (an idle game): each
round costs about 150 us, and the store's watchdog ends a read silent for this long plus
its limit (a dead connection is found within 35 s)."""
ANSWER_FIRST_SECONDS = 0.02
"""How long a tail waits at most, once new events have arrived, for the changes in flight
on this process (the one that appended them, when it is here) to be answered before it
wakes any watcher (`tablelog.service.recording.priority`)."""
FANOUT_BATCH = 64
"""Watchers woken at a time: between batches the event loop serves other calls, so the
RecordMove that appended an event is answered without waiting for every watcher of it."""
HISTORY_YIELD = 16
"""Events a shared history fold folds between two turns of the event loop."""
READERS_KEPT = 32
"""Readers (Redis connections of their own) of stopped tails kept for the next tails. A
club night starts and stops a tail at every game of every table: opening and closing a
client each time left its objects in reference cycles (some hundred objects and the
connection's buffers a tail) until a full collection, which the server runs rarely
(`tablelog.service.api.server.tune_gc`). Idle kept readers are at most this many
connections, besides the watched games' one each."""
RENDERS_KEPT = 32
"""Updates of a tail that keep their rendered messages: a watcher further behind (it
would soon be ended as too slow) or catching up renders its own."""


@dataclass(frozen=True, slots=True)
class WatchLimits:
    """What one service instance accepts (`tablelog serve --max-watched-games` ...)."""

    games: int = 1_000
    """Games watched at once: one tail, and one Redis connection, each."""
    watchers: int = 10_000
    """Watchers on the instance, all games together."""
    watchers_per_game: int = 5_000
    queue: int = 256
    """Updates a watcher may have waiting before it is ended as too slow."""
    recent: int = 256
    """Updates a tail keeps, so that a watcher resuming from a recent revision (after a
    restart, after being too slow) catches up without a fold of its own."""

    def __post_init__(self) -> None:
        for name in ("games", "watchers", "watchers_per_game", "queue", "recent"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


class MoveLists:
    """The move list of a game's latest rendered position, per viewer kind, kept up to date
    one move at a time: a snapshot lists every move in effect, and listing them afresh
    (each checked for what the viewer may see) would make an update cost more the longer
    the game. A move's visibility depends only on the move and the state before it."""

    def __init__(self) -> None:
        self._lists: dict[Viewer, tuple[folding.Link[folding.Applied] | None, list[str]]] = {}

    def of(self, position: folding.Position, viewer: Viewer) -> list[str]:
        applied = position.applied
        known = self._lists.get(viewer)
        if known is not None and known[0] is applied:
            return known[1]
        if known is not None and applied is not None and applied.tail is known[0]:
            shown = [*known[1], shown_notation(position.table, applied.head, viewer)]
        elif known is not None and known[0] is not None and known[0].tail is applied:
            shown = known[1][:-1]  # an undo
        else:
            shown = [shown_notation(position.table, a, viewer) for a in position.moves()]
        self._lists[viewer] = (applied, shown)
        return shown


class Update:
    """One event of a game with the positions before and after it, as every watcher of the
    game receives it; each viewer kind's message is serialized once, on first use."""

    __slots__ = ("_rendered", "after", "before", "event", "lists")

    def __init__(
        self,
        event: events_pb2.Event,
        before: folding.Position,
        after: folding.Position,
        lists: MoveLists,
    ) -> None:
        self.event = event
        self.before = before
        self.after = after
        self.lists = lists
        self._rendered: dict[Viewer, bytes] = {}

    def rendered(self, viewer: Viewer) -> bytes:
        """The WatchGameResponse for `viewer`, serialized (hidden moves redacted)."""
        data = self._rendered.get(viewer)
        if data is None:
            moves = self.lists.of(self.after, viewer)
            item = replay_item(self.event, self.before, self.after, viewer, moves)
            data = self._rendered[viewer] = service_pb2.WatchGameResponse(
                update=item
            ).SerializeToString()
        return data

    def forget_renders(self) -> None:
        self._rendered.clear()


class Watcher:
    """One WatchGame call: its backlog, then the updates its tail hands it."""

    def __init__(self, tail: Tail, viewer_kind: service_pb2.Viewer | None, limit: int) -> None:
        self.tail = tail
        self._viewer_kind = viewer_kind
        self.viewer: Viewer = None
        self._limit = limit
        self._queue: deque[Update] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.ended: Exception | None = None
        self._backlog: deque[Update] = deque()
        self.sequence = 0
        """The last sequence of the head it started at or of a live update it was given:
        queued updates up to it are skipped, so each event comes exactly once."""
        self.given = 0
        """The last event's sequence it was given (backlog or live)."""
        self.revision = 0
        """The revision it has seen up to (what heartbeats report)."""
        self.skip_before = 0
        """Live updates of revisions before this one are not given (a watch from a revision
        its tail had not reached yet when it opened)."""

    def offer(self, update: Update) -> bool:
        """Queue `update` (from the tail); False when the watcher is ended (too slow)."""
        if self.ended is not None:
            return False
        if len(self._queue) >= self._limit:
            # What it has not been given starts with its backlog's rest, if any.
            oldest = self._backlog[0] if self._backlog else self._queue[0]
            self.end(
                Exhausted(
                    "WATCHER_TOO_SLOW",
                    f"This watcher fell {self._limit} updates behind and was ended; watch "
                    f"again from revision {oldest.event.revision} to resume.",
                    metadata={
                        "resume_from_revision": str(oldest.event.revision),
                        "last_sequence": str(self.given),
                    },
                )
            )
            return False
        self._queue.append(update)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

    def end(self, error: Exception) -> None:
        """End this watcher: its next `next` raises `error`; what it had queued is dropped."""
        if self.ended is None:
            self.ended = error
            self._queue.clear()
            self._backlog.clear()
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    async def next(self, timeout: float) -> Update | None:
        """The next live update, or None when none came within `timeout` seconds. Updates
        already given (in the backlog) are skipped, so each event comes exactly once."""
        while True:
            if self.ended is not None:
                raise self.ended
            if not self._queue:
                loop = asyncio.get_running_loop()
                waiter = self._waiter = loop.create_future()
                timer = loop.call_later(timeout, _wake, waiter)
                try:
                    await waiter
                finally:
                    timer.cancel()
                    self._waiter = None
                if self.ended is not None:
                    raise self.ended
                if not self._queue:
                    return None
            update = self._queue.popleft()
            if update.event.sequence > self.sequence:
                self.sequence = update.event.sequence
                if update.event.revision < self.skip_before:
                    continue  # (its `revision` already says it is past these)
                self.given = update.event.sequence
                self.revision = update.event.revision
                return update

    def has_backlog(self) -> bool:
        """Whether updates before the head it started at are still to be sent."""
        return bool(self._backlog)

    def backlog(self) -> Iterator[Update]:
        """The updates from `from_revision` up to the head it started at, in order."""
        while self._backlog:
            if self.ended is not None:
                raise self.ended
            update = self._backlog.popleft()
            self.given = update.event.sequence
            yield update

    def rendered(self, update: Update) -> bytes:
        return update.rendered(self.viewer)

    def _start(self, head: folding.Position) -> None:
        self.viewer = viewer_of(self._viewer_kind, head.table.players)
        self.sequence = self.given = head.sequence
        self.revision = head.revision

    def _take_backlog(self, updates: Sequence[Update], from_revision: int) -> None:
        self._backlog.extend(u for u in updates if u.event.revision >= from_revision)
        if self._backlog:
            self.given = self._backlog[0].event.sequence - 1


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Tail:
    """The one reader of a watched game on this instance (see the module's docstring)."""

    def __init__(self, hub: WatchHub, game_id: str) -> None:
        self.hub = hub
        self.game_id = game_id
        self.watchers: set[Watcher] = set()
        self.position: folding.Position | None = None
        self.recent: deque[Update] = deque(maxlen=hub.limits.recent)
        self.lists = MoveLists()
        self.history: list[Update] = []
        """Every update from the game's creation on, folded once when a watcher first
        starts further back than `recent` reaches, and shared by every such watcher (with
        the messages each viewer kind has had rendered): see `history_to`."""
        self._folding: asyncio.Task[None] | None = None
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A tail whose watchers all left before it started has nobody to tell.
        self.ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.task = asyncio.create_task(self._run(), name=f"watch-tail-{game_id}")
        # The event loop holds tasks only weakly: a tail its last watcher left is cancelled
        # but still finishing (closing its reader), and must stay reachable until it has.
        hub._tasks.add(self.task)
        self.task.add_done_callback(hub._tasks.discard)

    async def _run(self) -> None:
        try:
            await self._follow()
        except asyncio.CancelledError:
            # How a tail stops (its last watcher left, or the server stops): it ends without
            # the error. A task keeps the CancelledError that ended it, and its traceback holds
            # the tail's frames, so the task, the tail (its positions: the game's states) and its
            # reader's connection stayed in a reference cycle that only a full collection frees;
            # on a long club night that ran twice in half an hour and such tails piled up
            # (issue 29: 143 stopped tails, 10,000 states, in five minutes).
            return

    async def _follow(self) -> None:
        reader, own = self.hub.open_reader()
        try:
            try:
                # The game's head (cached, or made from the nearest checkpoint): a watch
                # opens at the cost of a head, not of a fold of the whole game.
                head = await self.hub.heads.load(self.game_id)
                self.position = head.position
            except Exception as exc:
                self.ready.set_exception(exc)
                return
            self.ready.set_result(None)
            # What the tail reads is verified before anyone gets it: each event linked to
            # the one before and sealed under a trusted key, from the head on.
            walk = ChainWalk.resuming(
                self.hub.store.chain, head.position, head.last_hash, head.keyed
            )
            while True:
                newer = await reader.wait(self.game_id, self.position.sequence, TAIL_BLOCK_SECONDS)
                if newer:
                    # The call that appended these (when on this process) got its reply from
                    # Redis at the same moment: let it answer before the watchers are woken.
                    await self.hub.changes.first(ANSWER_FIRST_SECONDS)
                for event in newer:
                    try:
                        walk.exported(event)
                    except ChainBroken as broken:
                        raise TamperedHistory(
                            self.game_id, broken.index, broken.revision, broken.problem
                        ) from None
                    await self._deliver(event)
        except Exception as exc:  # the store failed or the stream is damaged: tell everyone
            # (Without its traceback: the watchers keep the error, and its frames the tail.)
            error = exc.with_traceback(None)
            for watcher in self.watchers:
                watcher.end(error)
        finally:
            self.hub._drop(self)
            # A stopped tail lives on in reference cycles (its task, its watchers) until the
            # cyclic collector runs, and with it every update of the game and the messages
            # rendered of them: let go of those now (issue 29: a night's memory grew by them).
            self.history = []
            self.recent.clear()
            # And its positions (the game's states, linked back to its start), which an ended
            # watcher's frames, kept by a cancelled stream's traceback, would hold through it.
            self.position = None
            self.lists = MoveLists()
            if own:
                await self.hub.release_reader(reader)

    async def _deliver(self, event: events_pb2.Event) -> None:
        assert self.position is not None
        before = self.position
        self.position = folding.advance(before, event)
        update = Update(event, before, self.position, self.lists)
        self.recent.append(update)
        if len(self.recent) > RENDERS_KEPT:
            self.recent[-RENDERS_KEPT - 1].forget_renders()
        watchers = list(self.watchers)
        for start in range(0, len(watchers), FANOUT_BATCH):
            if start:
                await asyncio.sleep(0)
                # A change that arrived meanwhile is answered before more watchers wake.
                await self.hub.changes.first()
            for watcher in watchers[start : start + FANOUT_BATCH]:
                # (One that left meanwhile is no longer offered anything.)
                if watcher in self.watchers and not watcher.offer(update):
                    self.leave(watcher)

    async def history_to(self, head: folding.Position) -> list[Update]:
        """The updates from the game's creation up to `head` at least: folded once for this
        tail (one fold at a time, however many watchers ask, from whichever revision) and
        then extended from the tail's own updates, so a game's history is folded at most
        once per instance while it is watched (issue 29)."""
        while not self.history or self.history[-1].event.sequence < head.sequence:
            # A fold that is done, but fell short of this head (it was asked for an older
            # head, by a watcher that came before the events since), is followed by another:
            # awaiting a done task again would not yield, so its done callback would never
            # run and the loop would spin here for good (issue 29's long night hung so).
            if self._folding is None or self._folding.done():
                self._folding = asyncio.create_task(self._fold_history(head))
                self._folding.add_done_callback(self._folded)
            await asyncio.shield(self._folding)
        return self.history

    def _folded(self, task: asyncio.Task[None]) -> None:
        if self._folding is task:
            self._folding = None
        if not task.cancelled():
            task.exception()  # (raised to the watchers that awaited it)

    async def _fold_history(self, head: folding.Position) -> None:
        history = self.history
        last = history[-1].event.sequence if history else 0
        if self.recent and self.recent[0].event.sequence <= last + 1 and history:
            # The tail has had every update since: the same objects, renders and all.
            history.extend(u for u in self.recent if u.event.sequence > last)
            return
        lists = MoveLists()
        folded: list[Update] = []
        table = head.table
        steps = self.hub.heads.checkpoints.steps(self.game_id, table, 1, head.revision)
        async for step in steps:
            if step.event.sequence > head.sequence:
                break
            folded.append(Update(step.event, step.before, step.after, lists))
            if len(folded) % HISTORY_YIELD == 0:
                # A long game's fold lets the changes in flight finish, then the others run.
                await self.hub.changes.first()
                await asyncio.sleep(0)
        self.history = folded

    def leave(self, watcher: Watcher) -> None:
        if watcher not in self.watchers:
            return
        self.watchers.discard(watcher)
        self.hub._watchers -= 1
        if not self.watchers:
            self.hub._drop(self)
            self.task.cancel()

    def _backlog_in_memory(self, from_revision: int) -> list[Update] | None:
        """The recent updates from `from_revision` on, if the tail still has all of them."""
        if not self.recent:
            return None
        oldest = self.recent[0].event
        if oldest.sequence == 1 or oldest.revision < from_revision:
            return [u for u in self.recent if u.event.revision >= from_revision]
        return None


class WatchHub:
    """The tails of one service instance, created on the first watcher of a game."""

    def __init__(
        self,
        store: EventStore,
        open_reader: Callable[[], EventStore] | None = None,
        limits: WatchLimits | None = None,
        *,
        heads: Heads,
        changes: ChangesFirst | None = None,
    ) -> None:
        """`open_reader` gives a tail a store on a connection of its own (kept for the next
        tail, or closed, when the tail stops: `READERS_KEPT`); without it tails read through
        `store` itself. A tail starts at the game's head from `heads` (the request path's)."""
        self.store = store
        self.heads = heads
        self._open_reader = open_reader
        self.limits = limits or WatchLimits()
        self.changes = changes or ChangesFirst()
        """The changes of this process, answered before more watchers are woken."""
        self.catch_ups = CatchUps()
        """Turns for the watchers' catch-ups (see `CatchUps`)."""
        self._tails: dict[str, Tail] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        """Every tail's task until it is done, those already left by their watchers too."""
        self._watchers = 0
        self._idle_readers: list[EventStore] = []
        self._closing = False

    @property
    def watched_games(self) -> int:
        return len(self._tails)

    @property
    def watchers(self) -> int:
        return self._watchers

    def open_reader(self) -> tuple[EventStore, bool]:
        """A store for a tail to block on, and whether it is the tail's own (to release)."""
        if self._open_reader is None:
            return self.store, False
        if self._idle_readers:
            return self._idle_readers.pop(), True
        return self._open_reader(), True

    async def release_reader(self, reader: EventStore) -> None:
        """A stopped tail's reader, kept for the next tail (`READERS_KEPT`) or closed. One
        whose read was cancelled has had its connection closed by redis-py (nothing half
        read is read again): it connects again at its next read."""
        if len(self._idle_readers) < READERS_KEPT and not self._closing:
            self._idle_readers.append(reader)
            return
        with contextlib.suppress(Exception):
            await reader.close()

    def _drop(self, tail: Tail) -> None:
        if self._tails.get(tail.game_id) is tail:
            del self._tails[tail.game_id]

    def _join(self, game_id: str, watcher_of: Callable[[Tail], Watcher]) -> Watcher:
        tail = self._tails.get(game_id)
        limits = self.limits
        if self._watchers >= limits.watchers:
            raise Exhausted(
                "TOO_MANY_WATCHERS",
                f"This server has its {limits.watchers} watchers; try again later or "
                "another server.",
                metadata={"limit": str(limits.watchers)},
            )
        if tail is None:
            if len(self._tails) >= limits.games:
                raise Exhausted(
                    "TOO_MANY_WATCHED_GAMES",
                    f"This server is watching its {limits.games} games; try again later or "
                    "another server.",
                    metadata={"limit": str(limits.games)},
                )
            tail = self._tails[game_id] = Tail(self, game_id)
        elif len(tail.watchers) >= limits.watchers_per_game:
            raise Exhausted(
                "TOO_MANY_WATCHERS",
                f"This game has {limits.watchers_per_game} watchers on this server; try "
                "again later or another server.",
                metadata={"limit": str(limits.watchers_per_game)},
            )
        watcher = watcher_of(tail)
        tail.watchers.add(watcher)
        self._watchers += 1
        return watcher

    @contextlib.asynccontextmanager
    async def watch(
        self, game_id: str, from_revision: int, viewer: service_pb2.Viewer | None
    ) -> AsyncIterator[Watcher]:
        """A watcher of `game_id` for the duration of the block: its `backlog()` (the events
        from `from_revision` up to the head it started at; none for 0), then `next()`."""
        check_game_id(game_id)
        watcher = self._join(game_id, lambda tail: Watcher(tail, viewer, self.limits.queue))
        tail = watcher.tail
        try:
            await asyncio.shield(tail.ready)
            head = tail.position
            assert head is not None
            watcher._start(head)
            if from_revision > head.revision + 1:
                # The tail may be behind the store (a busy instance delivers seconds late):
                # a revision already acknowledged to a recorder is not beyond the head. Its
                # watcher starts at the tail's position and skips what comes before it.
                stored = await self.heads.load(game_id)
                if from_revision > stored.revision + 1:
                    raise InvalidRequest(
                        "from_revision",
                        f"from_revision {from_revision} is beyond the game's head, revision "
                        f"{stored.revision}: watch from at most {stored.revision + 1} (what "
                        "comes next).",
                    )
                watcher.skip_before = from_revision
                watcher.revision = from_revision - 1
            elif from_revision:
                backlog = tail._backlog_in_memory(from_revision)
                if backlog is None:
                    backlog = [
                        update
                        for update in await tail.history_to(head)
                        if update.event.sequence <= head.sequence
                    ]
                watcher._take_backlog(backlog, from_revision)
            yield watcher
        finally:
            tail.leave(watcher)
            # The call's frames may outlive it in reference cycles (a cancelled stream's
            # traceback): its backlog and queue, a game's worth of updates, go now.
            watcher._backlog.clear()
            watcher._queue.clear()

    async def close(self) -> None:
        """Stop every tail (the server is stopping), and wait for those already stopping."""
        self._closing = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        while self._idle_readers:
            with contextlib.suppress(Exception):
                await self._idle_readers.pop().close()
