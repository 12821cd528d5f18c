"""What a game looks like to a client: its summary, a state snapshot as a viewer may see it,
and a step of a replay or a watch (hidden information redacted for whoever may not see it).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    FULL,
    SPECTATOR,
    TERMINAL,
    HistoryError,
    Viewer,
    seats_named,
)
from tablelog.replay.picture import WIDE
from tablelog.service.errors import InvalidRequest
from tablelog.service.recording.heads import Head
from tablelog.v1 import events_pb2, game_pb2, service_pb2


def to_move_message(position: folding.Position) -> game_pb2.ToMove:
    who = position.to_move()
    if who == TERMINAL:
        return game_pb2.ToMove(terminal=True)
    if who == CHANCE:
        return game_pb2.ToMove(chance=True)
    return game_pb2.ToMove(seat=who)


STATUS = {
    folding.Status.IN_PROGRESS: service_pb2.GAME_STATUS_IN_PROGRESS,
    folding.Status.ENDED: service_pb2.GAME_STATUS_ENDED,
    folding.Status.ABANDONED: service_pb2.GAME_STATUS_ABANDONED,
    folding.Status.DELETED: service_pb2.GAME_STATUS_DELETED,
}


_TEMPLATES: dict[int, tuple[weakref.ref[folding.Table], service_pb2.GameSummary]] = {}
"""Each live game table's summary template (`_template`), kept as long as the table lives:
a weak reference, so a template never keeps a game's table (its creation, components and
set-up state: 10-160 KB) alive after its head left the head cache. Holding the tables
strongly, up to 4,096 of them, kept the server's memory rising through a long club night."""


def approximate_notes(created: events_pb2.GameCreated) -> list[str]:
    """What the game's creation marked approximate among its components, one note each (the
    file's own note, else its name)."""
    return [c.approximate_note or c.name for c in created.components if c.approximate]


def _template(head: Head) -> service_pb2.GameSummary:
    """The parts of a game's summary that never change, built once per game table."""
    table = head.position.table
    cached = _TEMPLATES.get(id(table))
    if cached is not None and cached[0]() is table:
        return cached[1]
    created = table.created
    notes = approximate_notes(created)
    template = service_pb2.GameSummary(
        game_id=head.game_id,
        game=created.game,
        title=created.title,
        players=list(created.players),
        mode=created.mode,
        created_time=head.created_time,
        options=created.options,
        approximate_components=bool(notes),
        approximate_notes=notes,
    )
    key = id(table)

    def forget(ref: weakref.ref[folding.Table]) -> None:
        held = _TEMPLATES.get(key)
        if held is not None and held[0] is ref:  # not a later table given the same id
            del _TEMPLATES[key]

    _TEMPLATES[key] = (weakref.ref(table, forget), template)
    return template


def deletion_of(tombstone: events_pb2.Event) -> service_pb2.GameDeletion:
    """Who deleted a game, when and why, from its GameDeleted event."""
    return service_pb2.GameDeletion(
        by=tombstone.actor.user,
        member_id=tombstone.actor.member_id,
        time=tombstone.time,
        reason=tombstone.game_deleted.reason,
    )


def summarize(head: Head, tombstone: events_pb2.Event | None = None) -> service_pb2.GameSummary:
    """The game at `head`; `tombstone`, the GameDeleted event of a deleted game (its last
    event), fills in `deletion`."""
    position = head.position
    summary = service_pb2.GameSummary()
    summary.CopyFrom(_template(head))
    summary.game_id = head.game_id
    summary.status = STATUS[position.status]
    summary.version = position.revision
    summary.move_count = position.move_count
    summary.player_move_count = position.move_count - position.chance_count
    summary.to_move.CopyFrom(to_move_message(position))
    summary.updated_time.CopyFrom(head.updated_time)
    if position.result is not None:
        summary.result.CopyFrom(position.result)
    if tombstone is not None and tombstone.WhichOneof("body") == "game_deleted":
        summary.deletion.CopyFrom(deletion_of(tombstone))
    return summary


def viewer_of(
    viewer: service_pb2.Viewer | None, players: Sequence[str], unset: Viewer = SPECTATOR
) -> Viewer:
    """The viewer a request names; `unset` when it names none (the read's default)."""
    kind = viewer.WhichOneof("kind") if viewer is not None else None
    if kind is None:
        return unset
    if kind == "spectator":
        return SPECTATOR
    if kind == "full":
        return FULL
    assert viewer is not None
    if viewer.seat >= len(players):
        raise InvalidRequest(
            "viewer.seat",
            f"There is no seat {viewer.seat}: the players are {seats_named(players)}.",
        )
    return int(viewer.seat)


def viewer_message(viewer: Viewer) -> service_pb2.Viewer:
    """A decided viewer as the reads' requests carry it (`viewer_of` reads it back)."""
    if viewer is FULL:
        return service_pb2.Viewer(full=True)
    if viewer == SPECTATOR:
        return service_pb2.Viewer(spectator=True)
    return service_pb2.Viewer(seat=viewer)


