"""Rights re-checked while a WatchGame stream is open (both ports).

A watch decided its viewer once, at its start, and then delivered whatever came: after
its token was revoked, its member removed or demoted, or its seat bound to someone else,
it went on (an unbound player saw the new holder's hidden card). So before every update
and every heartbeat it delivers, a watch checks its caller again, as the gate checks a
new call (`Gate.recheck`: the token, the role's row for WatchGame, the game's club) and
works out the viewer it is now entitled to, as at its start:

* refused (a token revoked or expired, a member removed: UNAUTHENTICATED; a role that may
  no longer watch: PERMISSION_DENIED; a viewer asked for that is no longer allowed:
  PERMISSION_DENIED, VIEW_NOT_ALLOWED): the stream ends with that status, and the update
  it was about to deliver is not delivered;
* its club deleted by the operator (the token no longer resolves, and the club is gone):
  NOT_FOUND, GAME_NOT_FOUND, as every call naming the game now gets, rather than a word
  about the token; its club suspended: PERMISSION_DENIED, CLUB_SUSPENDED, as the gate
  answers every call of a suspended club;
* entitled to another viewer (a player whose seat was unbound now sees the spectator's
  view; an owner demoted to recorder): the watch goes on in that view from the update it
  was about to deliver, which it delivers rendered for the new viewer.

How soon: a change made through this process is seen before the next delivery (`Gate.
generation`); one made through another instance, within `CACHE_SECONDS` (2 s, the gate's
cache of resolved tokens), since the check is repeated in full at most every
`CACHE_SECONDS` otherwise (each update of a busy game does not cost each watcher a
Redis round trip)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from tablelog.service.access.authentication import CACHE_SECONDS, Gate, current_caller
from tablelog.service.errors import NotFound, Unauthenticated
from tablelog.service.store.errors import GameNotFound
from tablelog.v1 import service_pb2

WATCH_GAME = "/tablelog.v1.TablelogService/WatchGame"


class WatchRights:
    """One open watch's caller, checked again before each delivery (see the module doc)."""

    def __init__(
        self,
        gate: Gate | None,
        request: service_pb2.WatchGameRequest,
        context: Any,
        viewer_now: Callable[[], Awaitable[service_pb2.Viewer]],
        viewer: service_pb2.Viewer,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gate = gate
        self.request = request
        self.context = context
        self.viewer_now = viewer_now
        self.viewer = viewer
        self._clock = clock
        self._checked = clock()
        self._club = current_caller().club_id if gate is not None else ""
        self._generation = gate.generation(self._club) if gate is not None else 0

    async def current(self) -> service_pb2.Viewer:
        """The viewer the caller is entitled to now; raises the refusal when it may no
        longer watch."""
        gate = self.gate
        if gate is None:
            return self.viewer
        now = self._clock()
        generation = gate.generation(self._club)
        if now - self._checked < CACHE_SECONDS and generation == self._generation:
            return self.viewer
        self._generation = generation
        try:
            await gate.recheck(WATCH_GAME, self.request, self.context)
        except Unauthenticated:
            if await self._club_gone(gate):
                raise GameNotFound(self.request.game_id) from None
            raise
        self.viewer = await self.viewer_now()
        self._checked = now
        return self.viewer

    async def _club_gone(self, gate: Gate) -> bool:
        """Whether the club the watch started in was deleted (its record is deleted first,
        before its games: `tablelog.service.access.club_admin.ClubAdmin.delete`)."""
        try:
            await gate.members.club(self._club)
        except NotFound:
            return True
        return False
