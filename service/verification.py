"""Checking a game's history: the strict checks every imported history must pass
(`HistoryCheck`), and VerifyGame's check of what is stored (`verify_entries`): the hash
chain over the stored bytes, then the same strict checks.

Damaged stored data is answered as such (ok=false with the first bad sequence and
revision); a fault of the server's own (a bug in the rules) is not damage and propagates
(INTERNAL, logged), so it is never reported as a damaged history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from google.protobuf.message import DecodeError, Message

from replay import fold as folding
from replay.core import CHANCE, DEALT, HistoryError, RulesError
from service.building import deal_key, deal_ticket
from service.chain import GENESIS_HASH, stored_hash
from service.limits import check_game_id
from service.store import EventStore, GameNotFound, StoredHead
from tablelog.v1 import events_pb2, service_pb2


class HistoryCheck:
    """The checks a history must pass beyond its hash chain, event by event: the strict fold
    (every move re-validated, each stored notation canonical, each undo and redo naming the
    move it takes back, GameEnded only at the end with the rules' result), dealt moves
    exactly where chance moves are in dealt mode, and, once a dealt game is over, the
    revealed seed matching the commitment and every dealt outcome re-drawn from it.
    `add` and `finish` raise RulesError; `failed_at` is the (index, revision) it concerns."""

    def __init__(self) -> None:
        self.position: folding.Position | None = None
        self.index = 0
        self.dealt: list[tuple[int, int, bytes, list[tuple[Message, int]], Message]] = []
        self.seed = b""
        self.ending: tuple[int, int] | None = None
        self.failed_at = (0, 0)
        self.dealt_checked = 0

    def add(self, event: events_pb2.Event) -> None:
        self.index += 1
        self.failed_at = (self.index, event.revision or self.index)
        body = event.WhichOneof("body")
        position = self.position
        if position is None:
            if body != "game_created" or event.sequence != 1:
                raise HistoryError("NO_CREATION", "A game's history must start with GameCreated.")
            self.position = folding.start(event.game_created)
            return
        if body == "move_recorded" and position.table.mode == DEALT:
            recorded = event.move_recorded
            inner = position.table.unwrap(recorded.move)
            chance = position.to_move() == CHANCE
            if recorded.dealt != chance:
                raise HistoryError(
                    "DEALT_MISMATCH",
                    f"Event {self.index}: in dealt mode the server deals every chance move "
                    "and nothing else.",
                )
            if chance:
                outcomes = list(position.game.chance_outcomes(position.state))
                key = deal_key(position, outcomes)
                self.dealt.append((self.index, event.revision, key, outcomes, inner))
        self.position = folding.advance(position, event, strict=True)
        if body == "game_ended":
            self.seed, self.ending = event.game_ended.seed, self.failed_at
        elif body == "game_abandoned":
            self.seed, self.ending = event.game_abandoned.seed, self.failed_at

    def finish(self) -> None:
        """The dealt checks that need the whole game (the seed is revealed at its end)."""
        position = self.position
        assert position is not None
        created = position.table.created
        if created.mode != DEALT or position.status is folding.Status.IN_PROGRESS:
            return
        assert self.ending is not None
        self.failed_at = self.ending
        if not self.seed or hashlib.sha256(self.seed).digest() != created.seed_commitment:
            raise HistoryError(
                "SEED_MISMATCH",
                f"Event {self.ending[0]} ends a dealt game without revealing the seed "
                "committed to at its creation.",
            )
        for index, revision, key, outcomes, inner in self.dealt:
            total = sum(weight for _, weight in outcomes)
            drawn = folding.pick_outcome(outcomes, deal_ticket(self.seed, key, total))
            if drawn != inner:
                self.failed_at = (index, revision)
                raise HistoryError(
                    "NOT_DEALT_BY_SEED", f"Event {index} is not what the seed dealt."
                )
            self.dealt_checked += 1


async def verify(store: EventStore, game_id: str) -> service_pb2.VerifyGameResponse:
    """VerifyGame: the stored entries and head of `game_id`, checked (`verify_entries`)."""
    check_game_id(game_id)
    raw = await store.read_raw(game_id)
    if not raw:
        raise GameNotFound(game_id)
    return verify_entries(raw, await store.head(game_id))


def verify_entries(
    raw: Sequence[tuple[int, bytes]], stored_head: StoredHead
) -> service_pb2.VerifyGameResponse:
    """Recompute the chain from the stored bytes, re-fold every event strictly and, once a
    dealt game is over, check its seed and re-draw every dealt outcome (`HistoryCheck`).
    The first event that does not hold is reported. Anything else the rules raise is a
    fault of the server's own, not damage, and propagates."""
    response = service_pb2.VerifyGameResponse()
    prev_hash = GENESIS_HASH
    check = HistoryCheck()

    def bad(sequence: int, revision: int, problem: str) -> service_pb2.VerifyGameResponse:
        response.ok = False
        response.first_bad_sequence = sequence
        response.first_bad_revision = revision
        response.problem = problem
        return response

    for index, (sequence, data) in enumerate(raw, start=1):
        position = check.position
        expected_revision = position.revision + 1 if position else 1
        event = events_pb2.Event()
        try:
            event.ParseFromString(data)
        except DecodeError:
            return bad(index, expected_revision, f"event {index} does not decode")
        response.events_checked = index
        revision = event.revision or expected_revision
        if sequence != index or event.sequence != index:
            return bad(index, revision, f"event {index} is numbered {event.sequence}")
        if event.prev_hash != prev_hash:
            return bad(index, revision, f"event {index} does not link to event {index - 1}")
        # The hash covers the stored bytes themselves (see `stored_hash`), not a copy
        # re-serialized from what they decode to.
        sealed = stored_hash(data)
        if sealed is None or sealed[0] != sealed[1] or event.hash != sealed[0]:
            return bad(index, revision, f"event {index}'s hash does not match its stored bytes")
        prev_hash = event.hash
        try:
            check.add(event)
        except RulesError as exc:
            return bad(index, revision, f"event {index} does not hold: {exc}")
    final = check.position
    assert final is not None
    if stored_head.sequence != len(raw) or stored_head.last_hash != prev_hash:
        return bad(len(raw) + 1, final.revision + 1, "events are missing at the end")
    try:
        check.finish()
    except RulesError as exc:
        return bad(*check.failed_at, str(exc))
    response.dealt_moves_checked = check.dealt_checked
    response.ok = True
    return response