def viewer_words(viewer: Viewer) -> str:
    """A viewer as an error's metadata names it: "full", "spectator" or "seat 2"."""
    if viewer is FULL:
        return "full"
    return "spectator" if viewer == SPECTATOR else f"seat {viewer}"


def reveals_all(position: folding.Position) -> bool:
    """Whether everything recorded of the game at `position` (its head) may be seen by every
    viewer: once a dealt game is over (ended or abandoned), since its GameEnded or
    GameAbandoned publishes the seed that every dealt outcome follows from; once a table
    game has ended, where its rules show everything at the end (`Game.reveals_all_at_end`:
    every game but Splendor, whose unbought blind reserves stay hidden, RULES.md E13)."""
    if position.status is folding.Status.IN_PROGRESS:
        return False
    if position.status is folding.Status.DELETED:
        # Kept as it stood: a dealt game over before its deletion had published its seed
        # (it has a result); a deleted table game shows no more than one in progress (it
        # may have been abandoned, which shows nothing more).
        return position.table.mode == DEALT and position.result is not None
    if position.table.mode == DEALT:
        return True
    return position.status is folding.Status.ENDED and position.game.reveals_all_at_end


def result_words(result: game_pb2.GameResult, players: Sequence[str]) -> str:
    """Who won, by name, with every score: "Ann wins with 16; Bob 15, Cleo 9"."""

    def name(seat: int) -> str:
        return players[seat] if 0 <= seat < len(players) else f"seat {seat}"

    totals = {score.seat: score.total for score in result.scores}
    winners = list(result.winners)
    if len(winners) == 1:
        seat = winners[0]
        head = f"{name(seat)} wins" + (f" with {totals[seat]}" if seat in totals else "")
    elif winners:
        shared = [name(s) + (f" ({totals[s]})" if s in totals else "") for s in winners]
        head = f"{', '.join(shared[:-1])} and {shared[-1]} share the win"
    else:
        head = "nobody wins"
    others = sorted(
        (seat for seat in totals if seat not in winners), key=lambda seat: -totals[seat]
    )
    if others:
        head += "; " + ", ".join(f"{name(seat)} {totals[seat]}" for seat in others)
    return head + (f" (tie-break: {result.tiebreak})" if result.tiebreak else "")


HIDDEN_MOVE = "(hidden)"
"""What a viewer sees in place of a move that deals hidden information to someone else."""


def _visible(table: folding.Table, move: game_pb2.Move, before: Any, viewer: Viewer) -> bool:
    return viewer is None or table.game.visible_to(table.unwrap(move), before, viewer)


def shown_notation(table: folding.Table, applied: folding.Applied, viewer: Viewer) -> str:
    """A move in effect as `viewer` sees it in a move list."""
    return (
        applied.notation if _visible(table, applied.move, applied.before, viewer) else HIDDEN_MOVE
    )


def picture(position: folding.Position, viewer: Viewer, view: Any, layout: str = WIDE) -> str:
    """The game's picture of `view` (the state at `position` as `viewer` sees it) in
    `layout`: the move that led to this state framed when there is one and `viewer` may see
    it, the components the game was created with marked approximate noted."""
    move, approximate = picture_inputs(position, viewer)
    return position.game.picture(view, last_move=move, approximate=approximate, layout=layout)


def picture_inputs(position: folding.Position, viewer: Viewer) -> tuple[Message | None, str]:
    """What a picture at `position` shows besides the view: the move that led to it (when
    `viewer` may see it) and the approximate components' notes
    (`tablelog.service.recording.pictures` sends them to the process that draws)."""
    table = position.table
    last = position.applied.head if position.applied is not None else None
    move = None
    if (
        last is not None
        and last.after is position.state
        and _visible(table, last.move, last.before, viewer)
    ):
        move = table.unwrap(last.move)
    return move, "; ".join(approximate_notes(table.created))


def snapshot(
    position: folding.Position,
    viewer: Viewer,
    moves: Sequence[str] | None = None,
    *,
    drawn: bool = False,
    view: Any = None,
    layout: str = WIDE,
) -> service_pb2.StateSnapshot:
    """The state at `position` as `viewer` sees it, with its picture when `drawn`. `moves`,
    when given, is the move list already computed (`shown_notation` of each move in effect:
    a watch tail keeps it up to date one move at a time); `view`, the view when the caller
    has made it (to draw it elsewhere, `tablelog.service.recording.pictures`)."""
    game = position.game
    table = position.table
    if view is None:
        view = game.view(position.state, viewer)
    result = position.result if position.result is not None else game.result(position.state)
    return service_pb2.StateSnapshot(
        picture=picture(position, viewer, view, layout) if drawn else "",
        revision=position.revision,
        view=table.wrap_view(view),
        text=game.render(view),
        to_move=to_move_message(position),
        result=result,
        moves=(
            moves
            if moves is not None
            else [shown_notation(table, applied, viewer) for applied in position.moves()]
        ),
    )


