"""Clubs, members and tokens in Redis (the values are `tablelog.service.access.identity`'s).

Layout (every key of a club carries the hash tag ``{club:<id>}``, a token's lookup key the
tag ``{tok:<hash>}``, so each works in Redis Cluster; a game's seat bindings live under the
game's own tag):

    tl:clubs                      set of club ids
    tl:{club:<id>}:club           hash: name, players_may_record ("1"/"0")
    tl:{club:<id>}:members        hash: member id -> JSON (name, role, created)
    tl:{club:<id>}:names          hash: display name (casefolded) -> member id (unique names)
    tl:{club:<id>}:tokens         hash: token id -> JSON (member, created, expires, last four
                                  characters, revoked, game): never the token
    tl:{tok:<sha256 hex>}         string: JSON (club id, token id): a token's lookup
    tl:{club:<id>}:lookups        set: the <sha256 hex> of each lookup above made for the
                                  club's tokens (so deleting the club deletes them)
    tl:{club:<id>}:token-uses     hash: token id -> when it first named its caller (unix s)
    tl:{club:<id>}:token-alive    hash: token id -> when the server that wrote it to its
                                  owner.token last said it is running (unix s)
    tl:{<game_id>}:seats          hash: seat -> member id (BindSeat; CreateGame's own
                                  bindings are in GameCreated's players)

Only SHA-256 hashes of tokens are stored (`tablelog.service.access.identity.token_hash`)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from tablelog.service.access.identity import (
    MAX_MEMBERS,
    MAX_TOKEN_LENGTH,
    MAX_TOKENS,
    Club,
    Member,
    Role,
    TokenRecord,
    check_display_name,
    link_member,
    new_id,
    new_token,
    token_hash,
)
from tablelog.service.errors import Exhausted, InvalidRequest, NotFound, Unauthenticated
from tablelog.service.store.calls import Calls
from tablelog.service.store.cluster import RedisClient
from tablelog.service.store.errors import StoreError

T = TypeVar("T")
PRUNE_AFTER = 30 * 24 * 3600
"""Revoked or expired token records older than this are dropped (their tokens are then simply
unknown): `prune_tokens`, and when a club's records are full."""
PRUNE_PERIOD = 3600.0
"""Seconds between two prunings of the token records by a running server (`prune_tokens`);
a server also says its own owner.token is alive this often."""
GONE_AFTER = 3 * PRUNE_PERIOD
"""An owner.token whose server has not said it is alive for this long is taken as gone."""


KEPT_LOOKUPS = 10_000
"""Tokens whose lookup `MemberStore.resolve` keeps (about 200 bytes each): only tokens that
resolved, so a caller sending made-up tokens cannot fill it."""


@dataclass(frozen=True, slots=True)
class _Lookup:
    """What a token's lookup key names, and its record's member (None until the record was
    read; "" for a link token): none of it ever changes for a token."""

    club_id: str
    token_id: str
    member_id: str | None


