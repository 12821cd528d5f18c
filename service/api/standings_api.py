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
from tablelog.service.memory.projector import ClubCache, Projector
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
    def _computed(cache: ClubCache, key: tuple[str, ...], make: Any) -> Any:
        """`make()`, kept with the club's parsed outcomes until they change. A caller picks
        the keys (a player's name, a season): at most `MAX_COMPUTED` are kept per club, the
        oldest dropped first, so no caller grows it without bound."""
        if key in cache.computed:
            return cache.computed[key]
        found = make()
        if len(cache.computed) >= MAX_COMPUTED:
            del cache.computed[next(iter(cache.computed))]
        cache.computed[key] = found
        return found

    def _histories(self, cache: ClubCache, game: str, season: models.Range, chosen: Any) -> Any:
        return self._computed(
            cache,
            ("ratings", game, self._key(season)),
            lambda: models.rating_histories(chosen, cache.roster),
        )

    def _table(self, cache: ClubCache, game: str, season: models.Range, chosen: Any) -> Any:
        histories = self._histories(cache, game, season, chosen)
        return self._computed(
            cache,
            ("standings", game, self._key(season)),
            lambda: models.standings(chosen, cache.roster, histories),
        )

    @unary
    async def GetStandings(
        self, request: standings_pb2.GetStandingsRequest, context: Context
    ) -> standings_pb2.GetStandingsResponse:
        club_id = current_caller().club_id
        if not request.game:
            raise InvalidRequest("game", "Name the game type: standings are kept per game.")
        game, season = await self._scope(club_id, request.game, request.season)
        cache = await self.projector.club(club_id)
        chosen = self._computed(
            cache,
            ("chosen", game, self._key(season)),
            lambda: models.chosen(cache.outcomes, game, season),
        )
        rows = self._table(cache, game, season, chosen)
        return standings_pb2.GetStandingsResponse(
            game=game,
            season=season.message(),
            rows=rows,
            games=len(chosen),
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
        wanted = normalised_player(request.name)
        # A player nobody renamed is shown as the oldest game seating them spells them.
        spellings: dict[str, str] = self._computed(
            cache, ("spellings",), lambda: _first_spellings(cache)
        )
        spelt = spellings.get(wanted)
        player = cache.roster.player_of(spelt if spelt is not None else request.name)
        games = [game] if game else sorted({o.game for o in cache.outcomes})
        answer = standings_pb2.GetPlayerRecordResponse(
            player=player.message(), season=season.message()
        )
        for kind in games:
            chosen = self._computed(
                cache,
                ("chosen", kind, self._key(season)),
                lambda kind=kind: models.chosen(cache.outcomes, kind, season),
            )
            table = self._table(cache, kind, season, chosen)
            histories = self._histories(cache, kind, season, chosen)
            seatings = self._computed(
                cache,
                ("seated", kind, self._key(season)),
                lambda chosen=chosen: [models.seated(o, cache.roster) for o in chosen],
            )
            inputs = (chosen, cache.roster, player.player_id, kind, table, histories, seatings)
            record = self._computed(
                cache,
                ("player", kind, self._key(season), player.player_id),
                lambda inputs=inputs: models.player_record(*inputs),
            )
            if record is not None:
                answer.games.append(record)
        if (
            not answer.games
            and not any(
                normalised_player(s.name) == normalised_player(request.name)
                for o in cache.outcomes
                for s in o.seats
            )
            and player.player_id not in cache.roster.players
        ):
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
        chosen = self._computed(
            cache,
            ("chosen", game, self._key(season)),
            lambda: models.chosen(cache.outcomes, game, season),
        )
        stats: standings_pb2.GetGameTypeStatsResponse = self._computed(
            cache, ("stats", game, self._key(season)), lambda: models.game_type_stats(chosen, game)
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


def _first_spellings(cache: ClubCache) -> dict[str, str]:
    """Each seated name, normalised, as the oldest game seating it spells it."""
    found: dict[str, str] = {}
    for outcome in cache.outcomes:
        for seat in outcome.seats:
            found.setdefault(normalised_player(seat.name), seat.name)
    return found
