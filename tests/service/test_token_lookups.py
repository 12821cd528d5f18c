"""A token resolved before is resolved in one round trip (`MemberStore.resolve` keeps what its
lookup key names: its club and token id never change), and what can change is still read
each time: the record (revoked), the member (its role; removed), the club (suspended,
deleted). Real Redis (the session's embedded one), under a key prefix of the test's own."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from tablelog.service.access.identity import Role, token_hash
from tablelog.service.access.members import MemberStore
from tablelog.service.errors import Unauthenticated
from tablelog.service.store.cluster import open_async_client
from tablelog.service.store.embedded import EmbeddedRedis


def test_a_known_token_is_not_looked_up_again_but_its_rights_are_read_each_time(
    embedded_redis: EmbeddedRedis,
) -> None:
    async def main() -> None:
        client: Any = open_async_client(embedded_redis.url)
        prefix = f"tltl{uuid.uuid4().hex[:8]}"
        try:
            members = MemberStore(client, prefix=prefix)
            club = (await members.create_club("c1", "Club one")).club_id
            ann = await members.add_member(club, "Ann", Role.RECORDER)
            bob = await members.add_member(club, "Bob", Role.PLAYER)
            later = time.time() + 86400
            token, _record = await members.create_token(club, ann.member_id, later)
            other, other_record = await members.create_token(club, bob.member_id, later)
            for known in (token, other):
                await members.resolve(known)
                # The lookup key is not read again: taken away, the token still resolves.
                await client.delete(members.lookup_key(token_hash(known)))
                await members.resolve(known)

            await members.set_role(club, ann.member_id, Role.SPECTATOR)
            _record, member, _club = await members.resolve(token)
            assert member.role is Role.SPECTATOR
            await members.set_suspended(club, True)
            assert (await members.resolve(token))[2].suspended
            await members.set_suspended(club, False)

            await members.revoke(club, other_record.token_id)
            with pytest.raises(Unauthenticated, match="revoked"):
                await members.resolve(other)
            await members.remove_member(club, ann.member_id)
            with pytest.raises(Unauthenticated, match=r"revoked|removed"):
                await members.resolve(token)

            # A deleted club's tokens name nobody (its keys are gone with it).
            carl = await members.add_member(club, "Carl", Role.OWNER)
            kept, _record = await members.create_token(club, carl.member_id, later)
            await members.resolve(kept)
            await client.delete(*await client.keys(members.club_key(club, "*")))
            with pytest.raises(Unauthenticated, match="does not know"):
                await members.resolve(kept)
            # A made-up token is never kept.
            with pytest.raises(Unauthenticated, match="does not know"):
                await members.resolve("tl_" + "x" * 40)
            assert token_hash("tl_" + "x" * 40) not in members._lookups
        finally:
            for key in await client.keys(f"{prefix}:*"):
                await client.delete(key)
            await client.aclose()

    asyncio.run(main())
