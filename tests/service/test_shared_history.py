"""Watchers that share (issue 29): however many watchers of a game start further back than
their tail remembers, and from whichever revisions, the game's history is folded once on
the instance and shared, each watcher's backlog still being exactly the replay of a fresh
fold from its revision, as its viewer may see it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.service.errors import InvalidRequest
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.views import replay_item, viewer_message
from tablelog.service.recording.watching import WatchHub, WatchLimits
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2
from tests.service.test_checkpoints import appended, counting_store, stored
from tests.support.histories import random_history

pytestmark = pytest.mark.slow


def test_watchers_from_far_back_share_one_fold_of_the_history(
    embedded_redis: EmbeddedRedis,
) -> None:
    events = random_history("splendor", 120, seed=11)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        # No checkpoint to start from: each fold of its own would read the whole stream.
        recorder = Recorder(store, checkpoint_interval=10_000)
        hub = WatchHub(store, heads=recorder.heads, limits=WatchLimits(recent=4))
        try:
            game_id = await stored(store, events)
            await recorder.load(game_id)
            as_stored = await store.read(game_id)
            players = [p.name for p in as_stored[0].game_created.players]

            def expected(viewer: Viewer, from_revision: int) -> list[bytes]:
                position = folding.start(as_stored[0].game_created)
                shown = []
                for index, event in enumerate(as_stored):
                    before = position
                    if index:
                        position = folding.advance(position, event)
                    if event.revision >= from_revision:
                        item = replay_item(event, before, position, viewer)
                        update = service_pb2.WatchGameResponse(update=item)
                        shown.append(update.SerializeToString())
                return shown

            asks = [
                (viewer, from_revision)
                for viewer in (FULL, SPECTATOR, 0, len(players) - 1)
                for from_revision in (1, 2, 40, as_stored[-10].revision)
            ]
            store.entries_read = 0
            seen: dict[tuple[Viewer, int], list[bytes]] = {}
            updates: list[list[object]] = []

            async def watch(viewer: Viewer, from_revision: int) -> None:
                asked = viewer_message(viewer)
                async with hub.watch(game_id, from_revision, asked) as watcher:
                    backlog = list(watcher.backlog())
                    updates.append(list(backlog))
                    seen[viewer, from_revision] = [watcher.rendered(u) for u in backlog]

            await asyncio.gather(*(watch(viewer, first) for viewer, first in asks))
            # One fold of the stream for sixteen watchers (the tail's head is cached).
            assert store.entries_read <= len(as_stored)
            for viewer, from_revision in asks:
                assert seen[viewer, from_revision] == expected(viewer, from_revision), (
                    viewer,
                    from_revision,
                )
            # The same update objects (and so the same rendered bytes) for all of them.
            firsts = {id(backlog[-1]) for backlog in updates}
            assert len(firsts) == 1
        finally:
            await hub.close()
            await store.close()

    asyncio.run(scenario())


def test_a_fold_done_short_of_a_newer_head_is_followed_by_another_not_a_spin(
    embedded_redis: EmbeddedRedis,
) -> None:
    """A watcher that comes to a shared fold made for an older head (the events since came
    between two watchers' opens), once that fold is done but before its done callback has
    run, folds on to its own head. It once awaited the done fold again and again, which
    never yields, so the callback never ran and the server's loop spun for good (the long
    club night hung so). The scenario runs in a thread of its own, so that a spin fails the
    test instead of hanging it."""
    events = random_history("splendor", 60, seed=5)
    outcome: list[object] = []

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store, checkpoint_interval=10_000)
        hub = WatchHub(store, heads=recorder.heads, limits=WatchLimits(recent=4))
        try:
            game_id = await stored(store, events)
            await recorder.load(game_id)
            async with hub.watch(game_id, 0, None) as watcher:
                tail = watcher.tail
                head = tail.position
                assert head is not None
                older = await recorder.heads.checkpoints.position_at(
                    game_id, head.table, head.revision - 5
                )
                fold = asyncio.create_task(tail._fold_history(older))
                fold.add_done_callback(tail._folded)
                tail._folding = fold
                await asyncio.wait([fold])
                # As when another task gets to the fold first: done, its callback not run.
                fold.remove_done_callback(tail._folded)
                tail._folding = fold
                assert tail.history[-1].event.sequence < head.sequence
                history = await asyncio.wait_for(tail.history_to(head), 30)
                outcome.append([u.event.sequence for u in history])
        finally:
            await hub.close()
            await store.close()

    runner = threading.Thread(target=lambda: asyncio.run(scenario()), daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "history_to spun on a fold done short of its head"
    assert outcome, "the scenario failed (see the thread's exception above)"
    folded = outcome[0]
    assert isinstance(folded, list)
    # The whole history to the head, each event once, in order.
    assert folded[0] <= 2, folded
    assert folded == list(range(folded[0], len(events) + 1)), folded


def test_a_watch_from_a_revision_its_lagging_tail_has_not_reached_is_not_refused(
    embedded_redis: EmbeddedRedis,
) -> None:
    """A busy instance's tail can be seconds behind the store (the long club night: a watch
    from a revision a recorder had been answered was refused as beyond the head). The head
    a refusal names is the stored one; a watch from a revision the store has starts at the
    tail's position and is given nothing before its revision."""
    events = random_history("splendor", 60, seed=12)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store)
        hub = WatchHub(store, heads=recorder.heads, limits=WatchLimits(recent=4))
        gate = asyncio.Event()
        reading = store.wait

        async def held(*args: object, **kwargs: object) -> object:
            await gate.wait()  # the tail reads nothing new until the gate opens
            return await reading(*args, **kwargs)  # type: ignore[arg-type]

        store.wait = held  # type: ignore[method-assign, assignment]
        spectator = service_pb2.Viewer(spectator=True)
        try:
            game_id = await stored(store, events[:50])
            known = events[49].revision
            async with hub.watch(game_id, known + 1, spectator) as early:
                await appended(store, game_id, events[50:])
                head = events[-1].revision
                assert early.tail.position is not None
                assert early.tail.position.revision == known < head - 3  # behind the store
                with pytest.raises(InvalidRequest, match=f"revision {head}:"):
                    async with hub.watch(game_id, head + 2, spectator):
                        pass
                start = known + 3
                async with hub.watch(game_id, start, spectator) as late:
                    assert not late.has_backlog()
                    assert late.revision == start - 1
                    gate.set()
                    wanted = [e.revision for e in events[50:] if e.revision >= start]
                    given = [await late.next(10) for _ in wanted]
                    assert [u.event.revision for u in given if u] == wanted
                    assert late.revision == head
                wanted = [e.revision for e in events[50:]]
                got = [await early.next(10) for _ in wanted]
                assert [u.event.revision for u in got if u] == wanted
        finally:
            gate.set()
            await hub.close()
            await store.close()

    asyncio.run(scenario())
