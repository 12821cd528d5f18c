"""The fold: a game's events in, its position at any revision out.

A `Position` is everything the move history determines at one revision: the table (which
game, who plays, how chance is recorded), the game state, the moves in effect and the moves
that can be redone. It is immutable; `record`, `undo` and `redo` return new positions, and
`advance` applies one stored event. The same functions validate a request in the service
before it is appended and rebuild a game from its stream, so the two can never disagree.

Undo and redo (stated once, here): undo takes back the last move in effect; redo re-applies
the most recently undone move while nothing new was recorded; recording a move clears redo.

Amending (`amend`) corrects a move in effect in the middle of the history: it is replaced,
deleted, or a move is inserted before it, and every later move in effect is re-applied in
order on the corrected history. A move keeps the revision that first recorded it as its
name through amendments (a move an amendment puts in is named by the amendment's revision),
so undo, redo and annotations keep naming the same moves. An amendment clears redo, as
recording a move does: a move it replaced or dropped never comes back by redo.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, TypeVar

from google.protobuf.message import Message

from tablelog.replay.copying import maker
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    TERMINAL,
    Game,
    GameOver,
    HistoryError,
    IllegalMove,
    InvalidSetup,
    NotYourTurn,
    RulesError,
    seats_named,
)
from tablelog.replay.registry import find_game, rules_recorded_under
from tablelog.v1 import events_pb2, game_pb2

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Link(Generic[T]):
    """A persistent stack: pushing shares the tail, so a position costs O(1) per move."""

    head: T
    tail: Link[T] | None = None

    def __iter__(self) -> Iterator[T]:
        node: Link[T] | None = self
        while node is not None:
            yield node.head
            node = node.tail


class Status(enum.Enum):
    IN_PROGRESS = "in progress"
    ENDED = "ended"
    ABANDONED = "abandoned"
    DELETED = "deleted"
    """Deleted by the club's owner (a GameDeleted tombstone): kept, closed to every change."""


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Table:
    """A game as it was created: the rules, the players, the mode, the options and the
    component data, all taken from the GameCreated event."""

    game: Game[Any, Any]
    created: events_pb2.GameCreated
    players: tuple[str, ...]
    options: Message
    components: Mapping[str, game_pb2.ComponentFile]
    initial: Any = field(default=None, compare=False, repr=False)
    """The state the game is set up in: every later state is made from it, so what they
    keep of it is the same object (`tablelog.replay.snapshots` writes such parts by reference)."""

    @classmethod
    def from_created(cls, created: events_pb2.GameCreated) -> Table:
        game = rules_recorded_under(find_game(created.game), created.rules_version)
        players = tuple(p.name for p in created.players)
        if not game.min_players <= len(players) <= game.max_players:
            raise InvalidSetup(
                "PLAYER_COUNT",
                f"{game.title} is for {game.min_players} to {game.max_players} players, "
                f"not {len(players)}.",
            )
        if created.mode not in game.modes:
            raise InvalidSetup("MODE", f"{game.title} cannot be recorded in that mode.")
        chosen = created.options.WhichOneof("game")
        if chosen not in (None, game.oneof_field):
            raise InvalidSetup("OPTIONS", f"Those are options of {chosen}, not of {game.name}.")
        options = getattr(created.options, game.oneof_field)
        components = {c.name: c for c in created.components}
        initial = game.setup(players, options, created.mode, components)
        return cls(game, created, players, options, components, initial)

    @property
    def mode(self) -> game_pb2.Mode.ValueType:
        return self.created.mode

    def unwrap(self, move: game_pb2.Move) -> Message:
        """The game's own move inside the envelope; refuses another game's move."""
        chosen = move.WhichOneof("game")
        if chosen != self.game.oneof_field:
            raise IllegalMove(
                "WRONG_GAME",
                f"This is a game of {self.game.title}; that is not one of its moves.",
            )
        inner: Message = getattr(move, self.game.oneof_field)
        return inner

    def wrap(self, inner: Message, seat: int | None = None) -> game_pb2.Move:
        move = game_pb2.Move() if seat is None else game_pb2.Move(seat=seat)
        getattr(move, self.game.oneof_field).CopyFrom(inner)
        return move

    def wrap_view(self, view: Message) -> game_pb2.GameView:
        wrapped = game_pb2.GameView()
        getattr(wrapped, self.game.oneof_field).CopyFrom(view)
        return wrapped

    def seat_name(self, seat: int) -> str:
        return self.players[seat] if 0 <= seat < len(self.players) else f"seat {seat}"


