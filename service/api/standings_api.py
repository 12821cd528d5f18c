"""The StandingsService servicer (issue 28): standings, a player's record, a game type's
statistics, seasons and the rebuild, read from the projector's models of the caller's club.
Who may call which method is `tablelog.service.access.authorization`'s table."""

# ruff: noqa: N802  (the servicer's method names are the proto's CamelCase RPC names)

from __future__ import annotations

import time
from typing import Any, Final

from tablelog.replay.registry import find_game
from tablelog.service.access.authentication import current_caller
from tablelog.service.api.servicer import Context, unary
from tablelog.service.errors import Exhausted, InvalidRequest, NotFound
from tablelog.service.memory import standings as models
from tablelog.service.memory.projector import Projector
from tablelog.service.memory.views import ClubMemory, View
from tablelog.service.recording.game_index import normalised_player
from tablelog.v1 import standings_pb2, standings_pb2_grpc

MAX_SEASONS: Final = 200
MAX_COMPUTED: Final = 1_024
"""Figures computed from one club's outcomes an instance keeps (standings, a player's
record, ...), per club: see `_computed`."""


class StandingsServicer(standings_pb2_grpc.StandingsServiceServicer):
    def __init__(self, projector: Projector) -> None:
        self.projector = projector

    async def _scope(self, club_id: str, game: str, season: str) -> tuple[str, models.Range]:
        name = find_game(game).name if game else ""
        return name, models.find_season(season, await self.projector.seasons(club_id))

    @staticmethod
    def _key(season: models.Range) -> str:
        return f"{season.name}|{season.start}|{season.end}"

    @staticmethod
    def _computed(cache: ClubMemory, key: tuple[str, ...], make: Any) -> Any:
        """`make()`, kept with the club's outcomes until they change. A caller picks the
        keys (a player's name, a season): at most `MAX_COMPUTED` are kept per club, the
        oldest dropped first, so no caller grows it without bound."""
        if key in cache.computed:
            return cache.computed[key]
        found = make()
        if len(cache.computed) >= MAX_COMPUTED:
            del cache.computed[next(iter(cache.computed))]
        cache.computed[key] = found
        return found

    def _table(self, cache: ClubMemory, view: View) -> list[standings_pb2.StandingRow]:
        table: list[standings_pb2.StandingRow] = self._computed(
            cache, ("standings", view.game, self._key(view.season)), view.table
        )
        return table

    @unary
    async def GetStandings(
        self, request: standings_pb2.GetStandingsRequest, context: Context
    ) -> standings_pb2.GetStandingsResponse:
        club_id = current_caller().club_id
        if not request.game:
            raise InvalidRequest("game", "Name the game type: standings are kept per game.")
        game, season = await self._scope(club_id, request.game, request.season)
        cache = await self.projector.club(club_id)
        view = cache.view(game, season)
        return standings_pb2.GetStandingsResponse(
            game=game,
            season=season.message(),
            rows=self._table(cache, view),
            games=len(view.outcomes),
            lag=await self.projector.store.lag(club_id),
        )

    @unary
    async def GetPlayerRecord(
        self, request: standings_pb2.GetPlayerRecordRequest, context: Context
    ) -> standings_pb2.GetPlayerRecordResponse:
        club_id = current_caller().club_id
        if not normalised_player(request.name):
            raise InvalidRequest("name", "Name the player.")
        game, season = await self._scope(club_id, request.game, request.season)
        cache = await self.projector.club(club_id)
        # A player nobody renamed is shown as the oldest game seating them spells them.
        spelt = self._computed(
            cache,
            ("spelling", normalised_player(request.name)),
            lambda: cache.first_spelling(request.name),
        )
        player = cache.roster.player_of(spelt if spelt is not None else request.name)
        answer = standings_pb2.GetPlayerRecordResponse(
            player=player.message(), season=season.message()
        )
        for kind in [game] if game else cache.games():
            view = cache.view(kind, season)
            table = self._table(cache, view)
            record = self._computed(
                cache,
                ("player", kind, self._key(season), player.player_id),
                lambda view=view, table=table: view.record(player.player_id, table),
            )
            if record is not None:
                answer.games.append(record)
        if not answer.games and spelt is None and player.player_id not in cache.roster.players:
            raise NotFound(
                "PLAYER_NOT_FOUND", f"No ended game of the club has a player {request.name[:40]!r}."
            )
        answer.lag.CopyFrom(await self.projector.store.lag(club_id))
        return answer

    @unary
    async def GetGameTypeStats(
        self, request: standings_pb2.GetGameTypeStatsRequest, context: Context
    ) -> standings_pb2.GetGameTypeStatsResponse:
        club_id = current_caller().club_id
        if not request.game:
            raise InvalidRequest("game", "Name the game type.")
        game, season = await self._scope(club_id, request.game, request.season)
        cache = await self.projector.club(club_id)
        view = cache.view(game, season)
        stats: standings_pb2.GetGameTypeStatsResponse = self._computed(
            cache, ("stats", game, self._key(season)), view.stats
        )
        answer = standings_pb2.GetGameTypeStatsResponse()
        answer.CopyFrom(stats)
        answer.season.CopyFrom(season.message())
        answer.lag.CopyFrom(await self.projector.store.lag(club_id))
        return answer

    @unary
    async def ListSeasons(
        self, request: standings_pb2.ListSeasonsRequest, context: Context
    ) -> standings_pb2.ListSeasonsResponse:
        seasons = await self.projector.seasons(current_caller().club_id)
        ordered = sorted(seasons.values(), key=lambda s: (s.start, s.name))
        return standings_pb2.ListSeasonsResponse(seasons=[s.message() for s in ordered])

    @unary
    async def SetSeason(
        self, request: standings_pb2.SetSeasonRequest, context: Context
    ) -> standings_pb2.SetSeasonResponse:
        club_id = current_caller().club_id
        season = models.season_range(request.name, request.first_day, request.last_day)
        known = await self.projector.seasons(club_id)
        # The same name in another case is the same season: its stored spelling is kept.
        name = next((k for k in known if k.casefold() == season.name.casefold()), season.name)
        season = models.Range(name, season.start, season.end)
        stored = await self.projector.store.set_season(
            club_id, name, season.start, season.end, MAX_SEASONS
        )
        if not stored:
            raise Exhausted("TOO_MANY_SEASONS", f"A club defines at most {MAX_SEASONS} seasons.")
        return standings_pb2.SetSeasonResponse(season=season.message())

    @unary
    async def RebuildProjections(
        self, request: standings_pb2.RebuildProjectionsRequest, context: Context
    ) -> standings_pb2.RebuildProjectionsResponse:
        started = time.perf_counter()
        done = await self.projector.rebuild_club(current_caller().club_id, refold=request.refold)
        return standings_pb2.RebuildProjectionsResponse(
            games=done.games, seconds=round(time.perf_counter() - started, 3), folded=done.folded
        )
