"""Helpers shared by the Splendor tests: a fixed setup, state surgery, invariants."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tablelog.replay import fold as folding
from tablelog.replay.core import TABLE
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.rules import (
    COMPLETED,
    DISCARD,
    GOLD_TOKENS,
    TOKEN_LIMIT,
    State,
)
from tablelog.v1.splendor_pb2 import SplendorMove, SplendorOptions
from tests.support.play import new_position, play, play_all


def setup_lines(state: State) -> list[str]:
    """Reveal the first four cards of each level (file order) and nobles 1..players+1."""
    comps = state.rules.components
    lines = [
        f"reveal {lv + 1}.{s + 1} {comps.card(comps.levels[lv][s]).text}"
        for lv in range(3)
        for s in range(4)
    ]
    nobles = sorted(comps.nobles)[: state.rules.players + 1]
    lines += [f"reveal noble {comps.nobles[n].text}" for n in nobles]
    return lines


def fresh(
    players: int = 2,
    mode: Any = TABLE,
    options: SplendorOptions | None = None,
) -> folding.Position:
    """A position right after the fixed setup: market 1.1-1.4 = cards 1-4, 2.x = 41-44,
    3.x = 71-74; nobles 1..players+1 (w4u4, w4k4, u4g4, ...)."""
    position = new_position("splendor", players, options, mode)
    return play_all(position, setup_lines(position.state))


def moves(position: folding.Position, *lines: str) -> folding.Position:
    for line in lines:
        position = play(position, line)
    return position


def with_state(position: folding.Position, state: State) -> folding.Position:
    return replace(position, state=state)


def tweak_player(state: State, seat: int, **changes: Any) -> State:
    players = list(state.players)
    players[seat] = replace(players[seat], **changes)
    return replace(state, players=tuple(players))


def tweak(state: State, **changes: Any) -> State:
    return replace(state, **changes)


def parse(state: State, text: str) -> SplendorMove:
    return GAME.parse(text, state)


def apply_text(state: State, text: str) -> State:
    return GAME.apply(state, GAME.parse(text, state))


def check_invariants(before: State, after: State) -> None:
    """RULES.md §5 and §8, checked after every move of random play."""
    rules = after.rules
    comps = rules.components
    # Tokens are conserved per colour.
    for c in range(6):
        total = after.bank[c] + sum(p.tokens[c] for p in after.players)
        assert total == (GOLD_TOKENS if c == 5 else rules.gems_per_colour), (c, after)
        assert after.bank[c] >= 0
    for seat, p in enumerate(after.players):
        assert min(p.tokens) >= 0
        # At most 10 tokens once a turn is over (only the seat still returning may hold more).
        if not (seat == after.current and after.phase == DISCARD):
            assert sum(p.tokens) <= TOKEN_LIMIT, (seat, p.tokens)
        assert len(p.reserved) <= 3
        # Prestige is card points plus 3 per noble.
        assert p.card_points == sum(comps.card(c).points for c in p.purchased)
        assert p.noble_points == 3 * len(p.nobles)
        assert p.prestige == p.card_points + 3 * len(p.nobles)
        bonuses = [0] * 5
        for c in p.purchased:
            bonuses[comps.card(c).bonus] += 1
        assert tuple(bonuses) == p.bonuses
    # Every card is somewhere: market, deck, a reserve or a tableau.
    placed = sum(1 for row in after.market for c in row if c) + sum(after.decks)
    placed += sum(len(p.purchased) + len(p.reserved) for p in after.players)
    assert placed == sum(len(ids) for ids in comps.levels)
    unnamed = sum(1 for p in after.players for c, _, _ in p.reserved if not c)
    assert after.unseen.bit_count() == sum(after.decks) + unnamed
    # The market is refilled while the deck lasts (once the table has revealed; a game that
    # is over needs no refill).
    if after.who >= 0:
        for lv in range(3):
            if after.decks[lv]:
                assert all(after.market[lv]), (lv, after.market)
    # The game ends at the end of the round in which someone reached 15.
    turn_ended = before.who >= 0 and after.current != before.current
    if after.over == COMPLETED:
        assert turn_ended
        assert before.current == rules.last_seat
        assert max(p.prestige for p in after.players) >= 15
    reached = any(p.prestige >= 15 for p in after.players)
    if turn_ended and before.current == rules.last_seat and reached:
        assert after.over == COMPLETED
    if turn_ended and not after.over and any(p.prestige >= 15 for p in after.players):
        assert after.triggered
