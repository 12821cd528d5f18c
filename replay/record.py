"""The portable text record: many games in one text, PGN-like (docs/record-format.md).

`write` turns games (a `GameRecord`: the creation, the moves in effect with their
annotations, how the game stands) into text; `read` turns text back into `GameRecord`s,
checking every move with the rules as it reads (the main line and every variation), so a
record that reads is one the service can store as it is. Every refusal is a `RecordError`
naming the line and column. Pure: no I/O.

The text holds the moves in effect only: undo, redo and amendments are history, kept by the
strict archive (the JSON-lines export of every event with its chain), not by the record.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from google.protobuf import json_format
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, TABLE, TERMINAL, Game, RulesError
from tablelog.replay.registry import find_game
from tablelog.v1 import events_pb2, game_pb2

GLYPHS: Final = ("!!", "??", "!?", "?!", "!", "?")
"""The annotation glyphs, longest first (so `!?` is never read as `!`)."""
NUMERIC_GLYPHS: Final = {"$1": "!", "$2": "?", "$3": "!!", "$4": "??", "$5": "!?", "$6": "?!"}
"""PGN's numeric annotation glyphs, read for the glyphs they stand for."""
HIDDEN: Final = "hidden"
"""Written for a move the exporting viewer may not see; a record holding one is not imported."""
MODES: Final = {"table": TABLE, "dealt": DEALT}
KNOWN_TAGS: Final = (
    "Game",
    "Rules",
    "Mode",
    "Title",
    "Players",
    "Option",
    "Component",
    "Club",
    "Event",
    "Site",
    "Date",
    "Round",
    "Result",
    "Abandoned",
)
REPEATABLE_TAGS: Final = frozenset({"Option", "Component"})
DESCRIPTIVE_TAGS: Final = ("Club", "Event", "Site", "Date", "Round")
"""Where and when a game was played, as people say it: stored with the game as written
(`GameCreated.record_tags`, with any tag the reader does not know) and written back."""
STRUCTURAL_TAGS: Final = frozenset(KNOWN_TAGS) - frozenset(DESCRIPTIVE_TAGS)
"""The tags the record makes from the game itself: never a stored record tag."""
TAG_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
MAX_DEPTH: Final = 8
"""How deep variations nest in a record read: as deep as AddAnnotation takes them
(`tablelog.service.limits.MAX_VARIATION_DEPTH`, held equal by a test), so whatever a record reads
can be imported, and a deeper one is refused here with its line and column."""


class RecordError(RulesError):
    """Text that is not a readable record, or a move in it that the rules refuse; `line`
    and `column` (both from 1) say where."""

    def __init__(self, code: str, line: int, column: int, message: str) -> None:
        super().__init__(code, f"Line {line}, column {column}: {message}")
        self.line = line
        self.column = column


@dataclass
class Note:
    """One annotation on a move: a glyph, a comment and an alternative line (each optional)."""

    comment: str = ""
    glyph: str = ""
    variation: events_pb2.Variation = field(default_factory=events_pb2.Variation)


@dataclass(slots=True)
class RecordedMove:
    """A move in effect: the move, its canonical notation, and the annotations on it."""

    move: game_pb2.Move
    notation: str
    before: Any
    """The game's state before the move (who made it, and where its variations start)."""
    notes: list[Note] = field(default_factory=list)
    hidden: bool = False
    """The exporting viewer may not see it: written as `hidden`, and never imported."""
    applied: folding.Applied | None = None
    """As the reader's fold applied it (the state after it included): read from a text,
    the move has been checked by the rules in this process."""


@dataclass
class GameRecord:
    """One game of a record."""

    created: events_pb2.GameCreated
    """Its descriptive tags (Club, Event, Site, Date, Round and any other the text has)
    are `created.record_tags`, in the order they were written."""

    moves: list[RecordedMove]
    status: folding.Status = folding.Status.IN_PROGRESS
    abandoned_reason: str = ""
    result: game_pb2.GameResult | None = None
    """The rules' result of an ended game."""
    opening: list[Note] = field(default_factory=list)
    """The annotations on the game as a whole (anchored to its creation, revision 1),
    written before the first move; a variation there replaces the first move."""
    line: int = 0
    """The line its first tag is on, in the text it was read from."""


# --- writing -----------------------------------------------------------------------------


