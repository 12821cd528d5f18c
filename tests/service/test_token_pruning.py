"""Unused tokens leave Redis (`MemberStore.prune_tokens`, run by `serve` at start and every
`PRUNE_PERIOD`, `local_owner.keep_tokens_pruned`): a token that expired unused, and an
owner.token minted by a server start (a pod's, on a data directory of its own) that was never
used once its server stopped saying it runs; with their lookups. What is used, or still
held by a running server, stays. Real Redis (the session's embedded one), under a key
prefix of the test's own."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tablelog.service.access.identity import LOCAL_CLUB, token_hash
from tablelog.service.access.local_owner import (
    OWNER_TOKEN_FILE,
    ensure_local_owner,
    prune_tokens_now,
    web_sign_in_token,
)
from tablelog.service.access.members import GONE_AFTER, PRUNE_AFTER, MemberStore
from tablelog.service.errors import Unauthenticated
from tablelog.service.store.cluster import open_async_client
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client
from tests.service.support import ServeProcess


def test_tokens_expired_or_replaced_and_never_used_are_pruned_with_their_lookups(
    embedded_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    async def main() -> None:
        client: Any = open_async_client(embedded_redis.url)
        prefix = f"tlpr{uuid.uuid4().hex[:8]}"
        try:
            members = MemberStore(client, prefix=prefix)
            # Three pod starts, each on a data directory of its own; only the second pod's
            # owner.token was ever used, and the third pod still runs.
            pods = [tmp_path / f"pod{n}" for n in range(3)]
            owner, first = await ensure_local_owner(members, pods[0])
            # The first pod restarted once, long ago: its look at its own owner.token at
            # start is no use of it (main marked it used, and it was never pruned).
            assert (await ensure_local_owner(members, pods[0]))[1] == first
            _owner, used = await ensure_local_owner(members, pods[1])
            _owner, running = await ensure_local_owner(members, pods[2])
            await members.resolve(used)
            # The web sign-in tokens each start prints (12 hours): one opened, one not.
            opened = await web_sign_in_token(members)
            await members.resolve(opened)
            unopened = await web_sign_in_token(members)
            # A member's token that lives on, never used yet: not pruned.
            fresh, _record = await members.create_token(
                LOCAL_CLUB, owner.member_id, time.time() + 90 * 86400
            )
            later = time.time() + GONE_AFTER + 13 * 3600  # past the web tokens' 12 hours
            await members.alive(running, now=later - 60)  # the third pod said so lately
            assert await members.prune_tokens(LOCAL_CLUB, now=later) == 2
            for gone in (first, unopened):
                with pytest.raises(Unauthenticated):
                    await members.resolve(gone)
                assert await client.get(members.lookup_key(token_hash(gone))) is None
            for kept in (used, running, fresh):
                await members.resolve(kept)
            # The opened web token expired too: kept as expired until PRUNE_AFTER, then gone.
            with pytest.raises(Unauthenticated, match="expired"):
                await members.resolve(opened, now=later)
            assert await members.prune_tokens(LOCAL_CLUB, now=later + PRUNE_AFTER) == 1
            with pytest.raises(Unauthenticated, match="does not know"):
                await members.resolve(opened)
            lookups = await client.smembers(members.club_key(LOCAL_CLUB, "lookups"))
            assert {h.decode() for h in lookups} == {token_hash(t) for t in (used, running, fresh)}
            records = await members.tokens(LOCAL_CLUB)
            assert len(records) == 3
            # Nothing is left of the pruned ones: their use and alive marks went with them.
            for part in ("token-uses", "token-alive"):
                marked = await client.hkeys(members.club_key(LOCAL_CLUB, part))
                assert {m.decode() for m in marked} <= {r.token_id for r in records}
        finally:
            async for key in client.scan_iter(match=f"{prefix}:*"):
                await client.delete(key)
            await client.aclose()

    asyncio.run(main())


def test_a_pruned_owner_token_is_written_again_at_the_next_start(
    embedded_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    """The data directory of a server stopped longer than GONE_AFTER keeps an owner.token
    pruned meanwhile (never used): its next start writes a working one."""

    async def main() -> None:
        client: Any = open_async_client(embedded_redis.url)
        prefix = f"tlpr{uuid.uuid4().hex[:8]}"
        try:
            members = MemberStore(client, prefix=prefix)
            _owner, stale = await ensure_local_owner(members, tmp_path)
            # A server start prunes at once (its own token is alive now: kept).
            assert await prune_tokens_now(members, tmp_path) == 0
            assert await members.prune_tokens(LOCAL_CLUB, now=time.time() + GONE_AFTER + 60)
            _owner, token = await ensure_local_owner(members, tmp_path)
            assert token != stale
            assert (tmp_path / OWNER_TOKEN_FILE).read_text().strip() == token
            await members.resolve(token)
        finally:
            async for key in client.scan_iter(match=f"{prefix}:*"):
                await client.delete(key)
            await client.aclose()

    asyncio.run(main())


@pytest.mark.slow
def test_serve_prunes_at_start(tmp_path: Path) -> None:
    """`tablelog serve` itself prunes when it starts (`keep_tokens_pruned`): a token that
    expired unused while the server was stopped is gone from the club's records at the next
    start; the owner's, used, stays."""
    serve = ServeProcess(tmp_path).start()
    try:
        with Client(serve.address, token=serve.token) as owner:
            me = owner.whoami().member.member_id
            short = owner.create_token(me, expires_in_seconds=1).info.token_id
            kept = owner.create_token(me, expires_in_seconds=3600).info.token_id
    finally:
        serve.stop()
    time.sleep(1.1)
    serve = ServeProcess(tmp_path).start()
    try:
        with Client(serve.address, token=serve.token) as owner:
            # The start's pruning runs beside the first calls: wait for it (a while on a
            # loaded machine), but no longer than a start should take.
            deadline = time.monotonic() + 15
            listed = {t.token_id for t in owner.tokens()}
            while short in listed and time.monotonic() < deadline:
                time.sleep(0.1)
                listed = {t.token_id for t in owner.tokens()}
    finally:
        serve.stop()
    assert kept in listed
    assert short not in listed