@dataclass(frozen=True, slots=True)
class Applied:
    """A move in effect (or, on the redo stack, one that was undone)."""

    revision: int
    """The revision of the MoveRecorded event that first recorded it (or of the MoveAmended
    that put it into the history): the move's name, kept through undo, redo and amends."""
    move: game_pb2.Move
    notation: str
    before: Any
    after: Any
    chance: bool = False
    """A move of the table (a reveal, draw or deal) rather than a player's."""


@dataclass(frozen=True, slots=True)
class Position:
    table: Table
    state: Any
    revision: int
    sequence: int
    status: Status = Status.IN_PROGRESS
    applied: Link[Applied] | None = None
    undone: Link[Applied] | None = None
    move_count: int = 0
    result: game_pb2.GameResult | None = field(default=None)
    chance_count: int = 0
    """The chance moves in effect (setup reveals included): dealt mode numbers its draws
    by it, so a move taken back and played again is dealt the same outcome."""

    @property
    def game(self) -> Game[Any, Any]:
        return self.table.game

    def to_move(self) -> int:
        if self.status is not Status.IN_PROGRESS:
            return TERMINAL
        return self.table.game.to_move(self.state)

    def moves(self) -> list[Applied]:
        """The moves in effect, first to last."""
        return list(reversed(list(self.applied))) if self.applied else []

    @property
    def can_undo(self) -> bool:
        reopenable = self.status is Status.ENDED and self.table.mode != DEALT
        return self.applied is not None and (self.status is Status.IN_PROGRESS or reopenable)

    @property
    def can_redo(self) -> bool:
        return self.undone is not None and self.status is Status.IN_PROGRESS


_link: Final = maker(Link)
_applied: Final = maker(Applied)
_position: Final = maker(Position)
"""Built per move by the fold and the record's reader (`tablelog.replay.copying`: a frozen
dataclass's `__init__` costs twice as much)."""


def start(created: events_pb2.GameCreated, revision: int = 1, sequence: int = 1) -> Position:
    """The position right after a game is created."""
    table = Table.from_created(created)
    recorded_under = created.rules_version
    if recorded_under and recorded_under != table.game.rules_version:
        # A rules change that alters outcomes gets a new version; old games then need an
        # upcaster here rather than being folded by rules they were not recorded under.
        raise HistoryError(
            "RULES_VERSION",
            f"This game was recorded under rules {recorded_under}; this engine has "
            f"{table.game.rules_version}.",
        )
    return Position(table=table, state=table.initial, revision=revision, sequence=sequence)


def check_move(position: Position, move: game_pb2.Move) -> Any:
    """Validate `move` against whose decision it is and the rules; the state after it."""
    return _checked(position, move)[0]


def _checked(position: Position, move: game_pb2.Move) -> tuple[Any, bool]:
    """`check_move`, and whether the move is the table's (a chance move)."""
    table = position.table
    who = position.to_move()
    if who == TERMINAL:
        raise GameOver()
    inner = table.unwrap(move)
    if move.HasField("seat") and not 0 <= move.seat < len(table.players):
        raise IllegalMove(
            "UNKNOWN_SEAT",
            f"There is no seat {move.seat}: the players are {seats_named(table.players)}.",
        )
    if move.HasField("seat") and move.seat != who:
        if who == CHANCE:
            raise NotYourTurn(
                f"It is not {table.seat_name(move.seat)}'s turn: the table must reveal first."
            )
        raise NotYourTurn(
            f"It is {table.seat_name(who)}'s turn, not {table.seat_name(move.seat)}'s."
        )
    return _applied_by_rules(table, position.state, who, inner)


def _applied_by_rules(table: Table, state: Any, who: int, inner: Message) -> tuple[Any, bool]:
    """The game's own move `inner` checked against whose decision it is in `state` (`who`,
    a player or CHANCE) and applied by the rules: the state after it, and whether it is a
    chance move."""
    game = table.game
    chance = game.is_chance(inner)
    if who == CHANCE and not chance:
        raise IllegalMove(
            "REVEAL_PENDING",
            "The table must first record what was revealed before anyone plays.",
        )
    if who != CHANCE and chance:
        raise IllegalMove(
            "NO_REVEAL_PENDING",
            f"Nothing is waiting to be revealed: it is {table.seat_name(who)}'s turn.",
        )
    return game.apply(state, inner), chance


