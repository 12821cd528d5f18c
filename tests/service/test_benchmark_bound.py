"""benchmarks/record.py --bounds: the bound's append does what the append script requires
of a chain (the stream's last entry ends in the head's hash), move after move, so the bound
measures an append that succeeds (it refused every second move with `damaged 1 1` while
it stored the raw request)."""

from __future__ import annotations

import asyncio
import hmac
import os
from typing import Any

import pytest
import redis.asyncio as aioredis

from benchmarks.record import ROOT, floor_handler, random_lines
from tablelog.service.store.chain import HASH_FIELD_TAG, SEAL_LENGTH
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2


@pytest.mark.parametrize("work", [{"append"}, {"rules", "append"}])
def test_the_bound_appends_a_whole_game_through_the_append_script(
    embedded_redis: EmbeddedRedis, work: set[str]
) -> None:
    line = random_lines(1, seed=3)[0][:12]
    secret = os.urandom(32)

    async def run() -> Any:
        client = aioredis.Redis.from_url(embedded_redis.url)
        try:
            source = (ROOT / "service" / "store" / "append.lua").read_bytes()
            sha = await client.script_load(source)
            append = floor_handler(client, frozenset(work), secret, sha)
            game_id = f"bound-test-{os.urandom(4).hex()}"
            for version, notation in enumerate(line, start=1):
                request = service_pb2.RecordMoveRequest(
                    game_id=game_id,
                    notation=notation,
                    expected_version=version,
                    request_id=os.urandom(8).hex(),
                )
                await append(request.SerializeToString(), None)
            keys = [key async for key in client.scan_iter(match=f"bound:{{*{game_id}}}:events")]
            assert len(keys) == 1
            return await client.xrange(keys[0])
        finally:
            await client.aclose()

    entries = asyncio.run(run())
    assert [entry_id for entry_id, _ in entries] == [f"{n}-0".encode() for n in range(1, 13)]
    previous = bytes(32)
    for _, fields in entries:
        stored = fields[b"e"]
        # Sealed as service/store/chain.py stores an event: the covered bytes, then the hash field.
        assert stored[-SEAL_LENGTH:-32] == HASH_FIELD_TAG
        covered = stored[:-SEAL_LENGTH]
        assert covered.endswith(previous)  # chained to the one before
        assert hmac.compare_digest(hmac.digest(secret, covered, "sha256"), stored[-32:])
        previous = stored[-32:]
