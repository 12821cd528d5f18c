"""Counts agree with their nouns and pictures speak a player's words (issue 26, smaller
friction: "1 cards", "noble(s)"). Splendor was mended first; the other four games' views,
pictures and refusals, and the CLI, said "card(s)", "ducat(s)", "point(s)", "free space(s)",
"turn(s) left", "game(s)"; and a Castello Methoni score tooltip cited "(RULES.md §8)",
which belongs in a comment beside the code, not in what a player reads."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from tablelog.replay.core import DEALT, SPECTATOR, TABLE, counted
from tablelog.replay.picture import LAYOUTS
from tablelog.replay.registry import all_games
from tablelog_client import words as client_words
from tests.support.play import random_game

ROOT = Path(__file__).resolve().parents[2]
HEDGED_PLURAL = re.compile(r"[a-z]\(s\)")


def test_a_count_agrees_with_its_noun() -> None:
    assert [counted(n, "card") for n in (0, 1, 2)] == ["0 cards", "1 card", "2 cards"]
    assert counted(1, "free space") == "1 free space"
    assert [client_words.counted(n, "win") for n in (0.0, 1.0, 1.5)] == [
        "0 wins",
        "1 win",
        "1.5 wins",
    ]
    assert client_words.counted(3, "game") == "3 games"


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a source file (f-strings whole), with their lines."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [(token.start[0], token.string) for token in tokens if token.type == tokenize.STRING]


def test_no_game_and_no_cli_text_hedges_a_plural() -> None:
    sources = [
        *sorted((ROOT / "replay" / "games").rglob("*.py")),
        *sorted((ROOT / "clients" / "python" / "tablelog_client").glob("*.py")),
    ]
    hedged = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sources
        for line, text in _strings(path)
        if HEDGED_PLURAL.search(text)
    ]
    assert hedged == []


@pytest.mark.parametrize("name", sorted(all_games()))
def test_views_and_pictures_count_in_words_and_cite_no_rules_section(name: str) -> None:
    """Every game's text view and pictures (both layouts), as a seat and as a spectator,
    at several points of a seeded random game in each of its modes. (The text view also
    quotes an approximate component file's own note, which may cite the rules reference:
    that is the data file's word, not checked here.)"""
    game = all_games()[name]
    for mode in (m for m in (TABLE, DEALT) if m in game.modes):
        played = random_game(name, game.min_players, seed=29, mode=mode, keep_states=True)
        states = played.states
        for state in [*states[:: max(1, len(states) // 4)], states[-1]]:
            for viewer in (0, SPECTATOR):
                view = game.view(state, viewer)
                text = game.render(view)
                assert not HEDGED_PLURAL.search(text), HEDGED_PLURAL.findall(text)
                for layout in LAYOUTS if hasattr(game, "picture") else ():
                    picture = game.picture(view, layout=layout)
                    assert not HEDGED_PLURAL.search(picture), HEDGED_PLURAL.findall(picture)
                    cited = re.findall(r"[^>]{0,60}(?:§|RULES\.md)[^<]{0,20}", picture)
                    assert cited == []