class MemberStore:
    """Clubs, members, tokens and seat bindings, on the event store's Redis client."""

    def __init__(self, client: RedisClient, prefix: str = "tl", calls: Calls | None = None):
        self._redis = client
        self._prefix = prefix
        self._call = calls or Calls()
        """(the event store's, in a server: `RedisEventStore.calls`)"""
        self._lookups: dict[str, _Lookup] = {}
        """Per token hash, what its lookup key names, kept once read (`resolve`)."""

    # ---------------------------------------------------------------- keys

    def _club_key(self, club_id: str, part: str) -> str:
        return f"{self._prefix}:{{club:{club_id}}}:{part}"

    def _token_key(self, hashed: str) -> str:
        return f"{self._prefix}:{{tok:{hashed}}}"

    def _seats_key(self, game_id: str) -> str:
        return f"{self._prefix}:{{{game_id}}}:seats"

    # ---------------------------------------------------------------- clubs

    async def create_club(self, club_id: str, name: str) -> Club:
        """The club `club_id`, created with `name` unless it exists."""
        key = self._club_key(club_id, "club")
        await self._call(self._redis.hsetnx(key, "name", name))
        await self._call(self._redis.hsetnx(key, "players_may_record", "0"))
        await self._call(self._redis.sadd(f"{self._prefix}:clubs", club_id))
        return await self.club(club_id)

    async def club(self, club_id: str) -> Club:
        fields = await self._call(self._redis.hgetall(self._club_key(club_id, "club")))
        if not fields:
            raise NotFound("CLUB_NOT_FOUND", f"There is no club {club_id!r}.")
        return _club(club_id, fields)

    async def update_club(
        self, club_id: str, *, name: str | None = None, players_may_record: bool | None = None
    ) -> Club:
        await self.club(club_id)
        changes: dict[Any, Any] = {}
        if name is not None:
            changes["name"] = check_display_name(name, "name")
        if players_may_record is not None:
            changes["players_may_record"] = "1" if players_may_record else "0"
        if changes:
            await self._call(self._redis.hset(self._club_key(club_id, "club"), mapping=changes))
        return await self.club(club_id)

    def club_key(self, club_id: str, part: str) -> str:
        """The key of one part of a club (`part` "*": a pattern matching all of them)."""
        return self._club_key(club_id, part)

    def lookup_key(self, hashed: str) -> str:
        """A token's lookup key, from its hash (`token_hash`)."""
        return self._token_key(hashed)

    async def run(self, awaitable: Awaitable[T]) -> T:
        """A Redis command with this store's time limit (StoreUnavailable when Redis is not
        there), for `tablelog.service.access.club_admin`."""
        answer: T = await self._call(awaitable)
        return answer

    @property
    def clubs_key(self) -> str:
        return f"{self._prefix}:clubs"

    async def club_ids(self) -> list[str]:
        """Every club of the server, by id."""
        return sorted(_text(c) for c in await self._call(self._redis.smembers(self.clubs_key)))

    async def clubs(self, club_ids: list[str]) -> list[Club]:
        """The clubs of `club_ids` that exist, in one round trip (per node, on a cluster)."""
        if not club_ids:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for club_id in club_ids:
                pipe.hgetall(self._club_key(club_id, "club"))
            found = await self._call(pipe.execute())
        return [_club(c, fields) for c, fields in zip(club_ids, found, strict=True) if fields]

    async def set_suspended(self, club_id: str, suspended: bool) -> Club:
        await self.club(club_id)
        key = self._club_key(club_id, "club")
        await self._call(self._redis.hset(key, "suspended", "1" if suspended else "0"))
        return await self.club(club_id)

    async def make_operator(self, club_id: str, member_id: str) -> Member:
        """Marks the member as the server's operator (`tablelog.service.api.operators`); nothing
        changes when they are already."""
        member = await self.member(club_id, member_id)
        if member.operator:
            return member
        made = Member(
            member.member_id, club_id, member.display_name, member.role, member.created, True
        )
        await self._call(
            self._redis.hset(self._club_key(club_id, "members"), member_id, _member_json(made))
        )
        return made

    # ---------------------------------------------------------------- members

    async def add_member(self, club_id: str, display_name: str, role: Role) -> Member:
        """A new member; display names are unique in a club (casefolded)."""
        name = check_display_name(display_name)
        await self.club(club_id)
        members_key = self._club_key(club_id, "members")
        if await self._call(self._redis.hlen(members_key)) >= MAX_MEMBERS:
            raise Exhausted("TOO_MANY_MEMBERS", f"A club has at most {MAX_MEMBERS} members.")
        member = Member(new_id("m_"), club_id, name, role, time.time())
        claimed = await self._call(
            self._redis.hsetnx(self._club_key(club_id, "names"), name.casefold(), member.member_id)
        )
        if not claimed:
            raise InvalidRequest("display_name", f"The club already has a member called {name!r}.")
        await self._call(self._redis.hset(members_key, member.member_id, _member_json(member)))
        return member

    async def member(self, club_id: str, member_id: str) -> Member:
        found = await self._call(
            self._redis.hget(self._club_key(club_id, "members"), member_id[:100])
        )
        if found is None:
            raise NotFound(
                "MEMBER_NOT_FOUND",
                f"The club has no member {member_id[:100]!r}.",
                metadata={"member_id": member_id[:100]},
            )
        return _member(club_id, member_id, found)

    async def members(self, club_id: str) -> list[Member]:
        rows = await self._call(self._redis.hgetall(self._club_key(club_id, "members")))
        found = [_member(club_id, _text(key), value) for key, value in rows.items()]
        return sorted(found, key=lambda m: (m.created, m.member_id))

    async def first_owner(self, club_id: str) -> Member | None:
        owners = [m for m in await self.members(club_id) if m.role is Role.OWNER]
        return owners[0] if owners else None

    async def set_role(self, club_id: str, member_id: str, role: Role) -> Member:
        member = await self.member(club_id, member_id)
        changed = Member(
            member.member_id, club_id, member.display_name, role, member.created, member.operator
        )
        await self._call(
            self._redis.hset(self._club_key(club_id, "members"), member_id, _member_json(changed))
        )
        return changed

    async def remove_member(self, club_id: str, member_id: str) -> int:
        """Removes the member and revokes their tokens; how many were revoked."""
        member = await self.member(club_id, member_id)
        revoked = 0
        for record in await self.tokens(club_id, member_id):
            if not record.revoked:
                await self.revoke(club_id, record.token_id)
                revoked += 1
        await self._call(self._redis.hdel(self._club_key(club_id, "members"), member_id))
        await self._call(
            self._redis.hdel(self._club_key(club_id, "names"), member.display_name.casefold())
        )
        return revoked

    # ---------------------------------------------------------------- tokens

    async def create_token(
        self,
        club_id: str,
        member_id: str,
        expires: float,
        *,
        game_id: str = "",
        local_file: bool = False,
    ) -> tuple[str, TokenRecord]:
        """A new token for a member (or, with `game_id` and no member, a link token): the
        token, answered once, and its record. Only its hash is stored."""
        await self.club(club_id)
        if member_id:
            await self.member(club_id, member_id)
        await self._make_room(club_id)
        token = new_token(link=bool(game_id))
        record = TokenRecord(
            new_id("t_"),
            club_id,
            member_id,
            time.time(),
            expires,
            token[-4:],
            game_id=game_id,
            local_file=local_file,
        )
        await self._store_token(token, record)
        return token, record

    async def alive(self, token: str, now: float | None = None) -> None:
        """Says that the server holding `token` (the owner.token it wrote) is running:
        `prune_tokens` leaves an unused owner.token alone while its server says so."""
        found = await self._call(self._redis.get(self._token_key(token_hash(token))))
        if found is None:
            return
        lookup = json.loads(found)
        key = self._club_key(str(lookup["club"]), "token-alive")
        stamp = now if now is not None else time.time()
        await self._call(self._redis.hset(key, str(lookup["token"]), stamp))

    async def prune_tokens(self, club_id: str, now: float | None = None) -> int:
        """Removes the club's token records that can no longer name anyone usefully, with
        their lookups; how many. Removed: a token that expired and was never used; an
        expired or revoked one `PRUNE_AFTER` past its expiry (or creation); an owner.token
        `serve` wrote (`TokenRecord.local_file`) that was never used and whose server has
        not said it is alive (`alive`) for `GONE_AFTER`: the pod or data directory that held
        it is gone, and a server finding its owner.token unknown writes a new one."""
        now = now if now is not None else time.time()
        records = await self.tokens(club_id)
        uses_key = self._club_key(club_id, "token-uses")
        alive_key = self._club_key(club_id, "token-alive")
        used = {_text(k) for k in await self._call(self._redis.hkeys(uses_key))}
        alive = {
            _text(k): float(v)
            for k, v in (await self._call(self._redis.hgetall(alive_key))).items()
        }

        def doomed(record: TokenRecord) -> bool:
            never_used = record.token_id not in used
            if record.expired(now) and never_used:
                return True
            if (record.revoked or record.expired(now)) and now - max(
                record.created, record.expires
            ) > PRUNE_AFTER:
                return True
            last_alive = alive.get(record.token_id, record.created)
            return record.local_file and never_used and now - last_alive > GONE_AFTER

        pruned = {r.token_id for r in records if doomed(r)}
        if pruned:  # (nothing else leaves a lookup behind: no sweep of them for nothing)
            await self._forget_tokens(club_id, pruned)
        return len(pruned)

    async def _forget_tokens(self, club_id: str, token_ids: set[str]) -> None:
        """Deletes the records `token_ids`, their use and alive marks, and the lookups that
        name them or no record at all (left by an earlier pruning)."""
        lookups_key = self._club_key(club_id, "lookups")
        hashes = [_text(h) for h in await self._call(self._redis.smembers(lookups_key))]
        known = {
            _text(k) for k in await self._call(self._redis.hkeys(self._club_key(club_id, "tokens")))
        }
        stale: list[str] = []
        for start in range(0, len(hashes), 500):
            batch = hashes[start : start + 500]
            # One key per command: the lookups are in slots of their own.
            async with self._redis.pipeline(transaction=False) as pipe:
                for hashed in batch:
                    pipe.get(self._token_key(hashed))
                found = await self._call(pipe.execute())
            for hashed, lookup in zip(batch, found, strict=True):
                if lookup is None:
                    continue  # a token being stored now (its record, set entry, then lookup)
                token_id = str(json.loads(lookup)["token"])
                if token_id in token_ids or token_id not in known:
                    stale.append(hashed)
        if token_ids:
            ids = sorted(token_ids)
            for part in ("tokens", "token-uses", "token-alive"):
                await self._call(self._redis.hdel(self._club_key(club_id, part), *ids))
        for start in range(0, len(stale), 500):
            batch = stale[start : start + 500]
            async with self._redis.pipeline(transaction=False) as pipe:
                for hashed in batch:
                    pipe.delete(self._token_key(hashed))
                await self._call(pipe.execute())
            await self._call(self._redis.srem(lookups_key, *batch))

    async def register_token(self, token: str, record: TokenRecord) -> bool:
        """Stores a token made elsewhere (the owner token a test deployment is given), unless
        its hash is known already; whether it was stored."""
        known = await self._call(self._redis.exists(self._token_key(token_hash(token))))
        if known:
            return False
        await self._store_token(token, record)
        return True

    async def _store_token(self, token: str, record: TokenRecord) -> None:
        await self._call(
            self._redis.hset(
                self._club_key(record.club_id, "tokens"), record.token_id, _token_json(record)
            )
        )
        lookup = json.dumps({"club": record.club_id, "token": record.token_id})
        hashed = token_hash(token)
        await self._call(self._redis.sadd(self._club_key(record.club_id, "lookups"), hashed))
        await self._call(self._redis.set(self._token_key(hashed), lookup))

    async def _make_room(self, club_id: str) -> None:
        key = self._club_key(club_id, "tokens")
        if await self._call(self._redis.hlen(key)) < MAX_TOKENS:
            return
        now = time.time()
        stale = [
            r.token_id
            for r in await self.tokens(club_id)
            if (r.revoked or r.expired(now)) and now - max(r.created, r.expires) > PRUNE_AFTER
        ]
        if stale:  # with their lookups and marks, as a pruning forgets them
            await self._forget_tokens(club_id, set(stale))
        if len(stale) == 0:
            raise Exhausted(
                "TOO_MANY_TOKENS", f"A club has at most {MAX_TOKENS} tokens: revoke some."
            )

    async def tokens(self, club_id: str, member_id: str = "") -> list[TokenRecord]:
        rows = await self._call(self._redis.hgetall(self._club_key(club_id, "tokens")))
        found = [_token(club_id, _text(key), value) for key, value in rows.items()]
        if member_id:
            found = [r for r in found if r.member_id == member_id]
        return sorted(found, key=lambda r: (r.created, r.token_id))

    async def revoke(self, club_id: str, token_id: str) -> TokenRecord:
        key = self._club_key(club_id, "tokens")
        found = await self._call(self._redis.hget(key, token_id[:100]))
        if found is None:
            raise NotFound(
                "TOKEN_NOT_FOUND",
                f"The club has no token {token_id[:100]!r}.",
                metadata={"token_id": token_id[:100]},
            )
        record = _token(club_id, token_id, found)
        revoked = TokenRecord(
            record.token_id,
            club_id,
            record.member_id,
            record.created,
            record.expires,
            record.last_chars,
            True,
            record.game_id,
            record.local_file,
        )
        await self._call(self._redis.hset(key, token_id, _token_json(revoked)))
        return revoked

    async def resolve(
        self, token: str, now: float | None = None, *, a_use: bool = True
    ) -> tuple[TokenRecord, Member, Club]:
        """The token's record, member and club; Unauthenticated (TOKEN_UNKNOWN, TOKEN_REVOKED,
        TOKEN_EXPIRED) when it names nobody any longer. `a_use`: a caller is using it (the
        first use is marked); False for the server's own look at its owner token at start,
        which would otherwise keep an unused `owner.token` from ever being pruned.

        A token looked up before is resolved in one round trip: what its lookup key names
        (its club and token id) and its record's member never change, so they are kept
        (`_lookups`) and only what can change is read again: the record (revoked?), the
        club (suspended? deleted: the record is gone with it) and the member (removed? its
        role). An open watch checks its caller again every `CACHE_SECONDS` this way
        (`tablelog.service.access.watch_rights`)."""
        if not token or len(token) > MAX_TOKEN_LENGTH:
            raise unknown_token()
        hashed = token_hash(token)
        known = self._lookups.get(hashed)
        if known is None:
            found = await self._call(self._redis.get(self._token_key(hashed)))
            if found is None:
                raise unknown_token()
            lookup = json.loads(found)
            known = _Lookup(str(lookup["club"]), str(lookup["token"]), None)
        club_id, token_id = known.club_id, known.token_id
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hget(self._club_key(club_id, "tokens"), token_id)
            pipe.hgetall(self._club_key(club_id, "club"))
            pipe.hexists(self._club_key(club_id, "token-uses"), token_id)
            if known.member_id:
                pipe.hget(self._club_key(club_id, "members"), known.member_id)
            stored, club_fields, used, *member_blobs = await self._call(pipe.execute())
        if stored is None or not club_fields:
            self._lookups.pop(hashed, None)
            raise unknown_token()
        record = _token(club_id, token_id, stored)
        if known.member_id is None:
            self._remember(hashed, _Lookup(club_id, token_id, record.member_id))
        check_record(record, now if now is not None else time.time())
        if a_use and not used:
            # Once per token: a token never used may be pruned once replaced (`prune_tokens`).
            # A mark, not the call's business: a Redis refusing writes (full, read-only in a
            # failover) does not refuse the caller; the mark is made at a later use.
            with contextlib.suppress(StoreError):
                await self._call(
                    self._redis.hsetnx(self._club_key(club_id, "token-uses"), token_id, time.time())
                )
        club = _club(club_id, club_fields)
        if record.game_id:
            return record, link_member(record), club
        if member_blobs:
            member_blob = member_blobs[0]
        else:
            member_blob = await self._call(
                self._redis.hget(self._club_key(club_id, "members"), record.member_id)
            )
        if member_blob is None:  # removed (its tokens were revoked with it)
            raise Unauthenticated("TOKEN_REVOKED", "This token's member was removed.")
        return record, _member(club_id, record.member_id, member_blob), club

    def _remember(self, hashed: str, lookup: _Lookup) -> None:
        if len(self._lookups) >= KEPT_LOOKUPS:
            del self._lookups[next(iter(self._lookups))]  # the oldest
        self._lookups[hashed] = lookup

    # ---------------------------------------------------------------- seats

    async def bind_seat(self, game_id: str, seat: int, member_id: str) -> None:
        key = self._seats_key(game_id)
        if member_id:
            await self._call(self._redis.hset(key, str(seat), member_id))
        else:
            await self._call(self._redis.hset(key, str(seat), ""))

    async def seat_bindings(self, game_id: str) -> dict[int, str]:
        """The seats bound by BindSeat (an empty member: unbound since)."""
        rows = await self._call(self._redis.hgetall(self._seats_key(game_id)))
        return {int(seat): _text(member) for seat, member in rows.items()}


