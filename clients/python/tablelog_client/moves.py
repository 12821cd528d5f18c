"""The moves of a game as a person counts them: the players' moves numbered as the text
record numbers them (`17. Ann: take w u g`; the table's reveals and the server's deals are
not numbered, marked `*`), each with the revision that put it in, which is what the API
takes. `tablelog history`, `annotate`, `amend`, `insert`, `delete` and the shell read and
name moves through here, so one game has one numbering wherever a person reads it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tablelog.v1 import events_pb2, service_pb2
from tablelog_client.common import UsageError
from tablelog_client.sdk import Client
from tablelog_client.words import Narrator

T = TypeVar("T")


@dataclass(frozen=True)
class MoveInEffect:
    """A move that stands: its number among the players' moves (None: the table's), the
    revision that names it, its words ("Ann: take w u g") and whether the server dealt it."""

    number: int | None
    revision: int
    words: str
    dealt: bool

    @property
    def table(self) -> bool:
        """A table event (a reveal typed in, or the server's deal), not a player's move."""
        return self.number is None

    @property
    def label(self) -> str:
        """`17.` for a player's move, `*` for the table's, as the text record writes them."""
        return "*" if self.number is None else f"{self.number}."

    def named(self) -> str:
        """ "move 17. (Ann: take w u g, revision 45)", or "table event (...)"."""
        what = "table event" if self.table else f"move {self.label}"
        return f"{what} ({self.words}, revision {self.revision})"


def numbered(move: MoveInEffect | None) -> dict[int, int]:
    """The number of `move` by its revision, for the answer to a change of it
    (`change_lines`): none for the table's event or a revision where no move stands."""
    if move is None or move.number is None:
        return {}
    return {move.revision: move.number}


def amended_standing(
    standing: list[tuple[int, str, bool]], event: events_pb2.Event, words: str
) -> list[tuple[int, str, bool]]:
    """The moves that stand after an amendment: the move named `amended_revision` replaced,
    preceded or taken out, then the tail it dropped; the move it puts in is named by the
    amendment's revision, in `words`."""
    amended = event.move_amended
    standing = list(standing)
    at = next((i for i, entry in enumerate(standing) if entry[0] == amended.amended_revision), None)
    if at is not None:
        if amended.kind == events_pb2.AMEND_KIND_INSERT:
            standing.insert(at, (event.revision, words, False))
        elif amended.kind == events_pb2.AMEND_KIND_DELETE:
            del standing[at]
        else:
            standing[at] = (event.revision, words, False)
    if amended.dropped_moves:
        first = next(
            (i for i, entry in enumerate(standing) if entry[0] == amended.dropped_from_revision),
            len(standing),
        )
        del standing[first : first + amended.dropped_moves]
    return standing


def moves_in_effect(client: Client, game_id: str, players: Sequence[str]) -> list[MoveInEffect]:
    """The moves that stand (undone ones out, redone ones back), named and numbered, from
    a replay."""
    narrator = Narrator(players)
    said: dict[int, tuple[str, bool]] = {}
    standing: list[tuple[int, str, bool]] = []
    for frame in client.replay(game_id):
        event = frame.event
        body = event.WhichOneof("body")
        if body == "move_recorded":
            said[event.revision] = (
                narrator.describe(event, frame.detail),
                event.move_recorded.dealt,
            )
            standing.append((event.revision, *said[event.revision]))
        elif body == "move_undone":
            undone = event.move_undone.undone_revision
            standing = [entry for entry in standing if entry[0] != undone]
        elif body == "move_redone":
            redone = event.move_redone.redone_revision
            # A redone move keeps the revision that recorded it: that names it for
            # annotations and amendments.
            standing.append((redone, *said.get(redone, (f"revision {redone}", False))))
        elif body == "move_amended":
            narrator.describe(event, frame.detail)
            # The move it puts in is named by its revision: an undo and redo of it too.
            said[event.revision] = (narrator.listed[event.revision], False)
            standing = amended_standing(standing, event, narrator.listed[event.revision])
        narrator.follow(frame.state.to_move)
    moves = []
    number = 0
    for revision, words, dealt in standing:
        table = dealt or narrator.movers.get(revision) == ""
        if not table:
            number += 1
        moves.append(MoveInEffect(None if table else number, revision, words, dealt))
    return moves


MOVE_REFERENCE = re.compile(r"(?:[rR](?P<revision>\d+)|(?P<plain>\d+)|(?P<number>\d+)\.{1,3})")
"""`r45` (a revision), `17.` or `17...` (the 17th players' move, as the text record
numbers it), or `45` (a revision, as before move numbers were taken)."""

MOVE_HELP = (
    "the move: its number as the text record counts the players' moves (`17.` or `17...`), "
    "or its revision (`r45`, or plain `45`)"
)


def find_move(text: str, moves: Sequence[MoveInEffect]) -> tuple[int, MoveInEffect | None]:
    """The revision `text` names, and the standing move it is (None: no standing move has
    that revision; the server says what it is)."""
    match = MOVE_REFERENCE.fullmatch(text.strip())
    if match is None:
        raise UsageError(f"{text!r} names no move: write {MOVE_HELP}")
    if match["number"] is not None:
        wanted = int(match["number"])
        for move in moves:
            if move.number == wanted:
                return move.revision, move
        played = sum(1 for move in moves if not move.table)
        raise UsageError(f"there is no move {wanted}.: the players have made {played} moves")
    revision = int(match["revision"] or match["plain"])
    return revision, next((move for move in moves if move.revision == revision), None)


@dataclass(frozen=True)
class Step(Generic[T]):
    """One row of a game as a person reads it: one event, or the setup's table events
    folded into one (`held`, from `SetupFold`)."""

    first: int
    last: int
    """The revisions it covers (one for a single event)."""
    items: tuple[T, ...]
    """What the reader passed for each event (words, a replay frame, a move in effect)."""
    words: str
    """The event's own words, or "setup: 15 table events" for several folded."""
    held: bool = False
    """Whether it was held as the setup's (one table event held alone keeps its words)."""

    @property
    def folded(self) -> bool:
        return len(self.items) > 1

    @property
    def revisions(self) -> str:
        """ "revision 17", or "revisions 2 to 16" for a folded setup."""
        if self.first == self.last:
            return f"revision {self.first}"
        return f"revisions {self.first} to {self.last}"


class SetupFold(Generic[T]):
    """The one place the setup is folded: the table's events before the first player's move
    (the setup's reveals, or the server's deals) held while no player has moved (`open`),
    then given as one step, "setup: 15 table events" (one held event alone keeps its own
    words). `watch`, `replay`, `history` and the shell's catch-up all read a game through
    it, so the setup reads alike everywhere; each event is still one event in the log."""

    def __init__(self, open_: bool) -> None:
        self.open = open_
        self._held: list[tuple[int, str, T]] = []

    def take(self, revision: int, words: str, item: T, table: bool) -> list[Step[T]]:
        """The steps ready once this event is read: none while it is held as the setup's;
        else what was held (folded), then the event itself. Any other event than a table
        event closes the setup (the creation, revision 1, does not)."""
        if self.open and table:
            self._held.append((revision, words, item))
            return []
        if revision > 1:
            self.open = False
        return [*self.flush(), Step(revision, revision, (item,), words)]

    def flush(self) -> list[Step[T]]:
        """What is held, as one step (a pause in a watch, the end of a replay)."""
        held, self._held = self._held, []
        if not held:
            return []
        items = tuple(item for _, _, item in held)
        words = held[0][1] if len(held) == 1 else f"setup: {len(held)} table events"
        return [Step(held[0][0], held[-1][0], items, words, held=True)]


def step_words(narrator: Narrator, frame: service_pb2.ReplayGameResponse) -> tuple[str, bool]:
    """A replayed or watched step's words, a player's move numbered as the text record
    numbers it ("17. Ann: take w u g", and an undo or redo of it "undid 17. Ann's take w u
    g (revision 45)", as the answers to changes say it), and whether it is a table event (a
    reveal typed in, or the server's deal), which `SetupFold` may fold into the setup."""
    event = frame.event
    body = event.WhichOneof("body")
    if body == "move_amended":  # the moves after it may have other numbers now
        narrator.numbers.clear()
    elif body == "move_redone" and frame.move_number:  # "redid 2. Bob's take r r"
        narrator.numbers[event.move_redone.redone_revision] = frame.move_number
    words = narrator.describe(event, frame.detail)
    recorded = body == "move_recorded"
    table = recorded and (event.move_recorded.dealt or narrator.movers.get(event.revision) == "")
    if recorded and frame.move_number:
        words = f"{frame.move_number}. {words}"
        # An undo of it names it by its number too: an undo takes back the last move in
        # effect, whose number only an amendment before it changes.
        narrator.numbers[event.revision] = frame.move_number
    return words, table


def history_lines(moves: Sequence[MoveInEffect]) -> list[str]:
    """The moves as `history` prints them, numbered as the text record numbers them; the
    table's setup (its events before the first player's move) folded into one row."""
    setup: SetupFold[MoveInEffect] = SetupFold(True)
    steps = [
        step for move in moves for step in setup.take(move.revision, move.words, move, move.table)
    ]
    lines = []
    for step in [*steps, *setup.flush()]:
        label = "*" if step.held else step.items[0].label
        lines.append(f"{label:>5} {step.words}  ({step.revisions})")
    return lines or ["no moves yet"]