def record_of(
    position: folding.Position,
    annotations: Sequence[events_pb2.AnnotationAdded] = (),
    tags: Mapping[str, str] | None = None,
    visible: Callable[[folding.Applied], bool] | None = None,
    abandoned_reason: str = "",
) -> GameRecord:
    """The record of a game folded to `position`: its moves in effect, each with the
    annotations anchored to it (others, orphaned by an amendment, are left out), and
    `visible` saying which moves the exporting viewer may see (default: all). `tags`, when
    given, are its descriptive tags instead of those stored with the game."""
    created = position.table.created
    if tags is not None:
        created = events_pb2.GameCreated()
        created.CopyFrom(position.table.created)
        del created.record_tags[:]
        created.record_tags.extend(events_pb2.RecordTag(name=n, value=v) for n, v in tags.items())
    by_revision: dict[int, list[Note]] = {}
    for added in annotations:
        by_revision.setdefault(added.revision, []).append(
            Note(added.comment, added.glyph, added.variation)
        )
    moves = [
        RecordedMove(
            applied.move,
            applied.notation,
            applied.before,
            by_revision.get(applied.revision, []),
            hidden=visible is not None and not visible(applied),
        )
        for applied in position.moves()
    ]
    return GameRecord(
        created,
        moves,
        position.status,
        abandoned_reason,
        position.result if position.status is folding.Status.ENDED else None,
        opening=by_revision.get(1, []),  # the creation's revision: notes on the whole game
    )


def write(records: Sequence[GameRecord]) -> str:
    """The text of `records`, one game after another with a blank line between."""
    return "\n".join(_write_one(record) for record in records)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _escape_comment(text: str) -> str:
    return text.replace("\\", "\\\\").replace("}", "\\}")


def _tag(name: str, value: str) -> str:
    return f"[{name} {_quote(value)}]\n"


def _write_one(record: GameRecord) -> str:
    created = record.created
    table = folding.Table.from_created(created)
    game = table.game
    out: list[str] = [
        _tag("Game", game.name),
        _tag("Rules", created.rules_version or game.rules_version),
        _tag("Mode", "dealt" if created.mode == DEALT else "table"),
    ]
    if created.title:
        out.append(_tag("Title", created.title))
    out.append(_tag("Players", "; ".join(p.replace(";", "\\;") for p in table.players)))
    for name, value in json_format.MessageToDict(
        table.options, preserving_proto_field_name=True
    ).items():
        text = value if isinstance(value, str) else json.dumps(value)
        out.append(_tag("Option", f"{name}={text}"))
    defaults = {c.name: c for c in game.default_components()}
    for component in created.components:
        digest = hashlib.sha256(component.content).hexdigest()
        described = f"{component.name} sha256={digest}"
        if defaults.get(component.name) != component:
            embedded = component.SerializeToString(deterministic=True)
            described += " file=" + base64.b64encode(embedded).decode("ascii")
        out.append(_tag("Component", described))
    for tag in created.record_tags:
        out.append(_tag(tag.name, tag.value))
    if record.status is folding.Status.ABANDONED:
        out.append(_tag("Abandoned", record.abandoned_reason or "abandoned"))
    out.append(_tag("Result", result_text(record.result, table.players)))
    out.append("\n")
    if record.opening:
        start = record.moves[0].before if record.moves else folding.start(created).state
        out.append(_notes_text(table, start, record.opening, 0).lstrip() + "\n")
    number = 0
    for recorded in record.moves:
        state = recorded.before
        who = game.to_move(state)
        if who != CHANCE:
            number += 1
        line = _move_text(number, who, recorded.notation, table.players, recorded.hidden)
        line += _notes_text(table, state, recorded.notes, number - (who != CHANCE))
        detail = "" if recorded.hidden else game.detail(table.unwrap(recorded.move), state)
        if detail:
            # A line-note, which a reader ignores: the card a `buy 1.3` took, for a person
            # reading the record; the move stays in its canonical notation (issue 26).
            line += f" ; {detail}"
        out.append(line + "\n")
    return "".join(out)


def _notes_text(table: folding.Table, state: Any, notes: Sequence[Note], number: int) -> str:
    """The annotations of a move made in `state` (or of the game, before its first move),
    each as ` glyph {comment} (variation)`; `number` counts the players' moves before it."""
    text = ""
    for note in notes:
        if note.glyph:
            text += " " + note.glyph
        if note.comment:
            text += " {" + _escape_comment(note.comment) + "}"
        if note.variation.moves:
            text += " " + _variation_text(table, state, note.variation, number)
    return text


def _move_text(number: int, who: int, notation: str, players: Sequence[str], hidden: bool) -> str:
    text = HIDDEN if hidden else notation
    if who == CHANCE:
        return f"* {text}"
    name = players[who]
    if _MOVETEXT_MARKS.intersection(name):
        return f"{number}. {text}"  # the name would read as a comment or a variation
    return f"{number}. {name}: {text}"


