"""Games as text records (docs/record-format.md): the export of a game as its caller may
see it, and the import of a record's games through the one import path (`import_game`).

The text is read and written by `tablelog.replay.record`; this module bounds it, scopes it to the
caller's view and stores what it reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from tablelog.replay import fold as folding
from tablelog.replay import record
from tablelog.replay.core import DEALT, FULL
from tablelog.service.errors import Exhausted, ImportRefused, InvalidRequest
from tablelog.service.limits import (
    MAX_IMPORT_SOURCE,
    MAX_RECORD_GAMES,
    MAX_RECORD_MOVES,
    MAX_RECORD_TAG_NAME,
    MAX_RECORD_TAG_VALUE,
    MAX_RECORD_TAGS,
    MAX_RECORD_TEXT,
    MAX_REQUEST_ID,
    check_length,
)
from tablelog.service.recording.amending import mark_orphans
from tablelog.service.recording.appending import Outcome
from tablelog.service.recording.reads import live_annotations
from tablelog.service.recording.views import viewer_of
from tablelog.v1 import events_pb2, service_pb2

if TYPE_CHECKING:
    from tablelog.service.recording.recorder import Recorder

RECORD_TAG_BOUNDS: Final = record.TagBounds(
    MAX_RECORD_TAGS, MAX_RECORD_TAG_NAME, MAX_RECORD_TAG_VALUE
)
GAME_SUFFIX: Final = 8
"""Room kept in a request id for the game's index in the record (`#<n>`)."""


async def game_record(
    recorder: Recorder, game_id: str, viewer: service_pb2.Viewer
) -> record.GameRecord:
    """The record of a game as `viewer` (decided by the caller's entitlement) sees it: a
    move it may not see is written `hidden`; annotations whose move an amendment took out
    are left out, as the undone and amended history is (and any on a move recorded since
    the head was read)."""
    position = (await recorder.load(game_id)).position  # the head cache's fold
    events = await recorder.events(game_id)  # for the annotations
    table = position.table
    seen = viewer_of(viewer, table.players, unset=FULL)
    notes = live_annotations(events)
    mark_orphans(events, notes)
    kept = {note_id for note_id, note in notes.items() if not note.orphaned}
    annotations = [
        event.annotation_added
        for event in events
        if event.WhichOneof("body") == "annotation_added"
        and event.annotation_added.annotation_id in kept
    ]
    reason = next(
        (e.game_abandoned.reason for e in events if e.WhichOneof("body") == "game_abandoned"), ""
    )

    def visible(applied: folding.Applied) -> bool:
        inner = table.unwrap(applied.move)
        return seen is FULL or table.game.visible_to(inner, applied.before, seen)

    return record.record_of(position, annotations, visible=visible, abandoned_reason=reason)


def written(records: Sequence[record.GameRecord]) -> str:
    """The text of `records`, refused (RESOURCE_EXHAUSTED) past MAX_RECORD_TEXT."""
    text = record.write(records)
    if len(text) > MAX_RECORD_TEXT:
        raise Exhausted(
            "RECORD_TOO_LARGE",
            f"The record of these {len(records)} games is {len(text):,} characters; the "
            f"limit is {MAX_RECORD_TEXT:,}. Export fewer games at once.",
            metadata={"limit": str(MAX_RECORD_TEXT)},
        )
    return text


def check_export_count(count: int) -> None:
    if count > MAX_RECORD_GAMES:
        raise InvalidRequest(
            "game_ids",
            f"At most {MAX_RECORD_GAMES} games per record; narrow the filter or name the games.",
        )


def read_record(text: str, request_id: str, source: str) -> list[record.GameRecord]:
    """The games of an imported record, every move checked; refused (INVALID_ARGUMENT,
    INVALID_RECORD, with the `rule`, `line` and `column`) at its first problem."""
    check_length("text", text, MAX_RECORD_TEXT)
    check_length("request_id", request_id, MAX_REQUEST_ID - GAME_SUFFIX)
    check_length("source", source, MAX_IMPORT_SOURCE)
    try:
        games = record.read(text, MAX_RECORD_GAMES, MAX_RECORD_MOVES, RECORD_TAG_BOUNDS)
    except record.RecordError as refused:
        raise ImportRefused(
            "INVALID_RECORD",
            refused.message,
            metadata={
                "rule": refused.code,
                "line": str(refused.line),
                "column": str(refused.column),
            },
        ) from None
    if not games:
        raise InvalidRequest("text", "The record holds no game: a game starts with its tags.")
    # A dealt game's text does not hold the dealing server's secret seed, so it is imported
    # as a table game: what was dealt becomes what the table revealed (issue 26).
    try:
        return [record.as_table_game(g) if g.created.mode == DEALT else g for g in games]
    except record.RecordError as refused:
        raise ImportRefused(
            "INVALID_RECORD",
            refused.message,
            metadata={
                "rule": refused.code,
                "line": str(refused.line),
                "column": str(refused.column),
            },
        ) from None


async def import_record(
    recorder: Recorder,
    games: Sequence[record.GameRecord],
    request_id: str,
    actor: events_pb2.Actor,
    source: str,
) -> list[Outcome]:
    """Store each game of a record read by `read_record`, in order, each whole or not at
    all, through the import path: its events are marked imported from `source`, and
    unverified (a text has no chain). The reader checked every move by the rules as it
    read it, in this process: the import path takes those moves as checked rather than
    applying each again, and builds no position of its own for them (the reader's fold is
    the only one; the rest of the history check still runs)."""
    outcomes = []
    for index, game in enumerate(games):
        events = record.events_of(game)
        outcomes.append(
            await recorder.import_game(
                events,
                f"{request_id}#{index}" if request_id else "",
                actor,
                accept_unverified=True,
                source=source,
                checked_moves=[m.applied for m in game.moves if m.applied is not None],
            )
        )
    return outcomes
