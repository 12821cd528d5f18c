"""Seeded random games through the fold with invariants after every move, and the
notation round trip on every state visited by every 10th seed."""

from __future__ import annotations

from typing import Any

import pytest

from tablelog.replay.core import TERMINAL
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import (
    ENTRANCE_LINE,
    LINE_SPACES,
    NEIGHBOURS,
    PUB,
    SPACE_ENTRANCES,
    TILES_PER_SIZE,
)
from tablelog.replay.games.mercado_de_lisboa.scoring import FAME_EARLIER
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support import play
from tests.support.play import assert_round_trip, random_game

GAMES_PER_COUNT = play.random_games(100)
SOLO_STAGES = range(10)  # 0 = the solo rules without a stage


def _value(board: tuple[int, ...], space: int, good: int) -> int:
    """An independent reading of §5: 1 + matching face-up restaurants next to the stand."""
    bonus = 0
    for n in NEIGHBOURS[space]:
        cell = board[n]
        if cell in (rl.RESTAURANT_BASE + good, rl.RESTAURANT_BASE + PUB):
            bonus += 1
    return 1 + bonus


def _expected_deltas(before: rl.State, after: rl.State) -> list[int] | None:
    """Money changes of a player action, recomputed from the rules text (§4, §5)."""
    rules = before.rules
    if before.pending or rules.stage in (1, 7):
        return None
    deltas = [0] * rules.players
    seat = before.seat
    changed = [s for s in range(25) if before.board[s] != after.board[s]]
    new_entrances = [e for e in range(20) if before.entrances[e] != after.entrances[e]]
    if new_entrances:
        (e,) = new_entrances
        k = after.entrances[e]
        n, goods = rules.board.kinds[k]
        for s in LINE_SPACES[ENTRANCE_LINE[e]]:
            cell = before.board[s]
            if cell >= rl.STAND_BASE:
                owner, g = divmod(cell - rl.STAND_BASE, 5)
                if g in goods:
                    deltas[owner] += n * _value(before.board, s, g)
        return deltas
    if changed:
        (s,) = changed
        cell = after.board[s]
        if cell >= rl.STAND_BASE:
            g = (cell - rl.STAND_BASE) % 5
            row = sum(1 for x in LINE_SPACES[s // 5] if after.board[x] >= rl.STAND_BASE)
            col = sum(1 for x in LINE_SPACES[5 + s % 5] if after.board[x] >= rl.STAND_BASE)
            deltas[seat] -= max(row, col)
            for e in SPACE_ENTRANCES[s]:
                k = before.entrances[e]
                if k >= 0 and g in rules.board.kinds[k][1]:
                    deltas[seat] += rules.board.kinds[k][0] * _value(before.board, s, g)
        else:
            deltas[seat] += 1
        return deltas
    if after.ledger[seat][rl.L_COINS] != before.ledger[seat][rl.L_COINS]:
        deltas[seat] += 1
    return deltas


ROUND_TRIP_EVERY = 10
"""Every 10th seed also checks the notation round trip on every state it visits."""


def check_with_round_trip(before: Any, after: Any) -> None:
    check(before, after)
    assert_round_trip(GAME, before)
    if after.over:
        assert_round_trip(GAME, after)


class Checker:
    def __init__(self, round_trip: bool = False) -> None:
        self.after_trigger = 0
        self.round_trip = round_trip

    def __call__(self, before: Any, after: Any) -> None:
        if self.round_trip:
            check_with_round_trip(before, after)
        else:
            check(before, after)
        if before.trigger_seat >= 0 and not before.pending and after.seat != before.seat:
            self.after_trigger += 1


def check(before: rl.State, after: rl.State) -> None:
    rules = after.rules
    n = rules.players
    # Stand tiles conserved: 7 of each good.
    for g in range(5):
        on_board = sum(
            1 for c in after.board if c >= rl.STAND_BASE and (c - rl.STAND_BASE) % 5 == g
        )
        held = sum(h.count(g) for h in after.hands) + sum(d.count(g) for d in after.dead)
        assert after.bag[g] + after.display.count(g) + held + on_board == 7
    # Customer tiles conserved per size.
    for size in range(1, 5):
        placed = sum(1 for k in after.entrances if k >= 0 and rules.kind_size[k] == size)
        total = after.piles[size - 1] + len(after.offers[size - 1]) + placed
        assert total + rules.removed[size - 1] == TILES_PER_SIZE[size - 1]
    assert all(after.seen[k] <= c for k, c in enumerate(rules.board.kind_counts))
    # Restaurants conserved: 12, less the pub set aside when nobody receives it.
    face_down = sum(1 for c in after.board if c == rl.FACE_DOWN)
    face_up = sum(1 for c in after.board if rl.RESTAURANT_BASE <= c < rl.STAND_BASE)
    held_r = sum(len(h) for h in after.held)
    set_aside = 0 if n == 4 or rules.stage == 8 else 1
    assert face_down + face_up + held_r + set_aside == 12
    assert face_down + sum(h.count(-1) for h in after.held) == sum(after.unseen_restaurants)
    # At most 8 stands per player; the counts match the board.
    for seat in range(n):
        on_board = sum(
            1 for c in after.board if c >= rl.STAND_BASE and (c - rl.STAND_BASE) // 5 == seat
        )
        assert on_board == after.stands[seat] <= rl.MAX_STANDS
        assert after.stands[seat] + len(after.hands[seat]) <= rl.MAX_STANDS
    # Money = itemised earnings minus costs, in the state and in the result; with hidden
    # money the running result reports none (§2 step 8).
    result = GAME.result(after)
    hidden_now = rules.money_hidden and not after.over
    if hidden_now:
        labels = {i.label for score in result.scores for i in score.items}
        assert labels <= {FAME_EARLIER}
        assert len(result.scores) == (1 if rules.stage else 0)
    for seat, score in enumerate(result.scores):
        assert sum(i.value for i in score.items) == score.total
        if rules.stage or hidden_now:
            continue
        items = {i.label: i.value for i in score.items}
        money = sum(items[label] for label in rl.LEDGER_LABELS) + items["unplaced restaurants"]
        assert money == score.total
        if after.over:
            assert score.total == rl.final_money(after, seat)[0]
        else:
            assert items["unplaced restaurants"] == 0
            assert score.total == after.money(seat)
    expected = _expected_deltas(before, after)
    if expected is not None:
        assert [after.money(s) - before.money(s) for s in range(n)] == expected
    # End triggers.
    if after.trigger_seat < 0 and not after.over and after.phase == rl.ACTION:
        assert rl.empty_spaces(after) > rl.END_EMPTY_SPACES
        if rules.stage != 7:
            assert rl.empty_entrances(after) > rl.END_EMPTY_ENTRANCES
    if after.over and n > 1:
        coin_end = after.streak >= (4 if n == 2 else n)
        assert coin_end or (after.trigger_seat >= 0 and after.turns_left <= 0)
    if after.over and n == 1:
        stage7 = rules.stage == 7 and after.stands[0] == rl.MAX_STANDS
        assert stage7 or after.trigger_seat >= 0 or not rl.any_placement(after)
    # Hidden money: other seats see no coins.
    if rules.money_hidden and n > 1 and not after.pending:
        view = GAME.view(after, 0)
        assert view.players[0].money_visible
        assert not view.players[1].money_visible
        assert view.players[1].money == 0


def _options(stage: int) -> pb.MercadoDeLisboaOptions:
    return pb.MercadoDeLisboaOptions(stage=stage)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_multiplayer_games(players: int) -> None:
    ends = {"coins": 0, "trigger": 0}
    for seed in range(GAMES_PER_COUNT):
        checker = Checker(round_trip=seed % ROUND_TRIP_EVERY == 0)
        options = pb.MercadoDeLisboaOptions(
            money=pb.MERCADO_DE_LISBOA_MONEY_OPEN
            if seed % 2
            else pb.MERCADO_DE_LISBOA_MONEY_HIDDEN,
            first_player=seed % players,
        )
        played = random_game("mercado-de-lisboa", players, seed, options, check=checker)
        state = played.position.state
        assert GAME.to_move(state) == TERMINAL
        if state.streak >= (4 if players == 2 else players):
            ends["coins"] += 1
        else:
            ends["trigger"] += 1
            assert checker.after_trigger == players - 1
        result = GAME.result(state)
        assert result.winners
    assert ends["trigger"]


@pytest.mark.parametrize("stage", SOLO_STAGES)
def test_random_solo_games(stage: int) -> None:
    for seed in range(GAMES_PER_COUNT // len(SOLO_STAGES)):
        sampled = seed % ROUND_TRIP_EVERY == 0
        played = random_game(
            "mercado-de-lisboa",
            1,
            seed,
            _options(stage),
            check=check_with_round_trip if sampled else check,
        )
        state = played.position.state
        assert GAME.to_move(state) == TERMINAL
        if stage == 7:
            assert state.stands[0] <= rl.MAX_STANDS
