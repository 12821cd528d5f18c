"""Club memory's read models as pure functions of the stored game outcomes (issue 28):
standings, ratings with their history, a player's record and a game type's statistics.

`outcome_of` turns an ended game's position into the `GameOutcome` the projector stores;
everything else here is computed from those outcomes and the club's roster, so a model
rebuilt from the streams is the same model by construction (the tests hold it).

Places: the winners are first; the others are ranked by score after them, equal scores
sharing a place (standard competition ranking: 1, 2, 2, 4). A win shared by k winners
counts 1/k. A player seated twice in one game (two names merged after the game) counts once,
with their better seat.

Ratings: OpenSkill's Plackett-Luce model (Weng-Lin). It is the library's default and the
one its authors recommend for free-for-all games: one update per game for any number of
players, ties through equal ranks, and the likelihood of a whole finishing order rather
than of pairs (Bradley-Terry and Thurstone-Mosteller "full" compare every pair, which
counts a 6-player game as 15 duels; their "part" variants compare neighbours only). A
player's rating is shown with its uncertainty: mu, sigma and the ordinal mu - 3 sigma that
tables sort by. Ratings are recomputed in game order (end time, then game id) over the
range asked for, so a changed, undone or abandoned game changes every rating after it and
none before it."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp
from openskill.models import PlackettLuce

from tablelog.replay import fold as folding
from tablelog.replay.insights import insights_of, statistics_of
from tablelog.replay.registry import find_game
from tablelog.service.errors import InvalidRequest
from tablelog.service.memory import charts
from tablelog.service.memory.roster import Roster
from tablelog.v1 import standings_pb2

MODEL: Final = PlackettLuce()
YEAR: Final = re.compile(r"^\d{4}$")
DAY: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_SEASON_NAME: Final = 40


# ----------------------------------------------------------------- the stored outcome


def places_of(scores: Sequence[int], winners: Sequence[int]) -> list[int]:
    """Each seat's place: winners 1, the others by score after them, ties sharing."""
    won = set(winners)
    places = [1 if seat in won else 0 for seat in range(len(scores))]
    others = sorted((s for s in range(len(scores)) if s not in won), key=lambda s: -scores[s])
    for index, seat in enumerate(others):
        if index and scores[others[index - 1]] == scores[seat]:
            places[seat] = places[others[index - 1]]
        else:
            places[seat] = len(won) + index + 1
    return places


def outcome_of(
    game_id: str, position: folding.Position, ended: Timestamp, sequence: int
) -> standings_pb2.GameOutcome | None:
    """What club memory keeps of a game: None unless it ended with a result (an abandoned
    game, one in progress, or one its club's owner deleted counts for nothing)."""
    if position.status is not folding.Status.ENDED:
        return None
    result = (
        position.result if position.result is not None else position.game.result(position.state)
    )
    scores = [0] * len(position.table.players)
    for score in result.scores:
        if 0 <= score.seat < len(scores):
            scores[score.seat] = score.total
    winners = list(result.winners)
    places = places_of(scores, winners)
    insights = insights_of(position)
    first = next((step for step in _decisions(position)), -1)
    outcome = standings_pb2.GameOutcome(
        game_id=game_id,
        game=position.game.name,
        ended_time=ended,
        sequence=sequence,
        figures=dict(insights.table),
    )
    for seat, name in enumerate(position.table.players):
        outcome.seats.append(
            standings_pb2.OutcomeSeat(
                name=name,
                place=places[seat],
                score=scores[seat],
                win_share=1 / len(winners) if seat in winners else 0.0,
                first=seat == first,
                figures=dict(insights.seats[seat]),
            )
        )
    return outcome


def _decisions(position: folding.Position) -> Iterable[int]:
    game = position.game
    for applied in position.moves():
        if not applied.chance:
            yield game.to_move(applied.before)


# ----------------------------------------------------------------- seasons


@dataclass(frozen=True, slots=True)
class Range:
    """A season: [start, end) in seconds since the epoch; name "" is overall."""

    name: str = ""
    start: int = 0
    end: int = 0

    def holds(self, outcome: standings_pb2.GameOutcome) -> bool:
        if not self.name:
            return True
        return self.start <= outcome.ended_time.seconds < self.end

    def message(self) -> standings_pb2.Season:
        if not self.name:
            return standings_pb2.Season()
        return standings_pb2.Season(
            name=self.name,
            start_time=Timestamp(seconds=self.start),
            end_time=Timestamp(seconds=self.end),
        )


