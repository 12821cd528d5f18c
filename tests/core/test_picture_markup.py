"""`replay.picture.markup`, the serializer behind `Picture.svg`, writes what ElementTree's
own serializer writes, escapes included, for every kind of element a picture holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from replay.picture import INK, Picture, markup

AWKWARD = st.text(alphabet="ab &<>\"'\n\r\t=/;]é≈", max_size=30)


@given(words=AWKWARD, title=AWKWARD, cls=AWKWARD)
def test_markup_writes_what_elementtree_writes(words: str, title: str, cls: str) -> None:
    drawn = Picture(120.5, 80, title or "t")
    group = drawn.group(cls=cls or "c", title=title, x=3, y=4.25)
    drawn.rect(group, 0, 0, 10, 10, fill=INK, title=title, cls=cls or None)
    drawn.text(group, 5, 5, words, cls="label")
    drawn.face_down(group, 1, 1, 20, 30, title=title or "hidden")
    inner = drawn.group(group, cls="empty")
    inner.tail = words
    expected = ET.tostring(drawn.root, encoding="unicode", short_empty_elements=True)
    assert markup(drawn.root) == expected
    assert drawn.svg() == expected
    assert ET.fromstring(expected).get("viewBox") == "0 0 120.5 80"
