"""Watchers that share (issue 29): however many watchers of a game start further back than
their tail remembers, and from whichever revisions, the game's history is folded once on
the instance and shared, each watcher's backlog still being exactly the replay of a fresh
fold from its revision, as its viewer may see it."""

from __future__ import annotations

import asyncio

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.views import replay_item, viewer_message
from tablelog.service.recording.watching import WatchHub, WatchLimits
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2
from tests.service.test_checkpoints import counting_store, stored
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
