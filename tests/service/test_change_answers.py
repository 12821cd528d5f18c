"""The answer to a change shows its events as the caller may see them (issue 12): a
recorder, entitled to the spectator's view, is not answered the card the server deals to a
seat's blind reserve by RecordMove, RedoMove, AmendMove or a retried request; the player of
that seat is; the owner sees everything."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.recording.views import HIDDEN_MOVE
from tablelog.v1 import events_pb2, service_pb2
from tablelog_client import Client
from tests.service.helpers import OWNER_TOKEN


@dataclass
class Table:
    owner: Client
    recorder: Client
    player: Client
    """The player bound to seat 0 (Ann) of every game made here."""
    player_id: str


@pytest.fixture(scope="module")
def table(server: BackgroundServer) -> Iterator[Table]:
    with Client(server.target, token=OWNER_TOKEN) as owner:
        owner.update_club(players_may_record=True)
        tokens = {}
        for role in ("recorder", "player"):
            member = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
            tokens[role] = (member.member_id, owner.create_token(member.member_id).token)
        with (
            Client(server.target, token=tokens["recorder"][1]) as recorder,
            Client(server.target, token=tokens["player"][1]) as player,
        ):
            yield Table(owner, recorder, player, tokens["player"][0])


def new_game(table: Table) -> str:
    game = table.owner.create_game(
        "splendor", ["Ann", "Bob"], mode="dealt", seat_members=[table.player_id]
    )
    return game.game_id


def as_seen_by(
    owner: Client, game_id: str, viewer: service_pb2.Viewer, events: Sequence[events_pb2.Event]
) -> list[events_pb2.Event]:
    """`events` as the audit log shows them to `viewer` (the owner may ask for any view)."""
    shown = {entry.event.sequence: entry.event for entry in owner.audit(game_id, viewer=viewer)}
    return [shown[event.sequence] for event in events]


def the_deal(events: Sequence[events_pb2.Event]) -> events_pb2.MoveRecorded:
    (dealt,) = [e.move_recorded for e in events if e.move_recorded.dealt]
    return dealt


SPECTATOR = service_pb2.Viewer(spectator=True)
FULL = service_pb2.Viewer(full=True)


def test_a_recorder_is_not_answered_the_card_dealt_to_a_blind_reserve(table: Table) -> None:
    game_id = new_game(table)
    answer = table.recorder.record(game_id, "reserve 1.deck", request_id="blind-" + game_id)
    dealt = the_deal(answer.events)
    assert dealt.hidden
    assert dealt.notation == HIDDEN_MOVE
    assert not dealt.HasField("move")
    assert list(answer.events) == as_seen_by(table.owner, game_id, SPECTATOR, answer.events)
    card = the_deal(as_seen_by(table.owner, game_id, FULL, answer.events)).notation
    assert card not in str(answer)
    # A retry of the same request answers the original events, as redacted.
    again = table.recorder.record(
        game_id,
        "reserve 1.deck",
        expected_version=answer.game.version - len(answer.events),
        request_id="blind-" + game_id,
    )
    assert list(again.events) == list(answer.events)


def test_a_player_recording_for_their_seat_sees_their_own_card(table: Table) -> None:
    game_id = new_game(table)
    answer = table.player.record(game_id, "reserve 1.deck")
    dealt = the_deal(answer.events)
    assert not dealt.hidden
    assert dealt.notation != HIDDEN_MOVE
    seat = service_pb2.Viewer(seat=0)
    assert list(answer.events) == as_seen_by(table.owner, game_id, seat, answer.events)
    assert list(answer.events) == as_seen_by(table.owner, game_id, FULL, answer.events)


def test_the_owner_is_answered_everything(table: Table) -> None:
    game_id = new_game(table)
    answer = table.owner.record(game_id, "reserve 1.deck")
    assert not the_deal(answer.events).hidden
    assert list(answer.events) == as_seen_by(table.owner, game_id, FULL, answer.events)


def test_an_undo_a_redo_and_an_amend_answer_the_recorder_as_a_spectator(table: Table) -> None:
    game_id = new_game(table)
    recorded = table.player.record(game_id, "reserve 1.deck")
    undone = table.recorder.undo(game_id, expected_version=recorded.game.version)
    redone = table.recorder.redo(game_id, expected_version=undone.game.version)
    card = the_deal(as_seen_by(table.owner, game_id, FULL, recorded.events)).notation
    assert list(redone.events) == as_seen_by(table.owner, game_id, SPECTATOR, redone.events)
    assert card not in str(redone)
    reserve = next(e for e in recorded.events if not e.move_recorded.dealt)
    # Reserving from another deck instead drops the deal that followed and deals again.
    amended = table.recorder.amend(
        game_id,
        reserve.revision,
        "reserve 2.deck",
        drop_tail=True,
        expected_version=redone.game.version,
    )
    assert the_deal(amended.events).hidden
    assert list(amended.events) == as_seen_by(table.owner, game_id, SPECTATOR, amended.events)
    assert not the_deal(as_seen_by(table.owner, game_id, FULL, amended.events)).hidden
    assert list(undone.events) == as_seen_by(table.owner, game_id, SPECTATOR, undone.events)