def _variation_text(
    table: folding.Table, state: Any, variation: events_pb2.Variation, number: int
) -> str:
    """`( ... )`: the line's moves from `state`, each with its glyph, comment and the lines
    that replace it; `number` is the count of players' moves before the line."""
    game = table.game
    parts: list[str] = []
    for vmove in variation.moves:
        who = game.to_move(state)
        if who != CHANCE:
            number += 1
        inner = (
            table.unwrap(vmove.move)
            if vmove.HasField("move")
            else game.parse(vmove.notation, state)
        )
        notation = vmove.notation or game.format(inner, state)
        part = _move_text(number, who, notation, table.players, False)
        if vmove.glyph:
            part += " " + vmove.glyph
        if vmove.comment:
            part += " {" + _escape_comment(vmove.comment) + "}"
        for nested in vmove.variations:
            part += " " + _variation_text(table, state, nested, number - (who != CHANCE))
        parts.append(part)
        state = game.apply(state, inner)
    return "(" + " ".join(parts) + ")"


def result_text(result: game_pb2.GameResult | None, players: Sequence[str]) -> str:
    """`Ann 16; Bob 15` for an ended game's scores, `*` for one without a result."""
    if result is None or not result.scores:
        return "*"
    return "; ".join(f"{players[score.seat]} {score.total}" for score in result.scores)


# --- reading -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Token:
    kind: str  # "tag", "move", "chance", "comment", "glyph", "open", "close"
    at: int
    """Its offset in the text; the line and column are worked out only when one is named."""
    scanner: _Scanner
    text: str = ""
    name: str = ""
    value: str = ""

    @property
    def line(self) -> int:
        return self.scanner.where(self.at)[0]

    @property
    def column(self) -> int:
        return self.scanner.where(self.at)[1]


_TAG: Final = re.compile(r'\[\s*([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\\n]|\\.)*)"\s*\]')
_MOVETEXT_MARKS: Final = frozenset("{}();$!?*\n")
"""Characters with a meaning in movetext: a player's name holding one is not written there."""
_COMMENT: Final = re.compile(r"\{((?:[^}\\]|\\.)*)\}", re.DOTALL)
_UNESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)
_MOVE_START: Final = re.compile(r"(?:(\d+)\.+|(\*))?[ \t]*")
"""What may open a move: its number (`12.`) or the table's mark (`*`), then blanks."""
_MOVE_END: Final = re.compile(r"[{}()\n;]|\s\d+\.+(?=\s)|\s\*(?=\s)|\s\$\d")
_PLAIN_MOVE: Final = re.compile(
    r"(?:(\d+)\.+|(\*))?[ \t]*([^\s{}()\n;!?$*.][^{}()\n;!?$*.]*?)[^\S\n]*(?=[{}()\n;]|\Z)"
)
"""A whole move as most are written (`12. Ann: take w u g` up to the end of its line, a
comment or a variation), read in one match: a move whose text holds none of the
characters that could end it early or put a glyph after it (`.`, `*`, `$`, `!`, `?`), so
`_MOVE_START`, `_MOVE_END` and `_TRAILING_GLYPH` would find the same (any other move is
read by them)."""
_NOTE_ORDER: Final = {"glyph": 0, "comment": 1, "open": 2}
"""The items of an annotation, in the order they are written."""
_TRAILING_GLYPH: Final = re.compile(r"\s*([!?]{1,2})$")
_NUMERIC_GLYPH: Final = re.compile(r"\$\d+")


