"""The surface every game implements, and the errors the rules core raises.

A game is a module-level object satisfying `Game`: it is found by name through
`tablelog.replay.registry` and driven by `tablelog.replay.fold`. Moves, options, views and results
are the protobuf messages of `proto/tablelog/v1/`, so the wire, the store and the fold share one
schema; the state is the game's own immutable value.

Purity: nothing under `replay/` does network, storage, clock or randomness (a test enforces
it). A game may read its own package's data files, and only to offer default components.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from google.protobuf.message import Message

from tablelog.replay.touch import Touches
from tablelog.v1 import game_pb2

# Who decides next (`Game.to_move`): a seat index >= 0, or one of these.
CHANCE: Final = -1
"""The table must reveal, draw or deal something: a chance move is expected."""
TERMINAL: Final = -4
"""The game is over: no move is accepted."""

# Who looks at a state (`Game.view`): a seat index >= 0, or one of these.
SPECTATOR: Final = -1
"""Public information only."""
FULL: Final = None
"""Everything, hidden information included (admins, the audit, tests)."""

Viewer = int | None

TABLE: Final = game_pb2.MODE_TABLE
DEALT: Final = game_pb2.MODE_DEALT


MESSAGE_LIMIT: Final = 300
"""The longest refusal message: whatever input a message quotes, it never comes back in full."""


def clip(text: str, limit: int = 40) -> str:
    """`text` shortened to `limit` characters, its middle replaced by "…" (the start and the
    end of a quoted input say most about it)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


def seats_named(players: Sequence[str]) -> str:
    """The players with their seat numbers, for a message about a seat that names none:
    "Ann (seat 0), Bob (seat 1) and Cleo (seat 2)"."""
    named = [f"{name} (seat {seat})" for seat, name in enumerate(players)]
    return ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)


def counted(count: int, noun: str) -> str:
    """A count with its noun agreeing in number, as a player says it: "1 card", "2 cards",
    "0 ducats" (every noun the games count takes an -s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def spoken_list(items: Sequence[str]) -> str:
    """Items as a sentence lists them: "red", "red and blue", "white, blue and green"."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def no_such_seat(what: str, seat: int, players: Sequence[str]) -> str:
    """A refusal of a seat number past the players: "first_player is seat 5, but the
    players are Ann (seat 0) and Bob (seat 1)."."""
    return f"{what} is seat {seat}, but the players are {seats_named(players)}."


class RulesError(Exception):
    """Base class of everything the rules core refuses. The message is clipped to
    MESSAGE_LIMIT characters, so a refusal that quotes a hostile input stays small."""

    code: str

    def __init__(self, code: str, message: str) -> None:
        message = clip(message, MESSAGE_LIMIT)
        super().__init__(message)
        self.code = code
        self.message = message


class IllegalMove(RulesError):
    """A well-formed move that the rules forbid in this state.

    `code` is a stable, rule-specific reason (``TAKE_TWO_NEEDS_FOUR``); `message` says the
    rule in a player's words ("Take 2 needs at least 4 red tokens in the bank; there are 3.").
    """


class NotYourTurn(IllegalMove):
    """The move names a seat whose decision it is not."""

    def __init__(self, message: str) -> None:
        super().__init__("NOT_YOUR_TURN", message)


class GameOver(IllegalMove):
    """The game has ended; nothing more can be recorded."""

    def __init__(self, message: str = "The game is over: no more moves can be recorded.") -> None:
        super().__init__("GAME_OVER", message)


class NotationError(RulesError):
    """Text that does not read as a move of this game (before any rule is checked)."""

    def __init__(self, message: str, text: str = "") -> None:
        super().__init__("INVALID_NOTATION", message)
        self.text = clip(text, MESSAGE_LIMIT)


class AmbiguousNotation(NotationError):
    """Text that reads as more than one legal move; `candidates` lists them canonically."""

    def __init__(self, message: str, text: str, candidates: Sequence[str]) -> None:
        super().__init__(message, text)
        self.code = "AMBIGUOUS_NOTATION"
        self.candidates = tuple(candidates)


class InvalidSetup(RulesError):
    """Players, options or component files that a game cannot be created with."""


class HistoryError(RulesError):
    """An undo or redo that the move history does not allow, or an event log that is not a
    well-formed history (a gap in sequence numbers, an undo with nothing to undo)."""


StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT", bound=Message)


@dataclass(frozen=True, slots=True)
class OptionDoc:
    """One option of a game as a client sees it."""

    name: str
    description: str
    default: str


class Game(Protocol[StateT, MoveT]):
    """The rules of one game. Every method is pure and never mutates its arguments.

    `oneof_field` names the game's field in the `Move`, `GameOptions` and `GameView` oneofs
    of game.proto ("splendor"); `move_type`, `options_type` and `view_type` are its messages.
    """

    name: str
    title: str
    min_players: int
    max_players: int
    rules_version: str
    modes: tuple[game_pb2.Mode.ValueType, ...]
    oneof_field: str
    move_type: type[MoveT]
    options_type: type[Message]
    view_type: type[Message]
    option_docs: tuple[OptionDoc, ...]
    notation_doc: str
    reveals_all_at_end: bool
    """Whether the rules show everything recorded once the game has ended (the remaining
    missions, the tiles removed unseen, the coins behind the screens), so that every viewer
    may then see the full view. A dealt game reveals everything at its end whatever this
    says: its end publishes the seed every dealt outcome is drawn from."""

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        """The component files a new game uses unless the creator supplies others."""
        ...

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: game_pb2.Mode.ValueType,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> StateT:
        """The state before the first move; deterministic. Raises `InvalidSetup`."""
        ...

    def apply(self, state: StateT, move: MoveT) -> StateT:
        """The state after `move`; raises `IllegalMove` naming the rule broken."""
        ...

    def legal_moves(self, state: StateT) -> Sequence[MoveT]:
        """Every legal move (chance outcomes included when it is CHANCE's decision)."""
        ...

    def chance_outcomes(self, state: StateT) -> Sequence[tuple[MoveT, int]]:
        """When `to_move` is CHANCE: each possible outcome with its weight (how many unseen
        components produce it). Dealt mode draws from these; table mode checks against them."""
        ...

    def is_chance(self, move: MoveT) -> bool:
        """True for a move made by the table (a reveal, draw or deal), not by a player."""
        ...

    def visible_to(self, move: MoveT, state: StateT, viewer: Viewer) -> bool:
        """Whether `viewer` may see what `move`, recorded in `state`, says. False only for a
        move that deals hidden information (a blind-reserved card, a secret mission, a card
        drawn into a hand, a tile removed unseen) to anyone but the seat it goes to; FULL
        sees every move. Replays, live watching and move lists show such a move to other
        viewers only as "hidden"."""
        ...

    def hides_from(self, state: StateT, viewer: Viewer) -> bool:
        """Whether `state` holds something `viewer` may not see (another seat's hand or
        blind reserve, a tile removed unseen, hidden coins): then the legal moves of a
        decision that is not the viewer's own could name it, or betray it by what they leave
        out, and are not listed to that viewer. FULL is hidden nothing."""
        ...

    def redact(self, state: StateT, viewer: Viewer) -> StateT:
        """The state as `viewer` may know it: everything `hides_from` says it may not see
        replaced by what the rules hold for a component nobody has named (an unnamed blind
        reserve, an empty hand, an unknown mission, coins no price reaches). The service
        checks a refused move again in it, so that a refusal is worded from what the
        caller may see (`tablelog.service.recording.refusals`). FULL, or nothing hidden: `state`
        itself."""
        ...

    def to_move(self, state: StateT) -> int:
        """A seat index, CHANCE or TERMINAL."""
        ...

    def result(self, state: StateT) -> game_pb2.GameResult:
        """Scores with their breakdown, winners and tie-break (ONGOING while playing)."""
        ...

    def view(self, state: StateT, viewer: Viewer) -> Message:
        """What `viewer` may see: a seat, SPECTATOR, or FULL (None)."""
        ...

    def render(self, view: Message) -> str:
        """A readable text rendering of a view, for a terminal."""
        ...

    def picture(
        self,
        view: Message,
        *,
        last_move: MoveT | None = None,
        approximate: str = "",
        layout: str = "wide",
    ) -> str:
        """A self-contained SVG of a view, drawn with `tablelog.replay.picture`: hidden information
        face down, `last_move` (the move that led to this view, when given) highlighted,
        `approximate` (the note of component data recorded as approximate; empty: none)
        marked. `layout` (`tablelog.replay.picture.LAYOUTS`) is "wide", for a desktop's
        aspect, or "phone", for a phone's width in portrait (issue 25: a touchable at least
        44 CSS px fit to a 360-430 px screen where the game's geometry allows it); both
        mark the same touchables with the same ids and names. Pure and deterministic: the
        same arguments give the same text."""
        ...

    def parse(self, text: str, state: StateT) -> MoveT:
        """Read a move typed by a recorder; raises `NotationError` or `AmbiguousNotation`."""
        ...

    def format(self, move: MoveT, state: StateT) -> str:
        """The canonical text of `move` in `state`: `parse(format(m), s) == m`."""
        ...

    def undealt(self, move: MoveT, state: StateT) -> MoveT | Sequence[MoveT] | None:
        """`move`, made in `state` of a dealt game, as a table game records it (issue 26: a
        dealt game's text record imports as a table game): the same move, with what the
        table would have named when it came to light (the card of a blind reserve bought);
        None for a dealing a table game does not record (a blind reserve's card dealt face
        down, tiles removed unseen); several moves when the table records more there (the
        move that ends a Castello Methoni game, then the missions the table records at the
        final scoring, which the server dealt at setup). Raises `IllegalMove` (DEALT_ONLY)
        when the table game has no way to record it."""
        ...

    def detail(self, move: MoveT, state: StateT) -> str:
        """What `move`, legal in `state`, takes that its canonical text names only by its
        place: the card a Splendor `buy 1.3` takes ("1k0:g3"), the cards a Medici card game
        `take 1 2` takes; empty when the text says it all. Only what every viewer may see
        once the move is made (a card bought or taken from the market, never a blind
        reserve's face), so a move list names it beside the notation for any viewer who may
        see the move (issue 26: a record that reads without replaying it)."""
        ...

    def touches(self, move: MoveT, state: StateT) -> Touches:
        """The taps on the picture that name `move`, legal in `state` (the game's
        `touches.py`, issue 25): `data-touch` ids of the picture of `state`'s view, in tap
        order, complete enough to tell `move` from every other legal move;
        `tablelog.replay.touch.legal_touches` cuts them to what a client needs."""
        ...

    def words(self, move: MoveT, state: StateT, viewer: Viewer) -> str:
        """`move`, legal in `state`, said in a player's words for `viewer` (the game's
        `words.py`, issue 25): the mover by name ("Ann", "The table") and what the move does
        and takes ("Ann buys 1k0:g3 from slot 1.3"), so that a recorder confirms a move
        composed by taps before it is recorded. Never more than `viewer` may know: a move
        `visible_to` says `viewer` may not see (a card dealt face down to another seat, a
        tile removed unseen) names only what is public about it (who receives something,
        how many), and nothing hidden in `state` is named (the words of a move are the
        same in `redact(state, viewer)`)."""
        ...

    def split(self, text: str, state: StateT) -> Sequence[str]:
        """The moves one typed line stands for, each as its own line, in order: a shorthand
        for one table event that the notation writes as several moves (Medici's `flip fur3`
        for `flip` and `reveal fur3`). Each line is parsed in the state the lines before it
        lead to; a line that is no shorthand comes back alone. Never raises: a line that
        reads as nothing is left for `parse` to refuse."""
        ...


def recorded_component(
    components: Mapping[str, game_pb2.ComponentFile], name: str, title: str
) -> game_pb2.ComponentFile:
    """The component file `name` as recorded in a game's creation event.

    Setup never falls back to the files packaged with the engine: they may have changed
    since the game was recorded, and a replay must not depend on them."""
    found = components.get(name)
    if found is None:
        raise InvalidSetup(
            "MISSING_COMPONENT", f"A game of {title} must record its {name!r} component file."
        )
    return found


def refuse_unknown_components(
    components: Mapping[str, game_pb2.ComponentFile], names: Sequence[str], title: str
) -> None:
    """Refuse a creation that records a component file the game does not read: a misspelt
    name would otherwise be stored with the game and silently ignored by every replay."""
    unknown = sorted(set(components) - set(names))
    if unknown:
        wanted = ", ".join(repr(name) for name in names)
        raise InvalidSetup(
            "UNKNOWN_COMPONENT",
            f"{title} reads only its {wanted} component file, not {', '.join(unknown)}.",
        )
