"""Variations: lines of moves other than the game's own, as a person analysing a game writes
them, checked by the same rules as the game's moves.

A variation is played INSTEAD of the move an annotation is anchored to, from the position
before that move; every move of it is checked in the position the moves before it in the
line lead to. A move may carry alternatives of its own (nested variations), each from the
same position as that move, to any depth. Nothing here is recorded in a game's history: a
variation lives inside its annotation.

Paths. A move of the annotation's own line is "move 3"; an alternative is a *line* named by
the move it replaces and its rank among that move's alternatives: line 3.1 is the first
alternative to move 3, and line 3.1/2.2 the second alternative to move 2 of line 3.1. The
empty line is the variation itself. Refusals name the move this way, and `follow` steps
into a line by it.

Hidden information. A variation is read by whoever may read the game's annotations, so it
is checked from `viewer`'s side (the service passes the spectator's view unless the game
shows everything to everyone): a position that hides something from `viewer`
(`Game.hides_from`) is refused before any move is checked in it, since whether a move is
legal there could depend on what is hidden; a move the rules show to `viewer` only as
"hidden" (`Game.visible_to`: a blind reserve naming its card, a card drawn into a hand) is
refused too. Chance moves are typed as the table would reveal them, in either mode: the
analyst names the outcome, and the rules check it is one the position allows; nothing is
drawn from a dealt game's seed (that would tell the future of the game itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tablelog.replay import fold as folding
from tablelog.replay.core import (
    FULL,
    HistoryError,
    IllegalMove,
    NotationError,
    RulesError,
    Viewer,
    clip,
)
from tablelog.v1 import events_pb2, game_pb2

Line = tuple[int, ...]
"""Pairs (move number, alternative number), both from 1: () is the variation itself."""


def line_text(line: Line) -> str:
    """A line's name: "3.1/2.2" (see the module docstring); "" for the variation itself."""
    return "/".join(f"{line[i]}.{line[i + 1]}" for i in range(0, len(line) - 1, 2))


def move_words(line: Line, number: int) -> str:
    """ "move 3 of the variation", "move 2 of line 3.1 of the variation"."""
    return f"move {number} of " + (f"line {line_text(line)} of " if line else "") + "the variation"


class VariationRefused(RulesError):
    """A move of a variation that cannot stand: `line` and `number` name it, `notation` is
    how it was given; `code` says why (VARIATION_HIDDEN, VARIATION_MOVE_HIDDEN, or
    ILLEGAL_VARIATION_MOVE for `IllegalVariationMove`)."""

    def __init__(self, code: str, line: Line, number: int, notation: str, message: str) -> None:
        super().__init__(code, message)
        self.line = line
        self.number = number
        self.notation = clip(notation)

    @property
    def path(self) -> str:
        """The move's path: its line and its number, "3.1/2.2:1" ("4" in the variation)."""
        return f"{line_text(self.line)}:{self.number}" if self.line else str(self.number)


class IllegalVariationMove(VariationRefused):
    """A move of a variation that the rules refuse (`cause`) or that does not read as a
    move (`cause` a NotationError)."""

    def __init__(self, line: Line, number: int, notation: str, cause: RulesError) -> None:
        shown = f" ({clip(notation)})" if notation else ""
        where = move_words(line, number)
        super().__init__(
            "ILLEGAL_VARIATION_MOVE",
            line,
            number,
            notation,
            f"{where[0].upper()}{where[1:]}{shown}: {cause.message}",
        )
        self.cause = cause


def start_before(position: folding.Position, revision: int) -> folding.Position:
    """The position a variation of the move named `revision` starts from: before that move,
    with the moves in effect before it (`position` is the game at `revision`, where that
    move is in effect). Revision 1, the creation, names the whole game: a variation there
    replaces the first move, so it starts from the position right after the creation."""
    if revision <= 1:
        return position
    node = position.applied
    while node is not None and node.head.revision != revision:
        node = node.tail
    if node is None:
        raise HistoryError(
            "NOT_A_MOVE",
            f"Revision {revision} names no move in effect there: a variation is played "
            "instead of a move.",
        )
    before = list(node.tail) if node.tail is not None else []
    return replace(
        position,
        state=node.head.before,
        applied=node.tail,
        undone=None,
        move_count=len(before),
        chance_count=sum(applied.chance for applied in before),
        status=folding.Status.IN_PROGRESS,
        result=None,
    )


def check_variation(
    start: folding.Position, variation: events_pb2.Variation, viewer: Viewer = FULL
) -> events_pb2.Variation:
    """`variation` checked by the rules from `start`, as the service stores it: every move
    typed (a typed move is taken as given, whatever notation comes with it; a move given by
    notation alone is read in its position; a line of notation that
    stands for several moves, a game's shorthand, becomes those moves, the first keeping
    the comment, glyph and alternatives) and written in its canonical notation, nested
    lines checked from their own positions. Raises `VariationRefused` naming the first
    move that cannot stand; see the module docstring for `viewer`."""
    return _checked_line(start, variation, viewer, ())