def _midnight(day: dt.date) -> int:
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp())


def season_range(name: str, first_day: str, last_day: str) -> Range:
    """A season from its days (YYYY-MM-DD, both included), checked."""
    clean = " ".join(name.split())
    if not clean or len(clean) > MAX_SEASON_NAME:
        raise InvalidRequest("name", f"A season's name is 1 to {MAX_SEASON_NAME} characters.")
    days = []
    for field, text in (("first_day", first_day), ("last_day", last_day)):
        if not DAY.match(text):
            raise InvalidRequest(field, f"Write the day as YYYY-MM-DD, not {text[:20]!r}.")
        try:
            days.append(dt.date.fromisoformat(text))
        except ValueError as exc:
            raise InvalidRequest(field, f"There is no day {text!r}.") from exc
    if days[1] < days[0]:
        raise InvalidRequest("last_day", "A season's last day comes after its first.")
    return Range(clean, _midnight(days[0]), _midnight(days[1] + dt.timedelta(days=1)))


def find_season(name: str, defined: Mapping[str, Range]) -> Range:
    """The season `name`: "" is overall, a defined season by name (case ignored), else a
    bare year is that calendar year (UTC)."""
    clean = " ".join(name.split())
    if not clean:
        return Range()
    for key, found in defined.items():
        if key.casefold() == clean.casefold():
            return found
    if YEAR.match(clean):
        year = int(clean)
        return Range(clean, _midnight(dt.date(year, 1, 1)), _midnight(dt.date(year + 1, 1, 1)))
    known = ", ".join(sorted(defined)) or "none defined"
    raise InvalidRequest(
        "season", f"There is no season {clean[:40]!r} (seasons: {known}; or a year, like 2026)."
    )


# ----------------------------------------------------------------- the models


@dataclass(frozen=True, slots=True)
class Seated:
    """A player's seat in one game, after the roster's merges (their better seat)."""

    player_id: str
    seat: standings_pb2.OutcomeSeat


def seated(outcome: standings_pb2.GameOutcome, roster: Roster) -> list[Seated]:
    best: dict[str, standings_pb2.OutcomeSeat] = {}
    for seat in outcome.seats:
        player = roster.id_of(seat.name)
        held = best.get(player)
        if held is None or seat.place < held.place:
            best[player] = seat
    return [Seated(player, seat) for player, seat in best.items()]


def in_order(outcomes: Iterable[standings_pb2.GameOutcome]) -> list[standings_pb2.GameOutcome]:
    return sorted(outcomes, key=lambda o: (o.ended_time.seconds, o.ended_time.nanos, o.game_id))


def chosen(
    outcomes: Iterable[standings_pb2.GameOutcome], game: str, season: Range
) -> list[standings_pb2.GameOutcome]:
    return in_order(o for o in outcomes if o.game == game and season.holds(o))


class RatingRun:
    """The ratings of one ordered run of games, kept so that a changed run is rated again
    only from its first changed game on (`rate_from`, which continues a run in place)."""

    __slots__ = ("entries", "keys", "rated", "roster")

    def __init__(self, roster: Roster) -> None:
        self.roster = roster
        self.keys: list[tuple[str, int]] = []
        """(game id, sequence) of each game of the run, in order."""
        self.entries: dict[str, list[tuple[int, Any, standings_pb2.RatingPoint]]] = {}
        """Per player: (index of the game in the run, the rating after it, as a point)."""
        self.rated: list[tuple[str, ...]] = []
        """The players rated at each game of the run (none for a solo game): what to take
        back when the run is cut at a game, without looking at the other players."""

    def histories(self) -> dict[str, list[standings_pb2.RatingPoint]]:
        return {player: [point for _i, _r, point in rows] for player, rows in self.entries.items()}

    def cut(self, start: int) -> None:
        """Forget the games from index `start` on: the work is the games cut, not the run."""
        for index in range(len(self.keys) - 1, start - 1, -1):
            for player_id in self.rated[index]:
                rows = self.entries[player_id]
                rows.pop()  # a player's rows are in game order: theirs at `index` is the last
                if not rows:
                    del self.entries[player_id]
        del self.keys[start:]
        del self.rated[start:]


