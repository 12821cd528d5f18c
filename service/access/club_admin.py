"""The operator's work on whole clubs, in Redis: create one with its first owner, list them,
suspend, resume and delete one (the servicer is `tablelog.service.api.operators`).

A club's keys are those of `tablelog.service.access.members` and of its listing
(`tablelog.service.store.game_index`), all under the hash tag ``{club:<id>}``; its games are those
its listing names, each under its own tag ``{<game id>}``; its tokens' lookup keys
``{tok:<hash>}`` are named by the club's `lookups` set (tokens made before that set
existed are found by nothing: their lookups stay, naming a club that no longer exists,
which `MemberStore.resolve` answers as an unknown token). Club ids are random
(`new_id("c_")`) and never reused, so nothing left behind can come back to life."""

from __future__ import annotations

import asyncio
from typing import Any

from tablelog.service.access.identity import (
    Club,
    Member,
    Role,
    TokenRecord,
    check_display_name,
    new_id,
)
from tablelog.service.access.members import MemberStore
from tablelog.service.errors import Exhausted, InvalidRequest
from tablelog.service.limits import MAX_PAGE_SIZE
from tablelog.service.store.memory import MemoryStore
from tablelog.service.store.redis_store import RedisEventStore

MAX_CLUBS = 10_000
"""Clubs on one server (an operator's mistake in a loop stops here)."""
MAX_CLUB_ID = 100
GAME_PARTS = (
    "events",
    "head",
    "requests",
    "request-order",
    "seed",
    "seats",
    "checkpoints",
    "checkpoint-index",
    "result",
)
"""Every key a game has (`tablelog.service.store.redis_store`, `checkpoint_storage`,
`result_storage`, `members`)."""
DELETE_BATCH = 500


class ClubAdmin:
    """Creates, lists, suspends and deletes clubs (on the event store's Redis)."""

    def __init__(self, members: MemberStore, store: RedisEventStore) -> None:
        self.members = members
        self.store = store

    async def create_club(
        self, name: str, owner_name: str, expires: float
    ) -> tuple[Club, Member, str, TokenRecord]:
        """A new club named `name` and its first owner: (club, owner, token, its record)."""
        name = check_display_name(name, "name")
        owner_name = check_display_name(owner_name or "owner", "owner_name")
        count = await self.members.run(self.store.redis.scard(self.members.clubs_key))
        if count >= MAX_CLUBS:
            raise Exhausted("TOO_MANY_CLUBS", f"A server holds at most {MAX_CLUBS} clubs.")
        club = await self.members.create_club(new_id("c_"), name)
        owner = await self.members.add_member(club.club_id, owner_name, Role.OWNER)
        token, record = await self.members.create_token(club.club_id, owner.member_id, expires)
        return club, owner, token, record

    async def clubs(self, offset: int, size: int) -> tuple[list[Club], bool]:
        """The clubs `offset` to `offset + size` by id, and whether more follow."""
        size = min(size, MAX_PAGE_SIZE)
        ids = await self.members.club_ids()
        # A club deleted between the two reads is not listed.
        found = await self.members.clubs(ids[offset : offset + size])
        return found, offset + size < len(ids)

    async def club(self, club_id: str) -> Club:
        """The club (NOT_FOUND CLUB_NOT_FOUND when there is none)."""
        if len(club_id) > MAX_CLUB_ID:
            raise InvalidRequest("club_id", f"A club id has at most {MAX_CLUB_ID} characters.")
        return await self.members.club(club_id)

    async def suspend(self, club_id: str, suspended: bool) -> Club:
        await self.club(club_id)
        return await self.members.set_suspended(club_id, suspended)

    async def delete(self, club_id: str, settle: float) -> tuple[int, list[str]]:
        """Deletes the club and everything it owns; (how many games, their ids).

        The club's record goes first: from then on no token of it resolves here, and on
        other instances once their cache of resolved tokens (`settle` seconds) has passed,
        so the listing is read again after that wait: a game created in that window is
        deleted with the others, and none can be created after it."""
        await self.club(club_id)
        redis: Any = self.store.redis
        listing = self.store.game_index
        games = set(await listing.entries(club_id))
        run = self.members.run
        await run(redis.delete(self.members.club_key(club_id, "club")))
        await run(redis.srem(self.members.clubs_key, club_id))
        await asyncio.sleep(settle)
        games |= set(await listing.entries(club_id))
        ordered = sorted(games)
        for game_id in ordered:
            # One DEL per game: its keys share its hash tag (one cluster slot).
            await run(redis.delete(*(self.store.key(game_id, part) for part in GAME_PARTS)))
        hashes = await run(redis.smembers(self.members.club_key(club_id, "lookups")))
        lookups = [self.members.lookup_key(_text(h)) for h in hashes]
        pattern = self.members.club_key(club_id, "*")
        own = [_text(key) async for key in redis.scan_iter(match=pattern, count=1000)]
        if self.store.club_storage is not None:
            own.append(self.store.club_storage.key(club_id))
        doomed = lookups + own
        for start in range(0, len(doomed), DELETE_BATCH):
            # One key per DEL: the lookups are in slots of their own.
            async with redis.pipeline(transaction=False) as pipe:
                for key in doomed[start : start + DELETE_BATCH]:
                    pipe.delete(key)
                await run(pipe.execute())
        # Club memory's keys (feed, projections, seasons, roster) are the club's own, deleted
        # above; its projection script and feed note write nothing for a club without its
        # record, so a projector busy with it meanwhile leaves nothing behind. Its flag last.
        await MemoryStore(redis, calls=self.store.calls).unflag(club_id)
        return len(ordered), ordered


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
