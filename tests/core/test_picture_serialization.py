"""`tablelog.replay.picture.markup`, the writer behind `Picture.svg`, gives exactly the text
ElementTree's own `tostring` gives, for every kind of content a picture holds: escapes in
attributes and text, nested groups, empty and non-empty elements."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablelog.replay import picture as picture_module
from tablelog.replay.picture import INK, Picture, markup
from tablelog.replay.registry import all_games
from tests.support.play import random_game


def tostring(root: ET.Element) -> str:
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


WORDS = st.lists(st.sampled_from([*"ab <>&\"'\n\r\t≈é★", "]]>", "&amp;"]), max_size=12).map("".join)


@given(title=WORDS, words=WORDS, cls=WORDS, tail=WORDS)
def test_the_same_text_as_elementtree(title: str, words: str, cls: str, tail: str) -> None:
    drawn = Picture(120.5, 80, title or "t")
    outer = drawn.group(cls=cls or "c", title=title, x=3.25, y=0)
    inner = drawn.group(outer, cls="inner")
    drawn.rect(inner, 0, 0, 10, 10, fill=INK, title=title, cls=cls)
    drawn.text(inner, 1, 2, words, bold=True)
    drawn.circle(outer, 5, 5, 2, fill="none", stroke=INK)
    drawn.face_down(outer, 0, 0, 20, 30, title=title or "back")
    empty = ET.SubElement(outer, "g")
    empty.tail = tail
    drawn.approximate_note(words)
    assert drawn.svg() == markup(drawn.root) == tostring(drawn.root)


def test_the_same_text_for_a_whole_game_of_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tree a game's picture builds (Mercado de Lisboa's: hundreds of elements)."""
    trees: list[tuple[ET.Element, str]] = []

    def recording(root: ET.Element) -> str:
        text = markup(root)
        trees.append((root, text))
        return text

    monkeypatch.setattr(picture_module, "markup", recording)
    game = all_games()["mercado-de-lisboa"]
    played = random_game("mercado-de-lisboa", 3, 7, keep_states=True)
    for state in played.states[::5]:
        game.picture(game.view(state, 0), approximate='a "note" & <more>')
    assert len(trees) == len(played.states[::5])
    for root, text in trees:
        assert text == tostring(root)
