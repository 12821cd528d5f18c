"""Every registered game, every player count, both modes, through the live gRPC API.

For each game in `replay.registry.all_games()` (so a new game is covered the day it is
registered) a seeded random game is recorded BY NOTATION, the way a recorder at the table
types it. After every change the server's state (full viewer) must equal the local fold of
the same events; after the first move and in the middle one move is undone and redone, and
every seat's view, the spectator's and the legal moves are compared too; at the end the game
has its GameEnded with the result the rules compute, ReplayGame streams every revision with
the states the fold computed, VerifyGame holds, and the exported events import again.
In dealt mode the server deals: the test types only the players' moves, folds the dealt
outcomes the server appended, and once the seed is revealed draws every dealt outcome
again itself (the documented HMAC ticket)."""

from __future__ import annotations

import hashlib
import hmac
import random
import zlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, FULL, SPECTATOR, TABLE, TERMINAL
from tablelog.replay.registry import all_games, find_game
from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client import Client
from tests.support.play import choose

pytestmark = pytest.mark.slow

MODE_NAMES: dict[int, str] = {TABLE: "table", DEALT: "dealt"}
UNDO_AFTER = (1, 12)
"""The players' moves after which the change is undone and redone: the first (a solo
Mercado de Lisboa stage may end at the second) and one in the middle of every longer game."""
ATTEMPTS = 5
"""Dealt games are drawn from the server's secret seed: one that ends before any undo was
possible is recorded again (the rules allow such short games)."""
MAX_MOVES = 2_000


def cases() -> list[Any]:
    return [
        pytest.param(name, players, mode, id=f"{name}-{players}p-{MODE_NAMES[mode]}")
        for name, game in all_games().items()
        for players in range(game.min_players, game.max_players + 1)
        for mode in game.modes
    ]


def expected_snapshot(position: folding.Position) -> service_pb2.StateSnapshot:
    """What GetState must answer for the full viewer, computed from the local fold."""
    game = position.game
    view = game.view(position.state, FULL)
    who = position.to_move()  # TERMINAL once the game has ended or was abandoned
    if who == TERMINAL:
        to_move = game_pb2.ToMove(terminal=True)
    elif who == CHANCE:
        to_move = game_pb2.ToMove(chance=True)
    else:
        to_move = game_pb2.ToMove(seat=who)
    return service_pb2.StateSnapshot(
        revision=position.revision,
        view=position.table.wrap_view(view),
        text=game.render(view),
        to_move=to_move,
        result=position.result if position.result is not None else game.result(position.state),
        moves=[applied.notation for applied in position.moves()],
    )


def drawn_ticket(seed: bytes, number: int, outcomes: list[tuple[Message, int]]) -> int:
    """docs/service.md, Dealt mode (scheme 1): the k-th chance move in effect, drawn from
    `outcomes`, is drawn with HMAC-SHA256(seed, "tablelog/deal/count/" + k as 8 bytes +
    SHA-256 of each outcome's length (4 bytes), deterministic bytes and weight (4 bytes))
    mod the total weight."""
    drawn_from = b"".join(
        len(text).to_bytes(4, "big") + text + weight.to_bytes(4, "big")
        for text, weight in ((o.SerializeToString(deterministic=True), w) for o, w in outcomes)
    )
    key = b"tablelog/deal/count/" + number.to_bytes(8, "big") + hashlib.sha256(drawn_from).digest()
    total = sum(weight for _, weight in outcomes)
    return int.from_bytes(hmac.new(seed, key, hashlib.sha256).digest(), "big") % total


def chance_moves_in_effect(position: folding.Position) -> int:
    """Counted from the moves in effect, not from the fold's own counter."""
    game, table = position.game, position.table
    return sum(game.is_chance(table.unwrap(applied.move)) for applied in position.moves())


