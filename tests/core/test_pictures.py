"""Every game's picture (`Game.picture`, drawn with `tablelog.replay.picture`) holds to what every
picture promises, over random games of every game in both modes and for every kind of
viewer: well-formed SVG with a title, self-contained (no image, font or stylesheet fetched
from anywhere), deterministic, hidden information drawn face down, approximate data marked,
the last move highlighted. What each game draws is tested in its own tests/games folder."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE
from tablelog.replay.registry import all_games
from tests.support.play import random_game

SVG = "{http://www.w3.org/2000/svg}"
GAMES = sorted(all_games())
FORBIDDEN = ("<image", "href=", "@import", "@font-face", "url(", "<script", "<foreignObject")


def parsed(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    title = root.find(f"{SVG}title")
    assert title is not None
    assert title.text
    assert root.get("viewBox")
    return root


def face_down_count(root: ET.Element) -> int:
    return sum("face-down" in (e.get("class") or "").split() for e in root.iter())


def classes(root: ET.Element) -> set[str]:
    return {c for element in root.iter() for c in (element.get("class") or "").split()}


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_every_picture_keeps_the_promises(name: str, mode: Any) -> None:
    game = all_games()[name]
    if mode not in game.modes:
        pytest.skip(f"{name} has no such mode")
    played = random_game(name, game.min_players, seed=11, mode=mode, keep_states=True)
    states = played.states
    picks = sorted({0, 1, len(states) // 3, len(states) // 2, len(states) - 1})
    highlighted = face_down_needed = face_down_drawn = 0
    for index in picks:
        state = states[index]
        last = played.position.table.unwrap(played.moves[index - 1]) if index else None
        backs_in_full = 0
        for viewer in (FULL, SPECTATOR, 0):
            view = game.view(state, viewer)
            svg = game.picture(view, last_move=last)
            assert svg == game.picture(view, last_move=last), "not deterministic"
            assert not any(f in svg for f in FORBIDDEN), f"{name}: not self-contained"
            root = parsed(svg)
            drawn = classes(root)
            highlighted += "last-move" in drawn
            backs = face_down_count(root)
            if viewer is FULL:
                backs_in_full = backs
            elif game.hides_from(state, viewer):
                # What this viewer may not see is drawn face down on top of whatever the
                # full view draws face down itself (an unturned restaurant, a deck).
                face_down_needed += 1
                face_down_drawn += backs > backs_in_full
        marked = game.picture(game.view(state, FULL), approximate="tile costs approximate")
        assert "approximate" in classes(parsed(marked))
    assert highlighted, f"{name}: no picture highlighted the last move"
    assert face_down_drawn == face_down_needed, (
        f"{name}: {face_down_needed - face_down_drawn} views hiding something drew nothing "
        "face down"
    )


def test_a_long_approximate_note_is_cut_to_the_picture_and_kept_whole_in_its_title() -> None:
    """A board file's note can be a paragraph: the mark stays inside the picture."""
    game = all_games()["castello-methoni"]
    state = random_game("castello-methoni", game.min_players, seed=3, keep_states=True).states[0]
    note = "the published map is not available; " * 12
    root = parsed(game.picture(game.view(state, FULL), approximate=note))
    [mark] = [g for g in root.iter(f"{SVG}g") if g.get("class") == "approximate"]
    assert mark.findtext(f"{SVG}title") == note
    shown = "".join(mark.find(f"{SVG}text").itertext())  # type: ignore[union-attr]
    width = float(root.get("viewBox", "0 0 0 0").split()[2])
    assert shown.endswith("…")
    assert len(shown) * 11 * 0.56 <= width - 16
