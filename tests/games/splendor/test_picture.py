"""Splendor's picture (picture.py): what it draws matches the view, component by component;
another seat's blind reserve is face down; the last move is framed where it shows."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE, Viewer
from tablelog.replay.games.splendor import GAME
from tablelog.replay.games.splendor.picture import COLOURS
from tablelog.replay.games.splendor.rules import State, tokens_tuple
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import SplendorMove, SplendorView
from tests.games.splendor.support import fresh, moves
from tests.support.play import random_game

SVG = "{http://www.w3.org/2000/svg}"


def classes(element: ET.Element) -> set[str]:
    return set((element.get("class") or "").split())


def having(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in classes(e)]


def title(element: ET.Element) -> str:
    found = element.find(f"{SVG}title")
    return found.text or "" if found is not None else ""


def drawn(
    state: State, viewer: Viewer, last: SplendorMove | None = None
) -> tuple[SplendorView, ET.Element]:
    view = GAME.view(state, viewer)
    return view, ET.fromstring(GAME.picture(view, last_move=last))


def check_components(view: SplendorView, root: ET.Element) -> None:
    """Every component of the view is drawn once, with the numbers the view holds."""
    (market,) = having(root, "market")
    assert len(having(market, "card")) == sum(1 for r in view.market for c in r.slots if c.id)
    decks = having(market, "deck")
    assert len(decks) == 3
    shown = sorted(int(next(t.text for t in d.iter(f"{SVG}text") if t.text)) for d in decks)
    assert shown == sorted(r.deck_size for r in view.market)
    (offer,) = having(root, "nobles")
    assert len(having(offer, "noble")) == len(view.nobles)
    (bank,) = having(root, "bank")
    piles = having(bank, "token")
    assert [title(p) for p in piles] == [f"bank: {getattr(view.bank, c)} {c}" for c in COLOURS]
    panels = having(root, "player")
    assert len(panels) == len(view.players)
    for panel, player in zip(panels, view.players, strict=True):
        assert title(panel).startswith(f"{player.name}: {player.prestige} prestige")
        tokens = [title(t) for t in having(panel, "token")]
        assert tokens == [f"{player.name}: {getattr(player.tokens, c)} {c}" for c in COLOURS]
        bonuses = [title(b) for b in having(panel, "bonus")]
        assert bonuses == [f"{getattr(player.bonuses, c)} {c} bonus" for c in COLOURS[:5]]
        (hand,) = having(panel, "reserved")
        assert len(having(hand, "reserved-card")) == sum(1 for r in player.reserved if r.card.id)
        assert len(having(hand, "face-down")) == sum(1 for r in player.reserved if r.hidden)
        assert len(having(hand, "unknown-card")) == sum(
            1 for r in player.reserved if not r.card.id and not r.hidden
        )
        (owned,) = having(panel, "player-nobles")
        assert len(having(owned, "noble")) == len(player.nobles)


@pytest.mark.parametrize("players", [2, 4])
def test_every_component_of_the_view_is_drawn(players: int) -> None:
    played = random_game("splendor", players, seed=5, mode=DEALT, keep_states=True)
    for state in played.states[:: max(1, len(played.states) // 12)] + played.states[-1:]:
        for viewer in (FULL, SPECTATOR, 0):
            check_components(*drawn(state, viewer))


def test_another_seats_blind_reserve_is_face_down_and_never_described() -> None:
    position = moves(fresh(2, mode=DEALT), "reserve 3.deck", "reveal 3.deck 3u4:w7")
    state = position.state
    (card_id, _level, blind) = state.players[0].reserved[0]
    assert blind
    assert card_id
    card = state.rules.components.card(card_id)
    _owner_view, owner = drawn(state, 0)
    (mine,) = having(having(owner, "player")[0], "reserved-card")
    assert "level 3 card" in title(mine)
    for viewer in (1, SPECTATOR):
        _view, root = drawn(state, viewer)
        (hand,) = having(having(root, "player")[0], "reserved")
        assert len(having(hand, "face-down")) == 1
        assert not having(hand, "reserved-card")
        assert card.text not in ET.tostring(root, encoding="unicode")
        assert title(mine) not in [title(e) for e in root.iter()]


def highlighted(root: ET.Element, within: str) -> int:
    return sum(len(having(part, "last-move")) for part in having(root, within))


def level_group(root: ET.Element, level: int) -> ET.Element:
    (found,) = [e for e in having(root, "level") if f"level-{level}" in classes(e)]
    return found


@pytest.mark.parametrize("mode", [TABLE, DEALT], ids=["table", "dealt"])
def test_the_last_move_is_framed_where_it_shows(mode: game_pb2.Mode.ValueType) -> None:
    seen: set[str] = set()
    for seed in range(3):
        played = random_game("splendor", 3, seed=seed, mode=mode, keep_states=True)
        for index, envelope in enumerate(played.moves):
            move = played.position.table.unwrap(envelope)
            assert isinstance(move, SplendorMove)
            before, after = played.states[index], played.states[index + 1]
            _view, root = drawn(after, FULL, move)
            frames = having(root, "last-move")
            action = move.WhichOneof("action")
            if action in ("take_different", "take_same"):
                gems = (
                    set(move.take_different.gems)
                    if action == "take_different"
                    else {move.take_same.gem}
                )
                returned = {g + 1 for g, n in enumerate(tokens_tuple(move.returned)) if n}
                assert highlighted(root, "bank") == len(gems | returned) == len(frames)
            elif (action == "buy" and move.buy.level) or action == "reserve":
                level = move.buy.level if action == "buy" else move.reserve.level
                assert len(having(level_group(root, level), "last-move")) == 1
            elif action == "buy":
                panels = having(root, "player")
                assert len(having(panels[before.current], "last-move")) >= 1
                assert highlighted(root, "market") == 0
            elif action == "reveal_card" and move.reveal_card.slot:
                row = level_group(root, move.reveal_card.level)
                assert len(having(row, "last-move")) == 1 == len(frames)
            elif action == "reveal_noble":
                assert highlighted(root, "nobles") == 1 == len(frames)
            else:
                continue
            seen.add(action if action != "buy" or move.buy.level else "buy from the hand")
    assert {"take_different", "reserve", "buy", "buy from the hand", "reveal_card"} <= seen
    _view, root = drawn(played.states[-1], FULL, None)
    assert not having(root, "last-move")
