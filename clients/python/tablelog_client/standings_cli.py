"""The CLI's club memory commands (issue 28): `standings`, `player`, `stats`, `seasons` and
`projections rebuild`. Tables are text for a terminal, `--csv` for a spreadsheet, `--json`
for programs; every answer says how far the projections are behind the games."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from typing import Any

from tablelog.v1 import standings_pb2
from tablelog_client.club_cli import _print
from tablelog_client.common import Handler
from tablelog_client.sdk import Client
from tablelog_client.words import counted


def _season_words(season: standings_pb2.Season) -> str:
    if not season.name:
        return "overall"
    first = season.start_time.ToDatetime().date()
    last = season.end_time.ToDatetime().date()
    return f"season {season.name} ({first} to {last} exclusive)"


def _lag_words(lag: standings_pb2.ProjectionLag) -> str:
    if not lag.pending_games:
        return f"up to date ({counted(lag.projected_games, 'ended game')})"
    return (
        f"behind by {counted(lag.pending_games, 'changed game')}, the oldest "
        f"{lag.seconds:.1f} s ago ({counted(lag.projected_games, 'ended game')} projected)"
    )


def _rating(point: standings_pb2.RatingPoint) -> str:
    return f"{point.ordinal:6.2f} ({point.mu:.1f}±{point.sigma:.1f})" if point.game_id else "-"


def _table(rows: Sequence[Sequence[Any]]) -> str:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue().rstrip("\n")


STANDING_HEADER = (
    "rank",
    "player",
    "games",
    "wins",
    "points",
    "average place",
    "rating",
    "mu",
    "sigma",
)


def standing_rows(found: standings_pb2.GetStandingsResponse) -> list[list[Any]]:
    return [
        [
            rank,
            row.display_name,
            row.games,
            f"{row.wins:g}",
            row.points,
            f"{row.average_place:.2f}",
            f"{row.rating.ordinal:.3f}" if row.rating.game_id else "",
            f"{row.rating.mu:.3f}" if row.rating.game_id else "",
            f"{row.rating.sigma:.3f}" if row.rating.game_id else "",
        ]
        for rank, row in enumerate(found.rows, start=1)
    ]


def cmd_standings(args: argparse.Namespace, client: Client) -> int:
    found = client.standings(args.game, args.season or "")
    rows = standing_rows(found)
    if args.csv:
        print(_csv([STANDING_HEADER, *rows]))
        return 0
    head = (
        f"{found.game}, {_season_words(found.season)}: {counted(found.games, 'game')}; "
        f"{_lag_words(found.lag)}"
    )
    if not rows:
        _print(args, found, head + "\nno ended games yet")
        return 0
    shown = [
        [r[0], r[1], r[2], r[3], r[4], r[5], _rating(row.rating)]
        for r, row in zip(rows, found.rows, strict=True)
    ]
    header = ["#", "player", "games", "wins", "points", "avg place", "rating (mu±sigma)"]
    _print(args, found, head + "\n" + _table([header, *shown]))
    return 0


def cmd_player(args: argparse.Namespace, client: Client) -> int:
    found = client.player_record(args.name, args.game or "", args.season or "")
    if args.csv:
        rows: list[Sequence[Any]] = [("game", "game_id", "time", "mu", "sigma", "ordinal")]
        for record in found.games:
            rows += [
                (record.game, p.game_id, p.time.ToJsonString(), p.mu, p.sigma, p.ordinal)
                for p in record.history
            ]
        print(_csv(rows))
        return 0
    lines = [f"{found.player.display_name}, {_season_words(found.season)}; {_lag_words(found.lag)}"]
    if found.player.aliases:
        lines.append(f"also seated as: {', '.join(found.player.aliases)}")
    for record in found.games:
        s = record.standing
        lines += [
            "",
            f"{record.game}: {counted(s.games, 'game')}, {counted(s.wins, 'win')}, "
            f"{counted(s.points, 'point')}, "
            f"average place {s.average_place:.2f}, rating {_rating(s.rating)}",
            "  places: " + ", ".join(f"{i + 1}: {n}" for i, n in enumerate(record.places) if n),
            "  rating over time: " + " ".join(f"{p.ordinal:.1f}" for p in record.history[-12:]),
        ]
        if record.head_to_head:
            lines.append("  head to head (ahead/level/behind):")
            lines += [
                f"    {h.opponent_name}: {h.ahead}/{h.level}/{h.behind} in {h.games}"
                for h in record.head_to_head
            ]
        if record.figures:
            lines.append("  per game:")
            lines += [f"    {f.name}: {f.average:g}" for f in record.figures]
    _print(args, found, "\n".join(lines))
    return 0


STATS_HEADER = ("statistic", "games", "value", "description")


def stats_rows(found: standings_pb2.GetGameTypeStatsResponse) -> list[list[Any]]:
    """The game type's statistics one a row: the games, the average length, the win share
    of each seat order, then each statistic from the moves (its average and the games it
    was counted in)."""
    rows: list[list[Any]] = [
        ["games", found.games, found.games, "ended games"],
        [
            "average moves",
            found.games,
            f"{found.average_moves:.3f}",
            "moves recorded by the players, per game",
        ],
    ]
    rows += [
        [
            f"wins of seat order {s.order}",
            s.games,
            f"{s.wins:g}",
            "games won from this place in the seat order (1 = the first player; a win "
            "shared by k winners counts 1/k)",
        ]
        for s in found.seats
        if s.games
    ]
    rows += [[f.name, f.games, f"{f.average:g}", f.description] for f in found.figures]
    return rows


def cmd_stats(args: argparse.Namespace, client: Client) -> int:
    found = client.game_type_stats(args.game, args.season or "")
    if args.csv:
        print(_csv([STATS_HEADER, *stats_rows(found)]))
        return 0
    lines = [
        f"{found.game}, {_season_words(found.season)}: {counted(found.games, 'game')}, "
        f"{found.average_moves:.1f} moves on average; {_lag_words(found.lag)}",
        "wins by seat order (1 = first player): "
        + ", ".join(
            f"{s.order}: {s.wins:g} of {s.games} ({s.wins / s.games:.0%})"
            for s in found.seats
            if s.games
        ),
    ]
    lines += [f"  {f.name}: {f.average:g}  ({f.description})" for f in found.figures]
    _print(args, found, "\n".join(lines))
    return 0


def cmd_seasons(args: argparse.Namespace, client: Client) -> int:
    if args.name:
        if not (args.first_day and args.last_day):
            print("error: a season needs its first and last day (YYYY-MM-DD)", file=sys.stderr)
            return 2
        season = client.set_season(args.name, args.first_day, args.last_day)
        _print(args, season, _season_words(season))
        return 0
    seasons = client.seasons()
    text = (
        "\n".join(_season_words(s) for s in seasons)
        or "no seasons defined (a year works: --season 2026)"
    )
    _print(args, standings_pb2.ListSeasonsResponse(seasons=seasons), text)
    return 0


def cmd_rebuild(args: argparse.Namespace, client: Client) -> int:
    done = client.rebuild_projections(refold=args.refold)
    _print(
        args,
        done,
        f"rebuilt from the games' streams: {counted(done.games, 'ended game')} in "
        f"{done.seconds:.2f} s, {counted(done.folded, 'game')} folded from their events, the "
        "others from their sealed results",
    )
    return 0


def add_standings_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    def add(name: str, handler: Handler, help_text: str) -> Any:
        command = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    def season(command: Any) -> None:
        command.add_argument("--season", help="a season's name, or a year (2026); default: overall")

    command = add(
        "standings",
        cmd_standings,
        "a game type's league table: tablelog standings splendor --season 2026",
    )
    command.add_argument("game", help="the game type")
    season(command)
    command.add_argument("--csv", action="store_true", help="print the table as CSV")
    command = add(
        "player", cmd_player, "one player's record: standings, rating, places, head to head"
    )
    command.add_argument("name", help="any name of the player")
    command.add_argument("--game", help="only this game type")
    season(command)
    command.add_argument("--csv", action="store_true", help="print the rating history as CSV")
    command = add(
        "stats", cmd_stats, "a game type's statistics: first-player advantage, length, figures"
    )
    command.add_argument("game", help="the game type")
    season(command)
    command.add_argument(
        "--csv", action="store_true", help="print the statistics as CSV, one a row"
    )
    command = add("seasons", cmd_seasons, "the club's seasons; with a name, define one (owners)")
    command.add_argument("name", nargs="?", help="the season to define")
    command.add_argument("first_day", nargs="?", help="YYYY-MM-DD")
    command.add_argument("last_day", nargs="?", help="YYYY-MM-DD (included)")
    projections = sub.add_parser("projections", help="club memory's projections (owners)")
    inner = projections.add_subparsers(
        dest="projections_command", metavar="ACTION", required=True, help="rebuild"
    )
    command = inner.add_parser(
        "rebuild",
        parents=[common],
        help="rebuild standings, ratings and statistics from the games' streams",
    )
    command.add_argument(
        "--refold",
        action="store_true",
        help="fold every game from its events, ignoring (and sealing again) the games' results",
    )
    command.set_defaults(handler=cmd_rebuild)
