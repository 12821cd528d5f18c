"""The operator is bootstrapped by `tablelog serve` (`tablelog.service.access.local_owner`): the
owner whose token `serve` writes to the data directory is marked the server's operator, on a fresh
data directory and again on every start with the file already there; another owner of the same club,
or the owner of a club the operator creates, is not. Real Redis (the session's embedded one), under
a key prefix of the test's own."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tablelog.service.access.identity import LOCAL_CLUB, Role
from tablelog.service.access.local_owner import OWNER_TOKEN_FILE, ensure_local_owner
from tablelog.service.access.members import MemberStore
from tablelog.service.store.cluster import open_async_client
from tablelog.service.store.embedded import EmbeddedRedis


def test_the_owner_serve_writes_is_the_operator_and_no_other_owner_is(
    embedded_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    async def main() -> None:
        client = open_async_client(embedded_redis.url)
        try:
            members = MemberStore(client, prefix=f"tlop{uuid.uuid4().hex[:8]}")
            owner, token = await ensure_local_owner(members, tmp_path)
            assert owner.operator
            assert owner.role is Role.OWNER
            assert (tmp_path / OWNER_TOKEN_FILE).read_text().strip() == token
            _record, resolved, _club = await members.resolve(token)
            assert resolved.operator
            # A second start with the file there: the same member, still the operator.
            again, same = await ensure_local_owner(members, tmp_path)
            assert (again.member_id, same, again.operator) == (owner.member_id, token, True)
            # Another owner of the local club is an owner, not the operator.
            other = await members.add_member(LOCAL_CLUB, "second owner", Role.OWNER)
            assert not other.operator
            made, _record = await members.create_token(LOCAL_CLUB, other.member_id, 0)
            assert not (await members.resolve(made))[1].operator
            # A role change keeps the operator the operator (it is not a club role).
            demoted = await members.set_role(LOCAL_CLUB, owner.member_id, Role.RECORDER)
            assert demoted.operator
        finally:
            await client.aclose()

    asyncio.run(main())
