"""Hidden information (rules §2 steps 2-3 and 8, §4.1 step 1, §4.3): no recorded move is
hidden from anyone (`visible_to`), and with hidden money the running result, which every
viewer receives, reports no money until the game is over."""

from __future__ import annotations

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.scoring import FAME_EARLIER
from tablelog.v1 import game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import random_game

HIDDEN = pb.MERCADO_DE_LISBOA_MONEY_HIDDEN
OPEN = pb.MERCADO_DE_LISBOA_MONEY_OPEN


@pytest.mark.parametrize(("players", "mode"), [(2, TABLE), (3, DEALT), (4, DEALT), (1, TABLE)])
def test_every_move_is_visible_to_everyone(players: int, mode: game_pb2.Mode.ValueType) -> None:
    """Stand tiles are face up (§2 step 3), customer tiles are revealed face up, and a
    face-down restaurant is recorded only when it is turned over in front of the table."""
    kinds: set[str | None] = set()
    for seed in range(3):
        played = random_game("mercado-de-lisboa", players, seed, mode=mode, keep_states=True)
        for move, state in zip(played.moves, played.states[:-1], strict=True):
            inner = move.mercado_de_lisboa
            kinds.add(inner.WhichOneof("action"))
            for viewer in (FULL, SPECTATOR, *range(players)):
                assert GAME.visible_to(inner, state, viewer)
    assert {"draw", "reveal", "stand"} <= kinds
    if players > 1:
        assert "flip" in kinds


def _game(
    players: int, money: pb.MercadoDeLisboaMoney.ValueType, seed: int, stage: int = 0
) -> list[rl.State]:
    options = pb.MercadoDeLisboaOptions(money=money, stage=stage)
    played = random_game("mercado-de-lisboa", players, seed, options, keep_states=True)
    states: list[rl.State] = played.states
    return states


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hidden_money_is_not_in_the_running_result(players: int) -> None:
    states = _game(players, HIDDEN, 21)
    for state in states[:-1]:
        result = GAME.result(state)
        assert result.termination == game_pb2.TERMINATION_ONGOING
        assert not result.scores
        assert not result.winners
    end = GAME.result(states[-1])
    assert end.termination == game_pb2.TERMINATION_COMPLETED
    assert end.winners
    assert {s.seat for s in end.scores} == set(range(players))
    for seat, score in enumerate(end.scores):
        assert score.items
        assert (
            sum(i.value for i in score.items) == score.total == rl.final_money(states[-1], seat)[0]
        )


def test_open_money_is_in_the_running_result() -> None:
    states = _game(2, OPEN, 21)
    middle = states[len(states) // 2]
    result = GAME.result(middle)
    assert [s.total for s in result.scores] == [middle.money(0), middle.money(1)]
    assert any(middle.money(s) for s in range(2))
    assert not result.winners


def test_a_solo_stage_with_hidden_money_shows_only_earlier_fame() -> None:
    options = pb.MercadoDeLisboaOptions(money=HIDDEN, stage=2)
    options.campaign.stages.add(stage=1, fame=1, money=85, game_id="stage-1")
    played = random_game("mercado-de-lisboa", 1, 3, options, keep_states=True)
    for state in played.states[:-1]:
        (score,) = GAME.result(state).scores
        assert [(i.label, i.value) for i in score.items] == [(FAME_EARLIER, 1)]
        assert score.total == 1
    (final,) = GAME.result(played.states[-1]).scores
    assert len(final.items) == 3
    assert any(str(rl.final_money(played.states[-1], 0)[0]) in i.label for i in final.items)
    assert sum(i.value for i in final.items) == final.total
