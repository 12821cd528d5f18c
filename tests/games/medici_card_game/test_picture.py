"""The Medici: The Card Game picture, structurally: what each drawn component holds equals
what the view holds, the deck is face down, the view's approximate data is marked, and the
last move is framed where it shows."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE
from tablelog.replay.games.medici_card_game import GAME, rules
from tablelog.v1.medici_card_game_pb2 import MediciCardGameOptions
from tests.support.play import new_position, play_all, random_game

SVG = "{http://www.w3.org/2000/svg}"
PLAYERS = ["Ann", "Bo", "Cy"]


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


def after(lines: list[str]) -> tuple[rules.State, ET.Element]:
    """The state after `lines` and its picture with the last line as the last move."""
    before = play_all(new_position("medici-card-game", PLAYERS, mode=TABLE), lines[:-1])
    move = GAME.parse(lines[-1], before.state)
    state = play_all(before, lines[-1:]).state
    return state, ET.fromstring(GAME.picture(GAME.view(state, SPECTATOR), last_move=move))


def test_every_component_holds_what_the_view_holds() -> None:
    game = random_game("medici-card-game", 4, seed=3, mode=DEALT, keep_states=True)
    for state in game.states[:: max(1, len(game.states) // 12)]:
        view = GAME.view(state, SPECTATOR)
        root = ET.fromstring(GAME.picture(view))
        market = one(root, "market")
        assert len(with_class(market, "card")) == len(view.market)
        assert [p.text for p in with_class(market, "position")] == [
            str(p) for p in range(min(3, len(view.market)), 0, -1)
        ]
        ships = with_class(root, "ship")
        assert [len(with_class(s, "card")) for s in ships] == [len(s.ship) for s in view.seats]
        assert [title(m) for m in with_class(root, "money")] == [
            f"{s.name} has {s.florins} florin{'' if s.florins == 1 else 's'}" for s in view.seats
        ]
        markers = {title(m) for m in with_class(root, "track-marker")}
        assert markers == {f"{s.name}: {g.good} {g.icons}" for s in view.seats for g in s.warehouse}
        deck = one(root, "deck")
        assert title(deck) == f"the deck: {view.deck_size} cards face down"
        assert len(with_class(deck, "face-down")) == 1
        assert not with_class(deck, "card")


def test_the_cards_show_their_flags_and_icons() -> None:
    _state, root = after(["reveal grainflag", "flip", "reveal fur0"])
    cards = with_class(one(root, "market"), "card")
    assert [title(c) for c in cards] == [
        "market 2: grain 0, green flag",
        "market 1: fur 0, 2 icons",
    ]
    assert len(with_class(cards[0], "green-flag")) == 1
    assert [len(with_class(c, "icon")) for c in cards] == [1, 2]


def test_a_revealed_card_is_framed_at_the_end_of_the_market() -> None:
    _, root = after(["reveal fur3", "flip", "reveal dye2"])
    market = one(root, "market")
    frame = one(root, "last-move")
    assert frame in list(market)
    last_card = with_class(market, "card")[-1].find(f"{SVG}rect")
    assert last_card is not None
    assert float(frame.get("x", "0")) == float(last_card.get("x", "0")) - 3


def test_turning_over_a_card_frames_the_deck() -> None:
    _, root = after(["reveal fur3", "flip"])
    assert one(root, "last-move") in list(one(root, "deck"))
    assert title(one(root, "last-move-caption")) == "Last move: turns over a card"


def test_a_take_frames_the_cards_in_the_takers_ship() -> None:
    _state, root = after(["reveal fur3", "flip", "reveal dye2", "take 1 2"])
    ships = with_class(root, "ship")
    frame = one(root, "last-move")
    assert frame in list(ships[0])
    assert [title(c) for c in with_class(ships[0], "card")] == ["fur 3", "dye 2"]
    first = with_class(ships[0], "card")[0].find(f"{SVG}rect")
    assert first is not None
    assert float(frame.get("x", "0")) == float(first.get("x", "0")) - 3


def test_the_view_s_approximate_data_is_marked_with_the_caller_s() -> None:
    state = play_all(new_position("medici-card-game", 2, mode=TABLE), []).state
    view = GAME.view(state, FULL)
    assert view.deck_unverified
    assert view.ship_rewards_approximate
    note = title(one(ET.fromstring(GAME.picture(view, approximate="made up")), "approximate"))
    assert "G-A1" in note
    assert "G-A2" in note
    assert "made up" in note


def test_a_sourced_table_and_verified_deck_draw_no_note() -> None:
    """The default deck is an unverified placeholder (G-A1), so a clean picture needs the
    view to say otherwise: the note follows the view, not the game."""
    state = play_all(
        new_position("medici-card-game", 4, MediciCardGameOptions(ship_rewards=[30, 20, 10, 0])),
        [],
    ).state
    view = GAME.view(state, FULL)
    view.deck_unverified = False
    assert not view.ship_rewards_approximate
    assert not with_class(ET.fromstring(GAME.picture(view)), "approximate")


EXPECTED_FRAME = {"reveal": "market", "flip": "deck", "take": "ship", "start_player": "seat"}
"""Where the frame of each kind of last move may be: what it turned over, took or chose."""


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_every_last_move_is_framed_only_where_it_shows(seed: int) -> None:
    game = random_game("medici-card-game", 3, seed=seed, mode=DEALT, keep_states=True)
    framed: dict[str, int] = {}
    for index, envelope in enumerate(game.moves, start=1):
        move = game.position.table.unwrap(envelope)
        action = move.WhichOneof("action")
        before = GAME.view(game.states[index - 1], FULL)
        view = GAME.view(game.states[index], FULL)
        root = ET.fromstring(GAME.picture(view, last_move=move))
        frames = with_class(root, "last-move")
        assert len(frames) <= 1
        if not frames:
            continue
        framed[action] = framed.get(action, 0) + 1
        holders = [e for e in root.iter() if frames[0] in list(e)]
        assert holders[0].get("class") == EXPECTED_FRAME[action], f"move {index} ({action})"
        if action == "take":
            # The frame is on the ship of the seat that was to move before the take.
            ships = with_class(root, "ship")
            assert holders[0] is ships[before.current_player], f"move {index}"
    assert {"reveal", "flip", "take"} <= set(framed)


def test_the_end_names_the_winners() -> None:
    game = random_game("medici-card-game", 3, seed=4, mode=DEALT, keep_states=True)
    view = GAME.view(game.states[-1], SPECTATOR)
    best = max(s.florins for s in view.seats)
    status = one(ET.fromstring(GAME.picture(view)), "status").text or ""
    assert status.startswith("Game over. Winner")
    assert all(s.name in status for s in view.seats if s.florins == best)
    assert status.endswith(f"({best})")
