"""Every request bounded before any work is done with it (issue 11, build 2): the fields of
each request of service.proto that the use cases do not bound themselves (typed moves,
options, component files, imported events, names and ids that are echoed back) are checked
here, once, before the servicer calls the recorder. A refusal is INVALID_ARGUMENT
(INVALID_REQUEST) with a BadRequest naming the field, and changes nothing.

Typed messages (moves, options, imported events) are walked generically through their
descriptors: every integer, repeated field, text and enum is held to `MessageBounds`, so a
move claiming 4,294,967,295 returned tokens is refused before the game formats it (one
letter per token). The bounds are far above anything a legal move holds (a test checks
every legal move of random games against them) and far below what costs a client time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from tablelog.replay import record
from tablelog.service.errors import InvalidRequest
from tablelog.service.limits import (
    GAME_ID,
    GLYPHS,
    MAX_COMMENT,
    MAX_IMPORT_SOURCE,
    MAX_NOTATION,
    MAX_PLAYER_NAME,
    MAX_PLAYERS,
    MAX_REASON,
    MAX_RECORD_GAMES,
    MAX_RECORD_TAG_NAME,
    MAX_RECORD_TAG_VALUE,
    MAX_RECORD_TAGS,
    MAX_RECORD_TEXT,
    MAX_REQUEST_ID,
    MAX_TITLE,
    MAX_VARIATION_DEPTH,
    MAX_VARIATION_MOVES,
    MAX_VARIATION_TEXT,
    MAX_VARIATION_TOTAL,
    check_components,
    check_length,
    clip,
)
from tablelog.v1 import events_pb2, game_pb2, service_pb2

MAX_GAME_NAME: Final = 64
MAX_ANNOTATION_ID: Final = 64
MAX_PAGE_TOKEN: Final = 160
"""Room for ListGames's cursor (`tablelog.service.recording.game_index.cursor_token`: 124 characters
with a 64-character game id)."""
MAX_SEAT: Final = 64
MAX_COMPONENT_FILES: Final = 32
MAX_COMPONENT_NAME: Final = 100
MAX_MEDIA_TYPE: Final = 100
MAX_APPROXIMATE_NOTE: Final = 500
MAX_COMPONENT_NESTING: Final = 16
"""Brackets open at once in a JSON component file: a board is objects of lists of small
objects (the games refuse deeper files too, but only after parsing them)."""
MAX_COMPONENT_DIGITS: Final = 18
"""Digits in one number of a component file: every count on a table fits in a 64-bit
integer (Python would spend seconds converting a 100,000-digit one, or refuse it with a
ValueError from deep inside a game)."""
MAX_ACTOR_TEXT: Final = 100


@dataclass(frozen=True, slots=True)
class MessageBounds:
    """What any field of a typed message may hold."""

    integer: int
    """Largest magnitude of an integer field."""
    items: int
    """Most entries of a repeated field."""
    text: int
    """Most characters of a string field, bytes of a bytes field."""


MOVE_BOUNDS: Final = MessageBounds(integer=10_000, items=64, text=64)
"""A move or an option: the largest count in any legal move of the five games is under 100
(a Medici bid), the longest list 3 entries, the longest text 9 characters."""
EVENT_BOUNDS: Final = MessageBounds(integer=1 << 62, items=256, text=MAX_COMMENT)
"""The fields of an imported event around its move (numbers, hashes, texts): sequences and
revisions are checked by the fold; components are bounded by `check_components`."""

_INTEGERS: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_TEXTS: Final = frozenset({FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES})
_SEPARATELY_BOUNDED: Final = frozenset(
    {
        # Checked with their own limits: a component file's content may be 1 MiB, and the
        # typed move inside an imported event is held to MOVE_BOUNDS.
        (game_pb2.ComponentFile.DESCRIPTOR.full_name, "content"),
        (events_pb2.MoveRecorded.DESCRIPTOR.full_name, "move"),
        (events_pb2.GameCreated.DESCRIPTOR.full_name, "options"),
    }
)


def check_message(field_name: str, message: Message, bounds: MessageBounds) -> None:
    """Every field of `message` (and of the messages inside it) within `bounds`, and every
    enum value one the schema defines (a game may look an enum value up in a table)."""
    pending: list[tuple[str, Message]] = [(field_name, message)]
    while pending:
        path, current = pending.pop()
        message_name = current.DESCRIPTOR.full_name
        for field, value in current.ListFields():
            where = f"{path}.{field.name}"
            if (message_name, field.name) in _SEPARATELY_BOUNDED:
                continue
            values: Sequence[Any] = value if field.is_repeated else (value,)
            if field.is_repeated and len(values) > bounds.items:
                raise InvalidRequest(
                    where, f"{where} has {len(values):,} entries; the limit is {bounds.items}."
                )
            for index, item in enumerate(values):
                at = f"{where}[{index}]" if field.is_repeated else where
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    pending.append((at, item))
                elif field.type in _INTEGERS and abs(item) > bounds.integer:
                    limit = f"{bounds.integer:,}"
                    raise InvalidRequest(
                        at, f"{at} is {clip(str(item))}; no game has a count past {limit}."
                    )
                elif field.type in _TEXTS and len(item) > bounds.text:
                    raise InvalidRequest(
                        at, f"{at} is {len(item):,} long; the limit is {bounds.text:,}."
                    )
                elif field.enum_type is not None and item not in field.enum_type.values_by_number:
                    kind = field.enum_type.name
                    raise InvalidRequest(at, f"{at} is {item}, not a value of {kind}.")


def check_move(field_name: str, move: game_pb2.Move) -> None:
    check_message(field_name, move, MOVE_BOUNDS)
    if move.HasField("seat") and move.seat > MAX_SEAT:
        raise InvalidRequest(f"{field_name}.seat", f"There is no seat {move.seat}.")


def check_component_files(field_name: str, components: Sequence[game_pb2.ComponentFile]) -> None:
    """Count, names, media types and notes bounded; each content within its size
    (`check_components`) and, read as text, without a number longer than
    MAX_COMPONENT_DIGITS digits or brackets nested deeper than MAX_COMPONENT_NESTING. The
    scan is one pass over the bytes; the game parses the file only after it."""
    if len(components) > MAX_COMPONENT_FILES:
        raise InvalidRequest(field_name, f"At most {MAX_COMPONENT_FILES} component files.")
    for index, component in enumerate(components):
        at = f"{field_name}[{index}]"
        check_length(f"{at}.name", component.name, MAX_COMPONENT_NAME)
        check_length(f"{at}.media_type", component.media_type, MAX_MEDIA_TYPE)
        check_length(f"{at}.approximate_note", component.approximate_note, MAX_APPROXIMATE_NOTE)
    check_components(field_name, components)
    for index, component in enumerate(components):
        problem = _content_problem(component.content)
        if problem:
            raise InvalidRequest(
                f"{field_name}[{index}].content",
                f"Component file {clip(component.name)!r} {problem}.",
            )


_DIGITS: Final = frozenset(b"0123456789")
_OPENING: Final = frozenset(b"[{")
_CLOSING: Final = frozenset(b"]}")


def _content_problem(content: bytes) -> str:
    """What makes `content` too costly to parse (a number with too many digits, brackets
    nested too deeply outside JSON strings), or "" when nothing does."""
    depth = run = 0
    in_string = escaped = False
    for byte in content:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
            continue
        if byte in _DIGITS:
            run += 1
            if run > MAX_COMPONENT_DIGITS:
                return f"has a number longer than {MAX_COMPONENT_DIGITS} digits"
            continue
        run = 0
        if byte == 0x22:
            in_string = True
        elif byte in _OPENING:
            depth += 1
            if depth > MAX_COMPONENT_NESTING:
                return f"nests brackets deeper than {MAX_COMPONENT_NESTING} levels"
        elif byte in _CLOSING:
            depth = max(0, depth - 1)
    return ""


def _check_game_name(field_name: str, name: str) -> None:
    check_length(field_name, name, MAX_GAME_NAME)


def _check_page_token(token: str) -> None:
    check_length("page_token", token, MAX_PAGE_TOKEN)


def _check_viewer(viewer: service_pb2.Viewer) -> None:
    if viewer.HasField("seat") and viewer.seat > MAX_SEAT:
        raise InvalidRequest("viewer.seat", f"There is no seat {viewer.seat}.")


def _create_game(request: service_pb2.CreateGameRequest) -> None:
    _check_game_name("game", request.game)
    if request.mode not in game_pb2.Mode.values():
        raise InvalidRequest("mode", f"mode {request.mode} is not a recording mode.")
    if len(request.players) > MAX_PLAYERS:
        raise InvalidRequest("players", f"At most {MAX_PLAYERS} players.")
    check_message("options", request.options, MOVE_BOUNDS)
    check_component_files("components", request.components)


def _list_games(request: service_pb2.ListGamesRequest) -> None:
    _check_game_name("game", request.game)
    if request.status not in service_pb2.GameStatus.values():
        raise InvalidRequest("status", f"status {request.status} is not a game status.")
    check_length("player", request.player, MAX_PLAYER_NAME)
    _check_page_token(request.page_token)


def _record_move(request: service_pb2.RecordMoveRequest) -> None:
    if request.HasField("move"):
        check_move("move", request.move)
    if request.HasField("seat") and request.seat > MAX_SEAT:
        raise InvalidRequest("seat", f"There is no seat {request.seat}.")


def _amend_move(request: service_pb2.AmendMoveRequest) -> None:
    change = request.WhichOneof("change")
    if change in ("replace_move", "insert_move"):
        new = getattr(request, change)
        if new.HasField("move"):
            check_move(f"{change}.move", new.move)
        if new.HasField("seat") and new.seat > MAX_SEAT:
            raise InvalidRequest(f"{change}.seat", f"There is no seat {new.seat}.")


def _paged(request: Any) -> None:
    _check_page_token(request.page_token)


def _viewed(request: Any) -> None:
    if request.HasField("viewer"):
        _check_viewer(request.viewer)


def _paged_and_viewed(request: Any) -> None:
    _paged(request)
    _viewed(request)


def check_variation(field_name: str, variation: events_pb2.Variation) -> None:
    """A variation's size first (moves per line, moves in all, nesting), walked without
    recursion; then each move held to MOVE_BOUNDS, each notation, comment and glyph, and
    the comments together to MAX_VARIATION_TEXT. The rules check it only after this."""
    total = text = 0
    pending: list[tuple[str, events_pb2.Variation, int]] = [(field_name, variation, 1)]
    while pending:
        path, line, depth = pending.pop()
        if depth > MAX_VARIATION_DEPTH:
            raise InvalidRequest(path, f"Variations nest {MAX_VARIATION_DEPTH} lines deep at most.")
        if len(line.moves) > MAX_VARIATION_MOVES:
            raise InvalidRequest(
                path,
                f"A line of a variation holds at most {MAX_VARIATION_MOVES} moves, "
                f"not {len(line.moves):,}.",
            )
        total += len(line.moves)
        if total > MAX_VARIATION_TOTAL:
            raise InvalidRequest(
                field_name,
                f"A variation holds at most {MAX_VARIATION_TOTAL} moves in all its lines.",
            )
        for index, move in enumerate(line.moves):
            at = f"{path}.moves[{index}]"
            if move.HasField("move"):
                check_move(f"{at}.move", move.move)
            check_length(f"{at}.notation", move.notation, MAX_NOTATION)
            check_length(f"{at}.comment", move.comment, MAX_COMMENT)
            if move.glyph not in GLYPHS:
                raise InvalidRequest(f"{at}.glyph", "That is not a glyph.")
            text += len(move.comment)
            pending.extend(
                (f"{at}.variations[{rank}]", nested, depth + 1)
                for rank, nested in enumerate(move.variations)
            )
    if text > MAX_VARIATION_TEXT:
        raise InvalidRequest(
            field_name,
            f"The comments of a variation are {text:,} characters together; the limit is "
            f"{MAX_VARIATION_TEXT:,}.",
        )


def _add_annotation(request: service_pb2.AddAnnotationRequest) -> None:
    check_variation("variation", request.variation)


def _replay(request: service_pb2.ReplayGameRequest) -> None:
    _viewed(request)
    if not request.HasField("variation"):
        return
    asked = request.variation
    check_length("variation.annotation_id", asked.annotation_id, MAX_ANNOTATION_ID)
    if len(asked.line) % 2 or len(asked.line) > 2 * (MAX_VARIATION_DEPTH - 1):
        raise InvalidRequest(
            "variation.line",
            "A line is pairs (move number, alternative number), nested "
            f"{MAX_VARIATION_DEPTH - 1} deep at most.",
        )
    if any(not 1 <= number <= MAX_VARIATION_TOTAL for number in asked.line):
        raise InvalidRequest(
            "variation.line", f"Moves and alternatives are numbered 1-{MAX_VARIATION_TOTAL}."
        )
    if request.to_revision:
        raise InvalidRequest(
            "to_revision",
            "A replay into a variation runs to the end of its line: leave to_revision unset.",
        )


def _remove_annotation(request: service_pb2.RemoveAnnotationRequest) -> None:
    check_length("annotation_id", request.annotation_id, MAX_ANNOTATION_ID)


def check_event(field_name: str, event: events_pb2.Event) -> None:
    """An imported event: every text, number and list bounded, its typed move held to
    MOVE_BOUNDS, its component files checked like CreateGame's."""
    check_message(field_name, event, EVENT_BOUNDS)
    body = event.WhichOneof("body")
    if body == "move_recorded":
        check_move(f"{field_name}.move_recorded.move", event.move_recorded.move)
        check_length(
            f"{field_name}.move_recorded.notation", event.move_recorded.notation, MAX_NOTATION
        )
    elif body == "move_amended":
        amended = event.move_amended
        where = f"{field_name}.move_amended"
        check_move(f"{where}.move", amended.move)
        for name in ("notation", "removed_notation"):
            check_length(f"{where}.{name}", getattr(amended, name), MAX_NOTATION)
        check_length(f"{where}.reason", amended.reason, MAX_REASON)
    elif body == "game_created":
        created = event.game_created
        where = f"{field_name}.game_created"
        _check_game_name(f"{where}.game", created.game)
        check_length(f"{where}.title", created.title, MAX_TITLE)
        for player in created.players:
            check_length(f"{where}.players.name", player.name, MAX_PLAYER_NAME)
        check_message(f"{where}.options", created.options, MOVE_BOUNDS)
        check_component_files(f"{where}.components", created.components)
        check_record_tags(f"{where}.record_tags", created.record_tags)
    elif body == "annotation_added":
        added = event.annotation_added
        where = f"{field_name}.annotation_added.annotation_id"
        check_length(where, added.annotation_id, MAX_ANNOTATION_ID)
        if added.glyph not in GLYPHS:
            raise InvalidRequest(f"{field_name}.annotation_added.glyph", "That is not a glyph.")
        check_variation(f"{field_name}.annotation_added.variation", added.variation)
    elif body == "annotation_removed":
        removed = event.annotation_removed.annotation_id
        check_length(f"{field_name}.annotation_removed.annotation_id", removed, MAX_ANNOTATION_ID)
    for text in (event.actor.user, event.actor.club, event.actor.client):
        check_length(f"{field_name}.actor", text, MAX_ACTOR_TEXT)
    for reason in (
        event.move_undone.reason,
        event.game_abandoned.reason,
        event.game_deleted.reason,
    ):
        check_length(f"{field_name}.reason", reason, MAX_REASON)


