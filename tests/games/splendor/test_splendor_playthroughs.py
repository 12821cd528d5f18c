"""Golden playthroughs: whole games stored as notation (playthroughs/*.txt), replayed move by
move through the fold; the final scores, winners and termination must not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay.core import DEALT, FULL, TABLE, TERMINAL
from tablelog.replay.games.splendor import GAME
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import SplendorOptions
from tests.games.splendor.support import fresh
from tests.support.play import new_position, play

HERE = Path(__file__).parent / "playthroughs"
FILES = sorted(HERE.glob("*.txt"))


def headers(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        if line.startswith("#") and ":" in line:
            key, value = line[1:].split(":", 1)
            found[key.strip()] = value.strip()
    return found


def test_there_are_at_least_three_playthroughs() -> None:
    assert len(FILES) >= 3


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_playthrough_replays_to_its_recorded_result(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = headers(lines)
    options = SplendorOptions(
        first_player=int(meta["first_player"]),
        allow_take_fewer_anytime=meta["allow_take_fewer_anytime"] == "true",
    )
    mode = TABLE if meta["mode"] == "table" else DEALT
    position = new_position("splendor", int(meta["players"]), options, mode)
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        # Every stored line is already canonical.
        assert GAME.format(GAME.parse(text, position.state), position.state) == text
        position = play(position, text)
    state = position.state
    assert GAME.to_move(state) == TERMINAL
    result = GAME.result(state)
    termination = {
        "completed": game_pb2.TERMINATION_COMPLETED,
        "deadlock": game_pb2.TERMINATION_DEADLOCK,
    }[meta["expect termination"]]
    assert result.termination == termination
    scores = [f"{s.total}={s.items[0].value}+{s.items[1].value}" for s in result.scores]
    assert " ".join(scores) == meta["expect scores"]
    assert " ".join(f"p{w + 1}" for w in result.winners) == meta["expect winners"]
    assert (result.tiebreak or "none") == meta["expect tiebreak"]
    bought = " ".join(str(len(p.purchased)) for p in GAME.view(state, FULL).players)
    assert bought == meta["expect cards bought"]
    # Independently of the engine's counters: the points printed on the purchased cards
    # (the digit after the bonus letter, `2g1:...`) plus each noble's points.
    for seat, player in enumerate(GAME.view(state, FULL).players):
        printed = sum(int(card.text[2]) for card in player.purchased)
        nobles = sum(noble.points for noble in player.nobles)
        assert result.scores[seat].total == printed + nobles


# Like perft files in chess engines: the number of legal moves summed over every position
# of each playthrough (the initial one included). A change in move generation shows here.
LEGAL_MOVE_TOTALS = {
    "2p-table-noble-choice": 4060,
    "3p-dealt-pass": 4228,
    "4p-table-take-fewer": 6310,
}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_legal_move_counts_along_the_playthrough_are_pinned(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = headers(lines)
    options = SplendorOptions(
        first_player=int(meta["first_player"]),
        allow_take_fewer_anytime=meta["allow_take_fewer_anytime"] == "true",
    )
    mode = TABLE if meta["mode"] == "table" else DEALT
    position = new_position("splendor", int(meta["players"]), options, mode)
    total = len(GAME.legal_moves(position.state))
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if text:
            position = play(position, text)
            total += len(GAME.legal_moves(position.state))
    assert total == LEGAL_MOVE_TOTALS[path.stem]


def test_legal_moves_at_the_fixed_start() -> None:
    state = fresh(2).state
    # 10 ways to take 3 colours, 5 to take 2, 12 face-up cards and 3 decks to reserve.
    # Before setup: any unseen card of its level into each of the 12 slots, or a noble.
    assert len(GAME.legal_moves(state)) == 30
    assert len(GAME.legal_moves(new_position("splendor", 2).state)) == 4 * (40 + 30 + 20) + 10
