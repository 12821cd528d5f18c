"""Fair dealing (issue 11, build 6): in dealt mode an outcome depends only on the seed and on
what has been dealt, never on the revision, so nobody can fish for a better card by taking a
move back and playing it again. Games recorded under the old revision-keyed scheme still
verify."""

from __future__ import annotations

import hashlib
import random
import zlib
from dataclasses import replace

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, TERMINAL
from tablelog.replay.registry import all_games, find_game
from tablelog.service.recording.building import (
    DEALING_BY_COUNT,
    DEALING_BY_REVISION,
    deal_and_end,
    deal_key,
    next_event,
    push,
)
from tablelog.v1 import events_pb2
from tablelog_client import Client
from tests.service.helpers import refused
from tests.support.play import choose, created

DEALT_GAMES = sorted(name for name, game in all_games().items() if DEALT in game.modes)
TRIES = 20
MAX_TYPED = 400
MAX_REDEALS = 25


def test_a_blind_reserve_taken_back_and_made_again_deals_the_same_card(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    version = game.version
    dealt: list[str] = []
    for _try in range(TRIES):
        reserved = client.record(game.game_id, "reserve 1.deck", expected_version=version)
        deals = [e.move_recorded.notation for e in reserved.events if e.move_recorded.dealt]
        assert len(deals) == 1
        dealt.append(deals[0])
        version = client.undo(game.game_id, expected_version=reserved.game.version).game.version
    assert len(set(dealt)) == 1, f"{len(set(dealt))} different cards in {TRIES} tries"


HIDDEN_DEALS = {"castello-methoni", "medici", "splendor"}
"""Games whose dealt outcomes include hidden information (checked along the game below)."""


@pytest.mark.parametrize("name", DEALT_GAMES)
def test_no_dealt_outcome_can_be_fished_by_undoing(client: Client, name: str) -> None:
    """Along a random game: every player's move that makes the server deal is taken back
    and made again, and must be dealt exactly the same outcomes, hidden ones included."""
    game = find_game(name)
    rng = random.Random(zlib.crc32(name.encode()))
    players = [f"P{i + 1}" for i in range(max(game.min_players, 2))]
    summary = client.create_game(name, players, mode="dealt")
    position = folding.fold(client.export(summary.game_id))
    version = summary.version
    redealt = hidden = 0
    for _typed in range(MAX_TYPED):
        if position.to_move() == TERMINAL or redealt >= MAX_REDEALS:
            break
        assert position.to_move() != CHANCE
        inner = choose(game, position.state, rng)
        text = game.format(inner, position.state)
        first = client.record(summary.game_id, text, expected_version=version)
        appended, version = list(first.events), first.game.version
        dealt = [e.move_recorded.notation for e in first.events if e.move_recorded.dealt]
        if dealt and first.events[-1].WhichOneof("body") != "game_ended":
            undone = client.undo(summary.game_id, expected_version=version)
            again = client.record(summary.game_id, text, expected_version=undone.game.version)
            assert [e.move_recorded.notation for e in again.events if e.move_recorded.dealt] == (
                dealt
            ), f"{name}: {text!r} was dealt differently after an undo"
            redealt += 1
            appended += [*undone.events, *again.events]
            version = again.game.version
        for event in appended:
            if event.move_recorded.dealt:
                outcome = position.table.unwrap(event.move_recorded.move)
                seats = range(len(players))
                hidden += not all(game.visible_to(outcome, position.state, s) for s in seats)
            position = folding.advance(position, event)
    assert redealt > 0, f"{name}: no player's move made the server deal"
    assert (hidden > 0) == (name in HIDDEN_DEALS), f"{name}: {hidden} hidden deals re-dealt"


def legacy_dealt_game(seed: bytes, moves: int) -> list[events_pb2.Event]:
    """A dealt Splendor game built as servers before the dealing scheme built them (outcomes
    keyed by revision), abandoned after `moves` players' moves with the seed revealed. Its
    events carry no chain (as an export from before keyed chains), so importing it needs
    `accept_unverified`: what is tested here is the dealing, not the chain."""
    body = created("splendor", ["Ann", "Bob"], mode=DEALT)
    body.seed_commitment = hashlib.sha256(seed).digest()
    body.dealing_scheme = DEALING_BY_REVISION
    events = [events_pb2.Event(sequence=1, revision=1, game_created=body)]
    position = deal_and_end(folding.fold(events), events, seed)
    rng = random.Random(7)
    game = position.game
    for _move in range(moves):
        inner = choose(game, position.state, rng)
        recorded = events_pb2.MoveRecorded(
            move=position.table.wrap(inner), notation=game.format(inner, position.state)
        )
        position = push(position, events, next_event(position, move_recorded=recorded))
        position = deal_and_end(position, events, seed)
    abandoned = events_pb2.GameAbandoned(reason="legacy", seed=seed)
    push(position, events, next_event(position, game_abandoned=abandoned))
    return events


def test_games_dealt_under_the_revision_scheme_still_verify(client: Client) -> None:
    seed = b"a legacy seed".ljust(32, b".")
    events = legacy_dealt_game(seed, 30)
    imported = client.import_events(events, accept_unverified=True)
    verified = client.verify(imported.game_id)
    assert verified.ok, verified.problem
    assert verified.dealt_moves_checked == sum(e.move_recorded.dealt for e in events) > 12

    # The same outcomes claimed under the counting scheme are not what the seed deals.
    events[0].game_created.dealing_scheme = DEALING_BY_COUNT
    error = refused(lambda: client.import_events(events, accept_unverified=True))
    assert (error.reason, error.metadata["rule"]) == ("INVALID_HISTORY", "NOT_DEALT_BY_SEED")


def test_an_unknown_dealing_scheme_is_refused_on_import(client: Client) -> None:
    events = legacy_dealt_game(b"s".ljust(32, b"."), 2)
    events[0].game_created.dealing_scheme = 99
    error = refused(lambda: client.import_events(events, accept_unverified=True))
    assert (error.reason, error.metadata["rule"]) == ("INVALID_HISTORY", "DEALING_SCHEME")


def test_new_dealt_games_record_the_counting_scheme(client: Client) -> None:
    dealt = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    table = client.create_game("splendor", ["Ann", "Bob"])
    assert client.export(dealt.game_id)[0].game_created.dealing_scheme == DEALING_BY_COUNT
    assert client.export(table.game_id)[0].game_created.dealing_scheme == 0


def test_the_deal_key_depends_on_what_was_dealt_and_the_outcomes_not_the_revision() -> None:
    body = created("splendor", ["Ann", "Bob"], mode=DEALT)
    body.dealing_scheme = DEALING_BY_COUNT
    position = folding.fold([events_pb2.Event(sequence=1, revision=1, game_created=body)])
    outcomes = list(position.game.chance_outcomes(position.state))
    later = replace(position, revision=position.revision + 40, sequence=position.sequence + 45)
    assert deal_key(later, outcomes) == deal_key(position, outcomes)
    # Another deck (here: the same cards less one) at the same count draws independently.
    assert deal_key(position, outcomes[1:]) != deal_key(position, outcomes)
    after_one = replace(position, chance_count=position.chance_count + 1)
    assert deal_key(after_one, outcomes) != deal_key(position, outcomes)