def unknown_token() -> Unauthenticated:
    return Unauthenticated("TOKEN_UNKNOWN", "This server does not know this token.")


def check_record(record: TokenRecord, now: float) -> None:
    if record.revoked:
        raise Unauthenticated("TOKEN_REVOKED", "This token has been revoked.")
    if record.expired(now):
        raise Unauthenticated("TOKEN_EXPIRED", "This token has expired: ask for a new one.")


def _club(club_id: str, fields: dict[Any, Any]) -> Club:
    name = fields.get(b"name", b"").decode()
    return Club(
        club_id, name, fields.get(b"players_may_record") == b"1", fields.get(b"suspended") == b"1"
    )


def _member_json(member: Member) -> str:
    data: dict[str, Any] = {
        "name": member.display_name,
        "role": member.role.value,
        "created": member.created,
    }
    if member.operator:
        data["operator"] = True
    return json.dumps(data)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _member(club_id: str, member_id: str, blob: bytes | str) -> Member:
    data = json.loads(blob)
    return Member(
        member_id,
        club_id,
        data["name"],
        Role(data["role"]),
        float(data["created"]),
        bool(data.get("operator", False)),
    )


def _token_json(record: TokenRecord) -> str:
    return json.dumps(
        {
            "member": record.member_id,
            "created": record.created,
            "expires": record.expires,
            "last": record.last_chars,
            "revoked": record.revoked,
            "game": record.game_id,
            **({"local": True} if record.local_file else {}),
        }
    )


def _token(club_id: str, token_id: str, blob: bytes | str) -> TokenRecord:
    data = json.loads(blob)
    return TokenRecord(
        token_id,
        club_id,
        str(data["member"]),
        float(data["created"]),
        float(data["expires"]),
        str(data["last"]),
        bool(data["revoked"]),
        str(data["game"]),
        bool(data.get("local", False)),
    )