def _key(outcome: standings_pb2.GameOutcome) -> tuple[str, int]:
    return outcome.game_id, outcome.sequence


def rate_from(
    ordered: Sequence[standings_pb2.GameOutcome],
    roster: Roster,
    previous: RatingRun | None,
    start: int | None = None,
) -> RatingRun:
    """The ratings of `ordered`, computed again only from the first game that differs from
    `previous` (a game added, changed or gone): what comes before it is the same games in
    the same order, so its ratings are the same. `previous` is continued in place and
    returned (the games after the first difference are cut from it, then rated): the work
    is proportional to the games from the first difference on. `start`, when the caller
    knows it: an index up to which `ordered` and `previous` are the same games (else found
    by comparing their keys). A changed roster (a merge changes who is who) rates the whole
    run again, in a new run."""
    if previous is None or previous.roster is not roster:
        run, start = RatingRun(roster), 0
    else:
        run = previous
        limit = min(len(ordered), len(run.keys))
        if start is None:
            start = 0
            while start < limit and _key(ordered[start]) == run.keys[start]:
                start += 1
        start = min(start, limit)
        run.cut(start)
    for index in range(start, len(ordered)):
        outcome = ordered[index]
        run.keys.append(_key(outcome))
        players = seated(outcome, roster)
        if len(players) < 2:
            run.rated.append(())
            continue  # a solo game, or everyone merged into one player: no one to beat
        teams = []
        for player in players:
            rows = run.entries.get(player.player_id)
            teams.append([rows[-1][1] if rows else MODEL.rating()])
        rated = MODEL.rate(teams, ranks=[float(p.seat.place) for p in players])
        run.rated.append(tuple(p.player_id for p in players))
        for player, (rating,) in zip(players, rated, strict=True):
            run.entries.setdefault(player.player_id, []).append(
                (
                    index,
                    rating,
                    standings_pb2.RatingPoint(
                        game_id=outcome.game_id,
                        time=outcome.ended_time,
                        mu=round(rating.mu, 6),
                        sigma=round(rating.sigma, 6),
                        ordinal=round(rating.ordinal(), 6),
                    ),
                )
            )
    return run


def rating_histories(
    ordered: Sequence[standings_pb2.GameOutcome], roster: Roster
) -> dict[str, list[standings_pb2.RatingPoint]]:
    """Each player's rating after each of their games, `ordered` by end time."""
    return rate_from(ordered, roster, None).histories()


WIN_UNIT: Final = 720_720
"""Wins are counted in integer parts of this (every share 1/k for k up to 16 is whole):
sums of integers do not depend on their order, so a table kept game by game (a game added,
one taken away) equals a table summed from zero, which float sums would not promise."""


def win_units(seat: standings_pb2.OutcomeSeat) -> int:
    return round(seat.win_share * WIN_UNIT)


class Tally:
    """One player's sums in a table: games, wins (in `WIN_UNIT`s), points, places."""

    __slots__ = ("games", "places", "points", "wins")

    def __init__(self) -> None:
        self.games = self.wins = self.points = self.places = 0

    def add(self, seat: standings_pb2.OutcomeSeat, sign: int = 1) -> None:
        self.games += sign
        self.wins += sign * win_units(seat)
        self.points += sign * seat.score
        self.places += sign * seat.place


def row_of(
    player_id: str, tally: Tally, shown: str, rating: standings_pb2.RatingPoint | None
) -> standings_pb2.StandingRow:
    """A player's row of the table from their tally, display name and last rating."""
    row = standings_pb2.StandingRow(
        player_id=player_id,
        display_name=shown,
        games=tally.games,
        wins=round(tally.wins / WIN_UNIT, 6),
        points=tally.points,
        average_place=round(tally.places / tally.games, 6),
    )
    if rating is not None:
        row.rating.CopyFrom(rating)
    return row


def ranked(rows: Iterable[standings_pb2.StandingRow]) -> list[standings_pb2.StandingRow]:
    """The rows in table order: rating (ordinal), wins, average place, name, id."""
    return sorted(
        rows,
        key=lambda r: (
            -r.rating.ordinal,
            -r.wins,
            r.average_place,
            r.display_name.casefold(),
            r.player_id,
        ),
    )


