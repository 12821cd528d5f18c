"""Statistics from the moves: what a finished game's recorded moves say that no outcome log
can (issue 28: gems taken by colour, lot sizes, castles founded, customers served).

Every game package has an `insights.py` with the same two names (STYLE.md principle 11):

- `STATISTICS`: a `Statistic` per figure it counts, declared once, with a description a
  club member understands;
- `insights(steps, players) -> Tally`: a pure fold over the game's `Step`s (the moves in
  effect of a finished game, in order, each with the states before and after it).

`insights_of(position)` drives it for any ended game and adds what every game shares (each
seat's decisions, the game's length). Only what every viewer may see counts: a move that a
spectator is shown only as "hidden" reaches the fold as `move=None`, and each fold reads of
the states only what the game's spectator view shows (or, for what a game reveals at its
end, the final state): the insights of a game can be shown to the whole club. An abandoned
or unfinished game has no insights: its moves say nothing about how it would have ended.

Values are numbers per seat and per game; a figure a seat never reached (a first purchase
that never came) is absent, not zero, so averages over games count only the games where it
happened (`Statistic.kind`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal, Protocol

from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, SPECTATOR, Game, HistoryError

Kind = Literal["count", "first", "final"]
"""How a figure reads across games: `count` (a total in the game: averaged per game played),
`first` (the turn something first happened: averaged over the games where it did), `final`
(a value at the end: averaged per game played)."""


@dataclass(frozen=True, slots=True)
class Statistic:
    """One figure a game's insights count."""

    name: str
    """Stable key: lowercase words joined by `_` (`gems_taken_white`)."""
    description: str
    kind: Kind = "count"
    scope: Literal["seat", "game"] = "seat"


COMMON: Final = (
    Statistic("decisions", "Moves the seat recorded (every decision, not the table's draws)."),
    Statistic("moves", "Moves recorded by the players in the game.", scope="game"),
    Statistic(
        "table_moves", "Draws, reveals and deals recorded by the table in the game.", scope="game"
    ),
)
"""What `insights_of` counts for every game, before the game's own statistics."""


@dataclass(frozen=True, slots=True)
class Step:
    """One move in effect of a finished game, as the insights fold sees it."""

    seat: int
    """The seat that decided, or CHANCE for a move of the table."""
    move: Message | None
    """The game's own move (`SplendorMove`, ...); None when spectators may not see it."""
    before: Any
    after: Any
    turn: int
    """The seat's own decision number, 1 for its first (0 for a move of the table)."""


@dataclass(frozen=True, slots=True)
class Insights:
    """The statistics of one finished game: per seat, and for the game as a whole."""

    game: str
    seats: tuple[Mapping[str, float], ...]
    table: Mapping[str, float]


class Tally:
    """The mutable accumulator a game's fold fills in (local to one call: the fold stays
    pure). Names must be declared in the game's STATISTICS (checked when done)."""

    __slots__ = ("_seats", "_table")

    def __init__(self, players: int) -> None:
        self._seats: list[dict[str, float]] = [{} for _ in range(players)]
        self._table: dict[str, float] = {}

    def add(self, seat: int, name: str, value: float = 1) -> None:
        figures = self._seats[seat]
        figures[name] = figures.get(name, 0) + value

    def zero(self, name: str) -> None:
        """Declare `name` 0 for every seat that has not counted it (a count that stayed 0)."""
        for figures in self._seats:
            figures.setdefault(name, 0)

    def first(self, seat: int, name: str, turn: int) -> None:
        """Keep the earliest `turn` at which `name` happened to `seat`."""
        figures = self._seats[seat]
        if name not in figures:
            figures[name] = turn

    def set(self, seat: int, name: str, value: float) -> None:
        self._seats[seat][name] = value

    def add_game(self, name: str, value: float = 1) -> None:
        self._table[name] = self._table.get(name, 0) + value

    def set_game(self, name: str, value: float) -> None:
        self._table[name] = value

    def zero_game(self, name: str) -> None:
        self._table.setdefault(name, 0)

    def done(self, game: str, declared: Sequence[Statistic]) -> Insights:
        known = {s.name: s.scope for s in (*COMMON, *declared)}
        for figures in self._seats:
            for name in figures:
                if known.get(name) != "seat":
                    raise ValueError(f"{game} counts an undeclared seat statistic {name!r}")
        for name in self._table:
            if known.get(name) != "game":
                raise ValueError(f"{game} counts an undeclared game statistic {name!r}")
        return Insights(
            game,
            tuple(dict(sorted(f.items())) for f in self._seats),
            dict(sorted(self._table.items())),
        )


class InsightsModule(Protocol):
    """What a game package's `insights.py` provides."""

    STATISTICS: tuple[Statistic, ...]

    def insights(self, steps: Sequence[Step], players: int) -> Tally: ...


def module_of(game: Game[Any, Any]) -> ModuleType:
    """The `insights` module of the package `game` is defined in."""
    package = type(game).__module__.rsplit(".", 1)[0]
    return importlib.import_module(f"{package}.insights")


def statistics_of(game: Game[Any, Any]) -> tuple[Statistic, ...]:
    """Every statistic the insights of `game` may hold: the common ones, then the game's."""
    declared: tuple[Statistic, ...] = module_of(game).STATISTICS
    return (*COMMON, *declared)


def steps_of(position: folding.Position) -> list[Step]:
    """The moves in effect of `position`, as the insights fold reads them."""
    game = position.game
    turns = [0] * len(position.table.players)
    steps: list[Step] = []
    for applied in position.moves():
        inner = position.table.unwrap(applied.move)
        seat = CHANCE if applied.chance else game.to_move(applied.before)
        turn = 0
        if seat >= 0:
            turns[seat] += 1
            turn = turns[seat]
        visible = game.visible_to(inner, applied.before, SPECTATOR)
        steps.append(Step(seat, inner if visible else None, applied.before, applied.after, turn))
    return steps


def insights_of(position: folding.Position) -> Insights:
    """The statistics of an ended game (refused for one in progress or abandoned)."""
    if position.status is not folding.Status.ENDED:
        raise HistoryError(
            "NOT_FINISHED", "Statistics are kept only for games that ended with a result."
        )
    game = position.game
    module = module_of(game)
    players = len(position.table.players)
    steps = steps_of(position)
    tally: Tally = module.insights(steps, players)
    for step in steps:
        if step.seat >= 0:
            tally.add(step.seat, "decisions")
            tally.add_game("moves")
        else:
            tally.add_game("table_moves")
    tally.zero("decisions")
    tally.zero_game("moves")
    tally.zero_game("table_moves")
    declared: tuple[Statistic, ...] = module.STATISTICS
    return tally.done(game.name, declared)
