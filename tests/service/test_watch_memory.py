"""What a watch holds is let go when it ends (issue 29, item 4): a stopped tail and an ended
watcher can live on in reference cycles (a task's coroutine, a cancelled stream's traceback)
until the cyclic collector runs, and the long club night's memory grew by what they held,
a game's updates and the messages rendered of them. Once its last watcher has left, a tail
holds no update, nor does the watcher."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from google.protobuf import timestamp_pb2

from tablelog.replay import fold as folding
from tablelog.service.recording import views
from tablelog.service.recording.heads import Head
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.watching import WatchHub, WatchLimits
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2
from tests.service.test_checkpoints import appended, counting_store, stored
from tests.support.histories import random_history

pytestmark = pytest.mark.slow


def test_a_tail_and_its_watcher_hold_no_update_once_the_watch_ends(
    embedded_redis: EmbeddedRedis,
) -> None:
    events = random_history("splendor", 60, seed=5)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store)
        hub = WatchHub(store, heads=recorder.heads, limits=WatchLimits(recent=4))
        try:
            game_id = await stored(store, events[:50])
            spectator = service_pb2.Viewer(spectator=True)
            async with hub.watch(game_id, 1, spectator) as watcher:
                tail = watcher.tail
                assert len(list(watcher.backlog())) == 50  # from its creation on
                await appended(store, game_id, events[50:])
                for _ in events[50:55]:  # some live, the rest left queued
                    assert await watcher.next(10) is not None
                assert tail.history
                assert tail.recent
                assert watcher._queue
            await asyncio.wait_for(asyncio.gather(tail.task, return_exceptions=True), 10)
            assert hub.watched_games == 0
            # Kept alive here as a reference cycle would keep them: empty all the same.
            assert tail.history == []
            assert not tail.recent
            assert not watcher._queue
            assert not watcher._backlog
        finally:
            await hub.close()
            await store.close()

    asyncio.run(scenario())


def test_a_summary_template_does_not_keep_its_game_table_alive() -> None:
    """A game's summary template (`views._template`) lives as long as its table: holding
    the tables (creation, components, set-up state) of up to 4,096 games kept a long
    night's memory rising after their heads had left the head cache."""
    created = random_history("castello-methoni", 1, seed=3)[0].game_created
    when = timestamp_pb2.Timestamp(seconds=1)
    head = Head("g", folding.start(created), b"\x00" * 32, when, when)
    first = views.summarize(head)
    assert views.summarize(head) == first  # the template is reused while the table lives
    table = weakref.ref(head.position.table)
    key = id(head.position.table)
    assert key in views._TEMPLATES
    del head
    gc.collect()
    assert table() is None
    assert key not in views._TEMPLATES


def test_a_stopped_tail_is_freed_without_the_cyclic_collector(
    embedded_redis: EmbeddedRedis,
) -> None:
    """The server collects its oldest generation rarely (`tune_gc`: on a long club night,
    twice in half an hour), so whatever a stopped tail leaves in a reference cycle piles up:
    a cancelled task keeps its CancelledError, whose traceback held the tail's frame, the
    tail, its game's positions and its reader's connection (143 tails and 10,000 states in
    five minutes of the night, issue 29). With the collector off, a tail whose last watcher
    left is gone once its task is done."""
    events = random_history("splendor", 30, seed=6)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        recorder = Recorder(store)
        hub = WatchHub(store, heads=recorder.heads)
        try:
            game_id = await stored(store, events)
            spectator = service_pb2.Viewer(spectator=True)
            async with hub.watch(game_id, 1, spectator) as watcher:
                assert len(list(watcher.backlog())) == 30
                tail = weakref.ref(watcher.tail)
                task = watcher.tail.task
                del watcher
                await asyncio.sleep(0.05)  # the tail blocks in its read
            await asyncio.wait({task}, timeout=10)
            assert task.done()
            del task
            await asyncio.sleep(0)  # (the task's done callbacks)
            assert tail() is None, [type(r).__name__ for r in gc.get_referrers(tail())]
        finally:
            await hub.close()
            await store.close()

    gc.collect()
    gc.disable()
    try:
        asyncio.run(scenario())
    finally:
        gc.enable()


def test_the_next_tail_reads_through_a_stopped_tails_reader(
    embedded_redis: EmbeddedRedis,
) -> None:
    """A club night starts and stops a tail at every game: each opening and closing a Redis
    client left the client's objects for the rare full collection. A stopped tail's reader
    (its read cancelled, so its connection closed) serves the next tail, which connects
    again and gets its game's moves as they come."""
    events = random_history("splendor", 12, seed=7)

    async def scenario() -> None:
        store = counting_store(embedded_redis)
        opened: list[RedisEventStore] = []

        def open_reader() -> RedisEventStore:
            opened.append(store.dedicated())
            return opened[-1]

        hub = WatchHub(store, open_reader, heads=Recorder(store).heads)
        spectator = service_pb2.Viewer(spectator=True)
        try:
            for _ in range(3):
                game_id = await stored(store, events[:10])
                async with hub.watch(game_id, 0, spectator) as watcher:
                    task = watcher.tail.task
                    await asyncio.sleep(0.05)  # the tail blocks in its read
                    await appended(store, game_id, events[10:])
                    given = [await watcher.next(10) for _ in events[10:]]
                    assert [u.event.revision for u in given if u] == [11, 12]
                await asyncio.wait({task}, timeout=10)
            assert len(opened) == 1
        finally:
            await hub.close()
            await store.close()

    asyncio.run(scenario())
