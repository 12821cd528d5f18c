"""The projector: follows the games' events into club memory's stored outcomes, and serves
the read models computed from them (docs/club-memory.md, "Projections").

Following: an append that ends, reopens (an undo of the last move), abandons or amends a
game notes the game in its club's feed (`note_after_append`, a follow-up after the append,
like the listing index's). Every service instance runs a projector: it takes the flagged
clubs, reads each club's feed after its checkpoint, folds each noted game from its stream
(its chain verified) and stores what the game now gives
(`tablelog.service.memory.standings.outcome_of`: an outcome, or none) with the checkpoint in one
script (`tablelog.service.store.memory`).

More than one instance: idempotent updates, not a lease. Two projectors may work on the
same club at once; each writes an outcome only when it was derived at a later sequence of
its game than the stored one, and moves the checkpoint only forward, so the result is the
same whichever runs, twice or interleaved. A lease would save that duplicated work but adds
what leases get wrong (a paused holder whose lease expired writing after its successor,
a dead holder stalling its clubs until expiry); the work here is cheap to repeat and safe.
A feed entry lost with a crash between an append and its follow-up leaves that game
unprojected until the game changes again or `RebuildProjections` runs; `sweep` also
re-flags every club with unprojected feed entries at start-up and every `SWEEP_EVERY`.

Idle: a flag also appends to a wake-up stream (`tablelog.service.store.memory`), which an
idle projector reads blocking (`IDLE_BLOCK`) on a connection of its own: a game ended on any
instance wakes every projector at once, and an idle one costs Redis one call a few seconds.

Reading: standings, ratings and statistics are functions of the outcomes and the roster
(`tablelog.service.memory.standings`, computed from zero), kept per instance game by game
(`tablelog.service.memory.views`: a club's parsed outcomes and, per game type and season, a
view with its games in order, each player's sums and games, and the ratings). A read first
compares the club's outcome version (one GET) with the copy held; when it moved, the change
log (`tablelog.service.store.memory`: an entry per version naming the games changed) says
which games to read again (one XRANGE, one HMGET), and each view takes the changed games
away and adds their new outcomes; the ratings are continued from the first changed place on
when next read. Only when the log cannot say (a first read, a copy more than
`MAX_CATCH_UP` changes behind or older than the log, a rebuild) are the outcomes read and
parsed whole, and the views built from zero. A roster change (a merge, a rename) builds the
views again; answers (a table, a player's record) are kept until the next change."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from tablelog.replay import fold as folding
from tablelog.service.access.identity import LOCAL_CLUB
from tablelog.service.logs import get_logger
from tablelog.service.memory import results
from tablelog.service.memory import standings as models
from tablelog.service.memory.roster import fold_roster
from tablelog.service.memory.roster_store import RosterStore
from tablelog.service.memory.views import ClubMemory
from tablelog.service.metrics import (
    PROJECTION_LAG,
    PROJECTOR_PENDING_CLUBS,
    PROJECTOR_PENDING_GAMES,
)
from tablelog.service.recording.game_index import index_club
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import RedisEventStore, StoredHead, StoreUnavailable
from tablelog.service.store.game_index import game_of
from tablelog.service.store.memory import MemoryStore
from tablelog.service.store.result_storage import ResultStorage
from tablelog.v1 import events_pb2, standings_pb2

BATCH: Final = 200
"""Feed entries a projector takes at a time per club."""
IDLE_BLOCK: Final = 3.0
"""Seconds an idle projector's blocking read of the wake-up stream waits before it reads
again (below the store's 5 s limit): one Redis call per 3 s when nothing changes, where a
poll of the flagged clubs every 50 ms cost 20 a second on every instance."""
LOOK_EVERY: Final = 30.0
"""Seconds after which an idle projector looks at the flagged clubs though nothing woke it
(a flag whose wake-up entry was lost to an outage between the two writes)."""
SWEEP_EVERY: Final = 300.0
"""Seconds between sweeps for feed entries whose flag was lost (two calls per club)."""
REBUILD_PAGE: Final = 500
"""Games a rebuild lists, and reads the sealed results and heads of, at once (one pipeline)."""
FOLD_PAGE: Final = 32
"""Games a rebuild folds from their streams at once (fewer than the store's connection pool
holds)."""
CACHE_CLUBS: Final = 64
"""Clubs whose parsed outcomes an instance keeps (least recently read dropped first)."""
MAX_CATCH_UP: Final = 2_000
"""Changes (versions, and games) a copy of a club is brought up to date by, reading the
changed games alone; past that the club's outcomes are read whole again."""

log = get_logger("tablelog.projector")


def ended_time(events: list[events_pb2.Event]) -> Timestamp:
    """When the game ended: its last GameEnded event."""
    for event in reversed(events):
        if event.WhichOneof("body") == "game_ended":
            return event.time
    return events[-1].time if events else Timestamp()


def project(
    game_id: str, events: list[events_pb2.Event]
) -> tuple[int, standings_pb2.GameOutcome | None]:
    """The sequence a game's events reach, and the outcome they give."""
    position = folding.fold(events)
    return position.sequence, models.outcome_of(
        game_id, position, ended_time(events), position.sequence
    )


def result_of(
    club_id: str, events: list[events_pb2.Event], outcome: standings_pb2.GameOutcome | None
) -> results.GameResult:
    """The result to seal for a game whose (verified) `events` gave `outcome`: bound to the
    last event folded, which the stored head names."""
    last = events[-1]
    game = events[0].game_created.game
    return results.GameResult(
        sequence=last.sequence,
        revision=last.revision,
        last_hash=last.hash,
        club=club_id,
        game=game,
        version=results.derivation(game),
        outcome=outcome.SerializeToString(deterministic=True) if outcome is not None else b"",
    )


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What a rebuild did: games with an outcome, and games folded from their events (the
    others' outcomes came from their sealed results), by why."""

    games: int
    folded: int
    why: dict[str, int]


class Projector:
    def __init__(self, store: MemoryStore, rosters: RosterStore, recorder: Recorder) -> None:
        self.store = store
        self.rosters = rosters
        self.recorder = recorder
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stopped = asyncio.Event()
        self._cache: OrderedDict[str, ClubMemory] = OrderedDict()
        self.projected = 0
        self.reloads = 0
        """Reads of a club's outcomes whole (a first read, or the change log could not say)."""
        self.caught_up = 0
        """Copies of a club brought up to date from the change log."""
        self._waiter: MemoryStore | None = None
        """The idle wait's store: on a connection of its own (`RedisEventStore.dedicated`),
        so a blocking read never holds one of the request path's connections."""
        self._waiter_store: RedisEventStore | None = None

    # ------------------------------------------------------------------ following

    async def project_game(self, club_id: str, game_id: str, feed_id: str) -> bool:
        events = await self.recorder.events(game_id)
        sequence, outcome = project(game_id, events)
        await self._keep_result(club_id, game_id, events, outcome)
        return await self.store.apply(club_id, game_id, sequence, outcome, feed_id)

    @property
    def _results(self) -> ResultStorage | None:
        store = self.recorder.store
        return store.results if isinstance(store, RedisEventStore) else None

    async def _keep_result(
        self,
        club_id: str,
        game_id: str,
        events: list[events_pb2.Event],
        outcome: standings_pb2.GameOutcome | None,
    ) -> None:
        """Seal what `events` gave beside the game's stream, for the next rebuild. Written
        before the outcome is applied (once a game shows as projected, its result is
        stored), and only while the game's head is still the last event folded (a slower
        projector never replaces a newer result; a game deleted meanwhile gets none). A
        crash or an outage in between leaves it missing or stale: a rebuild then folds the
        game."""
        storage = self._results
        if storage is None or not events:
            return
        sealed = results.seal(
            self.recorder.store.chain, game_id, result_of(club_id, events, outcome)
        )
        try:
            await storage.put(game_id, sealed, events[-1].hash)
        except StoreUnavailable as exc:
            log.warning("game result not kept", game_id=game_id, error=str(exc))

    async def project_club(self, club_id: str) -> int:
        """Project the club's feed after its checkpoint; how many entries were taken."""
        taken = 0
        while True:
            after = await self.store.checkpoint(club_id)
            entries = await self.store.feed_after(club_id, after, BATCH)
            if not entries:
                return taken
            # A game noted twice in a batch is folded once, at its last entry; its lag
            # counts from its first.
            last: dict[str, str] = {}
            first: dict[str, str] = {}
            for entry_id, game_id in entries:
                last[game_id] = entry_id
                first.setdefault(game_id, entry_id)
            waiting = len(last)
            PROJECTOR_PENDING_GAMES.inc(waiting)
            try:
                for game_id, entry_id in sorted(last.items(), key=lambda item: item[1]):
                    try:
                        await self.project_game(club_id, game_id, entry_id)
                    except StoreUnavailable:
                        raise
                    except Exception as exc:  # a game that cannot be folded must not stop the rest
                        log.warning("game not projected", game_id=game_id, error=str(exc))
                        await self.store.apply(club_id, game_id, -1, None, entry_id)
                    waiting -= 1
                    PROJECTOR_PENDING_GAMES.dec()
                    noted = int(first[game_id].partition("-")[0]) / 1000
                    PROJECTION_LAG.observe(max(0.0, time.time() - noted))
            finally:
                PROJECTOR_PENDING_GAMES.dec(waiting)  # a round that failed: taken again later
            await self.store.apply(club_id, "", -1, None, entries[-1][0])
            await self.store.trim(club_id, entries[-1][0])
            taken += len(entries)
            self.projected += len(entries)

    async def run_once(self) -> int:
        taken = 0
        clubs = await self.store.dirty_clubs()
        pending = len(clubs)
        PROJECTOR_PENDING_CLUBS.inc(pending)
        try:
            for index, club_id in enumerate(clubs):
                try:
                    taken += await self.project_club(club_id)
                except Exception:
                    # Taken again on a later round, with the clubs after it (taken too).
                    for again in clubs[index:]:
                        await self.store.flag(again)
                    raise
                pending -= 1
                PROJECTOR_PENDING_CLUBS.dec()
        finally:
            PROJECTOR_PENDING_CLUBS.dec(pending)
        return taken

    async def sweep(self, clubs: list[str]) -> None:
        """Flag every club whose feed holds entries after its checkpoint."""
        for club_id in clubs:
            if await self.store.feed_after(club_id, await self.store.checkpoint(club_id), 1):
                await self.store.flag(club_id)

    async def run(self, clubs: Callable[[], Any]) -> None:
        swept = -SWEEP_EVERY  # (monotonic time may start near 0)
        wake = "0-0"
        woken, looked = True, 0.0
        while not self._stopping:
            try:
                if time.monotonic() - swept > SWEEP_EVERY:
                    # The wake-up stream's end before the sweep: a flag after it wakes the
                    # wait below, whenever it came.
                    wake = await self.store.wake_end()
                    await self.sweep([LOCAL_CLUB, *await clubs()])
                    swept, woken = time.monotonic(), True
                if woken or time.monotonic() - looked > LOOK_EVERY:
                    looked = time.monotonic()
                    if await self.run_once():
                        continue  # more may be waiting: look again before waiting
                seen = await self._idle(wake)
                woken, wake = seen != wake, seen
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: try again later, never stop following
                log.warning("projector round failed", error=str(exc))
                woken = True  # flags may have been left while Redis was away: look again
                await self._pause(1.0)

    async def _pause(self, seconds: float) -> None:
        """Wait between rounds, or until `stop`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), seconds)

    async def _idle(self, wake: str) -> str:
        """Wait for a club flagged after the wake-up entry `wake` (by any instance), up to
        `IDLE_BLOCK`, or until `stop`; the newest wake-up entry seen. A flag that came
        while the round ran is after `wake` too: the wait answers at once, none is missed."""
        if self._waiter is None:
            store = self.recorder.store
            if isinstance(store, RedisEventStore):
                self._waiter_store = store.dedicated()
                self._waiter = MemoryStore(self._waiter_store.redis, calls=self._waiter_store.calls)
            else:
                self._waiter = self.store
        waiting = asyncio.ensure_future(self._waiter.wait_for_wake(wake, IDLE_BLOCK))
        stopping = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not waiting.done():
                # redis-py closes a connection whose read is cancelled: nothing half-read
                # is used again.
                waiting.cancel()
                with contextlib.suppress(asyncio.CancelledError, StoreUnavailable):
                    await waiting
        return waiting.result() if not waiting.cancelled() else wake

    def start(self, clubs: Callable[[], Any]) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(clubs))

    async def stop(self) -> None:
        """Stop following, within a few seconds whatever the task is doing: a cancellation
        that a Redis call in flight swallows still ends the loop at its next round."""
        self._stopping = True
        self._stopped.set()
        if self._task is not None:
            # A round in flight finishes its Redis calls first: a cancellation in the middle
            # of one can leave its connection out of the pool, unclosed. Only a round stuck
            # past the wait is cancelled.
            done, _pending = await asyncio.wait({self._task}, timeout=5)
            if not done:
                self._task.cancel()
                done, _pending = await asyncio.wait({self._task}, timeout=5)
            for task in done:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    task.result()
            self._task = None
        if self._waiter_store is not None:
            with contextlib.suppress(Exception):
                await self._waiter_store.close()
            self._waiter_store = self._waiter = None

    # ------------------------------------------------------------------ rebuilding

    async def rebuild_club(self, club_id: str, refold: bool = False) -> Rebuilt:
        """Rebuild the club's projection: forget it, then take every game of the club again,
        from its sealed result when one is usable (`tablelog.service.memory.results`: sealed
        for this game and club, at the stream's stored head, by this code), else (and for
        every game with `refold`) folded from its verified stream, its result sealed again.
        The feed entries noted meanwhile are projected after (an outcome is never
        overwritten by an older one)."""
        upto = await self.store.feed_end(club_id)
        await self.store.clear(club_id)
        storage = None if refold else self._results
        count = 0
        why: dict[str, int] = {}
        after: str | None = None
        while True:
            positions = await self.recorder.store.list_game_ids(club_id, "", 0, after, REBUILD_PAGE)
            if not positions:
                break
            after = positions[-1]
            game_ids = [game_of(position) for position in positions]
            rows: list[tuple[str, int, bytes]] = []
            to_fold: list[str] = []
            if storage is None:
                to_fold = game_ids
                reason = "refold" if refold else "no results"
                why[reason] = why.get(reason, 0) + len(game_ids)
            else:
                for game_id, (head, data) in zip(
                    game_ids, await storage.with_heads(game_ids), strict=True
                ):
                    kept, reason = self._trusted(club_id, game_id, head, data)
                    if kept is None:
                        to_fold.append(game_id)
                        why[reason] = why.get(reason, 0) + 1
                    else:
                        rows.append(kept)
            # The games folded are read and stored a few at a time concurrently (their
            # folds still run one after another on the loop): a rebuild waits on Redis once
            # per few games, not once per game, and holds no more connections than that.
            for start in range(0, len(to_fold), FOLD_PAGE):
                done = await asyncio.gather(
                    *(self._rebuild_game(club_id, g) for g in to_fold[start : start + FOLD_PAGE])
                )
                rows.extend(row for row in done if row is not None)
            await self.store.apply_many(club_id, rows)
            count += sum(1 for _g, _s, blob in rows if blob)
        await self.store.apply(club_id, "", -1, None, upto)
        await self.store.flag(club_id)
        folded = sum(why.values())
        log.info("projections rebuilt", club_id=club_id, games=count, folded=folded, why=why)
        return Rebuilt(count, folded, why)

    def _trusted(
        self, club_id: str, game_id: str, head: StoredHead | None, data: bytes | None
    ) -> tuple[tuple[str, int, bytes] | None, str]:
        """The row a game's sealed result gives a rebuild of `club_id`, or None and why not."""
        if head is None:
            return None, "no head"
        if data is None:
            return None, "no result"
        try:
            result = results.unseal(self.recorder.store.chain, game_id, data)
        except results.DamagedResult as damaged:
            log.warning("game result damaged", game_id=game_id, problem=str(damaged))
            return None, "damaged"
        reason = results.usable(result, club_id, head)
        if reason:
            return None, reason
        return (game_id, result.sequence, result.outcome), ""

    async def _rebuild_game(self, club_id: str, game_id: str) -> tuple[str, int, bytes] | None:
        """Fold one game of a rebuild from its verified stream, and seal its result again:
        its row (None for an unreadable game or another club's, logged)."""
        try:
            events = await self.recorder.events(game_id)
            if index_club(events[0].game_created) != club_id:
                return None
            sequence, outcome = project(game_id, events)
        except StoreUnavailable:
            raise
        except Exception as exc:  # a game that cannot be read or folded must not stop the rest
            log.warning("game not rebuilt", game_id=game_id, error=str(exc))
            return None
        await self._keep_result(club_id, game_id, events, outcome)
        blob = outcome.SerializeToString(deterministic=True) if outcome is not None else b""
        return game_id, sequence, blob

    # ------------------------------------------------------------------ reading

    async def club(self, club_id: str) -> ClubMemory:
        """The club's outcomes and read models as of now: the copy held, brought up to the
        club's outcome version by reading the changed games alone (the change log), else
        read whole; and up to its roster (a changed roster builds the views again)."""
        version = await self.store.version(club_id)
        # The roster's length alone (one XLEN): its changes are read and folded only when
        # there are new ones.
        roster_version = await self.rosters.version(club_id)
        cached = self._cache.get(club_id)
        if cached is not None and cached.version != version:
            cached = await self._caught_up(club_id, cached, version)
        if cached is None:
            blobs = await self.store.outcomes(club_id)
            held = self._cache.get(club_id)
            if held is not None and held.roster_version == roster_version:
                roster = held.roster
            else:
                changes = await self.rosters.changes(club_id)
                roster, roster_version = fold_roster(changes), len(changes)
            cached = ClubMemory(
                club_id,
                version,
                roster_version,
                (standings_pb2.GameOutcome.FromString(blob) for blob in blobs.values()),
                roster,
            )
            self.reloads += 1
        elif cached.roster_version != roster_version:
            changes = await self.rosters.changes(club_id)
            cached.set_roster(fold_roster(changes), len(changes))
        held = self._cache.get(club_id)
        if held is None or held.version <= cached.version:  # (never an older copy back)
            self._cache[club_id] = cached
            self._cache.move_to_end(club_id)
        while len(self._cache) > CACHE_CLUBS:
            self._cache.popitem(last=False)
        return cached

    async def _caught_up(self, club_id: str, cached: ClubMemory, version: int) -> ClubMemory | None:
        """`cached` brought to `version` by the change log (the changed games' outcomes
        read and applied), or None when the log cannot say what changed since."""
        changed = await self.store.changes_after(club_id, cached.version, version, MAX_CATCH_UP)
        if changed is None:
            return None
        games = sorted(changed)
        blobs = await self.store.outcomes_of(club_id, games)
        # Another read of the club may have caught up meanwhile (the outcomes read here are
        # at least as new as `version`: applying them again changes nothing).
        if cached.version < version:
            for game_id, blob in zip(games, blobs, strict=True):
                cached.change(game_id, standings_pb2.GameOutcome.FromString(blob) if blob else None)
            cached.version = version
            self.caught_up += 1
        return cached

    async def seasons(self, club_id: str) -> dict[str, models.Range]:
        return {
            name: models.Range(name, start, end)
            for name, (start, end) in (await self.store.seasons(club_id)).items()
        }