def _checked_line(
    start: folding.Position, variation: events_pb2.Variation, viewer: Viewer, line: Line
) -> events_pb2.Variation:
    checked = events_pb2.Variation()
    position = start
    for number, given in enumerate(variation.moves, 1):
        typed = _typed(position, given, viewer, line, number)
        first = checked.moves.add(
            move=typed[0][0], notation=typed[0][1], comment=given.comment, glyph=given.glyph
        )
        for rank, alternative in enumerate(given.variations, 1):
            first.variations.append(
                _checked_line(position, alternative, viewer, (*line, number, rank))
            )
        for envelope, notation, _after in typed[1:]:
            checked.moves.add(move=envelope, notation=notation)
        position = typed[-1][2]
    return checked


def _typed(
    position: folding.Position,
    given: events_pb2.VariationMove,
    viewer: Viewer,
    line: Line,
    number: int,
) -> list[tuple[game_pb2.Move, str, folding.Position]]:
    """The move(s) `given` stands for, each with its canonical notation and the position
    after it."""
    table, game = position.table, position.game
    shown = given.notation or ""
    steps: list[tuple[game_pb2.Move, str, folding.Position]] = []
    try:
        if given.HasField("move"):
            _check_hidden(position, viewer, line, number, shown)
            steps.append(_step(position, given.move, viewer, line, number, shown))
            return steps
        if not given.notation.strip():
            raise NotationError("A move of a variation needs its notation or the move itself.")
        for text in game.split(given.notation, position.state):
            _check_hidden(position, viewer, line, number, shown)
            envelope = table.wrap(game.parse(text, position.state))
            steps.append(_step(position, envelope, viewer, line, number, shown))
            position = steps[-1][2]
    except VariationRefused:
        raise
    except RulesError as refused:
        raise IllegalVariationMove(line, number, shown, refused) from refused
    return steps


def _check_hidden(
    position: folding.Position, viewer: Viewer, line: Line, number: int, shown: str
) -> None:
    if viewer is not FULL and position.game.hides_from(position.state, viewer):
        where = move_words(line, number)
        raise VariationRefused(
            "VARIATION_HIDDEN",
            line,
            number,
            shown,
            f"{where[0].upper()}{where[1:]} would be played where the game hides something "
            "(a hand, a blind reserve, hidden coins) from those who read its annotations: "
            "a variation there could tell what is hidden, so it cannot be added until the "
            "game shows everything.",
        )


def _step(
    position: folding.Position,
    envelope: game_pb2.Move,
    viewer: Viewer,
    line: Line,
    number: int,
    shown: str,
) -> tuple[game_pb2.Move, str, folding.Position]:
    table, game = position.table, position.game
    folding.check_move(position, envelope)  # the rules first: a refusal names the rule
    inner = table.unwrap(envelope)
    notation = game.format(inner, position.state)
    if not game.visible_to(inner, position.state, viewer):
        where = move_words(line, number)
        raise VariationRefused(
            "VARIATION_MOVE_HIDDEN",
            line,
            number,
            shown or notation,
            f"{where[0].upper()}{where[1:]} deals something hidden (a card into a hand, a "
            "blind reserve): a variation is read by everyone who reads the game, so it "
            "holds only moves everyone may see.",
        )
    return envelope, notation, folding.record(position, envelope, notation)


def follow(
    start: folding.Position, variation: events_pb2.Variation, line: Line
) -> tuple[folding.Position, Sequence[events_pb2.VariationMove]]:
    """The position `line` of `variation` starts from and its moves: for line 3.1, the
    position after moves 1 and 2 of the variation, and the first alternative to its move
    3. Raises IllegalMove (NO_SUCH_LINE) when the variation has no such line."""
    position, moves = start, variation.moves
    for index in range(0, len(line) - 1, 2):
        number, rank = line[index], line[index + 1]
        named = line_text(line[: index + 2])
        if not 1 <= number <= len(moves) or not 1 <= rank <= len(moves[number - 1].variations):
            raise IllegalMove(
                "NO_SUCH_LINE",
                f"The variation has no line {named}: " + _lines_offered(moves, line[:index]),
            )
        for earlier in moves[: number - 1]:
            position = folding.record(position, earlier.move, earlier.notation)
        moves = moves[number - 1].variations[rank - 1].moves
    return position, moves


def _lines_offered(moves: Sequence[events_pb2.VariationMove], line: Line) -> str:
    offered = [
        line_text((*line, number, rank))
        for number, move in enumerate(moves, 1)
        for rank in range(1, len(move.variations) + 1)
    ]
    return ("its lines there are " + ", ".join(offered[:10])) if offered else "it has none there."