def record(
    position: Position, move: game_pb2.Move, notation: str, sequence: int | None = None
) -> Position:
    """The position after recording `move` (validated); clears the redo stack.

    `sequence` is the stored event's, when folding; a position being checked before an
    append keeps the sequence it had."""
    after, chance = _checked(position, move)
    applied = _applied(position.revision + 1, move, notation, position.state, after, chance)
    return recorded(position, applied, sequence)


def read_move(
    table: Table, state: Any, revision: int, inner: Message, notation: str, who: int
) -> Applied:
    """`record` of a move read from text, as the game's own move `inner` (wrapped here,
    naming no seat) in `state`, a game in progress at `revision`, when the reader has
    already asked whose decision it is (`who`: `game.to_move(state)`): the same checks,
    and the move as `record` applies it, without asking again, unwrapping what it has just
    wrapped, or building a position per move (the record's reader runs this per move and
    builds one position for its main line, `recorded_run`)."""
    if who == TERMINAL:
        raise GameOver()
    after, chance = _applied_by_rules(table, state, who, inner)
    return _applied(revision + 1, table.wrap(inner), notation, state, after, chance)


def recorded(position: Position, applied: Applied, sequence: int | None = None) -> Position:
    """The position after `applied`, a move `record` has checked in `position` (its
    `before` is `position.state`): nothing is checked again."""
    # Built directly rather than with dataclasses.replace: this is the fold's hot path.
    return _position(
        position.table,
        applied.after,
        applied.revision,
        position.sequence if sequence is None else sequence,
        position.status,
        _link(applied, position.applied),
        None,
        position.move_count + 1,
        position.result,
        position.chance_count + applied.chance,
    )


def recorded_run(position: Position, run: Sequence[Applied], sequence: int) -> Position:
    """The position after `run`, moves `record` has checked one after the other from
    `position` (the first one's `before` is `position.state`, each next one's the `after`
    of the one before), the last stored as event `sequence`: nothing is checked again, and
    only the last position is built (`recorded` of each in turn, without the positions
    between)."""
    link = position.applied
    chances = position.chance_count
    for applied in run:
        link = _link(applied, link)
        chances += applied.chance
    last = run[-1]
    return _position(
        position.table,
        last.after,
        last.revision,
        sequence,
        position.status,
        link,
        None,
        position.move_count + len(run),
        position.result,
        chances,
    )


def undo(position: Position) -> Position:
    """The position with the last move in effect taken back.

    A game that ended in table mode can still be corrected (a mistyped final move is as
    likely as any other): taking back the move that ended it reopens the game. An abandoned
    game, or a dealt game whose seed the end revealed, is closed for good."""
    if position.status is Status.ABANDONED:
        raise GameOver("The game was abandoned: its moves can no longer be taken back.")
    if position.status is Status.DELETED:
        raise GameOver("The game was deleted: its moves can no longer be taken back.")
    if position.status is Status.ENDED and position.table.mode == DEALT:
        raise GameOver(
            "The game is over and its dealing seed is revealed: its moves can no longer be "
            "taken back."
        )
    if position.applied is None:
        raise HistoryError("NOTHING_TO_UNDO", "There is no move to take back.")
    last = position.applied.head
    return replace(
        position,
        state=last.before,
        revision=position.revision + 1,
        applied=position.applied.tail,
        undone=Link(last, position.undone),
        move_count=position.move_count - 1,
        chance_count=position.chance_count - last.chance,
        status=Status.IN_PROGRESS,
        result=None,
    )


def redo(position: Position) -> Position:
    """The position with the most recently undone move re-applied."""
    if position.status is not Status.IN_PROGRESS:
        raise GameOver("The game is over: nothing can be redone.")
    if position.undone is None:
        raise HistoryError(
            "NOTHING_TO_REDO", "There is no undone move to redo (a new move clears redo)."
        )
    again = position.undone.head
    return replace(
        position,
        state=again.after,
        revision=position.revision + 1,
        applied=Link(again, position.applied),
        undone=position.undone.tail,
        move_count=position.move_count + 1,
        chance_count=position.chance_count + again.chance,
    )


def end(position: Position, result: game_pb2.GameResult, abandoned: bool = False) -> Position:
    return replace(
        position,
        revision=position.revision + 1,
        status=Status.ABANDONED if abandoned else Status.ENDED,
        result=result,
    )


