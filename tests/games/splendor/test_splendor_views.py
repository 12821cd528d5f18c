"""Views: a blind reserve is seen by its owner only (RULES.md §4C, E13), over random play."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from google.protobuf import text_format

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE, TERMINAL
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.rules import State, unseen_cards
from tests.games.splendor.support import apply_text, fresh, moves
from tests.support.play import random_game

VIEW_GAMES = 10


def _mentions(shown: str, card_text: str) -> bool:
    return re.search(rf"(?<![0-9a-z:]){re.escape(card_text)}(?![0-9a-z])", shown) is not None


def blind_cards(state: State) -> list[tuple[int, int, int]]:
    """(owner, index, card id) of every named blind reserve."""
    return [
        (seat, index, card)
        for seat, player in enumerate(state.players)
        for index, (card, _level, blind) in enumerate(player.reserved)
        if blind and card
    ]


def swapped(state: State, seat: int, index: int, other: int) -> State:
    """The same state with the blind reserve replaced by another unseen card."""
    player = state.players[seat]
    card, level, blind = player.reserved[index]
    reserved = list(player.reserved)
    reserved[index] = (other, level, blind)
    players = list(state.players)
    players[seat] = replace(player, reserved=tuple(reserved))
    unseen = (state.unseen | (1 << card)) & ~(1 << other)
    return replace(state, players=tuple(players), unseen=unseen)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
def test_no_view_of_another_seat_shows_a_blind_reserve(players: int) -> None:
    checked = 0
    for seed in range(VIEW_GAMES):
        played = random_game("splendor", players, seed=500 + seed, mode=DEALT, keep_states=True)
        for number, state in enumerate(played.states):
            blinds = blind_cards(state)
            if not blinds:
                continue
            comps = state.rules.components
            # The same state with the first blind card swapped for another unseen one.
            owner, index, card = blinds[0]
            others = unseen_cards(state, comps.card(card).level)
            twin = swapped(state, owner, index, others[0]) if others and number % 3 == 0 else None
            for viewer in (SPECTATOR, *range(players)):
                view = GAME.view(state, viewer)
                for seat, position, hidden in blinds:
                    entry = view.players[seat].reserved[position]
                    if viewer == seat:
                        assert entry.card.id == hidden
                        continue
                    checked += 1
                    assert entry.hidden
                    assert entry.card.id == 0
                    assert entry.from_deck
                    if number % 10 == 0:
                        shown = text_format.MessageToString(view) + GAME.render(view)
                        assert not _mentions(shown, comps.card(hidden).text)
                # Which card was drawn changes nothing another seat can see.
                if twin is not None and viewer != owner:
                    assert GAME.view(twin, viewer).SerializeToString() == view.SerializeToString()
            if twin is not None:
                assert GAME.view(twin, owner) != GAME.view(state, owner)
    assert checked > 100


def test_full_view_and_owner_see_the_blind_card() -> None:
    position = moves(fresh(2, mode=DEALT), "reserve 3.deck", "reveal 3.deck 3u4:w7")
    state = position.state
    assert GAME.view(state, FULL).players[0].reserved[0].card.text == "3u4:w7"
    assert GAME.view(state, 0).players[0].reserved[0].card.text == "3u4:w7"
    other = GAME.view(state, 1).players[0].reserved[0]
    assert other.hidden
    assert other.level == 3
    assert not other.card.id
    assert "[hidden level-3 card]" in GAME.render(GAME.view(state, SPECTATOR))
    assert "3u4:w7 (blind)" in GAME.render(GAME.view(state, 0))


def test_table_mode_blind_reserve_is_unknown_until_bought() -> None:
    state = apply_text(fresh(2, mode=TABLE).state, "reserve 1.deck")
    for viewer in (FULL, SPECTATOR, 0, 1):
        entry = GAME.view(state, viewer).players[0].reserved[0]
        assert entry.unknown
        assert not entry.card.id
        assert entry.level == 1
    assert "not yet named" in GAME.render(GAME.view(state, 0))


def test_market_reserves_and_tokens_are_public() -> None:
    state = moves(fresh(2), "reserve 2.2", "reveal 2.2 2u1:u2g2r3").state
    view = GAME.view(state, 1)
    assert view.players[0].reserved[0].card.text == "2w1:w2u3r3"
    assert view.players[0].tokens.gold == 1
    assert view.bank.gold == 4
    assert view.awaiting == "action"
    assert view.current_player == 1
    text = GAME.render(view)
    assert "Level 2 [deck 25]" in text
    assert "h1 2w1:w2u3r3" in text


def test_a_dealt_blind_card_is_visible_only_to_its_owner() -> None:
    checked = 0
    for seed in range(40):
        played = random_game("splendor", 3, seed=seed, mode=DEALT, keep_states=True)
        game = played.position.game
        for envelope, before in zip(played.moves, played.states[:-1], strict=True):
            move = envelope.splendor
            blind = move.WhichOneof("action") == "reveal_card" and move.reveal_card.slot == 0
            owner = before.deal - 1
            assert game.visible_to(move, before, FULL)
            assert game.visible_to(move, before, SPECTATOR) is not blind
            for seat in range(3):
                assert game.visible_to(move, before, seat) is (not blind or seat == owner)
            checked += blind
        assert game.to_move(played.position.state) == TERMINAL
    assert checked > 0
