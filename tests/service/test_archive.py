"""The strict archive (docs/record-format.md): a game's events as JSON lines. Imported, it
becomes a new game sealed in this server's chain that VerifyGame passes, and the archive it
came from is given back byte for byte (`tablelog export GAME --original`), for every game,
for a history with undo, redo, amendments and annotations, for an archive of a game that was
itself imported, and for an archive written elsewhere without times, actors or hashes."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from tablelog.replay.registry import all_games
from tablelog.v1 import events_pb2
from tablelog_client import Client
from tablelog_client.archive import archive_text, original_events
from tests.support.play import random_game
from tests.support.records import PLAYERS

pytestmark = pytest.mark.slow

GAMES = sorted(all_games())


def _events_of(text: str) -> list[events_pb2.Event]:
    """An archive read back as `tablelog import` reads it."""
    events = []
    for line in text.splitlines():
        event = events_pb2.Event()
        json_format.Parse(line, event)
        events.append(event)
    return events


def _recorded_with_history(client: Client, name: str, seed: int) -> str:
    """A game recorded at the table with an undo, a redo, an amendment and annotations."""
    rules = all_games()[name]
    players = PLAYERS[: max(rules.min_players, 2)]
    game_id = client.create_game(name, players).game_id
    played = random_game(name, len(players), seed=seed)
    for index, notation in enumerate(played.notations):
        client.record(game_id, notation)
        if index == 6:
            client.undo(game_id, reason="misheard")
            client.redo(game_id)
            client.annotate(game_id, "a {braced} comment", glyph="!?")
        if index == 9:
            revision = client.get_game(game_id).version
            client.amend(game_id, revision, notation, reason="same move, retyped")
    return game_id


def _dealt_and_abandoned(client: Client) -> str:
    """A dealt game (the server draws every chance outcome from its seed), abandoned after
    some moves, which reveals the seed."""
    game_id = client.create_game("splendor", ["Ann", "Bob"], mode="dealt").game_id
    for _ in range(12):
        _, legal = client.legal_moves(game_id)
        client.record(game_id, legal[len(legal) // 2].notation)
    client.abandon(game_id, reason="closing time")
    return game_id


@pytest.mark.parametrize("name", GAMES)
def test_an_imported_archive_is_given_back_byte_for_byte_and_verifies(
    client: Client, name: str
) -> None:
    game_id = _recorded_with_history(client, name, seed=31)
    archive = archive_text(client.export(game_id))
    imported = client.import_events(_events_of(archive), source="backup.jsonl")
    assert client.verify(imported.game_id).ok
    stored = client.export(imported.game_id)
    assert all(event.imported.verified for event in stored)
    assert archive_text(original_events(stored)) == archive
    # The imported game's own archive, imported again, nests the first import's marks:
    # both archives come back.
    second = archive_text(stored)
    again = client.import_events(_events_of(second), source="copy.jsonl")
    assert client.verify(again.game_id).ok
    twice = client.export(again.game_id)
    assert archive_text(original_events(twice)) == second
    assert archive_text(original_events(original_events(twice))) == archive
    # Moves recorded after the import are the new game's, not the archive's.
    if stored[-1].WhichOneof("body") not in ("game_ended", "game_abandoned"):
        client.annotate(imported.game_id, "after the import")
    assert archive_text(original_events(client.export(imported.game_id))) == archive


def test_a_dealt_games_archive_is_given_back_byte_for_byte_and_verifies(client: Client) -> None:
    game_id = _dealt_and_abandoned(client)
    archive = archive_text(client.export(game_id))
    imported = client.import_events(_events_of(archive))
    verified = client.verify(imported.game_id)
    assert verified.ok, verified.problem
    assert verified.dealt_moves_checked > 0
    assert archive_text(original_events(client.export(imported.game_id))) == archive


def test_an_archive_written_elsewhere_without_times_actors_or_hashes_comes_back_as_it_was(
    client: Client,
) -> None:
    game_id = _recorded_with_history(client, "splendor", seed=32)
    events = client.export(game_id)
    for event in events:
        for field in ("time", "prev_hash", "hash", "chain_key_id", "rules_version"):
            event.ClearField(field)
        event.actor.user = ""  # an actor naming a club but no member
    events[1].ClearField("actor")  # and one with no actor at all
    created = events[0].game_created
    created.rules_version = ""
    created.players[0].member_id = "m-ann-elsewhere"
    created.club = "a-club-elsewhere"
    archive = archive_text(events)
    imported = client.import_events(_events_of(archive), accept_unverified=True)
    assert client.verify(imported.game_id).ok
    stored = client.export(imported.game_id)
    assert all(e.actor.user and e.HasField("time") for e in stored)  # filled in here
    assert stored[0].game_created.rules_version
    assert archive_text(original_events(stored)) == archive


def test_a_game_not_imported_has_no_original_archive(client: Client) -> None:
    game_id = client.create_game("medici", PLAYERS[:3]).game_id
    assert original_events(client.export(game_id)) == []
