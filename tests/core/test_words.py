"""A legal move in a player's words (issue 25: the recording bar shows the move composed by
taps in words before it is recorded). In states sampled from random play of every game, in
both modes, every legal move has words for every viewer that name whoever makes it, and the
words never tell a viewer what its view does not show."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tablelog.replay.core import CHANCE, DEALT, FULL, SPECTATOR, TABLE, TERMINAL
from tablelog.replay.registry import all_games, find_game
from tests.support.play import random_game

GAMES = sorted(all_games())
SAMPLES = 30
"""States checked per game and mode: spread evenly over one random game."""
WORD = re.compile(r"[\w:+|.\-]+")


def tokens(text: str) -> set[str]:
    """The words of a text, punctuation that ends a sentence left off (`1k0:g3`, `c6|c7`)."""
    return {word.strip(".") for word in WORD.findall(text.lower())} - {""}


def sampled(name: str, mode: Any, seed: int) -> tuple[list[str], list[Any]]:
    game = find_game(name)
    played = random_game(name, game.min_players + 1, seed=seed, mode=mode, keep_states=True)
    states = played.states
    step = max(1, len(states) // SAMPLES)
    kept = [s for s in states[::step] if game.to_move(s) != TERMINAL]
    return list(played.position.table.players), kept


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_every_legal_move_has_words_naming_the_mover_and_nothing_hidden(
    name: str, mode: Any
) -> None:
    game = find_game(name)
    if mode not in game.modes:
        pytest.skip(f"{name} has no {mode} mode")
    players, states = sampled(name, mode, seed=11)
    said = 0
    hidden_checked = 0
    for state in states:
        who = game.to_move(state)
        mover = "The table" if who == CHANCE else players[who]
        viewers = [FULL, SPECTATOR, *range(len(players))]
        full_words = tokens(game.render(game.view(state, FULL)))
        for viewer in viewers:
            # What the full view shows and this viewer's does not: never in its words.
            unseen = full_words - tokens(game.render(game.view(state, viewer)))
            redacted = game.redact(state, viewer)
            hidden_words: set[str] = set()
            for move in game.legal_moves(state):
                words = game.words(move, state, viewer)
                notation = game.format(move, state)
                assert words.strip(), f"{notation!r} has no words for {viewer}"
                assert mover in words, f"{words!r} ({notation!r}) does not name {mover}"
                leaked = tokens(words) & unseen - tokens(notation)
                assert not leaked, f"{words!r} tells viewer {viewer} of {leaked}, not in its view"
                # The words are worked out from what the viewer may know alone.
                assert game.words(move, redacted, viewer) == words, (
                    f"{notation!r}: the words for viewer {viewer} depend on what it cannot see"
                )
                if not game.visible_to(move, state, viewer):
                    # A move the viewer may not see: its words are those of every other such
                    # move (a card dealt face down, a tile removed unseen), naming none.
                    hidden_words.add(words)
                    assert notation.split()[-1] not in words, f"{words!r} names what is hidden"
                    hidden_checked += 1
                said += 1
            assert len(hidden_words) <= 1, f"hidden moves told apart to {viewer}: {hidden_words}"
    assert said, "no state with a legal move was sampled"
    if mode == DEALT and name in ("castello-methoni", "medici"):
        assert hidden_checked, f"{name}: no move hidden from a viewer was sampled"


def test_splendor_says_a_purchase_as_a_player_does() -> None:
    game = find_game("splendor")
    players, states = sampled("splendor", TABLE, seed=11)
    for state in states:
        if game.to_move(state) < 0:
            continue
        for move in game.legal_moves(state):
            notation = game.format(move, state)
            if notation.startswith("buy ") and "." in notation.split()[1]:
                detail = game.detail(move, state)
                words = game.words(move, state, game.to_move(state))
                slot = notation.split()[1]
                assert words.startswith(f"{players[game.to_move(state)]} buys {detail} ")
                assert f"from slot {slot}" in words
                return
    pytest.fail("no purchase from the market was sampled")


def test_a_blind_reserve_is_named_to_its_holder_alone() -> None:
    """RULES.md §4C, E13: a card reserved face down (dealt, so the state names it) is said
    to the seat that holds it and to the full view, never to another viewer."""
    game = find_game("splendor")
    for seed in range(40):
        played = random_game("splendor", 2, seed=seed, mode=DEALT, keep_states=True)
        for state in played.states:
            seat = game.to_move(state)
            if seat < 0:
                continue
            held = state.players[seat].reserved
            blind = [i for i, (card, _level, face_down) in enumerate(held, 1) if card and face_down]
            if not blind:
                continue
            move = game.parse(f"buy h{blind[0]}", state)
            card = game.detail(move, state)
            assert card in game.words(move, state, seat)
            assert card in game.words(move, state, FULL)
            for other in (SPECTATOR, 1 - seat):
                said = game.words(move, state, other)
                assert card not in said
                assert said.endswith(f"buys the card reserved face down from reserve h{blind[0]}.")
            return
    pytest.fail("no blind reserve was dealt in 40 random games")
