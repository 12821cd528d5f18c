"""Deleting a game (issue 26): the club's owner appends a GameDeleted tombstone through the
chain. The stream is kept and verifies, the game leaves every listing and the club's memory,
every later change is refused with who deleted it and when, a second deletion answers the
same tombstone, a recorder is refused and changes nothing, and another club learns nothing
(NOT_FOUND exactly as for an unknown id). Real Redis, the session's server."""

from __future__ import annotations

import functools
import os
import subprocess

import grpc
import pytest
import redis

from tablelog.replay import fold as folding
from tablelog.replay.core import HistoryError
from tablelog.replay.registry import find_game
from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.service.store.game_index import INDEX_SCRIPT
from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client import Client
from tablelog_client.sdk import TablelogError
from tests.service.support import tablelog_command
from tests.service.test_club_memory import play, settled
from tests.service.test_players import _club


def refused(call: object) -> TablelogError:
    assert callable(call)
    with pytest.raises(TablelogError) as caught:
        call()
    return caught.value


def test_the_owner_deletes_a_game_that_then_is_kept_closed_and_unlisted(
    server: BackgroundServer, embedded_redis: EmbeddedRedis
) -> None:
    club_id, token = _club(server)
    with Client(server.target, token=token, timeout=30) as owner:
        ended = play(owner, "splendor", ["Ann", "Bob"], 3)
        running = play(owner, "splendor", ["Ann", "Cleo"], 4, moves=6)
        counted = settled(owner, "splendor", lambda found: len(found.rows) == 2)
        assert {row.display_name for row in counted.rows} == {"Ann", "Bob"}
        events_before = len(owner.export(ended))

        deleted = owner.delete_game(ended, reason="a test game")
        assert deleted.status == service_pb2.GAME_STATUS_DELETED
        assert (deleted.deletion.by, deleted.deletion.reason) == ("Boss", "a test game")
        stream = owner.export(ended)
        assert len(stream) == events_before + 1
        assert stream[-1].WhichOneof("body") == "game_deleted"
        assert stream[-1].revision == stream[-2].revision  # no move changed
        assert deleted.version == stream[-1].revision

        # Kept: it reads, verifies and tells its deletion in the audit.
        assert owner.get_game(ended).deletion.by == "Boss"
        assert owner.verify(ended).ok
        assert owner.audit(ended)[-1].summary == "Boss deleted the game (a test game)"
        # Out of every listing, whatever the filter; the other game is still there.
        for kind, status, player in (("", "", ""), ("splendor", "", ""), ("", "ended", "Ann")):
            listed = [g.game_id for g in owner.list_games(kind, status, player=player)]
            assert ended not in listed
        assert running in [g.game_id for g in owner.list_games()]
        # Out of the club's memory: Bob played only the deleted game.
        after = settled(owner, "splendor", lambda found: len(found.rows) == 0)
        assert not after.rows

        # Closed to every change, each refused with who deleted it and when.
        changes = (
            lambda: owner.record(ended, "take w u g"),
            lambda: owner.undo(ended),
            lambda: owner.redo(ended),
            lambda: owner.abandon(ended),
            lambda: owner.annotate(ended, "too late", revision=1),
            lambda: owner.amend(ended, 2, notation="take w u g"),
        )
        for change in changes:
            error = refused(change)
            assert error.code == grpc.StatusCode.FAILED_PRECONDITION
            assert error.reason == "GAME_DELETED"
            assert error.message.startswith("This game was deleted by Boss on ")
            assert error.metadata["deleted_by"] == "Boss"
        assert len(owner.export(ended)) == events_before + 1  # nothing was appended

        # Deleting again answers the same tombstone, and appends nothing.
        again = owner.delete_game(ended, reason="twice")
        assert again.deletion == deleted.deletion
        assert len(owner.export(ended)) == events_before + 1

        # Nothing more to watch (a watch from the head would wait for good).
        watched = subprocess.run(
            [*tablelog_command(), "watch", ended, "--timeout", "5"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TABLELOG_ADDRESS": server.target, "TABLELOG_TOKEN": token},
            check=True,
        ).stdout.splitlines()
        assert "  deleted by Boss on " in watched[0]
        assert watched[0].endswith(" UTC (a test game)")
        assert watched[1] == (
            "this game was deleted: nothing more to watch (replay it with `tablelog replay`)"
        )

        # Its strict archive imports as it was: a deleted game, kept, verified, unlisted.
        restored = owner.import_events(owner.export(ended))
        assert restored.status == service_pb2.GAME_STATUS_DELETED
        assert owner.verify(restored.game_id).ok
        assert restored.game_id not in [g.game_id for g in owner.list_games()]

        # A game in progress is deleted as well, and its index entry still says whose it is.
        owner.delete_game(running)
        assert running not in [g.game_id for g in owner.list_games()]
        stored = redis.Redis.from_url(embedded_redis.url)
        entry = stored.hget(f"tl:{{club:{club_id}}}:listing:entries", running)
        assert entry is not None
        assert entry.split()[2] == str(service_pb2.GAME_STATUS_DELETED).encode()


def test_a_recorder_may_not_delete_and_another_club_learns_nothing(
    server: BackgroundServer,
) -> None:
    _club_id, token = _club(server)
    _other_id, other_token = _club(server)
    with (
        Client(server.target, token=token, timeout=30) as owner,
        Client(server.target, token=other_token, timeout=30) as stranger,
    ):
        game = owner.create_game("splendor", ["Ann", "Bob"]).game_id
        recorder_id = owner.add_member("Rita", "recorder").member_id
        with Client(
            server.target, token=owner.create_token(recorder_id).token, timeout=30
        ) as recorder:
            error = refused(lambda: recorder.delete_game(game))
            assert error.code == grpc.StatusCode.PERMISSION_DENIED
            assert owner.get_game(game).status == service_pb2.GAME_STATUS_IN_PROGRESS
            assert len(owner.export(game)) == 1
            owner.delete_game(game)
            # A member who may not delete is told the game was deleted when they change it.
            error = refused(lambda: recorder.record(game, "take w u g"))
            assert (error.code, error.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "GAME_DELETED",
            )
        # Another club: the deleted game's id answers as an unknown id does.
        unknown = "zzzzzzzzzzzz"
        for call in (stranger.get_game, stranger.delete_game, stranger.verify):
            found = refused(functools.partial(call, game))
            none = refused(functools.partial(call, unknown))
            assert (found.code, found.reason) == (none.code, none.reason)
            assert found.code == grpc.StatusCode.NOT_FOUND
            assert found.message == none.message.replace(unknown, game)


def test_the_index_script_leaves_deleted_games_out_of_every_set() -> None:
    # The Lua names GAME_STATUS_DELETED by its number.
    assert f'status == "{service_pb2.GAME_STATUS_DELETED}"' in INDEX_SCRIPT


def test_the_fold_refuses_an_event_after_the_tombstone() -> None:
    created = events_pb2.GameCreated(
        game_id="g",
        game="splendor",
        players=[events_pb2.Player(name=n) for n in "AB"],
        mode=game_pb2.MODE_TABLE,
        components=find_game("splendor").default_components(),
    )
    events = [
        events_pb2.Event(sequence=1, revision=1, game_created=created),
        events_pb2.Event(sequence=2, revision=1, game_deleted=events_pb2.GameDeleted()),
    ]
    position = folding.fold(events)
    assert position.status is folding.Status.DELETED
    note = events_pb2.AnnotationAdded(annotation_id="a", revision=1, comment="late")
    late = events_pb2.Event(sequence=3, revision=1, annotation_added=note)
    with pytest.raises(HistoryError) as caught:
        folding.fold([*events, late])
    assert caught.value.code == "AFTER_DELETION"