REPLACE: Final = events_pb2.AMEND_KIND_REPLACE
INSERT: Final = events_pb2.AMEND_KIND_INSERT
DELETE: Final = events_pb2.AMEND_KIND_DELETE


@dataclass(frozen=True, slots=True)
class TailBreak:
    """The first later move that no longer applies once a move before it is amended."""

    applied: Applied
    """The move as it stood before the amendment (its revision, notation and states)."""
    error: RulesError
    """The rules' refusal of it in the corrected history."""
    dropped: int
    """How many moves dropping the tail from it takes out (it included)."""


@dataclass(frozen=True, slots=True)
class Amended:
    """A corrected history: the position after the amendment (with the tail dropped from
    `broken`, when a later move no longer applies), the canonical notation of the move put
    in, and the move taken out."""

    position: Position
    notation: str
    removed: Applied | None
    broken: TailBreak | None


def amended_move(position: Position, revision: int) -> Applied:
    """The move in effect named by `revision` (the revision that recorded it)."""
    for applied in position.applied or ():
        if applied.revision == revision:
            return applied
    raise HistoryError(
        "MOVE_NOT_IN_EFFECT",
        f"Revision {revision} is not a move in effect: only the moves of the current history "
        "can be amended (an undone, replaced or dropped move, an undo or an annotation cannot).",
    )


def _put(position: Position, name: int, move: game_pb2.Move) -> Position:
    """`position` with `move` applied (validated) under the name `name` and written in its
    canonical text there; the position's revision is kept."""
    after, chance = _checked(position, move)
    notation = position.game.format(position.table.unwrap(move), position.state)
    applied = Applied(name, move, notation, position.state, after, chance)
    return Position(
        position.table,
        after,
        position.revision,
        position.sequence,
        Status.IN_PROGRESS,
        Link(applied, position.applied),
        None,
        position.move_count + 1,
        None,
        position.chance_count + chance,
    )


def check_amendable(position: Position) -> None:
    """Refuse (GameOver) to correct a game that is closed: abandoned, or dealt and ended
    (its seed revealed). A game that ended in table mode can be corrected, as by undo."""
    if position.status is Status.ABANDONED:
        raise GameOver("The game was abandoned: its moves can no longer be corrected.")
    if position.status is Status.DELETED:
        raise GameOver("The game was deleted: its moves can no longer be corrected.")
    if position.status is Status.ENDED and position.table.mode == DEALT:
        raise GameOver(
            "The game is over and its dealing seed is revealed: its moves can no longer be "
            "corrected."
        )


def history_before(position: Position, revision: int) -> Position:
    """The history an amendment of the move in effect named `revision` starts from: the
    moves in effect before that move, in the state before it (the position's revision and
    sequence kept). `put_amendment` puts the amendment's move there."""
    return _cut(position, amended_move(position, revision))[0]


def _cut(position: Position, target: Applied) -> tuple[Position, list[Applied]]:
    """`history_before` the move in effect `target`, and the moves in effect after it,
    first to last."""
    later: list[Applied] = []
    node = position.applied
    while node is not None and node.head is not target:
        later.append(node.head)
        node = node.tail
    assert node is not None
    later.reverse()
    before = Position(
        position.table,
        target.before,
        position.revision,
        position.sequence,
        Status.IN_PROGRESS,
        node.tail,
        None,
        position.move_count - len(later) - 1,
        None,
        position.chance_count - target.chance - sum(a.chance for a in later),
    )
    return before, later


def put_amendment(
    before: Position, kind: int, target: Applied, move: game_pb2.Move | None
) -> Position:
    """`before` (`history_before` the move in effect `target`) with the move an amendment
    of kind `kind` puts in: `move`, checked by the rules there and named by the
    amendment's revision; `before` itself for a deletion (`move` None). In dealt mode the
    server's chance moves are neither typed in nor amended (DEALT_BY_SERVER).

    Everything an amendment checks of its own move, in the order `amend` checks it: the
    service checks it again here in the position as the caller may know it, to word a
    refusal (`tablelog.service.recording.refusals`)."""
    table = before.table
    if table.mode == DEALT and (
        (move is not None and table.game.is_chance(table.unwrap(move)))
        or (kind != INSERT and target.chance)
    ):
        raise IllegalMove(
            "DEALT_BY_SERVER",
            "This game is dealt by the server: its reveals and draws are not typed in or amended.",
        )
    return before if move is None else _put(before, before.revision + 1, move)


