"""Seeded random histories of any registered game, with everything a stream can hold after
its creation: moves, undos, redos, amendments (replace, insert, delete, with the tail they
drop), annotations, and the game's end. Each event is folded strictly as it is made, so a
history this builds is one the service could have stored."""

from __future__ import annotations

import random

from tablelog.replay import fold as folding
from tablelog.replay.core import TABLE, TERMINAL
from tablelog.replay.registry import all_games
from tablelog.v1 import events_pb2, game_pb2
from tests.support.play import choose, created

KINDS = (folding.REPLACE, folding.INSERT, folding.DELETE)


def players_of(name: str) -> int:
    game = all_games()[name]
    return max(game.min_players, min(3, game.max_players))


def random_history(
    name: str,
    length: int,
    seed: int,
    mode: game_pb2.Mode.ValueType = TABLE,
    *,
    undo_weight: float = 0.15,
    amend_weight: float = 0.06,
) -> list[events_pb2.Event]:
    """`length` events of a game of `name` (unsealed: the store seals what it appends),
    mostly moves, with undos, redos, amendments and annotations among them (an amendment
    often drops a tail that no longer applies: a low `amend_weight` keeps more moves in
    effect); an ended game is taken back by undo, or left ended near the end."""
    rng = random.Random(f"{name}/{seed}")
    body = created(name, players_of(name), mode=mode)
    events = [events_pb2.Event(sequence=1, revision=1, game_created=body)]
    position = folding.start(body)
    game = position.game
    while len(events) < length:
        event = events_pb2.Event(sequence=len(events) + 1, revision=position.revision + 1)
        roll = rng.random()
        over = position.status is not folding.Status.IN_PROGRESS
        if over or game.to_move(position.state) == TERMINAL:
            if not over and (mode != TABLE or len(events) > length - 3):
                event.game_ended.result.CopyFrom(game.result(position.state))
            elif position.can_undo:
                assert position.applied is not None
                event.move_undone.undone_revision = position.applied.head.revision
            else:
                break
        elif roll < undo_weight:
            if position.can_undo:
                assert position.applied is not None
                event.move_undone.undone_revision = position.applied.head.revision
            else:
                _move(position, event, rng)
        elif roll < undo_weight * 1.6:
            if position.can_redo:
                assert position.undone is not None
                event.move_redone.redone_revision = position.undone.head.revision
            else:
                _move(position, event, rng)
        elif roll < undo_weight * 1.6 + amend_weight:
            if position.applied is not None and mode == TABLE:
                _amendment(position, event, rng)
            else:
                _move(position, event, rng)
        elif roll < undo_weight * 2 + amend_weight:
            event.revision = position.revision
            note = event.annotation_added
            note.annotation_id = f"n{event.sequence}"
            note.revision = position.applied.head.revision if position.applied else 1
            note.comment = f"note {event.sequence}"
        else:
            _move(position, event, rng)
        position = folding.advance(position, event, strict=True)
        events.append(event)
    return events


def _move(position: folding.Position, event: events_pb2.Event, rng: random.Random) -> None:
    """A random legal move (a chance outcome by its weight)."""
    inner = choose(position.game, position.state, rng)
    event.move_recorded.move.CopyFrom(position.table.wrap(inner))
    event.move_recorded.notation = position.game.format(inner, position.state)


def _amendment(position: folding.Position, event: events_pb2.Event, rng: random.Random) -> None:
    """A random amendment of a move in effect, with the tail it drops."""
    moves = position.moves()
    target = moves[rng.randrange(len(moves))]
    kind = rng.choice(KINDS)
    move = None
    if kind != folding.DELETE:
        move = position.table.wrap(choose(position.game, target.before, rng))
    amended = folding.amend(position, kind, target.revision, move)
    body = event.move_amended
    body.amended_revision = target.revision
    body.kind = kind
    if move is not None:
        body.move.CopyFrom(move)
    body.notation = amended.notation
    body.removed_notation = amended.removed.notation if amended.removed else ""
    if amended.broken is not None:
        body.dropped_from_revision = amended.broken.applied.revision
        body.dropped_moves = amended.broken.dropped
