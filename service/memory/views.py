"""Club memory's read models kept game by game (docs/club-memory.md, "Reading"): a club's
outcomes as an instance holds them, and per (game type, season) a `View` that a changed
game updates instead of everything being computed again from all the club's games.

A `View` keeps its games in order (end time, then game id), each player's sums for the
table (`standings.Tally`, exact), each player's games, the game type's sums
(`standings.GameTypeSums`, exact) and its ratings (`standings.RatingRun`). A game added or
taken away costs its own seats plus a list insertion; the ratings are continued from the
first changed place on when next read (a game that just ended is last: one game rated); a
player's record is computed from their own games. Every answer equals the one the pure
functions of `tablelog.service.memory.standings` compute from zero over the same games (the
tests hold it after random changes): the sums are integers or fractions, whose order does
not matter, and the ratings are continued only over games that are the same before the cut.

Pure: no Redis here (the projector reads the changes and applies them, `ClubMemory.change`)."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Final, TypeAlias

from tablelog.service.memory import standings as models
from tablelog.service.memory.roster import Roster
from tablelog.service.recording.game_index import normalised_player
from tablelog.v1 import standings_pb2

MAX_VIEWS: Final = 16
"""(game type, season) views an instance keeps per club (least recently read dropped first:
each holds its games' seats and ratings)."""

MAX_RECORDS: Final = 64
"""Players' records a view keeps across changes (least recently read dropped first: a record
of hundreds of games is about 100 KB, its charts included)."""
MAX_NAMES: Final = 10_000
"""Seat names whose display names a view remembers."""

OrderKey: TypeAlias = tuple[int, int, str]


def order_key(outcome: standings_pb2.GameOutcome) -> OrderKey:
    """Where a game stands in a run: its end time, then its id (`standings.in_order`)."""
    return outcome.ended_time.seconds, outcome.ended_time.nanos, outcome.game_id


class View:
    """One game type's games in one season (`standings.Range`), kept game by game."""

    def __init__(
        self,
        game: str,
        season: models.Range,
        roster: Roster,
        outcomes: Iterable[standings_pb2.GameOutcome] = (),
    ) -> None:
        self.game = game
        self.season = season
        self.roster = roster
        ordered = models.in_order(o for o in outcomes if self.holds(o))
        self.keys: list[OrderKey] = [order_key(o) for o in ordered]
        self.outcomes: list[standings_pb2.GameOutcome] = ordered
        self.seatings: dict[str, list[models.Seated]] = {}
        self.tallies: dict[str, models.Tally] = {}
        self.games_of: dict[str, list[OrderKey]] = {}
        """Each player's games in order: their record reads these alone."""
        self.shown: dict[str, str] = {}
        """Each player's name in the table (`_shown`), kept until their first game changes."""
        self.records: OrderedDict[str, standings_pb2.PlayerGameRecord] = OrderedDict()
        """Players' records (`record`), kept across changes that leave them alone: dropped
        when a game seating the player comes or goes or their ratings are computed again
        (the record's row, history, games and opponents are theirs alone)."""
        self.names: dict[str, str] = {}
        """Seat name -> display name (`_name`), for this view's roster."""
        self.rows: dict[str, tuple[tuple[object, ...], object, standings_pb2.StandingRow]] = {}
        """Each player's row of the last table, with what it was made from (`table`); the
        rating point by identity (a point kept is the same object, one rated again new)."""
        self.sums = models.GameTypeSums()
        self.ratings = models.RatingRun(roster)
        self.unrated = 0
        """The first game whose ratings are not kept (`histories` rates from there on)."""
        for key, outcome in zip(self.keys, ordered, strict=True):
            self._count(key, outcome, 1)

    def holds(self, outcome: standings_pb2.GameOutcome) -> bool:
        return outcome.game == self.game and self.season.holds(outcome)

    def _count(self, key: OrderKey, outcome: standings_pb2.GameOutcome, sign: int) -> None:
        if sign > 0:
            players = self.seatings[outcome.game_id] = models.seated(outcome, self.roster)
        else:
            players = self.seatings.pop(outcome.game_id)
        for player in players:
            tally = self.tallies.get(player.player_id)
            if tally is None:
                tally = self.tallies[player.player_id] = models.Tally()
            tally.add(player.seat, sign)
            mine = self.games_of.setdefault(player.player_id, [])
            at = bisect_left(mine, key)
            if sign > 0:
                mine.insert(at, key)
            else:
                del mine[at]
            self.records.pop(player.player_id, None)
            if at == 0:
                self.shown.pop(player.player_id, None)  # their first game is another now
            if not tally.games:
                del self.tallies[player.player_id], self.games_of[player.player_id]
        self.sums.add(outcome, sign)

    def add(self, outcome: standings_pb2.GameOutcome) -> None:
        key = order_key(outcome)
        at = bisect_left(self.keys, key)
        self.keys.insert(at, key)
        self.outcomes.insert(at, outcome)
        self._count(key, outcome, 1)
        self.unrated = min(self.unrated, at)

    def remove(self, outcome: standings_pb2.GameOutcome) -> None:
        """Take away `outcome`, the very one added (the same end time and id)."""
        key = order_key(outcome)
        at = bisect_left(self.keys, key)
        if at == len(self.keys) or self.keys[at] != key:
            raise KeyError(outcome.game_id)
        del self.keys[at], self.outcomes[at]
        self._count(key, outcome, -1)
        self.unrated = min(self.unrated, at)

    # ------------------------------------------------------------------ answers

    def histories(self) -> Mapping[str, list[tuple[int, object, standings_pb2.RatingPoint]]]:
        """Each player's rating rows (`standings.RatingRun.entries`), rated up to date."""
        if self.unrated < len(self.outcomes) or len(self.ratings.keys) != len(self.outcomes):
            # Every player of a game rated again has new ratings: their records go (the
            # players of games taken away went with them, `_count`).
            for outcome in self.outcomes[self.unrated :]:
                for player in self.seatings[outcome.game_id]:
                    self.records.pop(player.player_id, None)
            self.ratings = models.rate_from(
                self.outcomes, self.roster, self.ratings, start=self.unrated
            )
        self.unrated = len(self.outcomes)
        return self.ratings.entries

    def history_of(self, player_id: str) -> list[standings_pb2.RatingPoint]:
        return [point for _i, _r, point in self.histories().get(player_id, ())]

    def _shown(self, player_id: str) -> str:
        """A player's name in the table: as their first game of the view seats them."""
        found = self.shown.get(player_id)
        if found is None:
            first = self.games_of[player_id][0][2]
            seat = next(p.seat for p in self.seatings[first] if p.player_id == player_id)
            found = self.shown[player_id] = self._name(seat.name)
        return found

    def table(self) -> list[standings_pb2.StandingRow]:
        """The league table (`standings.standings`): a player's row is made again only when
        their sums, name or last rating changed since the last table."""
        entries = self.histories()
        rows = []
        kept: dict[str, tuple[tuple[object, ...], object, standings_pb2.StandingRow]] = {}
        for player_id, tally in self.tallies.items():
            history = entries.get(player_id)
            rating = history[-1][2] if history else None
            shown = self._shown(player_id)
            what = (tally.games, tally.wins, tally.points, tally.places, shown)
            held = self.rows.get(player_id)
            if held is not None and held[0] == what and held[1] is rating:
                row = held[2]
            else:
                row = models.row_of(player_id, tally, shown, rating)
            kept[player_id] = (what, rating, row)
            rows.append(row)
        self.rows = kept
        return models.ranked(rows)

    def record(
        self, player_id: str, table: list[standings_pb2.StandingRow]
    ) -> standings_pb2.PlayerGameRecord | None:
        """`player_id`'s record here (None when they have no game here), from their own
        games; `table`, this view's `table()`."""
        keys = self.games_of.get(player_id)
        if not keys:
            return None
        history = self.history_of(player_id)  # (rated first: that drops records gone stale)
        found = self.records.get(player_id)
        if found is None:
            row = next(r for r in table if r.player_id == player_id)
            mine = [self.seatings[key[2]] for key in keys]
            found = models.record_of(
                self.roster, player_id, self.game, mine, row, history, self._name
            )
            self.records[player_id] = found
            while len(self.records) > MAX_RECORDS:
                self.records.popitem(last=False)
        self.records.move_to_end(player_id)
        return found

    def _name(self, name: str) -> str:
        """The display name of the player a seat name is (the roster's), remembered."""
        found = self.names.get(name)
        if found is None:
            found = self.roster.player_of(name).display_name
            if len(self.names) < MAX_NAMES:
                self.names[name] = found
        return found

    def stats(self) -> standings_pb2.GetGameTypeStatsResponse:
        return self.sums.answer(self.game)


class ClubMemory:
    """A club's outcomes as one instance holds them, at the club's outcome `version`, with
    its roster and the views and answers computed from them."""

    def __init__(
        self,
        club_id: str,
        version: int,
        roster_version: int,
        outcomes: Iterable[standings_pb2.GameOutcome],
        roster: Roster,
    ) -> None:
        self.club_id = club_id
        self.version = version
        self.roster_version = roster_version
        self.roster = roster
        self.outcomes: dict[str, standings_pb2.GameOutcome] = {}
        self.kinds: Counter[str] = Counter()
        """Games per game type."""
        self.names: dict[str, dict[str, str]] = {}
        """Normalised seat name -> the games seating it -> the name as that game spells it."""
        self._normalised: dict[str, str] = {}
        self.views: OrderedDict[tuple[str, models.Range], View] = OrderedDict()
        self.computed: dict[tuple[str, ...], object] = {}
        """Answers computed from these outcomes (`StandingsServicer._computed`), until the
        next change."""
        for outcome in outcomes:
            self._count(outcome, 1)

    def _norm(self, name: str) -> str:
        found = self._normalised.get(name)
        if found is None:
            found = normalised_player(name)
            if len(self._normalised) < 100_000:
                self._normalised[name] = found
        return found

    def _count(self, outcome: standings_pb2.GameOutcome, sign: int) -> None:
        game_id = outcome.game_id
        if sign > 0:
            self.outcomes[game_id] = outcome
            self.kinds[outcome.game] += 1
        else:
            del self.outcomes[game_id]
            self.kinds[outcome.game] -= 1
            if not self.kinds[outcome.game]:
                del self.kinds[outcome.game]
        for seat in outcome.seats:
            name = self._norm(seat.name)
            games = self.names.setdefault(name, {})
            if sign > 0:
                games.setdefault(game_id, seat.name)
            else:
                games.pop(game_id, None)
                if not games:
                    del self.names[name]

    def change(self, game_id: str, outcome: standings_pb2.GameOutcome | None) -> bool:
        """The game's outcome is now `outcome` (None: it has none); whether that changed
        anything. Every view kept follows."""
        old = self.outcomes.get(game_id)
        if old == outcome:
            return False
        if old is not None:
            self._count(old, -1)
        if outcome is not None:
            self._count(outcome, 1)
        for view in self.views.values():
            if old is not None and view.holds(old):
                view.remove(old)
            if outcome is not None and view.holds(outcome):
                view.add(outcome)
        self.computed.clear()
        return True

    def set_roster(self, roster: Roster, version: int) -> None:
        """A changed roster (a merge or rename changes who is who): the views are built
        again from zero when next read."""
        self.roster, self.roster_version = roster, version
        self.views.clear()
        self.computed.clear()

    def view(self, game: str, season: models.Range) -> View:
        key = (game, season)
        found = self.views.get(key)
        if found is None:
            found = self.views[key] = View(game, season, self.roster, self.outcomes.values())
            while len(self.views) > MAX_VIEWS:
                self.views.popitem(last=False)
        self.views.move_to_end(key)
        return found

    def games(self) -> list[str]:
        """The game types with games, by name."""
        return sorted(self.kinds)

    def first_spelling(self, name: str) -> str | None:
        """How the oldest game seating `name` (normalised) spells it; None when none does."""
        games = self.names.get(self._norm(name))
        if not games:
            return None
        oldest = min(games, key=lambda g: order_key(self.outcomes[g]))
        return games[oldest]