def amend(
    position: Position,
    kind: int,
    revision: int,
    move: game_pb2.Move | None = None,
    sequence: int | None = None,
) -> Amended:
    """The history corrected at the move in effect named `revision`: replaced by `move`
    (REPLACE), `move` inserted before it (INSERT), or deleted (DELETE). Every later move
    in effect is then re-checked with the rules in order, as it was recorded (the seat it
    named, if it named one; otherwise it is the move of whoever is now to move), and
    written again in its new position. When one no longer applies, the position keeps the
    moves before it and `broken` says which it is and why: the caller refuses the
    amendment, or drops that tail.

    A game that ended in table mode is reopened, as by undo (the caller ends it again when
    the corrected history is over); an abandoned game and a dealt game whose end revealed
    its seed are closed. In dealt mode the server's chance moves cannot be amended, nor
    typed in, and a dealt outcome later in the history stays as dealt; in table mode a
    reveal later in the history stays as it was seen."""
    check_amendable(position)
    if kind not in (REPLACE, INSERT, DELETE):
        raise HistoryError("AMEND_KIND", "An amendment replaces, inserts or deletes a move.")
    if (move is None) != (kind == DELETE):
        raise HistoryError(
            "AMEND_MOVE", "A replacement or an insertion needs a move; a deletion none."
        )
    target = amended_move(position, revision)
    before, later = _cut(position, target)
    name = position.revision + 1
    corrected = put_amendment(before, kind, target, move)
    notation = ""
    if move is not None:
        assert corrected.applied is not None
        notation = corrected.applied.head.notation
    tail = [target, *later] if kind == INSERT else later
    broken = None
    for index, applied in enumerate(tail):
        try:
            corrected = _put(corrected, applied.revision, applied.move)
        except RulesError as refused:
            broken = TailBreak(applied, refused, len(tail) - index)
            break
    return Amended(
        replace(
            corrected,
            revision=name,
            sequence=position.sequence if sequence is None else sequence,
        ),
        notation,
        None if kind == INSERT else target,
        broken,
    )


HISTORY_BODIES = frozenset(
    {
        "game_created",
        "move_recorded",
        "move_undone",
        "move_redone",
        "move_amended",
        "game_ended",
        "game_abandoned",
    }
)


def advance(position: Position, event: events_pb2.Event, strict: bool = False) -> Position:
    """Apply one stored event after `position` (its sequence and revision must follow on).

    Every event is checked against the position it claims to follow: an undo or redo must
    name the move it takes back or re-applies, a GameEnded must come at the end with the
    engine's result, a dealt move only in dealt mode. `strict` adds the checks that cost a
    formatting per move (the stored notation is the canonical text of the stored move), for
    verification and imports rather than every read."""
    body = event.WhichOneof("body")
    if event.sequence != position.sequence + 1:
        raise HistoryError(
            "SEQUENCE_GAP",
            f"Event {event.sequence} does not follow event {position.sequence}.",
        )
    if position.status is Status.DELETED:
        # The tombstone is a stream's last event: one event after it is a history that
        # was changed after the game was deleted.
        raise HistoryError("AFTER_DELETION", f"Event {event.sequence} follows the game's deletion.")
    if body not in HISTORY_BODIES:
        if event.revision != position.revision:
            raise HistoryError(
                "REVISION_MISMATCH",
                f"Event {event.sequence} claims revision {event.revision}, "
                f"the history is at {position.revision}.",
            )
        if body == "game_deleted":
            # A deletion changes no move (it keeps the revision, like an annotation) but
            # closes the game for good, whatever its status was.
            return replace(position, sequence=event.sequence, status=Status.DELETED)
        return replace(position, sequence=event.sequence)
    if event.revision != position.revision + 1:
        raise HistoryError(
            "REVISION_GAP",
            f"Event {event.sequence} has revision {event.revision}; "
            f"expected {position.revision + 1}.",
        )
    if body == "move_recorded":
        recorded = event.move_recorded
        if recorded.dealt and position.table.mode != DEALT:
            raise HistoryError(
                "DEALT_IN_TABLE_MODE",
                f"Event {event.sequence} claims a dealt move in a game recorded in table mode.",
            )
        if strict:
            _check_notation(position, event)
        return record(position, recorded.move, recorded.notation, event.sequence)
    if body == "move_undone":
        _check_names(event, "takes back", position.applied, event.move_undone.undone_revision)
        after = undo(position)
    elif body == "move_redone":
        _check_names(event, "re-applies", position.undone, event.move_redone.redone_revision)
        after = redo(position)
    elif body == "move_amended":
        return _amended(position, event, strict)
    elif body == "game_ended":
        _check_ending(position, event)
        after = end(position, event.game_ended.result)
    elif body == "game_abandoned":
        after = end(position, position.game.result(position.state), abandoned=True)
    else:
        raise HistoryError("DUPLICATE_CREATION", f"Event {event.sequence} creates the game again.")
    return replace(after, sequence=event.sequence)


