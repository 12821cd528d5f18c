"""The record's tokenizer reads most moves in one match of the whole move
(`tablelog.replay.record._PLAIN_MOVE`); it must give exactly the tokens (and the refusals) the
general reading of a move gives: on every game's records, and on random movetext made of
the characters that end a move, open a comment or a variation, or make a glyph."""

from __future__ import annotations

import random
import re

import pytest

from tablelog.replay import record
from tablelog.replay.registry import all_games
from tests.support.records import annotated_game

GAMES = sorted(all_games())
NEVER: re.Pattern[str] = re.compile(r"(?!)")


def _tokens(text: str) -> list[tuple[str, int, str, str, str]] | tuple[str, int, int]:
    try:
        return [(t.kind, t.at, t.text, t.name, t.value) for t in record._Scanner(text).tokens()]
    except record.RecordError as refused:
        return refused.code, refused.line, refused.column


def _both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    quick = _tokens(text)
    with monkeypatch.context() as patched:
        patched.setattr(record, "_PLAIN_MOVE", NEVER)
        general = _tokens(text)
    return quick, general


@pytest.mark.parametrize("name", GAMES)
def test_every_games_record_tokenizes_as_the_general_reading_does(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = record.write([record.record_of(*annotated_game(name, 3))])
    quick, general = _both(text, monkeypatch)
    assert quick == general
    assert isinstance(quick, list)
    assert sum(kind in ("move", "chance") for kind, *_ in quick) > 10


PIECES = [
    "12.", "12...", "*", " ", "  ", "\t", "\n", "\r\n", "Ann:", " Ann : ", "take w u g",
    "bid 18", "1.1", "x", "!", "?", "!?", "??", "$1", "$9", "{c}", "{", "}", "(", ")",
    "; rest", "3. ", " 4.", "* ", " *", "é", "\u00a0", ".", "..", "$", "2", "a.b",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_random_movetext_tokenizes_as_the_general_reading_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        quick, general = _both(text, monkeypatch)
        assert quick == general, repr(text)