@dataclass
class Recording:
    """The local side of one recorded game: the fold of the server's events, checked."""

    client: Client
    game_id: str
    position: folding.Position
    expected: dict[int, service_pb2.StateSnapshot] = field(default_factory=dict)
    dealt: list[tuple[int, list[tuple[Message, int]], Message]] = field(default_factory=list)
    undos: int = 0

    def fold_in(self, events: list[events_pb2.Event]) -> None:
        for event in events:
            recorded = event.move_recorded if event.HasField("move_recorded") else None
            if recorded is not None and recorded.dealt:
                outcomes = list(self.position.game.chance_outcomes(self.position.state))
                inner = self.position.table.unwrap(recorded.move)
                number = chance_moves_in_effect(self.position) + 1
                self.dealt.append((number, outcomes, inner))
            self.position = folding.advance(self.position, event)
            self.expected[event.revision] = expected_snapshot(self.position)

    def check_state(self) -> None:
        state = self.client.state(self.game_id, full=True)
        assert state == self.expected[self.position.revision]


def record_whole_game(client: Client, name: str, players: int, mode: int) -> Recording:
    game = find_game(name)
    seed = zlib.crc32(f"{name}/{players}/{mode}".encode())
    rng = random.Random(seed)
    names = [f"Player {i + 1}" for i in range(players)]
    summary = client.create_game(name, names, mode=MODE_NAMES[mode], title=f"seed {seed}")
    created = client.export(summary.game_id)
    assert created[0].WhichOneof("body") == "game_created"
    if mode == DEALT:  # the setup's reveals are dealt at creation
        assert all(e.move_recorded.dealt for e in created[1:])
    else:
        assert len(created) == 1
    recording = Recording(client, summary.game_id, folding.fold(created[:1]))
    recording.expected[1] = expected_snapshot(recording.position)
    recording.fold_in(created[1:])
    assert summary.version == recording.position.revision
    recording.check_state()

    version = summary.version
    typed = 0  # moves typed by the test: players' moves, and the reveals in table mode
    while recording.position.to_move() != TERMINAL:
        assert typed < MAX_MOVES, f"{name}: no end after {MAX_MOVES} moves"
        before = recording.position
        who = before.to_move()
        if mode == DEALT:
            assert who != CHANCE, "in dealt mode the server deals every chance move"
        inner = choose(game, before.state, rng)
        text = game.format(inner, before.state)
        response = client.record(recording.game_id, text, expected_version=version)
        first = response.events[0].move_recorded
        assert (first.notation, first.dealt) == (text, False)
        assert first.move == before.table.wrap(inner)
        bodies = [e.WhichOneof("body") for e in response.events]
        if mode == TABLE:  # the move alone, with GameEnded when it ends the game
            assert bodies in (["move_recorded"], ["move_recorded", "game_ended"])
        else:  # the move, the outcomes dealt after it, GameEnded when it ends the game
            ending = ["game_ended"] if bodies[-1] == "game_ended" else []
            assert bodies == ["move_recorded"] * (len(bodies) - len(ending)) + ending
            assert all(
                e.move_recorded.dealt for e in response.events[1 : len(bodies) - len(ending)]
            )
        recording.fold_in(list(response.events))
        version = response.game.version
        assert version == recording.position.revision
        assert response.game.move_count == recording.position.move_count
        recording.check_state()
        typed += 1
        if typed in UNDO_AFTER and recording.position.status is folding.Status.IN_PROGRESS:
            version = undo_and_redo(recording, before, version, response)
    return recording


def undo_and_redo(
    recording: Recording,
    before: folding.Position,
    version: int,
    recorded: service_pb2.RecordMoveResponse,
) -> int:
    """Undo takes back the player's move (with the outcomes dealt after it, in dealt mode)
    and redo puts them all back: the states are the ones before and after the move."""
    client, game_id = recording.client, recording.game_id
    after = recording.position
    game = after.game
    moves = sum(1 for e in recorded.events if e.HasField("move_recorded"))
    undone = client.undo(game_id, expected_version=version, reason="a test")
    assert [e.WhichOneof("body") for e in undone.events] == ["move_undone"] * moves
    recording.fold_in(list(undone.events))
    assert game.view(recording.position.state, FULL) == game.view(before.state, FULL)
    assert recording.position.move_count == before.move_count
    recording.check_state()
    redone = client.redo(game_id, expected_version=undone.game.version)
    assert [e.WhichOneof("body") for e in redone.events] == ["move_redone"] * moves
    recording.fold_in(list(redone.events))
    assert game.view(recording.position.state, FULL) == game.view(after.state, FULL)
    assert recording.position.moves() == after.moves()
    recording.check_state()
    recording.undos += 1
    check_views_and_legal_moves(recording)
    return int(redone.game.version)


