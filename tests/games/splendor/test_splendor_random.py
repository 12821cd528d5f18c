"""Random play: 1,000 complete seeded games for each of 2, 3 and 4 players, through the
fold, with the invariants of RULES.md §5 and §8 checked after every move. The first
`DEFAULT_GAMES` seeds of each count run by default; the other 700 are marked `long`, since
they cost half a minute of the default suite's eight-minute budget (`.ci/run` runs them
with `pytest -m long`).

Table and dealt modes alternate by seed; every fifth seed plays with
`allow_take_fewer_anytime`; the first player cycles. Seeds come in chunks of 100 so
pytest-xdist can spread them.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tablelog.replay.core import DEALT, TABLE, TERMINAL
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.rules import COMPLETED, DEADLOCK, WINNING_POINTS, State
from tablelog.v1.splendor_pb2 import SplendorOptions
from tests.games.splendor.support import check_invariants
from tests.support.play import random_game

GAMES_PER_COUNT = 1_000
DEFAULT_GAMES = 300
CHUNK = 100


def options_for(seed: int, players: int) -> SplendorOptions:
    return SplendorOptions(
        allow_take_fewer_anytime=seed % 5 == 0, first_player=(seed // 2) % players
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "first",
    [
        first if first < DEFAULT_GAMES else pytest.param(first, marks=pytest.mark.long)
        for first in range(0, GAMES_PER_COUNT, CHUNK)
    ],
)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_keep_the_invariants(players: int, first: int) -> None:
    endings: Counter[int] = Counter()
    for seed in range(first, first + CHUNK):
        mode = TABLE if seed % 2 else DEALT
        played = random_game(
            "splendor",
            players,
            seed=seed,
            options=options_for(seed, players),
            mode=mode,
            check=check_invariants,
        )
        state: State = played.position.state
        assert GAME.to_move(state) == TERMINAL
        endings[state.over] += 1
        result = GAME.result(state)
        assert result.winners
        best = max(score.total for score in result.scores)
        if state.over == COMPLETED:
            assert best >= WINNING_POINTS
        for seat in result.winners:
            assert result.scores[seat].total == best
        if len(result.winners) > 1 or sum(s.total == best for s in result.scores) > 1:
            assert result.tiebreak
    assert endings[COMPLETED] > endings[DEADLOCK]
