"""A picture's phone layout (issue 25) marks the same touchables as its wide layout: in states
sampled from random play of every game, in both modes, the same `data-touch` ids, each once,
with the same accessible name (its `<title>`), so the listed moves' touches and a screen
reader's words do not depend on the layout; and the phone picture is PHONE_WIDTH units wide
and deterministic. (Their sizes on a phone are measured in a browser:
tests/web/test_touch_recording.py and benchmarks/touch_targets.py.)"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tablelog.replay.core import DEALT, TABLE
from tablelog.replay.picture import PHONE, PHONE_WIDTH, check_layout
from tablelog.replay.registry import all_games, find_game
from tests.core.test_touches import sampled_states, viewer_to_record

GAMES = sorted(all_games())
SVG = "{http://www.w3.org/2000/svg}"


def named_touchables(svg: str) -> list[tuple[str, str]]:
    """Each touchable's (id, accessible name), in the picture's order."""
    found = []
    for element in ET.fromstring(svg).iter():
        touch = element.get("data-touch")
        if touch is not None:
            title = element.find(f"{SVG}title")
            found.append((touch, title.text or "" if title is not None else ""))
    return found


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
@pytest.mark.parametrize("name", GAMES)
def test_the_phone_layout_marks_the_wide_layout_s_touchables(name: str, mode: Any) -> None:
    game = find_game(name)
    if mode not in game.modes:
        pytest.skip(f"{name} has no {mode} mode")
    for state in sampled_states(name, mode, seed=11)[::2]:
        view = game.view(state, viewer_to_record(game, state))
        wide = named_touchables(game.picture(view))
        phone_svg = game.picture(view, layout=PHONE)
        phone = named_touchables(phone_svg)
        assert phone_svg == game.picture(view, layout=PHONE), "not deterministic"
        assert ET.fromstring(phone_svg).get("width") == str(PHONE_WIDTH)
        assert len({touch for touch, _ in phone}) == len(phone), "an id marks two elements"
        assert sorted(phone) == sorted(wide)


def test_an_unknown_layout_is_refused() -> None:
    game = find_game("splendor")
    with pytest.raises(ValueError, match="no picture layout"):
        check_layout("tablet")
    state = sampled_states("splendor", TABLE, seed=1)[0]
    with pytest.raises(ValueError, match="no picture layout"):
        game.picture(game.view(state, 0), layout="tablet")
