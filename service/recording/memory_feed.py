"""The follow-up that tells club memory a game changed (docs/club-memory.md): after an
append that leaves a game ended, abandoned or deleted, or that changes an ended or abandoned
game (an amend after the end, an undo that reopens it, an annotation, its deletion), the
game is noted in its club's feed for the projector (`tablelog.service.memory.projector`).
Like the listing index's follow-up, the change is stored whatever happens here: an outage
is logged and left to the sweep and the rebuild, never told to the caller of an append
that succeeded."""

from __future__ import annotations

from tablelog.replay import fold as folding
from tablelog.service.logs import get_logger
from tablelog.service.recording.game_index import index_club
from tablelog.service.store import EventStore, RedisEventStore, StoreUnavailable
from tablelog.service.store.memory import MemoryStore
from tablelog.v1 import events_pb2

log = get_logger("tablelog.memory")


def followed(before: folding.Status | None, after: folding.Status) -> bool:
    """Whether an append from `before` (None: a creation or import) to `after` can change
    what the projections hold: only games that are or were over can."""
    progress = folding.Status.IN_PROGRESS
    return after is not progress or (before is not None and before is not progress)


async def note_after_append(
    store: EventStore,
    game_id: str,
    created: events_pb2.GameCreated,
    before: folding.Status | None,
    after: folding.Status,
) -> None:
    if not followed(before, after) or not isinstance(store, RedisEventStore):
        return
    try:
        await MemoryStore(store.redis, calls=store.calls).note_change(index_club(created), game_id)
    except StoreUnavailable as exc:
        log.warning("club memory not told of a change", game_id=game_id, error=str(exc))