def table_of(
    tallies: Mapping[str, Tally],
    shown: Mapping[str, str],
    last_ratings: Mapping[str, standings_pb2.RatingPoint],
) -> list[standings_pb2.StandingRow]:
    """The league table from each player's tally, display name and last rating."""
    return ranked(
        row_of(player_id, tally, shown[player_id], last_ratings.get(player_id))
        for player_id, tally in tallies.items()
    )


def standings(
    ordered: Sequence[standings_pb2.GameOutcome],
    roster: Roster,
    histories: Mapping[str, Sequence[standings_pb2.RatingPoint]] | None = None,
) -> list[standings_pb2.StandingRow]:
    """The league table of `ordered` (one game type's games of one range); `histories`, the
    ratings of the same games when they are at hand. A player is shown by the name their
    first game seats them under."""
    if histories is None:
        histories = rating_histories(ordered, roster)
    tallies: dict[str, Tally] = {}
    shown: dict[str, str] = {}
    for outcome in ordered:
        for player in seated(outcome, roster):
            tally = tallies.get(player.player_id)
            if tally is None:
                tally = tallies[player.player_id] = Tally()
                shown[player.player_id] = roster.player_of(player.seat.name).display_name
            tally.add(player.seat)
    last = {player: rows[-1] for player, rows in histories.items() if rows}
    return table_of(tallies, shown, last)


class FigureSums:
    """Sums and counts of named statistics, exact (whole values as integers, others as
    fractions: a float is a binary fraction), so that sums kept game by game equal sums
    from zero whatever the order."""

    __slots__ = ("counts", "sums")

    def __init__(self) -> None:
        self.sums: dict[str, int | Fraction] = {}
        self.counts: dict[str, int] = {}

    def add(self, figures: Mapping[str, float], sign: int = 1) -> None:
        for name in figures:
            value = figures[name]
            exact: int | Fraction = int(value) if value.is_integer() else Fraction(value)
            self.sums[name] = self.sums.get(name, 0) + sign * exact
            count = self.counts.get(name, 0) + sign
            if count:
                self.counts[name] = count
            else:
                del self.counts[name], self.sums[name]

    def averages(self, game: str) -> list[standings_pb2.FigureAverage]:
        """The mean of each per-seat statistic of `game` over the seats where it was counted."""
        described = {s.name: s for s in statistics_of(find_game(game)) if s.scope == "seat"}
        return [
            standings_pb2.FigureAverage(
                name=name,
                description=described[name].description,
                average=round(float(self.sums[name] / self.counts[name]), 4),
                games=self.counts[name],
            )
            for name in described
            if self.counts.get(name)
        ]