def fold(
    events: Iterable[events_pb2.Event], until_revision: int | None = None, strict: bool = False
) -> Position:
    """The position at `until_revision` (default: the last event), rebuilt from the events.

    Events after that revision are not read, so time travel costs only the prefix. `strict`
    also checks each stored notation (see `advance`).
    """
    iterator = iter(events)
    first = next(iterator, None)
    if first is None or first.WhichOneof("body") != "game_created":
        raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
    if first.sequence != 1 or first.revision != 1:
        raise HistoryError("SEQUENCE_GAP", "A game's first event must be sequence 1, revision 1.")
    position = start(first.game_created)
    for event in iterator:
        if until_revision is not None and event.revision > until_revision:
            break
        position = advance(position, event, strict)
    return position


def _check_names(
    event: events_pb2.Event, verb: str, stack: Link[Applied] | None, named: int
) -> None:
    """An undo or redo must name the revision of the move it actually takes back or redoes."""
    actual = stack.head.revision if stack is not None else 0
    if named != actual:
        raise HistoryError(
            "WRONG_REVISION_NAMED",
            f"Event {event.sequence} names revision {named} as the move it {verb}; "
            f"that move is revision {actual}.",
        )


def _amended(position: Position, event: events_pb2.Event, strict: bool) -> Position:
    """A stored MoveAmended: the corrected history, which must drop exactly the tail that no
    longer applies (nothing when all of it does)."""
    body = event.move_amended
    move = body.move if body.kind != DELETE else None
    amended = amend(position, body.kind, body.amended_revision, move, event.sequence)
    broken = amended.broken
    dropped = (broken.applied.revision, broken.dropped) if broken else (0, 0)
    if (body.dropped_from_revision, body.dropped_moves) != dropped:
        refusal = f": {broken.error.message}" if broken else ""
        raise HistoryError(
            "WRONG_TAIL_DROPPED",
            f"Event {event.sequence} drops {body.dropped_moves} moves from revision "
            f"{body.dropped_from_revision}; the corrected history drops {dropped[1]} from "
            f"revision {dropped[0]}{refusal}",
        )
    if strict:
        removed = amended.removed.notation if amended.removed else ""
        if (body.notation, body.removed_notation) != (amended.notation, removed):
            raise HistoryError(
                "WRONG_NOTATION",
                f"Event {event.sequence} stores {body.notation!r} for the move "
                f"{amended.notation!r}, or {body.removed_notation!r} for the move it "
                f"takes out ({removed!r}).",
            )
    return amended.position


def _check_ending(position: Position, event: events_pb2.Event) -> None:
    """A GameEnded must come when the rules say the game is over, with their result."""
    game = position.game
    if position.status is not Status.IN_PROGRESS or game.to_move(position.state) != TERMINAL:
        raise HistoryError("PREMATURE_END", f"Event {event.sequence} ends a game that is not over.")
    if event.game_ended.result != game.result(position.state):
        raise HistoryError(
            "WRONG_RESULT",
            f"Event {event.sequence} records a result the rules do not give.",
        )


def _check_notation(position: Position, event: events_pb2.Event) -> None:
    """The stored notation is the canonical text of the stored move in its position."""
    recorded = event.move_recorded
    table = position.table
    canonical = table.game.format(table.unwrap(recorded.move), position.state)
    if recorded.notation != canonical:
        raise HistoryError(
            "WRONG_NOTATION",
            f"Event {event.sequence} stores {recorded.notation!r} for the move {canonical!r}.",
        )


def pick_outcome(outcomes: Sequence[tuple[T, int]], ticket: int) -> T:
    """The chance outcome that `ticket` (0 <= ticket < total weight) falls on.

    Dealt mode draws a uniform ticket from its seeded PRNG; weights are counts of unseen
    components, so the draw matches a shuffled deck or a bag."""
    for outcome, weight in outcomes:
        if ticket < weight:
            return outcome
        ticket -= weight
    raise ValueError("ticket is beyond the total weight of the outcomes")
