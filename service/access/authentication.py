"""The gate every TablelogService, ClubService and OperatorService call passes first: it
turns the bearer token in the `authorization` metadata into a `Caller` (a member of a club;
a suspended club's are refused, CLUB_SUSPENDED), refuses what the caller's role may not
call (`tablelog.service.access.authorization`), and answers NOT_FOUND for a game of another club.
The servicers read the caller with `current_caller()`. Health and reflection are not gated.

The gate wraps each method's handler once, when it is registered (like the logging
interceptor, see `tablelog.service.api.interceptors.Registrar`): going through `intercept_service`
on every call would cost more than the check.

Resolving a token costs two Redis round trips, so what a token resolves to is kept for
`CACHE_SECONDS` per process. Expiry is checked on every call; a token revoked, a member
removed or a role changed through this process is forgotten at once; through another
instance it takes effect here within `CACHE_SECONDS` (measured: tests/service/
test_identity.py::test_revocation_reaches_another_instance_within_the_cache_time)."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
from grpc import aio

from tablelog.service.access.anonymous import AnonymousBudget
from tablelog.service.access.authorization import Access, row, short_name
from tablelog.service.access.identity import (
    MAX_CLIENT_NAME,
    Caller,
    Club,
    Member,
    TokenRecord,
    forbid,
)
from tablelog.service.access.members import MemberStore, check_record
from tablelog.service.access.quotas import CallerKeys
from tablelog.service.bounds import check_request
from tablelog.service.errors import (
    INTERNAL,
    MAPPED,
    LimitReached,
    PermissionDenied,
    Unauthenticated,
    refusal,
    to_status,
)
from tablelog.service.limits import check_game_id
from tablelog.service.logs import get_logger, note
from tablelog.service.store import EventStore, GameNotFound
from tablelog.service.tracing import call_metadata

CACHE_SECONDS = 2.0
"""How long a resolved token is trusted without looking again (see the module doc)."""
CACHE_SIZE = 10_000
GAME_CLUBS_SIZE = 100_000

_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "tablelog_caller", default=None
)
log = get_logger("tablelog.auth")


def current_caller() -> Caller:
    """The authenticated caller of the RPC being served."""
    caller = _caller.get()
    if caller is None:
        raise RuntimeError("no authenticated caller: the method was registered without a gate")
    return caller


def member_keys(context: Any) -> CallerKeys:
    """The caller for the limits of `tablelog.service.access.quotas`: the authenticated member in
    its club; a link token counts as itself, among the club's link readers. Admission runs inside
    the gate, so it is known."""
    caller = current_caller()
    if caller.member_id:
        return CallerKeys(caller.member_id, caller.club_id)
    # Link readers share a budget of their own in the club (two links took the club's
    # watches and locked its owner out).
    return CallerKeys(f"link:{caller.token.token_id}", f"{caller.club_id}/links")


def bearer_token(metadata: Sequence[tuple[str, Any]] | None) -> str:
    """The token of `authorization: Bearer <token>`; Unauthenticated (TOKEN_MISSING) when
    there is none."""
    for key, value in metadata or ():
        if key != "authorization" or not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated(
                "TOKEN_MISSING", "The authorization metadata must be 'Bearer <token>'."
            )
        return token.strip()
    raise Unauthenticated(
        "TOKEN_MISSING",
        "This server needs a token: send the metadata authorization: Bearer <token>.",
    )


def client_name(metadata: Sequence[tuple[str, Any]] | None) -> str:
    """The client program as it names itself (x-tablelog-client, else the user agent)."""
    agent = ""
    for key, value in metadata or ():
        if not isinstance(value, str):
            continue
        if key == "x-tablelog-client":
            return value[:MAX_CLIENT_NAME]
        if key == "user-agent":
            agent = value.split(" ")[0][:MAX_CLIENT_NAME]
    return agent


class GameClubs:
    """Which club each game belongs to (its GameCreated's `club`, and its club's listing
    index holds it: `index_club`): it never changes, so it is kept once learned (from a
    creation or import here, or found in the caller's club's index)."""

    def __init__(self, store: EventStore, size: int = GAME_CLUBS_SIZE) -> None:
        self.store = store
        self.size = size
        self._clubs: dict[str, str] = {}

    def learn(self, game_id: str, club_id: str) -> None:
        if len(self._clubs) >= self.size:
            self._clubs.clear()
        self._clubs[game_id] = club_id

    async def in_club(self, game_id: str, club_id: str) -> bool:
        """Whether the game may be named by a caller of `club_id`: False for another
        club's game and for no game at all, answered alike and in the same time. A game
        kept as the caller's club's answers at once; any other id is looked up in the
        caller's own club's listing index (`EventStore.indexed`: one HEXISTS, whose reply
        is one integer whether the game is another club's or nobody's). Reading the game
        itself would answer another club's game measurably slower than no game (its
        first event is read and parsed), and answering it from what is kept measurably
        faster (issue 23: 0.3-0.9 ms faster before). Every game is in its club's index
        before its first event is stored (`Appender.append`), and `tablelog serve`
        builds the index of games recorded before it existed."""
        if self._clubs.get(game_id) == club_id:
            return True
        check_game_id(game_id)
        if await self.store.indexed(club_id, game_id):
            self.learn(game_id, club_id)
            return True
        return False


class Gate:
    """Authenticates, authorizes and scopes every call of the methods it wraps."""

    def __init__(
        self,
        members: MemberStore,
        games: GameClubs,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.members = members
        self.games = games
        self.cache_seconds = cache_seconds
        self._clock = clock
        self._resolved: OrderedDict[str, tuple[float, TokenRecord, Member, Club]] = OrderedDict()
        self._known: OrderedDict[str, None] = OrderedDict()
        """Tokens this process resolved (`resolved_before`); kept through `forget`."""
        self.anonymous = AnonymousBudget()
        """Refused authentications per peer, checked before a lookup
        (`tablelog.service.access.anonymous`)."""
        self._generations: dict[str, int] = {}
        """Per club, the changes to its members' rights made through this process
        (`rights_changed`): an open watch of the club re-checks its caller at once when its
        club's count moved (`tablelog.service.access.watch_rights`)."""

    def generation(self, club_id: str) -> int:
        return self._generations.get(club_id, 0)

    def forget(self, club_id: str) -> None:
        """Drop the club's resolved tokens (after a change to its members, roles, tokens or
        to the club itself); the other clubs' callers keep theirs."""
        for token in [t for t, entry in self._resolved.items() if entry[3].club_id == club_id]:
            del self._resolved[token]
        self.rights_changed(club_id)

    def rights_changed(self, club_id: str) -> None:
        """Someone's rights in the club changed through this process (a member, role, token
        or seat): its open watches check their callers again before they deliver more."""
        self._generations[club_id] = self._generations.get(club_id, 0) + 1

    async def recheck(self, method: str, request: Any, context: Any) -> Caller:
        """The caller of an open stream, authenticated, authorized and scoped again as at
        its start (refusals raised as `admit` raises them), and made the current caller."""
        caller = await self.admit(
            method, request, context.invocation_metadata(), context.peer() or ""
        )
        _caller.set(caller)
        return caller

    async def authenticate(self, metadata: Sequence[tuple[str, Any]] | None) -> Caller:
        token = bearer_token(metadata)
        now = self._clock()
        cached = self._resolved.get(token)
        if cached is not None and now - cached[0] < self.cache_seconds:
            _at, record, member, club = cached
            check_record(record, time.time())
        else:
            record, member, club = await self.members.resolve(token)
            if len(self._resolved) >= CACHE_SIZE:
                self._resolved.popitem(last=False)
            self._resolved[token] = (now, record, member, club)
            self._known[token] = None
            self._known.move_to_end(token)
            if len(self._known) > CACHE_SIZE:
                self._known.popitem(last=False)
        if club.suspended:
            # The caller's own club: saying so tells them nothing about another.
            raise PermissionDenied(
                "CLUB_SUSPENDED",
                "Your club is suspended by the server's operator: ask them to resume it.",
            )
        return Caller(member, club, record, client_name(metadata))

    def resolved_before(self, metadata: Sequence[tuple[str, Any]] | None) -> bool:
        """Whether the call's token is one this process has resolved (the last
        `CACHE_SIZE` of them): a member's, looked up again past the cache time but never
        counted against its address's budget of refusals."""
        try:
            return bearer_token(metadata) in self._known
        except Unauthenticated:
            return False

    async def identify(self, metadata: Sequence[tuple[str, Any]] | None, peer: str) -> Caller:
        """`authenticate`, behind the peer's budget of refused authentications: a token
        this process has not resolved before is looked up only while `peer` has budget
        left, and a refusal spends it (`tablelog.service.access.anonymous`). Both refusals are
        marked for sampled logging."""
        if not self.resolved_before(metadata):
            try:
                self.anonymous.check(peer)
            except LimitReached:
                note(anonymous=True)
                raise
        try:
            return await self.authenticate(metadata)
        except Unauthenticated:
            with contextlib.suppress(Unauthenticated):
                self._known.pop(bearer_token(metadata), None)  # revoked or expired
            self.anonymous.spend(peer)
            note(anonymous=True)
            raise

    @staticmethod
    def authorize(method: str, caller: Caller) -> Access:
        """The caller's access to `method` by the table; refused when it is DENY."""
        found = row(method)
        if found.operator:
            if caller.operator:
                return Access.ALLOW
            raise forbid(
                caller,
                short_name(method),
                message=f"Only the server's operator may call {short_name(method)}.",
            )
        access = Access.DENY if caller.link and not found.link else found.access(caller.role)
        if access is Access.DENY:
            raise forbid(caller, short_name(method))
        return access

    async def scope(self, caller: Caller, game_id: str, request: Any) -> None:
        """NOT_FOUND for a game outside the caller's club (or, for a link token, any game
        but its own) and for a game that does not exist, both refused here alike, after
        the request's bounds (`GameClubs.in_club`): so that no answer, nor its time, tells
        another club's game from no game."""
        if (caller.link and game_id != caller.game_id) or not await self.games.in_club(
            game_id, caller.club_id
        ):
            check_request(request)
            raise GameNotFound(game_id)

    async def admit(self, method: str, request: Any, metadata: Any, peer: str = "") -> Caller:
        caller = await self.identify(metadata, peer)
        self.authorize(method, caller)
        game_id = getattr(request, "game_id", "")
        if isinstance(game_id, str) and game_id:
            await self.scope(caller, game_id, request)
        note(member_id=caller.member_id or caller.token.token_id, club=caller.club_id)
        return caller

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """`handler` behind the gate."""
        if handler is None:
            return None
        admit = self.admit
        if handler.unary_unary is not None:
            unary_inner: Any = handler.unary_unary

            async def unary(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
                caller = await _admitted(admit, method, request, context)
                token = _caller.set(caller)
                try:
                    return await unary_inner(request, context)
                finally:
                    _caller.reset(token)

            return handler._replace(unary_unary=unary)  # type: ignore[attr-defined, no-any-return]
        if handler.unary_stream is not None:
            stream_inner: Any = handler.unary_stream

            async def stream(
                request: Any, context: aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                caller = await _admitted(admit, method, request, context)
                _caller.set(caller)  # the generator runs in this call's own context
                async for item in stream_inner(request, context):
                    yield item

            return handler._replace(unary_stream=stream)  # type: ignore[attr-defined, no-any-return]
        raise TypeError(f"{method}: only unary requests are gated")


async def _admitted(
    admit: Callable[[str, Any, Any, str], Any],
    method: str,
    request: Any,
    context: aio.ServicerContext[Any, Any],
) -> Caller:
    try:
        caller: Caller = await admit(method, request, call_metadata(context), context.peer() or "")
    except MAPPED as exc:
        await context.abort_with_status(to_status(refusal(exc)))
    except aio.AbortError:
        raise
    except Exception:
        log.error("authentication failed", method=method, exc_info=True)
        await context.abort_with_status(to_status(INTERNAL))
    return caller
