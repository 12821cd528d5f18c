"""Pictures: each drawn once, kept, and never drawn on the loop that answers RecordMove.

A picture is a pure function of the game, the chain hash at its revision (the hash of the
last event folded: it covers every event before it, so one hash is one history) and the
viewer kind (the full view, the spectator, a seat): DESIGN.md, "Browsers and pictures".
So it is cached by that key, `(game_id, chain hash, viewer)`, in an LRU bounded by the bytes
of the SVG text it holds (`tablelog serve --picture-cache-bytes`), and a picture being drawn
is drawn once however many callers ask for it at the same time.

Drawing (1-5 ms a picture, 32 in a block of the web app's stepping) runs in processes of
its own (`tablelog.service.recording.offload`; `--picture-workers`, by default one: the other core
of a two-core machine): the loop sends the view (1-7 KB) down a pipe and awaits the SVG text,
serving RecordMove meanwhile. The queue is bounded: at most `PictureLimits.queue` pictures are drawn
or wait for a worker at once (every caller draws one at a time, so that bounds the callers drawing
too); one more is refused at once with RESOURCE_EXHAUSTED, reason PICTURES_BUSY, and
`retry_after_ms`, having changed nothing. With `workers=0` pictures are drawn on the loop (what a
Recorder built without a server does: tests and tools).
"""

from __future__ import annotations

import asyncio
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from tablelog.replay import fold as folding
from tablelog.replay.core import Viewer
from tablelog.replay.picture import WIDE
from tablelog.service.errors import Exhausted
from tablelog.service.recording.offload import WorkerPool, draw
from tablelog.service.recording.views import picture_inputs

DEFAULT_PICTURE_CACHE_BYTES: Final = 64 << 20
"""What the cached pictures of one process may hold (`--picture-cache-bytes`): a picture is
5-40 KB of SVG text, so the default keeps some 3,000-10,000 (a hundred games' worth of
every revision for one viewer kind)."""

ENTRY_OVERHEAD: Final = 200
"""What an entry costs beyond its text (its key, the dict slot, the string's header)."""
_EMPTY_TEXT: Final = sys.getsizeof("")


def stored_size(picture: str) -> int:
    """What a picture takes in the cache once served: its text as Python stores it (one byte
    a character when all are Latin-1, else two or four: most games' pictures have a character
    such as U+2248, and were counted at half their size, issue 29), the UTF-8 copy that
    Python keeps inside such a text once protobuf has read it (the first answer that carries
    it), and ENTRY_OVERHEAD. Counted once, when the picture is put: the size is kept with
    the entry, so that what is taken off is what was added (a size measured again after the
    UTF-8 copy was made took off more, and the cache grew without bound)."""
    text = sys.getsizeof(picture) - _EMPTY_TEXT
    if not picture.isascii():
        text += len(picture.encode()) + 1
    return text + ENTRY_OVERHEAD


RETRY_AFTER_MS: Final = 200
"""What a refused draw tells its caller to wait: about a block of draws."""

Key = tuple[str, bytes, Viewer, str]
"""(game id, chain hash, viewer kind, layout): each layout is a picture of its own."""


@dataclass(frozen=True, slots=True)
class PictureLimits:
    """What one service instance spends on pictures (`tablelog serve --picture-...`)."""

    cache_bytes: int = DEFAULT_PICTURE_CACHE_BYTES
    workers: int = 1
    """Processes drawing (0: draw on the event loop)."""
    queue: int = 64
    """Draws waiting or running at once, every caller together; one more is refused."""

    def __post_init__(self) -> None:
        if self.cache_bytes < 0 or self.workers < 0 or self.queue < 1:
            raise ValueError("the picture limits must be positive (workers and cache: >= 0)")


class PictureCache:
    """Pictures by (game, chain hash, viewer), least recently used first out, bounded by
    the bytes of their text."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Key, tuple[str, int]] = OrderedDict()
        """Each picture with the size it was counted at (`stored_size`)."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> str | None:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Key, picture: str) -> None:
        size = stored_size(picture)
        if size > self.max_bytes or key in self._entries:
            return
        self._entries[key] = (picture, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped


class Pictures:
    """The pictures of one service instance: the cache, the draws in flight, the pool."""

    def __init__(self, limits: PictureLimits | None = None) -> None:
        self.limits = limits or PictureLimits()
        self.cache = PictureCache(self.limits.cache_bytes)
        self._drawing: dict[Key, asyncio.Task[str]] = {}
        self.pool = (
            WorkerPool(self.limits.workers, self.limits.queue) if self.limits.workers else None
        )
        """The worker processes of this instance's heavy reads
        (`tablelog.service.recording.offload`)."""
        self.drawn = 0
        """Pictures drawn (cache misses), for the benchmarks and tests."""
        self.served = 0
        """Pictures asked for."""

    async def close(self) -> None:
        """Stop the drawing processes (the server is stopping)."""
        if self.pool is not None:
            await self.pool.close()

    async def picture(
        self,
        game_id: str,
        chain_hash: bytes,
        position: folding.Position,
        viewer: Viewer,
        view: Any = None,
        layout: str = WIDE,
    ) -> str:
        """The picture of the game at `position` (after the event whose hash is
        `chain_hash`) as `viewer` sees it (`view`, when the caller has it), in `layout`:
        from the cache, else drawn once (see the module's docstring)."""
        self.served += 1
        key: Key = (game_id, chain_hash, viewer, layout)
        found = self.cache.get(key)
        if found is not None:
            return found
        pending = self._drawing.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        if len(self._drawing) >= self.limits.queue:
            raise Exhausted(
                "PICTURES_BUSY",
                f"This server is drawing its {self.limits.queue} pictures at once; try "
                "again in a moment.",
                metadata={"limit": str(self.limits.queue), "retry_after_ms": str(RETRY_AFTER_MS)},
            )
        # A task of its own: a caller that goes away (a closed stream) does not cancel a
        # draw that others may be waiting on, and what is drawn is kept either way.
        task = asyncio.create_task(self._draw_and_keep(key, position, viewer, view, layout))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._drawing[key] = task
        return await asyncio.shield(task)

    async def _draw_and_keep(
        self, key: Key, position: folding.Position, viewer: Viewer, view: Any, layout: str
    ) -> str:
        try:
            picture = await self._draw(position, viewer, view, layout)
        finally:
            del self._drawing[key]
        self.drawn += 1
        self.cache.put(key, picture)
        return picture

    async def _draw(
        self, position: folding.Position, viewer: Viewer, view: Any, layout: str
    ) -> str:
        game = position.game
        if view is None:
            view = game.view(position.state, viewer)
        move, approximate = picture_inputs(position, viewer)
        if self.pool is None:
            return game.picture(view, last_move=move, approximate=approximate, layout=layout)
        created = position.table.created
        return await self.pool.call(
            draw, created.game, created.rules_version, view, move, approximate, layout
        )
