"""Pictures drawn once (`tablelog.service.recording.pictures`, issue 24): on a real Redis and a real
pool of drawing processes, every picture a replay or a GetState serves is byte for byte the one a
fresh fold and a fresh draw give, for every game and every viewer kind; a picture asked again comes
from the cache (nothing drawn again); a viewer never gets another viewer's picture; the cache holds
no more than its bytes; the queue of draws is bounded and a draw past it is refused with
PICTURES_BUSY and changes nothing."""

from __future__ import annotations

import asyncio
import sys

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.replay.registry import all_games
from tablelog.service.errors import Exhausted
from tablelog.service.recording.pictures import (
    ENTRY_OVERHEAD,
    PictureCache,
    PictureLimits,
    Pictures,
)
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.views import picture, viewer_message
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2
from tests.service.helpers import CHAIN
from tests.service.test_checkpoints import fresh_by_revision, stored
from tests.support.histories import random_history

pytestmark = pytest.mark.slow

GAMES = sorted(all_games())


def fresh_picture(position: folding.Position, viewer: Viewer) -> str:
    """The picture drawn here, on this process, from a fresh fold's position."""
    return picture(position, viewer, position.game.view(position.state, viewer))


def fresh_by_sequence(events: list[events_pb2.Event]) -> dict[int, folding.Position]:
    """The position a fresh fold gives after every event."""
    position = folding.start(events[0].game_created)
    by_sequence = {1: position}
    for event in events[1:]:
        position = folding.advance(position, event)
        by_sequence[event.sequence] = position
    return by_sequence


def test_the_cache_is_bounded_by_its_bytes_and_drops_the_least_recently_used() -> None:
    cache = PictureCache(3 * (100 + ENTRY_OVERHEAD))
    for index in range(3):
        cache.put(("g", bytes([index]), None, "wide"), "x" * 100)
    assert cache.get(("g", b"\x00", None, "wide")) is not None  # now the most recently used
    cache.put(("g", b"\x03", None, "wide"), "y" * 100)
    assert cache.get(("g", b"\x01", None, "wide")) is None
    assert cache.get(("g", b"\x00", None, "wide")) == "x" * 100
    assert cache.bytes <= cache.max_bytes
    assert len(cache) == 3
    cache.put(("g", b"\x04", None, "wide"), "z" * cache.max_bytes)  # larger than it all: not kept
    assert cache.get(("g", b"\x04", None, "wide")) is None
    assert len(cache) == 3


def test_a_picture_is_counted_by_the_bytes_its_text_takes() -> None:
    # Four of the five games draw a character past Latin-1 (U+2248), so Python keeps their
    # text at two bytes a character: the cache counted them at half (issue 29).
    cache = PictureCache(1 << 20)
    pictures = [f"<svg>{index} \u2248 {'x' * 20_000}</svg>" for index in range(60)]
    for index, text in enumerate(pictures):
        cache.put(("g", bytes([index]), None, "wide"), text)
    held = [
        text
        for index, text in enumerate(pictures)
        if cache.get(("g", bytes([index]), None, "wide"))
    ]
    assert held
    assert sum(sys.getsizeof(text) for text in held) <= cache.max_bytes
    assert cache.bytes <= cache.max_bytes


def test_the_cache_stays_within_its_bytes_once_its_pictures_have_been_served() -> None:
    # Serving a picture (protobuf reading its text) makes Python keep a UTF-8 copy inside a
    # text past Latin-1, so the text grows after it was counted: counted again when dropped,
    # it took off more than it had added, and the cache grew without bound (issue 29).
    cache = PictureCache(1 << 20)
    for index in range(500):
        key = ("g", index.to_bytes(2, "big"), None, "wide")
        cache.put(key, f"<svg>{index} \u2248 {'x' * 20_000}</svg>")
        served = cache.get(key)
        assert served is not None
        service_pb2.StateSnapshot(picture=served)  # as a replay's answer carries it
        assert 0 <= cache.bytes <= cache.max_bytes
    held = [text for text, _ in cache._entries.values()]
    assert sum(sys.getsizeof(text) for text in held) <= cache.max_bytes


