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
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class RatingRun:
    """The ratings of one ordered run of games, kept so that a changed run is rated again
    only from its first changed game on (`rate_from`)."""

    keys: tuple[tuple[str, int], ...]
    """(game id, sequence) of each game of the run, in order."""
    roster: Roster
    entries: Mapping[str, tuple[tuple[int, Any, standings_pb2.RatingPoint], ...]]
    """Per player: (index of the game in the run, the rating after it, as a point)."""

    def histories(self) -> dict[str, list[standings_pb2.RatingPoint]]:
        return {player: [point for _i, _r, point in rows] for player, rows in self.entries.items()}


def _key(outcome: standings_pb2.GameOutcome) -> tuple[str, int]:
    return outcome.game_id, outcome.sequence


def rate_from(
    ordered: Sequence[standings_pb2.GameOutcome], roster: Roster, previous: RatingRun | None
) -> RatingRun:
    """The ratings of `ordered`, computed again only from the first game that differs from
    `previous` (a game added, changed or gone): what comes before it is the same games in
    the same order, so its ratings are the same. A changed roster (a merge changes who is
    who) rates the whole run again."""
    keys = tuple(_key(o) for o in ordered)
    start = 0
    if previous is not None and previous.roster is roster:
        limit = min(len(keys), len(previous.keys))
        while start < limit and keys[start] == previous.keys[start]:
            start += 1
    kept: dict[str, list[tuple[int, Any, standings_pb2.RatingPoint]]] = {}
    if start and previous is not None:
        for player_id, rows in previous.entries.items():
            before = [row for row in rows if row[0] < start]
            if before:
                kept[player_id] = before
    current: dict[str, Any] = {player_id: rows[-1][1] for player_id, rows in kept.items()}
    for index in range(start, len(ordered)):
        outcome = ordered[index]
        players = seated(outcome, roster)
        if len(players) < 2:
            continue  # a solo game, or everyone merged into one player: no one to beat
        teams = [[current.get(p.player_id) or MODEL.rating()] for p in players]
        rated = MODEL.rate(teams, ranks=[float(p.seat.place) for p in players])
        for player, (rating,) in zip(players, rated, strict=True):
            current[player.player_id] = rating
            kept.setdefault(player.player_id, []).append(
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
    return RatingRun(keys, roster, {player: tuple(rows) for player, rows in kept.items()})


def rating_histories(
    ordered: Sequence[standings_pb2.GameOutcome], roster: Roster
) -> dict[str, list[standings_pb2.RatingPoint]]:
    """Each player's rating after each of their games, `ordered` by end time."""
    return rate_from(ordered, roster, None).histories()


def standings(
    ordered: Sequence[standings_pb2.GameOutcome],
    roster: Roster,
    histories: Mapping[str, Sequence[standings_pb2.RatingPoint]] | None = None,
) -> list[standings_pb2.StandingRow]:
    """The league table of `ordered` (one game type's games of one range); `histories`, the
    ratings of the same games when they are at hand."""
    if histories is None:
        histories = rating_histories(ordered, roster)
    rows: dict[str, standings_pb2.StandingRow] = {}
    place_sums: dict[str, int] = defaultdict(int)
    for outcome in ordered:
        for player in seated(outcome, roster):
            row = rows.get(player.player_id)
            if row is None:
                shown = roster.player_of(player.seat.name)
                row = rows[player.player_id] = standings_pb2.StandingRow(
                    player_id=player.player_id, display_name=shown.display_name
                )
            row.games += 1
            row.wins += player.seat.win_share
            row.points += player.seat.score
            place_sums[player.player_id] += player.seat.place
    for player_id, row in rows.items():
        row.wins = round(row.wins, 6)
        row.average_place = round(place_sums[player_id] / row.games, 6)
        history = histories.get(player_id)
        if history:
            row.rating.CopyFrom(history[-1])
    return sorted(
        rows.values(),
        key=lambda r: (-r.rating.ordinal, -r.wins, r.average_place, r.display_name.casefold()),
    )


def figure_averages(
    game: str, seats: Iterable[Mapping[str, float]]
) -> list[standings_pb2.FigureAverage]:
    """The mean of each per-seat statistic over the seats where it was counted."""
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for figures in seats:
        for name, value in figures.items():
            sums[name] += value
            counts[name] += 1
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
    standings, ratings and players when they are at hand (computed once for every player's
    record)."""
    if seatings is None:
        seatings = [seated(o, roster) for o in ordered]
    mine = [
        (outcome, players)
        for outcome, players in zip(ordered, seatings, strict=True)
        if any(p.player_id == player_id for p in players)
    ]
    if not mine:
        return None
    if histories is None:
        histories = rating_histories(ordered, roster)
    if table is None:
        table = standings(ordered, roster, histories)
    row = next(r for r in table if r.player_id == player_id)
    record = standings_pb2.PlayerGameRecord(game=game, standing=row)
    record.history.extend(histories.get(player_id, []))
    places: list[int] = []
    own_figures: list[Mapping[str, float]] = []
    versus: dict[str, standings_pb2.HeadToHeadRow] = {}
    for _outcome, players in mine:
        me = next(p for p in players if p.player_id == player_id)
        while len(places) < me.seat.place:
            places.append(0)
        places[me.seat.place - 1] += 1
        record.scores.append(me.seat.score)
        own_figures.append(me.seat.figures)
        for other in players:
            if other.player_id == player_id:
                continue
            row_h = versus.get(other.player_id)
            if row_h is None:
                row_h = versus[other.player_id] = standings_pb2.HeadToHeadRow(
                    opponent_id=other.player_id,
                    opponent_name=roster.player_of(other.seat.name).display_name,
                )
            row_h.games += 1
            if me.seat.place < other.seat.place:
                row_h.ahead += 1
            elif me.seat.place == other.seat.place:
                row_h.level += 1
            else:
                row_h.behind += 1
    record.places.extend(places)
    record.figures.extend(figure_averages(game, own_figures))
    record.head_to_head.extend(
        sorted(versus.values(), key=lambda h: (-h.games, h.opponent_name.casefold()))
    )
    record.rating_chart_svg = charts.rating_chart(record.history)
    record.score_chart_svg = charts.score_chart(record.scores)
    return record


def game_type_stats(
    ordered: Sequence[standings_pb2.GameOutcome], game: str
) -> standings_pb2.GetGameTypeStatsResponse:
    """First-player advantage (win share by seat order from the first player), average
    game length and the average of each statistic, over `ordered`."""
    stats = standings_pb2.GetGameTypeStatsResponse(game=game, games=len(ordered))
    by_order: dict[int, standings_pb2.SeatStats] = {}
    moves = 0.0
    for outcome in ordered:
        seats = list(outcome.seats)
        first = next((i for i, s in enumerate(seats) if s.first), 0)
        for index, seat in enumerate(seats):
            order = (index - first) % len(seats) + 1
            row = by_order.setdefault(order, standings_pb2.SeatStats(order=order))
            row.games += 1
            row.wins = round(row.wins + seat.win_share, 6)
        moves += outcome.figures.get("moves", 0)
    stats.seats.extend(by_order[k] for k in sorted(by_order))
    stats.average_moves = round(moves / len(ordered), 4) if ordered else 0.0
    stats.figures.extend(figure_averages(game, (s.figures for o in ordered for s in o.seats)))
    return stats