def figure_averages(
    game: str, seats: Iterable[Mapping[str, float]]
) -> list[standings_pb2.FigureAverage]:
    """The mean of each per-seat statistic over the seats where it was counted (summed in
    the order given: a player's record sums their games in game order, from zero)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for figures in seats:
        for name in figures:  # (a message's map: its items() costs twice this)
            sums[name] = sums.get(name, 0.0) + figures[name]
            counts[name] = counts.get(name, 0) + 1
    described = {s.name: s for s in statistics_of(find_game(game)) if s.scope == "seat"}
    return [
        standings_pb2.FigureAverage(
            name=name,
            description=described[name].description,
            average=round(sums[name] / counts[name], 4),
            games=counts[name],
        )
        for name in described
        if counts.get(name)
    ]


def player_record(
    ordered: Sequence[standings_pb2.GameOutcome],
    roster: Roster,
    player_id: str,
    game: str,
    table: Sequence[standings_pb2.StandingRow] | None = None,
    histories: Mapping[str, Sequence[standings_pb2.RatingPoint]] | None = None,
    seatings: Sequence[list[Seated]] | None = None,
) -> standings_pb2.PlayerGameRecord | None:
    """One player's record in `ordered` (one game type, one range); None when they did not
    play in it. `table`, `histories` and `seatings` (each game's `seated`): the same games'
    standings, ratings and players when they are at hand."""
    if seatings is None:
        seatings = [seated(o, roster) for o in ordered]
    mine = [
        players
        for players in seatings
        if any(p.player_id == player_id for p in players)
    ]  # fmt: skip
    if not mine:
        return None
    if histories is None:
        histories = rating_histories(ordered, roster)
    if table is None:
        table = standings(ordered, roster, histories)
    row = next(r for r in table if r.player_id == player_id)
    return record_of(roster, player_id, game, mine, row, histories.get(player_id, ()))


def record_of(
    roster: Roster,
    player_id: str,
    game: str,
    mine: Iterable[Sequence[Seated]],
    row: standings_pb2.StandingRow,
    history: Iterable[standings_pb2.RatingPoint],
    shown: Callable[[str], str] | None = None,
) -> standings_pb2.PlayerGameRecord:
    """A player's record from the players of each of their games (in game order), their
    row of the table and their rating history: the work is their own games. `shown`: a
    seat name's display name (the roster's, remembered by the caller)."""
    if shown is None:
        shown = lambda name: roster.player_of(name).display_name  # noqa: E731
    record = standings_pb2.PlayerGameRecord(game=game, standing=row)
    record.history.extend(history)
    places: list[int] = []
    scores: list[int] = []
    own_figures: list[Mapping[str, float]] = []
    # Plain counts while going through the games (a message's fields cost more to update).
    versus: dict[str, list[Any]] = {}
    """opponent id -> [games, ahead, level, behind, the seat name first met under]"""
    for players in mine:
        me = players[0]
        for player in players:
            if player.player_id == player_id:
                me = player
                break
        place = me.seat.place
        while len(places) < place:
            places.append(0)
        places[place - 1] += 1
        scores.append(me.seat.score)
        own_figures.append(me.seat.figures)
        for other in players:
            if other is me:
                continue
            counts = versus.get(other.player_id)
            if counts is None:
                counts = versus[other.player_id] = [0, 0, 0, 0, other.seat.name]
            counts[0] += 1
            theirs = other.seat.place
            counts[1 if place < theirs else 2 if place == theirs else 3] += 1
    record.places.extend(places)
    record.scores.extend(scores)
    record.figures.extend(figure_averages(game, own_figures))
    rows_h = [
        standings_pb2.HeadToHeadRow(
            opponent_id=opponent,
            opponent_name=shown(name),
            games=games,
            ahead=ahead,
            level=level,
            behind=behind,
        )
        for opponent, (games, ahead, level, behind, name) in versus.items()
    ]
    record.head_to_head.extend(sorted(rows_h, key=lambda h: (-h.games, h.opponent_name.casefold())))
    record.rating_chart_svg = charts.rating_chart(record.history)
    record.score_chart_svg = charts.score_chart(scores)
    return record


class GameTypeSums:
    """What a game type's statistics sum over its games, exact (`WIN_UNIT`s, `FigureSums`),
    kept game by game or from zero alike."""

    __slots__ = ("by_order", "games", "moves", "seats")

    def __init__(self) -> None:
        self.games = 0
        self.by_order: dict[int, list[int]] = {}
        """Seat order from the first player -> [games, wins in `WIN_UNIT`s]."""
        self.moves = FigureSums()
        self.seats = FigureSums()

    def add(self, outcome: standings_pb2.GameOutcome, sign: int = 1) -> None:
        self.games += sign
        seats = list(outcome.seats)
        first = next((i for i, s in enumerate(seats) if s.first), 0)
        for index, seat in enumerate(seats):
            order = (index - first) % len(seats) + 1
            row = self.by_order.setdefault(order, [0, 0])
            row[0] += sign
            row[1] += sign * win_units(seat)
            if not row[0]:
                del self.by_order[order]
            self.seats.add(seat.figures, sign)
        self.moves.add({"moves": outcome.figures.get("moves", 0.0)}, sign)

    def answer(self, game: str) -> standings_pb2.GetGameTypeStatsResponse:
        stats = standings_pb2.GetGameTypeStatsResponse(game=game, games=self.games)
        stats.seats.extend(
            standings_pb2.SeatStats(
                order=order,
                games=self.by_order[order][0],
                wins=round(self.by_order[order][1] / WIN_UNIT, 6),
            )
            for order in sorted(self.by_order)
        )
        if self.games:
            stats.average_moves = round(float(self.moves.sums.get("moves", 0) / self.games), 4)
        stats.figures.extend(self.seats.averages(game))
        return stats


def game_type_stats(
    ordered: Sequence[standings_pb2.GameOutcome], game: str
) -> standings_pb2.GetGameTypeStatsResponse:
    """First-player advantage (win share by seat order from the first player), average
    game length and the average of each statistic, over `ordered`."""
    sums = GameTypeSums()
    for outcome in ordered:
        sums.add(outcome)
    return sums.answer(game)
