"""Seat bindings in the audit: BindSeat appends a SeatBound event to the game's stream
before it changes the binding, so who could read a seat's hidden information, and when,
is in the game's own (chained) history: a recorder cannot let someone read a hand and
bind the seat back without trace. The event changes nothing in the game's state (the fold
passes over it as over an annotation)."""

from __future__ import annotations

from tablelog.replay import fold as folding
from tablelog.service.recording.appending import Built, Origin, Outcome
from tablelog.service.recording.building import next_event, push
from tablelog.service.recording.heads import Head
from tablelog.service.recording.recorder import Recorder
from tablelog.v1 import events_pb2


async def record_binding(
    recorder: Recorder,
    game_id: str,
    seat: int,
    member_id: str,
    previous_member_id: str,
    actor: events_pb2.Actor,
) -> Outcome:
    """Append the SeatBound event of a binding (at the game's head, whatever its version:
    a binding is no move, and races no one)."""
    body = events_pb2.SeatBound(
        seat=seat, member_id=member_id, previous_member_id=previous_member_id
    )

    def build(head: Head) -> Built:
        events: list[events_pb2.Event] = []
        position = push(head.position, events, next_event(head.position, seat_bound=body))
        position_after: folding.Position = position
        return events, position_after

    return await recorder.appender.change(
        game_id, build, expected_revision=None, origin=Origin(actor)
    )