class _Scanner:
    """The text as tokens, each with its line and column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0, *(found.end() for found in re.finditer("\n", text))]

    def where(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def fail(self, offset: int, code: str, message: str) -> RecordError:
        line, column = self.where(offset)
        return RecordError(code, line, column, message)

    def tokens(self) -> Iterator[_Token]:
        text, size = self.text, len(self.text)
        at = 0
        while at < size:
            char = text[at]
            if char.isspace():
                at += 1
                continue
            if char == "[":
                match = _TAG.match(text, at)
                if match is None:
                    raise self.fail(at, "BAD_TAG", 'a tag is written [Name "value"] on one line.')
                value = _UNESCAPE.sub(r"\1", match.group(2))
                yield _Token("tag", at, self, name=match.group(1), value=value)
                at = match.end()
            elif char == "{":
                match = _COMMENT.match(text, at)
                if match is None:
                    raise self.fail(at, "UNBALANCED_BRACE", "this comment's { is never closed.")
                body = _UNESCAPE.sub(r"\1", match.group(1))
                yield _Token("comment", at, self, text=body)
                at = match.end()
            elif char == "}":
                raise self.fail(at, "UNBALANCED_BRACE", "a } that closes no comment.")
            elif char == ";":
                end = text.find("\n", at)
                at = size if end < 0 else end
            elif char == "(":
                yield _Token("open", at, self)
                at += 1
            elif char == ")":
                yield _Token("close", at, self)
                at += 1
            elif char == "$" and (match := _NUMERIC_GLYPH.match(text, at)):
                glyph = NUMERIC_GLYPHS.get(match.group())
                if glyph is None:
                    raise self.fail(at, "BAD_GLYPH", f"{match.group()} is not a glyph ($1 to $6).")
                yield _Token("glyph", at, self, text=glyph)
                at = match.end()
            elif char in "!?":
                glyph = next((g for g in GLYPHS if text.startswith(g, at)), "")
                after = at + len(glyph)
                if after < size and text[after] in "!?":
                    raise self.fail(at, "BAD_GLYPH", f"a glyph is one of {' '.join(GLYPHS)}.")
                yield _Token("glyph", at, self, text=glyph)
                at = after
            else:
                move, move_glyph, at = self._move(at)
                if move is not None:
                    yield move
                    if move_glyph is not None:
                        yield move_glyph

    def _move(self, at: int) -> tuple[_Token | None, _Token | None, int]:
        """A move: `12. Ann: take w u g`, `* reveal 1.1 …` or the notation alone, up to the
        end of its line, a comment, a variation or the next numbered move; with the glyph
        written right after it, and where it ends. (A function rather than a generator: it
        runs once per move, and a generator would be made for each.)"""
        text = self.text
        plain = _PLAIN_MOVE.match(text, at)
        if plain is not None:
            kind = "chance" if plain.group(2) else "move"
            return _Token(kind, at, self, plain.group(3)), None, plain.end()
        begin = at
        opening = _MOVE_START.match(text, at)  # always matches (everything is optional)
        assert opening is not None
        number = opening.group(1)
        kind = "chance" if opening.group(2) else "move"
        start = at = opening.end()
        found = _MOVE_END.search(text, at)
        end = len(text) if found is None else found.start()
        body = text[start:end].rstrip()
        glyph = _TRAILING_GLYPH.search(body) if body.endswith(("!", "?")) else None
        if glyph is not None:
            body = body[: glyph.start()]
        body = body.strip()
        if not body:
            if number is not None:
                return None, None, end  # a bare move number ("12." before a line break)
            raise self.fail(start, "EMPTY_MOVE", "a move number or mark with no move after it.")
        token = _Token(kind, begin, self, text=body)
        if glyph is None:
            return token, None, end
        return token, _Token("glyph", start + glyph.start(1), self, text=glyph.group(1)), end


def read(
    text: str,
    max_games: int | None = None,
    max_moves: int | None = None,
    tag_bounds: TagBounds | None = None,
) -> list[GameRecord]:
    """The games of a record, each checked move by move with its game's rules (the main
    line and every variation). Raises `RecordError` with the line and column of the first
    problem. A text with more than `max_games` games or `max_moves` moves (variations
    included) is refused before any rule is applied, and a game whose descriptive tags
    are past `tag_bounds` before any of its moves is."""
    scanner = _Scanner(text)
    games: list[tuple[list[_Token], list[_Token]]] = []
    moves = 0
    for token in scanner.tokens():
        if token.kind in ("move", "chance"):
            moves += 1
            if max_moves is not None and moves > max_moves:
                raise RecordError(
                    "TOO_MANY_MOVES",
                    token.line,
                    token.column,
                    f"a record holds at most {max_moves:,} moves; split it.",
                )
        if token.kind == "tag":
            if not games or games[-1][1]:
                games.append(([], []))
                if max_games is not None and len(games) > max_games:
                    raise RecordError(
                        "TOO_MANY_GAMES",
                        token.line,
                        token.column,
                        f"a record holds at most {max_games:,} games; split it.",
                    )
            games[-1][0].append(token)
        else:
            if not games:
                raise RecordError(
                    "NO_TAGS",
                    token.line,
                    token.column,
                    'a game starts with its tags ([Game "splendor"], [Players "Ann; Bob"]).',
                )
            games[-1][1].append(token)
    return [_Reader(tags, movetext, tag_bounds).read() for tags, movetext in games]


@dataclass(frozen=True, slots=True)
class TagBounds:
    """How many descriptive tags one game of a read record keeps, and how long each name
    and value may be."""

    count: int
    name: int
    value: int


class _Reader:
    """One game: its tags, then its movetext folded with the rules."""

    def __init__(
        self, tags: list[_Token], movetext: list[_Token], tag_bounds: TagBounds | None
    ) -> None:
        self.tag_tokens = tags
        self.tag_bounds = tag_bounds
        self.movetext = movetext
        self.at = 0
        self.seats: dict[str, int] = {}

    def read(self) -> GameRecord:
        created, result_token, abandoned = self._creation()
        first = self.tag_tokens[0]
        try:
            position = folding.start(created)
        except RulesError as refused:
            raise RecordError(refused.code, first.line, first.column, refused.message) from None
        record = GameRecord(created, [], line=first.line)
        self.seats = {name.casefold(): seat for seat, name in enumerate(position.table.players)}
        if self.movetext and self.movetext[0].kind in _NOTE_ORDER:
            record.opening = self._notes(position.table, position.state)
        position = self._main_line(position, record)
        if abandoned is not None:
            record.status = folding.Status.ABANDONED
            record.abandoned_reason = abandoned
        elif position.to_move() == TERMINAL:
            record.status = folding.Status.ENDED
            record.result = position.game.result(position.state)
        if result_token is not None:
            self._check_result(result_token, record, position)
        return record

    def _tag_error(self, token: _Token, code: str, message: str) -> RecordError:
        return RecordError(code, token.line, token.column, message)

    def _creation(
        self,
    ) -> tuple[events_pb2.GameCreated, _Token | None, str | None]:
        seen: dict[str, _Token] = {}
        options: list[_Token] = []
        components: list[_Token] = []
        described: list[_Token] = []
        for token in self.tag_tokens:
            if token.name in seen and token.name not in REPEATABLE_TAGS:
                raise self._tag_error(token, "DUPLICATE_TAG", f"a second {token.name} tag.")
            seen[token.name] = token
            if token.name == "Option":
                options.append(token)
            elif token.name == "Component":
                components.append(token)
            elif token.name not in STRUCTURAL_TAGS:
                described.append(token)
        self._check_tag_bounds(described)
        first = self.tag_tokens[0]
        if "Game" not in seen:
            raise self._tag_error(first, "MISSING_TAG", 'a game needs its [Game "..."] tag.')
        if "Players" not in seen:
            raise self._tag_error(first, "MISSING_TAG", 'a game needs its [Players "..."] tag.')
        try:
            game = find_game(seen["Game"].value)
        except RulesError as refused:
            raise self._tag_error(seen["Game"], refused.code, refused.message) from None
        rules = seen["Rules"].value if "Rules" in seen else game.rules_version
        mode_text = seen["Mode"].value.strip().lower() if "Mode" in seen else "table"
        if mode_text not in MODES:
            raise self._tag_error(seen["Mode"], "BAD_TAG", 'Mode is "table" or "dealt".')
        players = [
            name.replace("\\;", ";").strip()
            for name in re.split(r"(?<!\\);", seen["Players"].value)
        ]
        if any(not name for name in players):
            raise self._tag_error(
                seen["Players"], "BAD_TAG", 'Players names each seat: "Ann; Bob; Cleo".'
            )
        created = events_pb2.GameCreated(
            game=game.name,
            players=[events_pb2.Player(name=name) for name in players],
            mode=MODES[mode_text],
            rules_version=rules,
            title=seen["Title"].value if "Title" in seen else "",
        )
        chosen = getattr(created.options, game.oneof_field)
        chosen.SetInParent()
        for token in options:
            self._option(token, game, chosen, players)
        if components:
            created.components.extend(self._component(token, game) for token in components)
        else:
            created.components.extend(game.default_components())
        abandoned = seen["Abandoned"].value if "Abandoned" in seen else None
        created.record_tags.extend(
            events_pb2.RecordTag(name=token.name, value=token.value) for token in described
        )
        return created, seen.get("Result"), abandoned

    def _check_tag_bounds(self, described: list[_Token]) -> None:
        bounds = self.tag_bounds
        if bounds is None:
            return
        if len(described) > bounds.count:
            raise self._tag_error(
                described[bounds.count],
                "TOO_MANY_TAGS",
                f"a game keeps at most {bounds.count} descriptive tags.",
            )
        for token in described:
            if len(token.name) > bounds.name or len(token.value) > bounds.value:
                raise self._tag_error(
                    token,
                    "TAG_TOO_LONG",
                    f"a tag's name is at most {bounds.name} characters and its value at "
                    f"most {bounds.value}.",
                )

    def _option(
        self, token: _Token, game: Game[Any, Any], options: Message, players: list[str]
    ) -> None:
        name, sep, value = token.value.partition("=")
        name = name.strip().replace("-", "_")
        known = options.DESCRIPTOR.fields_by_name
        if not sep or name not in known:
            accepted = ", ".join(sorted(known)) or "none"
            raise self._tag_error(
                token, "BAD_OPTION", f"Option is NAME=VALUE; {game.title}'s options: {accepted}."
            )
        value = value.strip()
        parsed: Any
        seat = [i for i, p in enumerate(players) if p.casefold() == value.casefold()]
        if name == "first_player" and seat:
            parsed = seat[0]
        else:
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
        try:
            json_format.ParseDict({name: parsed}, options, ignore_unknown_fields=False)
        except json_format.ParseError:
            raise self._tag_error(
                token, "BAD_OPTION", f"{value!r} is not a value of option {name}."
            ) from None

    def _component(self, token: _Token, game: Game[Any, Any]) -> game_pb2.ComponentFile:
        words = token.value.split()
        fields = dict(word.partition("=")[::2] for word in words[1:])
        if not words or "sha256" not in fields:
            raise self._tag_error(
                token, "BAD_COMPONENT", 'Component is "NAME sha256=HEX" (and file=BASE64).'
            )
        name, digest = words[0], fields["sha256"].lower()
        if "file" in fields:
            try:
                component = game_pb2.ComponentFile.FromString(
                    base64.b64decode(fields["file"], validate=True)
                )
            except (binascii.Error, ValueError):
                raise self._tag_error(
                    token, "BAD_COMPONENT", f"the embedded file of {name} is not readable."
                ) from None
            if component.name != name:
                raise self._tag_error(
                    token,
                    "BAD_COMPONENT",
                    f"the embedded file is {component.name!r}, not {name!r}.",
                )
        else:
            shipped = _shipped_components(game)
            if name not in shipped:
                raise self._tag_error(
                    token, "UNKNOWN_COMPONENT", f"{game.title} ships no component {name!r}."
                )
            component, shipped_digest = shipped[name]
            if shipped_digest == digest:
                return component
        if hashlib.sha256(component.content).hexdigest() != digest:
            where = "the embedded file" if "file" in fields else f"the {name} this engine ships"
            raise self._tag_error(
                token,
                "COMPONENT_HASH",
                f"{where} does not have sha256={digest[:16]}…; embed the file (file=...).",
            )
        return component

    def _check_result(self, token: _Token, record: GameRecord, position: folding.Position) -> None:
        players = position.table.players
        wanted = token.value.strip()
        actual = result_text(record.result, players)
        if wanted != "*" and " ".join(wanted.split()) != actual:
            said = actual if record.result is not None else "no result: the game is not over"
            raise self._tag_error(
                token, "WRONG_RESULT", f"the result is {wanted!r}, but the moves give {said}."
            )

    # -- movetext --

    def _next(self) -> _Token | None:
        return self.movetext[self.at] if self.at < len(self.movetext) else None

    def _main_line(self, position: folding.Position, record: GameRecord) -> folding.Position:
        """The main line read from `position`, each move appended to `record` as the rules
        applied it; the position after it, built once for the whole line."""
        movetext, moves = self.movetext, record.moves
        size = len(movetext)
        table = position.table
        state, revision = position.state, position.revision
        line: list[folding.Applied] = []
        while self.at < size:
            token = movetext[self.at]
            if token.kind not in ("move", "chance"):  # annotations went with the move before
                raise RecordError(
                    "UNBALANCED_PAREN", token.line, token.column, "a ) that closes no variation."
                )
            self.at += 1
            steps = self._moves(token, table, state, revision)
            for applied in steps:
                moves.append(
                    RecordedMove(applied.move, applied.notation, applied.before, applied=applied)
                )
            line += steps
            last = steps[-1]
            state, revision = last.after, last.revision
            if self.at < size and movetext[self.at].kind in _NOTE_ORDER:
                moves[-1].notes = self._notes(table, last.before)
        return folding.recorded_run(position, line, position.sequence) if line else position

    def _moves(
        self, token: _Token, table: folding.Table, state: Any, revision: int
    ) -> list[folding.Applied]:
        """The moves `token` stands for in `state`, a game in progress at `revision` (a
        shorthand may stand for several), each checked and applied by the rules; the rules'
        refusal is raised at the token."""
        game = table.game
        mover, seat, text = _mover_and_move(token, self.seats)
        if len(text) == len(HIDDEN) and text.lower() == HIDDEN:
            raise RecordError(
                "HIDDEN_MOVE",
                token.line,
                token.column,
                "this move was hidden from whoever exported the record; export it as a viewer "
                "who may see it to import it.",
            )
        steps: list[folding.Applied] = []
        check_mover = bool(mover) or token.kind == "chance"
        try:
            for line in game.split(text, state):
                who = game.to_move(state)
                if check_mover:
                    # Only a move that may be wrong is looked at closely: one by the player
                    # it names, or a chance move at the table's turn, is as marked.
                    if who != (CHANCE if token.kind == "chance" else seat):
                        _check_mover(token.kind, mover, seat, who, table)
                    check_mover = False  # the rest of a shorthand is the rules' to order
                inner = game.parse(line, state)
                applied = folding.read_move(
                    table, state, revision, inner, game.format(inner, state), who
                )
                steps.append(applied)
                state, revision = applied.after, applied.revision
        except RulesError as refused:
            raise RecordError(
                refused.code,
                token.line,
                token.column,
                f"{clip_move(token.text)}: {refused.message}",
            ) from None
        return steps

    def _notes(self, table: folding.Table, before: Any) -> list[Note]:
        """The annotations after a main-line move: each is a glyph, a comment and a
        variation, in that order, any of them left out; an item that cannot continue the
        annotation before it starts the next one."""
        notes: list[Note] = []
        order = _NOTE_ORDER
        last = len(order)
        while (token := self._next()) is not None and token.kind in order:
            if order[token.kind] <= last:
                notes.append(Note())
            note = notes[-1]
            last = order[token.kind]
            self.at += 1
            if token.kind == "glyph":
                note.glyph = token.text
            elif token.kind == "comment":
                note.comment = token.text
            else:
                note.variation.CopyFrom(self._variation(table, before, token, 1))
        return notes

    def _variation(
        self, table: folding.Table, state: Any, opened: _Token, depth: int
    ) -> events_pb2.Variation:
        """The line after `(` up to its `)`, each move checked from `state`; `depth` counts
        the variations it is nested in, itself included."""
        if depth > MAX_DEPTH:
            raise RecordError(
                "VARIATION_TOO_DEEP",
                opened.line,
                opened.column,
                f"variations nest at most {MAX_DEPTH} deep.",
            )
        variation = events_pb2.Variation()
        revision = 0  # a variation's moves are numbered from its start
        before_last = state
        while True:
            token = self._next()
            if token is None or token.kind == "tag":
                raise RecordError(
                    "UNBALANCED_PAREN", opened.line, opened.column, "this ( is never closed."
                )
            self.at += 1
            if token.kind == "close":
                if not variation.moves:
                    raise RecordError(
                        "EMPTY_VARIATION", opened.line, opened.column, "a variation with no move."
                    )
                return variation
            if token.kind in ("move", "chance"):
                steps = self._moves(token, table, state, revision)
                for applied in steps:
                    variation.moves.add(move=applied.move, notation=applied.notation)
                line_end = steps[-1]
                before_last, state, revision = line_end.before, line_end.after, line_end.revision
                continue
            if not variation.moves:
                raise RecordError(
                    "NOTHING_TO_ANNOTATE",
                    token.line,
                    token.column,
                    "a variation starts with a move.",
                )
            last = variation.moves[-1]
            if token.kind == "glyph":
                last.glyph = token.text
            elif token.kind == "comment":
                last.comment = f"{last.comment} {token.text}" if last.comment else token.text
            else:
                last.variations.append(self._variation(table, before_last, token, depth + 1))


_SHIPPED: dict[tuple[str, str], dict[str, tuple[game_pb2.ComponentFile, str]]] = {}


def _shipped_components(game: Game[Any, Any]) -> dict[str, tuple[game_pb2.ComponentFile, str]]:
    """The component files `game` ships, by name, each with the SHA-256 of its content (hex):
    hashed once per game and rules version, not at every game of every record read."""
    key = (game.name, game.rules_version)
    found = _SHIPPED.get(key)
    if found is None:
        found = {
            c.name: (c, hashlib.sha256(c.content).hexdigest()) for c in game.default_components()
        }
        _SHIPPED[key] = found
    return found


def _mover_and_move(token: _Token, seats: Mapping[str, int]) -> tuple[str, int, str]:
    """`Ann: take w u g` as ("Ann", Ann's seat, "take w u g"); a move naming no player as
    ("", -1, move). `seats` are the players' seats by their casefolded names."""
    text = token.text
    if token.kind != "move":
        return "", -1, text
    name, colon, rest = text.partition(":")
    if not colon:
        return "", -1, text
    seat = seats.get(name.casefold(), -1)  # as written: "Ann: take w u g"
    if seat < 0:
        name = name.strip()
        seat = seats.get(name.casefold(), -1)
    if seat >= 0:
        return name, seat, rest.strip()
    folded = text.casefold()
    for player, seat in seats.items():  # a name with a colon in it
        if folded.startswith(player + ":"):
            return text[: len(player)], seat, text[len(player) + 1 :].strip()
    return "", -1, text


def _check_mover(kind: str, mover: str, seat: int, who: int, table: folding.Table) -> None:
    """A move marked as the table's (`*`) or naming its player must be that one's to make."""
    if kind == "chance" and who >= 0:
        raise RulesError(
            "NO_REVEAL_PENDING",
            f"marked * as a chance move, but it is {table.seat_name(who)}'s turn.",
        )
    if not mover:
        return
    if who == CHANCE:
        raise RulesError("REVEAL_PENDING", f"it is the table's move (a reveal), not {mover}'s.")
    if who >= 0 and who != seat:
        raise RulesError("NOT_YOUR_TURN", f"it is {table.seat_name(who)}'s turn, not {mover}'s.")


def clip_move(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:39] + "…")


