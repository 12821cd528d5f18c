"""The Medici picture, structurally: what each drawn component holds equals what the view
holds, the tiles removed unseen are face down for everyone but the full viewer, and the last
move is framed where it shows."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE
from tablelog.replay.games.medici import GAME, rules
from tablelog.v1.medici_pb2 import MediciMove
from tests.support.play import new_position, play_all, random_game

SVG = "{http://www.w3.org/2000/svg}"
RECORDED = {c.name: c for c in GAME.default_components()}
PLAYERS = ["Adam", "Barbara", "Charles", "Diana"]


def drawn(state: rules.State, viewer: int | None = FULL) -> ET.Element:
    return ET.fromstring(GAME.picture(GAME.view(state, viewer)))


def played(lines: list[str]) -> tuple[rules.State, rules.State]:
    """The state before the last line and the state after all of them."""
    before = play_all(new_position("medici", PLAYERS, mode=TABLE), lines[:-1])
    after = play_all(before, lines[-1:])
    return before.state, after.state


def with_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def one(root: ET.Element, cls: str) -> ET.Element:
    found = with_class(root, cls)
    assert len(found) == 1, f"{len(found)} elements of class {cls}"
    return found[0]


def title(element: ET.Element) -> str:
    found = element.find(f"{SVG}title")
    assert found is not None
    assert found.text
    return found.text


def test_every_component_holds_what_the_view_holds() -> None:
    game = random_game("medici", 4, seed=3, mode=DEALT, keep_states=True)
    for state in game.states[:: max(1, len(game.states) // 12)]:
        for viewer in (FULL, SPECTATOR, 1):
            view = GAME.view(state, viewer)
            root = ET.fromstring(GAME.picture(view))
            assert len(with_class(one(root, "lot"), "tile")) == len(view.lot)
            assert len(with_class(one(root, "discarded"), "tile")) == len(view.discarded)
            removed = one(root, "removed")
            assert len(with_class(removed, "tile")) == len(view.removed)
            assert len(with_class(removed, "face-down")) == view.removed_count - len(view.removed)
            ships = with_class(root, "ship")
            assert [len(with_class(s, "tile")) for s in ships] == [len(s.ship) for s in view.seats]
            assert [title(m) for m in with_class(root, "money")] == [
                f"{s.name} has {s.florins} florin{'' if s.florins == 1 else 's'}"
                for s in view.seats
            ]
            markers = {title(m) for m in with_class(root, "track-marker")}
            assert markers == {
                f"{s.name}: {level.good} {level.level}" for s in view.seats for level in s.levels
            }
            assert len(with_class(root, "track-marker")) == 5 * len(view.seats)
            bag = one(root, "bag")
            assert title(bag) == f"the bag: {view.bag_size} tiles"
            assert len(with_class(bag, "face-down")) == 1


def test_the_removed_tiles_are_face_down_for_every_viewer_but_the_full_one() -> None:
    state = GAME.setup(PLAYERS[:3], None, DEALT, RECORDED)
    for text in ["remove fur3", "remove gold", "remove cloth0"]:
        state = GAME.apply(state, GAME.parse(text, state))
    full = one(drawn(state, FULL), "removed")
    assert [title(t) for t in with_class(full, "tile")] == ["fur 3", "gold 10", "cloth 0"]
    for viewer in (SPECTATOR, 0, 2):
        assert GAME.hides_from(state, viewer)
        root = drawn(state, viewer)
        removed = one(root, "removed")
        assert not with_class(removed, "tile")
        assert len(with_class(removed, "face-down")) == GAME.view(state, viewer).removed_count
        svg = ET.tostring(root, encoding="unicode")
        assert "fur 3" not in svg
        assert "gold 10" not in svg


def test_a_tile_drawn_into_the_lot_is_framed() -> None:
    before, after = played(["draw fur3", "draw", "draw cloth2"])
    lot = one(drawn(after, 0), "lot")
    assert not with_class(lot, "last-move")
    root = ET.fromstring(
        GAME.picture(GAME.view(after, 0), last_move=GAME.parse("draw cloth2", before))
    )
    frame = one(root, "last-move")
    lot = one(root, "lot")
    assert frame in list(lot)
    tiles = with_class(lot, "tile")
    assert [title(t) for t in tiles] == ["fur 3", "cloth 2"]
    last_tile = tiles[-1].find(f"{SVG}rect")
    assert last_tile is not None
    assert float(frame.get("x", "0")) == float(last_tile.get("x", "0")) - 3


def test_the_bid_is_framed_on_the_bidders_row() -> None:
    before, after = played(["draw fur3", "auction", "bid 5"])
    view = GAME.view(after, SPECTATOR)
    root = ET.fromstring(GAME.picture(view, last_move=GAME.parse("bid 5", before)))
    frame = one(root, "last-move")
    bids = with_class(root, "bid")
    assert [title(b) for b in bids] == [f"{view.seats[view.high_bidder].name} bid 5"]
    assert frame in list(bids[0])


def test_drawing_another_tile_frames_the_bag_and_the_caption_says_it() -> None:
    before, after = played(["draw fur3", "draw"])
    root = ET.fromstring(GAME.picture(GAME.view(after, 0), last_move=GAME.parse("draw", before)))
    assert one(root, "last-move") in list(one(root, "bag"))
    assert title(one(root, "last-move-caption")) == "Last move: draws another tile"


@pytest.mark.parametrize("viewer", [FULL, 0], ids=["full", "seat"])
def test_a_removed_tile_is_framed_without_telling_which_it_is(viewer: int | None) -> None:
    state = GAME.setup(PLAYERS[:3], None, DEALT, RECORDED)
    move = GAME.parse("remove fur3", state)
    state = GAME.apply(state, move)
    root = ET.fromstring(GAME.picture(GAME.view(state, viewer), last_move=move))
    assert one(root, "last-move") in list(one(root, "removed"))
    if viewer is not FULL:
        assert "fur" not in title(one(root, "last-move-caption"))


def test_an_approximate_note_is_drawn_only_when_given() -> None:
    state = GAME.setup(PLAYERS, None, TABLE, RECORDED)
    assert not with_class(ET.fromstring(GAME.picture(GAME.view(state, FULL))), "approximate")
    marked = ET.fromstring(GAME.picture(GAME.view(state, FULL), approximate="tile mix guessed"))
    assert "tile mix guessed" in title(one(marked, "approximate"))


EXPECTED_FRAME = {
    "draw": {"lot", "ship"},
    "draw_more": {"bag"},
    "close_lot": {"lot"},
    "bid": {"bid"},
    "remove": {"removed"},
    "start_player": {"seat"},
}
"""Where the frame of each kind of last move may be: what it drew, bid or chose."""


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_every_last_move_is_framed_only_where_it_shows(seed: int) -> None:
    game = random_game("medici", 3, seed=seed, mode=DEALT, keep_states=True)
    framed: dict[str, int] = {}
    for index, envelope in enumerate(game.moves, start=1):
        move = game.position.table.unwrap(envelope)
        assert isinstance(move, MediciMove)
        action = move.WhichOneof("action") or ""
        view = GAME.view(game.states[index], FULL)
        root = ET.fromstring(GAME.picture(view, last_move=move))
        frames = with_class(root, "last-move")
        assert len(frames) <= 1
        if not frames:
            continue
        framed[action] = framed.get(action, 0) + 1
        holders = [
            element
            for element in root.iter()
            if frames[0] in list(element) and element.get("class") in EXPECTED_FRAME[action]
        ]
        assert holders, f"move {index} ({action}): frame outside {EXPECTED_FRAME[action]}"
        if action == "start_player":
            assert (
                title(holders[0]) == f"{view.seats[move.start_player.seat].name}'s ship and money"
            )
    assert {"draw", "draw_more", "close_lot", "bid", "remove"} <= set(framed)


def test_the_end_names_the_winners() -> None:
    game = random_game("medici", 3, seed=4, mode=DEALT, keep_states=True)
    view = GAME.view(game.states[-1], SPECTATOR)
    best = max(s.florins for s in view.seats)
    status = one(ET.fromstring(GAME.picture(view)), "status").text or ""
    assert status.startswith("Game over. Winner")
    assert all(s.name in status for s in view.seats if s.florins == best)
    assert status.endswith(f"({best})")
