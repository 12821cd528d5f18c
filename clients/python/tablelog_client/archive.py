"""The strict archive (docs/record-format.md): a game's events as JSON lines, one event per
line, and the archive a game was imported from, given back from its imported events.

An import keeps every exported event's content and seals it again in this server's chain;
what it had to change (the game's id and club, its players' member ids, the chain fields,
a time, actor or rules version the export lacked, the export's own import marks) is kept in
each event's `imported` marks. `original_events` undoes exactly those changes, so that the
archive written from them is byte for byte the one that was imported."""

from __future__ import annotations

import json
from collections.abc import Sequence

from google.protobuf import json_format

from tablelog.v1 import events_pb2


def archive_line(event: events_pb2.Event) -> str:
    """One event as a line of the strict archive (compact JSON, fields in schema order)."""
    return json.dumps(json_format.MessageToDict(event), separators=(",", ":")) + "\n"


def archive_text(events: Sequence[events_pb2.Event]) -> str:
    return "".join(archive_line(event) for event in events)


def original_events(events: Sequence[events_pb2.Event]) -> list[events_pb2.Event]:
    """The events an imported game was imported from, as they were exported: the imported
    events at the start of `events` (those recorded since the import are not part of it)
    with the import's changes undone. Empty when the game was not imported."""
    originals: list[events_pb2.Event] = []
    for event in events:
        if not event.HasField("imported"):
            break
        marks = event.imported
        original = events_pb2.Event()
        original.CopyFrom(event)
        original.ClearField("imported")
        if marks.HasField("original_imported"):
            original.imported.CopyFrom(marks.original_imported)
            original.imported.SetInParent()
        original.prev_hash = marks.original_prev_hash
        original.hash = marks.original_hash
        original.chain_key_id = marks.original_chain_key_id
        if marks.time_filled:
            original.ClearField("time")
        if marks.actor_filled:
            original.ClearField("actor")
            if marks.HasField("original_actor"):
                original.actor.CopyFrom(marks.original_actor)
                original.actor.SetInParent()
        if original.WhichOneof("body") == "game_created":
            created = original.game_created
            created.game_id = marks.original_game_id
            created.club = marks.original_club
            for player, member_id in zip(created.players, marks.original_member_ids, strict=False):
                player.member_id = member_id
            if marks.rules_version_filled:
                created.rules_version = ""
        originals.append(original)
    return originals