DEALT_ORIGIN: Final = "DealtGame"
"""The tag a dealt game's record carries once imported as a table game: where it came from."""


def as_table_game(dealt: GameRecord) -> GameRecord:
    """A dealt game's record as a table game records it (issue 26: a portable record imports
    anywhere, and a text record does not hold the dealing server's secret seed): the cards
    the server dealt become the table's reveals, a dealing the table does not record is left
    out, and each move is checked again by the rules in table mode (`Game.undealt`). The
    record says where it came from in a `DealtGame` tag. Raises `RecordError`
    (DEALT_ONLY, or the rule a move breaks) naming the game's first line."""
    created = events_pb2.GameCreated()
    created.CopyFrom(dealt.created)
    created.mode = TABLE
    created.ClearField("seed_commitment")
    created.dealing_scheme = 0
    created.record_tags.append(
        events_pb2.RecordTag(name=DEALT_ORIGIN, value="dealt by a server; imported as a table game")
    )
    position = folding.start(created)
    table = position.table
    game = table.game
    moves: list[RecordedMove] = []
    opening = list(dealt.opening)
    for number, recorded in enumerate(dealt.moves, start=1):
        try:
            undealt = game.undealt(table.unwrap(recorded.move), recorded.before)
            if undealt is None:
                # The notes on a dealing left out go to the move before it, or to the game
                # as a whole when no move came before (Medici's first day's removals).
                (moves[-1].notes if moves else opening).extend(recorded.notes)
                continue
            # One move, or several the table records there (the first carries the notes).
            table_moves = [undealt] if isinstance(undealt, Message) else list(undealt)
            notes = list(recorded.notes)
            for inner in table_moves:
                notation = game.format(inner, position.state)
                position = folding.record(position, table.wrap(inner), notation)
                applied = position.applied.head if position.applied is not None else None
                assert applied is not None
                moves.append(
                    RecordedMove(applied.move, notation, applied.before, notes, applied=applied)
                )
                notes = []
        except RulesError as refused:
            raise RecordError(
                refused.code,
                dealt.line,
                1,
                f"move {number} of this dealt game ({recorded.notation}) has no table-game "
                f"equivalent: {refused}",
            ) from None
    return GameRecord(
        created,
        moves,
        dealt.status,
        dealt.abandoned_reason,
        game.result(position.state) if dealt.status is folding.Status.ENDED else None,
        opening=opening,
        line=dealt.line,
    )