def check_record_tags(field_name: str, tags: Sequence[events_pb2.RecordTag]) -> None:
    """At most MAX_RECORD_TAGS, each one the text record can write back as it is: a tag
    name (not one the record makes from the game itself), once, with a one-line value."""
    if len(tags) > MAX_RECORD_TAGS:
        raise InvalidRequest(field_name, f"At most {MAX_RECORD_TAGS} record tags.")
    names: set[str] = set()
    for index, tag in enumerate(tags):
        at = f"{field_name}[{index}]"
        check_length(f"{at}.name", tag.name, MAX_RECORD_TAG_NAME)
        check_length(f"{at}.value", tag.value, MAX_RECORD_TAG_VALUE)
        if not record.TAG_NAME.fullmatch(tag.name) or tag.name in record.STRUCTURAL_TAGS:
            raise InvalidRequest(
                f"{at}.name",
                f"{clip(tag.name)!r} is not a descriptive tag's name (a letter, then letters, "
                "digits or _; not one the record makes from the game, such as Game).",
            )
        if tag.name in names:
            raise InvalidRequest(f"{at}.name", f"A second {tag.name} tag.")
        names.add(tag.name)
        if "\n" in tag.value:
            raise InvalidRequest(f"{at}.value", "A tag's value is one line.")


