"""The service's side of variations (an annotation's alternative line,
`tablelog.replay.variations`): checking one against the game when it is added, telling a refusal to
the client, describing it in the audit, and replaying into it.

Which view a variation is checked from: an annotation is read by everyone who may read the
game (ListAnnotations is open to spectators and link tokens), so a variation is checked
from the spectator's side whoever adds it, unless the game shows everything to everyone now
(`tablelog.service.recording.views.reveals_all`: a dealt game over, a table game ended whose rules
show all). A recorder (spectator view) or a player (its own seats) is therefore held to the same
rule as the owner (full view): no variation where the position hides something from a spectator, no
move that deals hidden information. A refusal of that kind is PERMISSION_DENIED (VARIATION_HIDDEN,
VARIATION_MOVE_HIDDEN) and is decided before the move is checked, so its answer does not depend on
what is hidden.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, IllegalMove, NotationError, Viewer
from tablelog.replay.picture import WIDE
from tablelog.replay.variations import (
    IllegalVariationMove,
    Line,
    VariationRefused,
    check_variation,
    follow,
    line_text,
    start_before,
)
from tablelog.service.errors import (
    NotFound,
    PermissionDenied,
    ServiceError,
    VariationIllegal,
)
from tablelog.service.recording.views import replay_item, reveals_all
from tablelog.v1 import events_pb2, service_pb2

SHOWN_IN_AUDIT = 8
"""Moves of a variation the audit's words name before "…"."""


def variation_viewer(head: folding.Position) -> Viewer:
    """The view a variation added now is checked from (see the module docstring)."""
    return FULL if reveals_all(head) else SPECTATOR


def checked(
    events: Sequence[events_pb2.Event],
    anchor: int,
    variation: events_pb2.Variation,
    viewer: Viewer,
) -> events_pb2.Variation:
    """`variation` of the move named `anchor` checked by the rules, as it is stored; a
    refusal told as the service tells it (`told`)."""
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    try:
        return check_variation(start, variation, viewer)
    except VariationRefused as refused:
        raise told(refused) from refused


def told(refused: VariationRefused) -> ServiceError:
    """A refused variation as the client is told it: a move that reads as no move is
    INVALID_ARGUMENT (INVALID_NOTATION), one the rules refuse FAILED_PRECONDITION
    (ILLEGAL_VARIATION_MOVE, metadata `rule`), a hidden one PERMISSION_DENIED; each names
    the move by its `path` ("4", "3.1:2") and `notation`."""
    metadata = {"path": refused.path, "notation": refused.notation}
    if isinstance(refused, IllegalVariationMove):
        metadata["rule"] = refused.cause.code
        if isinstance(refused.cause, NotationError):
            return ServiceError(
                "INVALID_NOTATION", refused.message, field_name="variation", metadata=metadata
            )
        return VariationIllegal(
            "ILLEGAL_VARIATION_MOVE", refused.message, field_name="variation", metadata=metadata
        )
    return PermissionDenied(refused.code, refused.message, metadata=metadata)


def audit_words(variation: events_pb2.Variation) -> str:
    """ "with a variation: take w u k, buy 1.2" (its first moves, and how many lines
    branch off it)."""
    moves = [move.notation for move in variation.moves]
    shown = ", ".join(moves[:SHOWN_IN_AUDIT]) + (" …" if len(moves) > SHOWN_IN_AUDIT else "")
    branches = sum(len(move.variations) for move in variation.moves)
    nested = f" (and {branches} alternative line{'s' * (branches != 1)})" if branches else ""
    return f"with a variation: {shown}{nested}"


def replay_into(
    events: Sequence[events_pb2.Event],
    asked: service_pb2.VariationPath,
    first: int,
    viewer: Viewer,
    *,
    drawn: bool = False,
    layout: str = WIDE,
) -> Iterator[service_pb2.ReplayGameResponse]:
    """The replay of a variation: the main line from `first` up to the position before the
    annotated move (for an annotation of the whole game, revision 1: the creation), then
    the variation's line `asked.line`, each move synthesized as a MoveRecorded (sequence 0,
    the annotated revision, never stored) with the state after it, marked by the response's
    `variation`. `viewer` sees both as a replay shows them."""
    line: Line = tuple(asked.line)
    note = _annotation(events, asked.annotation_id)
    anchor = note.revision
    if not note.variation.moves:
        raise NotFound(
            "VARIATION_NOT_FOUND",
            f"Annotation {asked.annotation_id} carries no variation.",
            metadata={"annotation_id": asked.annotation_id},
        )
    position = folding.start(events[0].game_created)
    for index, event in enumerate(events):
        before = position
        if index:
            position = folding.advance(position, event)
        if event.revision >= max(anchor, 2):
            break
        if event.revision >= first:
            yield replay_item(event, before, position, viewer, drawn=drawn, layout=layout)
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    try:
        position, moves = follow(start, note.variation, line)
    except IllegalMove as missing:
        raise NotFound(
            "VARIATION_NOT_FOUND", missing.message, metadata={"line": line_text(line)}
        ) from missing
    for number, move in enumerate(moves, 1):
        before = position
        position = folding.record(position, move.move, move.notation)
        recorded = events_pb2.MoveRecorded(move=move.move, notation=move.notation)
        event = events_pb2.Event(sequence=0, revision=anchor, move_recorded=recorded)
        item = replay_item(event, before, position, viewer, drawn=drawn, layout=layout)
        item.state.revision = anchor
        item.variation.CopyFrom(asked)
        item.variation_move = number
        yield item


def _annotation(
    events: Sequence[events_pb2.Event], annotation_id: str
) -> events_pb2.AnnotationAdded:
    """The live annotation `annotation_id` (added and not removed)."""
    found: events_pb2.AnnotationAdded | None = None
    for event in events:
        body = event.WhichOneof("body")
        if body == "annotation_added" and event.annotation_added.annotation_id == annotation_id:
            found = event.annotation_added
        elif body == "annotation_removed" and event.annotation_removed.annotation_id == (
            annotation_id
        ):
            found = None
    if found is None:
        raise NotFound(
            "ANNOTATION_NOT_FOUND",
            f"This game has no annotation {annotation_id!r}.",
            metadata={"annotation_id": annotation_id},
        )
    return found
