"""The worker processes of the heavy reads (`tablelog.service.recording.offload`): what a worker
answers is what the same pure function answers here; a worker runs only the functions it is meant
to; a domain refusal raised in it is raised again, whole, in the server; a worker that dies is
replaced; calls past the queue are refused and change nothing."""

from __future__ import annotations

import asyncio
import os

import pytest

from tablelog.replay.core import FULL
from tablelog.service.errors import Exhausted, NotFound
from tablelog.service.recording.offload import WorkerFailed, WorkerPool
from tablelog.service.recording.reads import audit_entries, variation_items
from tablelog.v1 import service_pb2
from tests.support.histories import random_history

pytestmark = pytest.mark.slow


def test_a_worker_answers_as_the_function_does_here_and_survives_what_goes_wrong() -> None:
    events = random_history("medici", 60, seed=3)

    async def scenario() -> None:
        pool = WorkerPool(1, queue=2)
        try:
            for viewer in (None, service_pb2.Viewer(seat=0)):
                assert await pool.call(audit_entries, events, viewer) == audit_entries(
                    events, viewer
                )
            with pytest.raises(WorkerFailed, match="not run by a worker"):
                await pool.call(os.getcwd)
            asked = service_pb2.VariationPath(annotation_id="nosuchnote")
            with pytest.raises(NotFound) as refused:
                await pool.call(variation_items, events, asked, 1, FULL, False)
            assert refused.value.reason == "ANNOTATION_NOT_FOUND"
            assert refused.value.metadata == {"annotation_id": "nosuchnote"}
            # A worker that dies: the call it had fails, the next has a new worker.
            dead = pool._workers[0]
            dead.process.kill()
            await dead.process.wait()
            with pytest.raises(WorkerFailed, match="ended"):
                await pool.call(audit_entries, events, None)
            assert pool._workers[0] is not dead
            assert await pool.call(audit_entries, events, None) == audit_entries(events, None)
            # The queue: two calls run or wait; a third is refused at once.
            calls = [pool.call(audit_entries, events, None) for _ in range(3)]
            answers = await asyncio.gather(*calls, return_exceptions=True)
            refusals = [a for a in answers if isinstance(a, Exhausted)]
            assert len(refusals) == 1
            assert refusals[0].reason == "READERS_BUSY"
            assert pool.calls == 0
        finally:
            await pool.close()

    asyncio.run(scenario())