def _import_game(request: service_pb2.ImportGameRequest) -> None:
    check_length("request_id", request.request_id, MAX_REQUEST_ID)
    for index, event in enumerate(request.events):
        check_event(f"events[{index}]", event)


def _export_record(request: service_pb2.ExportRecordRequest) -> None:
    if len(request.game_ids) > MAX_RECORD_GAMES:
        raise InvalidRequest("game_ids", f"At most {MAX_RECORD_GAMES} games per record.")
    for index, game_id in enumerate(request.game_ids):
        if not GAME_ID.match(game_id):
            raise InvalidRequest(f"game_ids[{index}]", "That is not a game id.")
    _check_game_name("game", request.game)
    if request.status not in service_pb2.GameStatus.values():
        raise InvalidRequest("status", f"status {request.status} is not a game status.")
    _viewed(request)


def _import_record(request: service_pb2.ImportRecordRequest) -> None:
    check_length("text", request.text, MAX_RECORD_TEXT)
    check_length("request_id", request.request_id, MAX_REQUEST_ID)
    check_length("source", request.source, MAX_IMPORT_SOURCE)


CHECKS: Final[dict[type[Message], Callable[[Any], None]]] = {
    service_pb2.CreateGameRequest: _create_game,
    service_pb2.ListGamesRequest: _list_games,
    service_pb2.RecordMoveRequest: _record_move,
    service_pb2.AmendMoveRequest: _amend_move,
    service_pb2.GetStateRequest: _viewed,
    service_pb2.ReplayGameRequest: _replay,
    service_pb2.WatchGameRequest: _viewed,
    service_pb2.ListLegalMovesRequest: _paged_and_viewed,
    service_pb2.ListAnnotationsRequest: _paged,
    service_pb2.GetAuditLogRequest: _paged_and_viewed,
    service_pb2.AddAnnotationRequest: _add_annotation,
    service_pb2.RemoveAnnotationRequest: _remove_annotation,
    service_pb2.ImportGameRequest: _import_game,
    service_pb2.ExportRecordRequest: _export_record,
    service_pb2.ImportRecordRequest: _import_record,
}
"""The checks of each request beyond what its use case bounds itself (game ids, request
ids, notation, comments, reasons, titles, players' names, glyphs and page sizes are bounded
where they are used, see `tablelog.service.limits`)."""


def check_request(request: Message) -> None:
    """Refuse `request` (InvalidRequest) when a field is out of bounds; see CHECKS."""
    check = CHECKS.get(type(request))
    if check is not None:
        check(request)