def events_of(record: GameRecord) -> list[events_pb2.Event]:
    """The events that store `record`: its creation, each move, its end, then its
    annotations (ids `note-<n>`; the game's own anchored to its creation), numbered from 1
    without hashes, times or actors."""
    events = [events_pb2.Event(sequence=1, revision=1, game_created=record.created)]
    revisions: list[int] = []
    for recorded in record.moves:
        revision = len(events) + 1
        revisions.append(revision)
        # Filled in place: a MoveRecorded given as an argument would be built, then copied
        # (its move with it), three times the cost per move of an import.
        event = events_pb2.Event(sequence=revision, revision=revision)
        body = event.move_recorded
        body.move.CopyFrom(recorded.move)
        body.notation = recorded.notation
        events.append(event)
    if record.status is folding.Status.ENDED and record.result is not None:
        revision = len(events) + 1
        events.append(
            events_pb2.Event(
                sequence=revision,
                revision=revision,
                game_ended=events_pb2.GameEnded(result=record.result),
            )
        )
    elif record.status is folding.Status.ABANDONED:
        revision = len(events) + 1
        events.append(
            events_pb2.Event(
                sequence=revision,
                revision=revision,
                game_abandoned=events_pb2.GameAbandoned(reason=record.abandoned_reason),
            )
        )
    head = len(events)
    count = 0
    moved = zip(record.moves, revisions, strict=True)
    annotated = [(record.opening, 1), *((move.notes, revision) for move, revision in moved)]
    for notes, revision in annotated:
        for note in notes:
            count += 1
            events.append(
                events_pb2.Event(
                    sequence=len(events) + 1,
                    revision=head,
                    annotation_added=events_pb2.AnnotationAdded(
                        annotation_id=f"note-{count}",
                        revision=revision,
                        comment=note.comment,
                        glyph=note.glyph,
                        variation=note.variation,
                    ),
                )
            )
    return events