def _hidden_amendment(
    amended: events_pb2.MoveAmended, before: folding.Position, viewer: Viewer
) -> bool:
    """Whether an amendment puts in or takes out a move `viewer` may not see (judged, like
    a recorded move, in the state it is played in)."""
    target = folding.amended_move(before, amended.amended_revision)
    table = before.table
    moves = [amended.move] if amended.kind != folding.DELETE else []
    if amended.kind != folding.INSERT:
        moves.append(target.move)
    return not all(_visible(table, move, target.before, viewer) for move in moves)


def shown_event(
    event: events_pb2.Event, before: folding.Position, viewer: Viewer
) -> events_pb2.Event:
    """`event` as `viewer` may see it: a move that deals hidden information to another seat
    (or an amendment that puts in or takes out such a move) keeps its place, revision,
    actor, request id and hashes, not its content (`move` left out, notation "(hidden)",
    `hidden` set). Its hashes still cover the stored event, so only the full view's copy
    can be checked against the chain."""
    which = event.WhichOneof("body")
    if which == "move_amended" and _hidden_amendment(event.move_amended, before, viewer):
        shown = events_pb2.Event()
        shown.CopyFrom(event)
        amended = shown.move_amended
        amended.ClearField("move")
        amended.notation = amended.removed_notation = HIDDEN_MOVE
        amended.hidden = True
        return shown
    body = event.move_recorded if which == "move_recorded" else None
    if body is None or _visible(before.table, body.move, before.state, viewer):
        return event
    shown = events_pb2.Event()
    shown.CopyFrom(event)
    shown.move_recorded.ClearField("move")
    shown.move_recorded.notation = HIDDEN_MOVE
    shown.move_recorded.hidden = True
    return shown


def shown_events(
    events: Sequence[events_pb2.Event], before: folding.Position, viewer: Viewer
) -> list[events_pb2.Event]:
    """Consecutive `events`, the first of them following `before`, each as `viewer` may see
    it (`shown_event`, judged in the position before that event)."""
    shown = []
    position = before
    for index, event in enumerate(events):
        if index:
            position = folding.advance(position, events[index - 1])
        shown.append(shown_event(event, position, viewer))
    return shown


def move_detail(event: events_pb2.Event, before: folding.Position, viewer: Viewer) -> str:
    """What the move `event` puts in takes that its notation names only by its place (the
    card of a Splendor `buy 1.3`: "1k0:g3", `Game.detail`), judged in the state it is
    played in; empty for any other event and for a move `viewer` may not see, so a move
    list can name the card without the viewer learning what is hidden (issue 26)."""
    which = event.WhichOneof("body")
    table = before.table
    if which == "move_recorded":
        move, state = event.move_recorded.move, before.state
    elif which == "move_amended" and event.move_amended.kind != folding.DELETE:
        amended = event.move_amended
        try:
            target = folding.amended_move(before, amended.amended_revision)
        except HistoryError:
            return ""  # refused when it was appended: nothing was put in
        move, state = amended.move, target.before
    else:
        return ""
    if not move.WhichOneof("game") or not _visible(table, move, state, viewer):
        return ""
    return table.game.detail(table.unwrap(move), state)


def described(notation: str, detail: str) -> str:
    """A move as a move list shows it: its notation, and what it takes when the notation
    names it only by its place (`buy 1.3 (1k0:g3)`)."""
    return f"{notation} ({detail})" if detail else notation


def replay_item(
    event: events_pb2.Event,
    before: folding.Position,
    after: folding.Position,
    viewer: Viewer,
    moves: Sequence[str] | None = None,
    *,
    drawn: bool = False,
    view: Any = None,
    layout: str = WIDE,
) -> service_pb2.ReplayGameResponse:
    """One step of a replay or a watch: the event as `viewer` may see it (`shown_event`) and
    the state after it (`moves`: its move list, if known; its picture in `layout` when
    `drawn`)."""
    return service_pb2.ReplayGameResponse(
        event=shown_event(event, before, viewer),
        state=snapshot(after, viewer, moves, drawn=drawn, view=view, layout=layout),
        detail=move_detail(event, before, viewer),
        move_number=move_number(event, before, after),
    )


def move_number(event: events_pb2.Event, before: folding.Position, after: folding.Position) -> int:
    """The record's number of the player's move a step put in at the end of the moves in
    effect (recorded or redone; issue 26, one way to count), else 0."""
    if event.WhichOneof("body") not in ("move_recorded", "move_redone"):
        return 0
    if after.move_count != before.move_count + 1 or after.chance_count != before.chance_count:
        return 0
    return after.move_count - after.chance_count


def annotation_of(event: events_pb2.Event) -> service_pb2.Annotation:
    """An AnnotationAdded event as ListAnnotations and AddAnnotation answer it."""
    added = event.annotation_added
    return service_pb2.Annotation(
        annotation_id=added.annotation_id,
        revision=added.revision,
        comment=added.comment,
        glyph=added.glyph,
        actor=event.actor,
        time=event.time,
        variation=added.variation if added.variation.moves else None,
    )