def check_views_and_legal_moves(recording: Recording) -> None:
    """Each seat's and a spectator's view, and the legal moves, are the local fold's."""
    client, game_id, position = recording.client, recording.game_id, recording.position
    game, state = position.game, position.state
    for seat in [None, *range(len(position.table.players))]:
        shown = client.state(game_id, seat=seat)
        seen = game.view(state, SPECTATOR if seat is None else seat)
        assert shown.view == position.table.wrap_view(seen)
        assert shown.text == game.render(seen)
    to_move, legal = client.legal_moves(game_id)
    assert to_move == expected_snapshot(position).to_move
    who = position.to_move()
    seat = who if who >= 0 else None
    assert [(m.move, m.notation) for m in legal] == [
        (position.table.wrap(move, seat), game.format(move, state))
        for move in game.legal_moves(state)
    ]


@pytest.mark.parametrize(("name", "players", "mode"), cases())
def test_record_a_whole_random_game_by_notation(
    client: Client, name: str, players: int, mode: int
) -> None:
    recording = record_whole_game(client, name, players, mode)
    for _attempt in range(ATTEMPTS - 1 if mode == DEALT else 0):
        if recording.undos:
            break
        recording = record_whole_game(client, name, players, mode)
    assert recording.undos > 0, "the game ended before any move could be undone"
    game_id, position = recording.game_id, recording.position
    game = position.game

    # The game ended with the result the rules compute, in one GameEnded.
    assert position.status is folding.Status.ENDED
    assert position.result == game.result(position.state)
    summary = client.get_game(game_id)
    assert summary.status == service_pb2.GAME_STATUS_ENDED
    assert summary.result == position.result
    assert summary.to_move == game_pb2.ToMove(terminal=True)
    events = client.export(game_id)
    bodies = [e.WhichOneof("body") for e in events]
    assert bodies.count("game_ended") == 1
    assert bodies[-1] == "game_ended"
    assert bodies.count("move_undone") == bodies.count("move_redone") > 0

    # ReplayGame streams every revision with the state the local fold computed.
    frames = list(client.replay(game_id, full=True))
    assert [f.event for f in frames] == events
    assert [f.state.revision for f in frames] == list(range(1, position.revision + 1))
    for frame in frames:
        assert frame.state == recording.expected[frame.state.revision]

    # VerifyGame holds; in dealt mode every dealt outcome is the seed's.
    verified = client.verify(game_id)
    assert verified.ok, verified.problem
    assert verified.events_checked == len(events)
    if position.table.mode == DEALT:
        seed = events[-1].game_ended.seed
        assert hashlib.sha256(seed).digest() == events[0].game_created.seed_commitment
        assert recording.dealt, "a dealt game deals"
        assert events[0].game_created.dealing_scheme == 1
        for number, outcomes, inner in recording.dealt:
            assert folding.pick_outcome(outcomes, drawn_ticket(seed, number, outcomes)) == inner
        assert verified.dealt_moves_checked == len(recording.dealt)
    else:
        assert not events[-1].game_ended.seed
        assert verified.dealt_moves_checked == 0

    # The exported events import as a new game, re-validated, that verifies the same way.
    imported = client.import_events(events)
    assert imported.game_id != game_id
    assert (imported.status, imported.version, imported.result) == (
        summary.status,
        summary.version,
        summary.result,
    )
    again = client.verify(imported.game_id)
    assert again.ok, again.problem
    assert again.dealt_moves_checked == verified.dealt_moves_checked
    assert client.state(imported.game_id, full=True) == recording.expected[position.revision]
