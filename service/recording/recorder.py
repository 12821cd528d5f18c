"""The recorder: the recording room on the one object the servicer, the demo and the tests
call. It decides nothing itself; every method is a use case of the module that owns it:

    usecases      the changes (`create_game`, `record_move`, `undo`, ...), which all go
                  through the one append path of `appending`
    amending      `amend_move`: a move in the middle of the history corrected
    reads         the reads (`position_at`, `replay`, `legal_moves`, `audit`, ...)
    heads         the head cache (`load`, `rebuild`, `cached`, `forget`)
    checkpoints   the positions kept beside long streams (what reads resume from)
    verification  VerifyGame (`verify`; the checkpoints are checked after it)
"""

from __future__ import annotations

from collections.abc import Sequence

from tablelog.service.recording.amending import Amending
from tablelog.service.recording.appending import Appender, Outcome
from tablelog.service.recording.checkpoints import DEFAULT_INTERVAL
from tablelog.service.recording.heads import DEFAULT_CACHE_BYTES, Head, Heads
from tablelog.service.recording.pictures import Pictures
from tablelog.service.recording.reads import Reads
from tablelog.service.recording.usecases import Commands
from tablelog.service.recording.verification import verify
from tablelog.service.store import EventStore
from tablelog.v1 import service_pb2


class Recorder(Commands, Amending, Reads):
    """One per process; safe for many asyncio tasks."""

    def __init__(
        self,
        store: EventStore,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        checkpoint_interval: int = DEFAULT_INTERVAL,
        pictures: Pictures | None = None,
    ) -> None:
        heads = Heads(store, cache_bytes, checkpoint_interval)
        Commands.__init__(self, store, heads, Appender(store, heads))
        Reads.__init__(self, store, heads, pictures)

    async def load(self, game_id: str, *, fresh: bool = True) -> Head:
        return await self.heads.load(game_id, fresh=fresh)

    async def rebuild(self, game_id: str) -> Head:
        return await self.heads.rebuild(game_id)

    def cached(self, game_id: str) -> Head | None:
        return self.heads.cached(game_id)

    def forget(self, game_id: str) -> None:
        self.heads.forget(game_id)

    async def verify(
        self, game_id: str, receipts: Sequence[service_pb2.Receipt] = ()
    ) -> service_pb2.VerifyGameResponse:
        response = await verify(self.store, game_id, receipts, self.pictures.pool)
        if response.ok:
            checked, bad = await self.heads.checkpoints.verify_stored(game_id)
            response.checkpoints_checked = checked
            response.bad_checkpoints.extend(bad)
        return response

    async def settle(self) -> None:
        """Wait for the checkpoint writes in flight."""
        await self.heads.checkpoints.settle()

    def receipt(self, outcome: Outcome) -> service_pb2.Receipt:
        """The receipt of a change: the game's head after it, as appended (for a retried
        request, the head its original append left)."""
        return self.store.chain.receipt(outcome.head.game_id, outcome.events[-1])
