"""The players of a club (issue 28): list, rename, merge and bind, each change checked
against the club's roster (`tablelog.service.memory.roster`, pure) and appended to its roster stream
(`tablelog.service.memory.roster_store`), the audit of who changed what."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from google.protobuf.timestamp_pb2 import Timestamp

from tablelog.service.access.members import MemberStore
from tablelog.service.errors import RosterMoved
from tablelog.service.memory import roster as rosters
from tablelog.service.memory.roster_store import RosterStore
from tablelog.service.recording.game_index import normalised_player
from tablelog.service.recording.recorder import Recorder
from tablelog.v1 import clubs_pb2

SEATED_PAGE = 1_000
SEATED_CLUBS = 64
"""Clubs whose seated names an instance keeps (least recently used dropped first)."""
MAX_SEATED_GAMES = 200_000
"""Games read for the names seated in a club's games (the listing's pages, newest first):
a bounded walk. A club past it lists the players of its newest games and its roster."""

Body = clubs_pb2.PlayerRenamed | clubs_pb2.PlayersMerged | clubs_pb2.PlayerBound
FIELDS = {
    clubs_pb2.PlayerRenamed: "player_renamed",
    clubs_pb2.PlayersMerged: "players_merged",
    clubs_pb2.PlayerBound: "player_bound",
}


class ClubPlayers:
    def __init__(self, store: RosterStore, recorder: Recorder, members: MemberStore) -> None:
        self.store = store
        self.recorder = recorder
        self.members = members
        self._seated: OrderedDict[str, tuple[tuple[int, str], tuple[str, ...]]] = OrderedDict()
        """Per club: its listing's signature and the names seated in its games then."""

    async def roster(self, club_id: str) -> rosters.Roster:
        return rosters.fold_roster(await self.store.changes(club_id))

    async def seated(self, club_id: str) -> list[str]:
        """The names seated in the club's games, each once, spelt as in the oldest game
        seating it (the listing is newest first: a later spelling is overwritten). Kept per
        club while its listing's signature (games indexed, the newest one) stays: the walk
        of every listed game is made again only after a game came."""
        signature = await self.recorder.store.listing_signature(club_id)
        kept = self._seated.get(club_id)
        if kept is not None and kept[0] == signature:
            self._seated.move_to_end(club_id)
            return list(kept[1])
        names = await self._walk_seated(club_id)
        self._seated[club_id] = (signature, tuple(names))
        while len(self._seated) > SEATED_CLUBS:
            self._seated.popitem(last=False)
        return names

    async def _walk_seated(self, club_id: str) -> list[str]:
        found: dict[str, str] = {}
        token = ""
        read = 0
        while read < MAX_SEATED_GAMES:
            games, token = await self.recorder.list_games("", 0, SEATED_PAGE, token, club_id)
            read += len(games)
            for summary in games:
                for player in summary.players:
                    found[normalised_player(player.name)] = player.name
            if not token:
                break
        found.pop("", None)
        return list(found.values())

    async def list_players(self, club_id: str) -> clubs_pb2.ListPlayersResponse:
        roster = await self.roster(club_id)
        players = rosters.players_of(roster, await self.seated(club_id))
        return clubs_pb2.ListPlayersResponse(
            players=[p.message() for p in players], roster_version=roster.version
        )

    async def _change(
        self,
        club_id: str,
        actor: str,
        expected: int,
        decide: Callable[[rosters.Roster], Body],
    ) -> tuple[rosters.Player, int]:
        """Check a change against the roster and append it. With `expected` 0 (whatever the
        roster is now) a change that lost a race is checked again, once, on the new roster."""
        for attempt in range(2):
            roster = await self.roster(club_id)
            if expected and expected != roster.version:
                raise RosterMoved(expected, roster.version)
            body = decide(roster)
            stamp = Timestamp()
            stamp.FromNanoseconds(time.time_ns())
            event = clubs_pb2.RosterEvent(
                version=roster.version + 1, time=stamp, actor_member_id=actor
            )
            getattr(event, FIELDS[type(body)]).CopyFrom(body)
            try:
                version = await self.store.append(club_id, event)
            except RosterMoved:
                if expected or attempt:
                    raise
                continue
            after = rosters.advance(roster, event)
            return after.players[body.player_id], version
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _spelt(self, club_id: str) -> tuple[list[str], Callable[[str], str]]:
        """The seated names, and a function giving a typed name as the games spell it: a
        player nobody renamed is shown as seated ("anne" merged as "ANNE" stays "anne")."""
        seated = await self.seated(club_id)
        spelling = {normalised_player(name): name for name in seated}
        return seated, lambda typed: spelling.get(normalised_player(typed), typed)

    async def rename(
        self, club_id: str, actor: str, name: str, new_name: str, expected: int
    ) -> tuple[rosters.Player, int]:
        seated, spelt = await self._spelt(club_id)
        return await self._change(
            club_id, actor, expected, lambda r: rosters.rename(r, spelt(name), new_name, seated)
        )

    async def merge(
        self, club_id: str, actor: str, name: str, merged_name: str, expected: int
    ) -> tuple[rosters.Player, int]:
        _seated, spelt = await self._spelt(club_id)
        return await self._change(
            club_id, actor, expected, lambda r: rosters.merge(r, spelt(name), spelt(merged_name))
        )

    async def bind(
        self, club_id: str, actor: str, name: str, member_id: str, expected: int
    ) -> tuple[rosters.Player, int]:
        if member_id:
            await self.members.member(club_id, member_id)  # MEMBER_NOT_FOUND
        _seated, spelt = await self._spelt(club_id)
        return await self._change(
            club_id, actor, expected, lambda r: rosters.bind(r, spelt(name), member_id)
        )

    async def changes(self, club_id: str) -> clubs_pb2.ListRosterChangesResponse:
        events = await self.store.changes(club_id)
        names = {m.member_id: m.display_name for m in await self.members.members(club_id)}
        return clubs_pb2.ListRosterChangesResponse(
            changes=events, lines=[rosters.change_words(e, names) for e in events]
        )