@pytest.mark.parametrize("name", GAMES)
def test_served_pictures_are_fresh_draws_and_drawn_once(
    embedded_redis: EmbeddedRedis, name: str
) -> None:
    events = random_history(name, 40, seed=5)
    fresh = fresh_by_revision(events)
    by_sequence = fresh_by_sequence(events)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        pictures = Pictures(PictureLimits(workers=1))
        recorder = Recorder(store, checkpoint_interval=7, pictures=pictures)
        try:
            game_id = await stored(store, events)
            head = await recorder.load(game_id)
            players = head.position.table.players
            for viewer in (FULL, SPECTATOR, 0, len(players) - 1):
                asked = viewer_message(viewer)
                earlier = pictures.drawn
                served = [
                    (item.event.sequence, item.state.revision, item.state.picture)
                    async for item in recorder.replay(game_id, 1, 0, asked, drawn=True)
                ]
                assert len(served) == len(events)
                for sequence, _revision, svg in served:
                    expected = fresh_picture(by_sequence[sequence], viewer)
                    assert svg == expected, (viewer, sequence)
                drawn = pictures.drawn
                assert drawn - earlier <= len(events)
                # Asked again, by a replay and by GetState: from the cache, the same bytes.
                again = [
                    (item.event.sequence, item.state.revision, item.state.picture)
                    async for item in recorder.replay(game_id, 1, 0, asked, drawn=True)
                ]
                assert again == served
                for revision in (1, head.revision // 2, head.revision):
                    state = await recorder.state(game_id, revision, asked, drawn=True)
                    assert state.picture == fresh_picture(fresh[revision], viewer), revision
                assert pictures.drawn == drawn
        finally:
            await pictures.close()
            await store.close()

    asyncio.run(scenario())


def test_viewers_never_share_a_picture_and_one_draw_serves_all_who_ask(
    embedded_redis: EmbeddedRedis,
) -> None:
    events = random_history("splendor", 30, seed=2, undo_weight=0, amend_weight=0)
    fresh = fresh_by_revision(events)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        pictures = Pictures(PictureLimits(workers=1))
        recorder = Recorder(store, pictures=pictures)
        try:
            game_id = await stored(store, events)
            head = await recorder.load(game_id)
            revision = head.revision
            # Ten callers asking for the same picture at once: drawn once.
            same = await asyncio.gather(
                *(
                    recorder.state(game_id, revision, viewer_message(0), drawn=True)
                    for _ in range(10)
                )
            )
            assert pictures.drawn == 1
            assert {s.picture for s in same} == {fresh_picture(fresh[revision], 0)}
            for viewer in (FULL, SPECTATOR, 1):
                state = await recorder.state(game_id, revision, viewer_message(viewer), drawn=True)
                assert state.picture == fresh_picture(fresh[revision], viewer)
            assert pictures.drawn == 4
        finally:
            await pictures.close()
            await store.close()

    asyncio.run(scenario())


def test_a_draw_past_the_queue_is_refused_and_changes_nothing(
    embedded_redis: EmbeddedRedis,
) -> None:
    events = random_history("splendor", 12, seed=4, undo_weight=0, amend_weight=0)

    async def scenario() -> None:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN)
        pictures = Pictures(PictureLimits(workers=1, queue=1))
        recorder = Recorder(store, pictures=pictures)
        try:
            game_id = await stored(store, events)
            head = await recorder.load(game_id)
            first, second = await asyncio.gather(
                recorder.state(game_id, head.revision, viewer_message(0), drawn=True),
                recorder.state(game_id, head.revision, viewer_message(1), drawn=True),
                return_exceptions=True,
            )
            assert isinstance(second, Exhausted)
            assert second.reason == "PICTURES_BUSY"
            assert not isinstance(first, BaseException)
            assert first.picture
            assert pictures.drawn == 1
            assert len(pictures.cache) == 1
            # Once the queue has room, the same picture is drawn as asked.
            state = await recorder.state(game_id, head.revision, viewer_message(1), drawn=True)
            assert state.picture
            assert pictures.drawn == 2
        finally:
            await pictures.close()
            await store.close()

    asyncio.run(scenario())
