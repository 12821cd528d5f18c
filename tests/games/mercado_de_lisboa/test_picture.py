"""Mercado de Lisboa's picture (issue 13 item 1): every component the view holds is drawn
once (spaces, stands, restaurants, customer tiles at entrances and on offer, the display, the
players' coins, tiles and restaurants, the solo stage), hidden coins and unturned restaurants
are drawn face down (rules §2 steps 2 and 8), and the last move is framed where it shows."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import ENTRANCE_NAMES, GOODS
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.games.mercado_de_lisboa.positions import build, play
from tests.support.play import random_game

SVG = "{http://www.w3.org/2000/svg}"
HIDDEN = pb.MERCADO_DE_LISBOA_MONEY_HIDDEN
OPEN = pb.MERCADO_DE_LISBOA_MONEY_OPEN
Box = tuple[float, float, float, float]


def drawn(
    state: rl.State, viewer: Viewer, last_move: pb.MercadoDeLisboaMove | None = None
) -> ET.Element:
    return ET.fromstring(GAME.picture(GAME.view(state, viewer), last_move=last_move))


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    """The elements of class `cls`: groups, or single shapes titled themselves."""
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def only(root: ET.Element, cls: str) -> ET.Element:
    found = groups(root, cls)
    assert len(found) == 1, f"{len(found)} {cls} groups"
    return found[0]


def title(element: ET.Element) -> str:
    found = element.find(f"{SVG}title")
    assert found is not None
    assert found.text
    return found.text


def titled(root: ET.Element, cls: str, words: str) -> ET.Element:
    found = [g for g in groups(root, cls) if title(g) == words]
    assert len(found) == 1, f"{len(found)} {cls} groups titled {words!r}"
    return found[0]


def texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def box(element: ET.Element) -> Box:
    """The smallest box around the rectangles and circles drawn in `element`."""
    edges: list[Box] = []
    for shape in element.iter():
        if shape.tag == f"{SVG}rect":
            x, y = float(shape.get("x", 0)), float(shape.get("y", 0))
            edges.append(
                (x, y, x + float(shape.get("width", 0)), y + float(shape.get("height", 0)))
            )
        elif shape.tag == f"{SVG}circle":
            cx, cy, r = (float(shape.get(k, 0)) for k in ("cx", "cy", "r"))
            edges.append((cx - r, cy - r, cx + r, cy + r))
    assert edges, "nothing drawn"
    return (
        min(e[0] for e in edges),
        min(e[1] for e in edges),
        max(e[2] for e in edges),
        max(e[3] for e in edges),
    )


def framed(root: ET.Element) -> Box:
    frames = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "last-move"]
    assert len(frames) == 1, f"{len(frames)} last-move frames"
    return box(frames[0])


def holds(frame: Box, element: ET.Element) -> bool:
    left, top, right, bottom = box(element)
    x, y = (left + right) / 2, (top + bottom) / 2
    return frame[0] <= x <= frame[2] and frame[1] <= y <= frame[3]


def assert_frames_only(root: ET.Element, target: ET.Element, cls: str) -> None:
    """The last-move frame is around `target` and around no other component of its kind."""
    frame = framed(root)
    assert holds(frame, target), f"the frame is not around {title(target)!r}"
    others = [g for g in groups(root, cls) if g is not target and holds(frame, g)]
    assert not others, f"the frame is also around {[title(g) for g in others]}"


# ------------------------------------------------------------------ what is drawn


def test_every_component_of_the_view_is_drawn_once() -> None:
    state = build(
        3,
        stands={"a1": ("fish", 0), "c3": ("meat", 1), "e5": ("grape", 2)},
        restaurants={"b2": "sushi", "d4": "pub"},
        face_down=("c1", "a3"),
        customers={"n1": "2 fish+flower", "w3": "1 tomato+meat"},
        offers=("1 fish+grape", "3 flower+meat", "3 tomato+grape"),
        hands=[["fish", "flower"], ["meat"], ["grape", "grape", "tomato"]],
        held=[["tea"], [], ["wine", "pizza"]],
        display=("grape", "meat"),
        options=pb.MercadoDeLisboaOptions(money=OPEN),
    )
    view = GAME.view(state, SPECTATOR)
    root = drawn(state, SPECTATOR)
    market = only(root, "market")
    assert len(groups(market, "space")) == 25
    assert len(groups(market, "entrance")) == 20
    stands = groups(market, "stand")
    assert {title(s) for s in stands} == {
        "fish stand of p1 on a1",
        "meat stand of p2 on c3",
        "grape stand of p3 on e5",
    }
    face_up = [r for r in groups(market, "restaurant") if not groups(r, "face-down")]
    assert sorted(title(r) for r in face_up) == ["pub (every good) on d4", "sushi bar (fish) on b2"]
    face_down = [title(g) for g in groups(market, "face-down")]
    assert sorted(face_down) == [
        "a face-down restaurant on a3 (its type not yet seen)",
        "a face-down restaurant on c1 (its type not yet seen)",
    ]
    marks = sum(
        1
        for s in view.spaces
        if s.restaurant_mark and s.kind == pb.MERCADO_DE_LISBOA_SPACE_KIND_EMPTY
    )
    assert len([e for e in market.iter() if e.get("class") == "restaurant-mark"]) == marks
    at_entrances = groups(market, "customer-tile")
    assert sorted(title(t) for t in at_entrances) == [
        "1 customer wanting tomato and meat at entrance w3",
        "2 customers wanting fish and flower at entrance n1",
    ]
    offers = only(root, "customers")
    assert len(groups(offers, "customer-tile")) == sum(len(o.available) for o in view.customers)
    assert len(groups(offers, "customer-offer")) == 4
    assert [title(t) for t in groups(only(root, "display"), "stand-tile")] == [
        f"{g} stand tile" for g in ("meat", "grape")
    ]
    assert texts(only(root, "bag")) == [
        "Bag",
        *(f"{g} {n}" for g, n in zip(GOODS, view.bag, strict=True)),
    ]

    players = groups(root, "player")
    assert [title(p) for p in players] == ["p1, seat 1, to move", "p2, seat 2", "p3, seat 3"]
    for player, seen in zip(players, view.players, strict=True):
        assert len(groups(player, "stand-tile")) == len(seen.stand_tiles)
        assert len(groups(player, "restaurant")) == len(seen.restaurants)
        assert texts(only(player, "coins")) == [str(seen.money)]
    assert not groups(root, "solo-stage")


def test_a_dead_tile_and_an_unturned_restaurant_in_front_of_a_player() -> None:
    """§4.1 step 4: a tile taken without a wooden stand; §4.1 step 1: a face-down restaurant
    taken from the market stays face down until the table turns it over."""
    state = build(2, face_down=("b2",), hands=[["fish"], ["meat"]])
    state = play(state, "stand fish b2 take grape")
    assert state.held[0] or state.pending, "the restaurant was not taken"
    player = groups(drawn(state, FULL), "player")[0]
    unturned = [r for r in groups(player, "restaurant") if groups(r, "face-down")]
    assert [title(only(r, "face-down")) for r in unturned] == [
        "a face-down restaurant held by p1 (its type not yet seen)"
    ]
    dead_state = build(
        2,
        stands={f"{c}1": ("fish", 0) for c in "abcde"} | {"a2": ("meat", 0), "b3": ("tomato", 0)},
        hands=[["grape"], ["meat"]],
        money=[10, 1],
        display=("flower", "flower", "fish"),
    )
    dead_state = play(dead_state, "stand grape e4 take flower")
    view = GAME.view(dead_state, FULL)
    assert list(view.players[0].dead_tiles) == [pb.MERCADO_DE_LISBOA_GOOD_FLOWER]
    player = groups(drawn(dead_state, FULL), "player")[0]
    assert [title(t) for t in groups(player, "dead-tile")] == ["flower stand tile without a stand"]


# ------------------------------------------------------------------ hidden coins


@pytest.mark.parametrize("viewer", [0, 1, SPECTATOR, FULL])
def test_hidden_coins_are_face_down_for_every_seat_but_their_own(viewer: Viewer) -> None:
    state = build(3, money=[17, 23, 41], options=pb.MercadoDeLisboaOptions(money=HIDDEN))
    root = drawn(state, viewer)
    for seat, player in enumerate(groups(root, "player")):
        coins = only(player, "coins")
        if viewer is FULL or viewer == seat:
            assert not groups(coins, "face-down")
            assert texts(coins) == [str((17, 23, 41)[seat])]
        else:
            assert (
                title(only(coins, "face-down")) == f"p{seat + 1}'s coins, hidden behind the screen"
            )
            assert texts(coins) == []
            assert "coins: " not in ET.tostring(coins, encoding="unicode")


def test_open_money_draws_every_coin_face_up() -> None:
    state = build(2, money=[5, 6], options=pb.MercadoDeLisboaOptions(money=OPEN))
    root = drawn(state, 1)
    assert [texts(c) for c in groups(root, "coins")] == [["5"], ["6"]]
    assert not any(groups(c, "face-down") for c in groups(root, "coins"))


# ------------------------------------------------------------------ the last move


def _moves_and_states(
    players: int, seed: int, options: pb.MercadoDeLisboaOptions | None = None
) -> Iterator[tuple[pb.MercadoDeLisboaMove, rl.State]]:
    played = random_game("mercado-de-lisboa", players, seed, options, keep_states=True)
    for envelope, after in zip(played.moves, played.states[1:], strict=True):
        yield envelope.mercado_de_lisboa, after


def test_the_last_move_is_framed_where_it_shows() -> None:
    checked: set[str] = set()
    for players, seed in ((2, 1), (4, 2), (3, 3)):
        for move, after in _moves_and_states(players, seed):
            action = move.WhichOneof("action")
            assert action is not None
            root = drawn(after, 0, move)
            if action in ("stand", "restaurant"):
                space = getattr(move, action).space
                name = f"{'abcde'[(space - 1) % 5]}{(space - 1) // 5 + 1}"
                assert_frames_only(root, titled(root, "space", f"space {name}"), "space")
            elif action == "customer":
                entrance = ENTRANCE_NAMES[move.customer.entrance - 1]
                at = [e for e in groups(root, "entrance") if f"entrance {entrance}" in title(e)]
                assert len(at) == 1
                assert_frames_only(root, at[0], "entrance")
            elif action == "reveal":
                size = move.reveal.customers
                row = titled(root, "customer-offer", f"{size}-customer tiles")
                assert_frames_only(root, row, "customer-offer")
            elif action in ("draw", "swap"):
                assert holds(framed(root), only(root, "bag"))
            elif action == "take":
                assert holds(framed(root), only(root, "display"))
            elif action == "flip":
                assert holds(framed(root), only(root, "unseen-restaurants"))
            elif action == "coin":
                frame = framed(root)
                streak = only(root, "coin-streak")
                assert texts(streak) == [f"coin turns in a row: {GAME.view(after, 0).coin_streak}"]
                assert frame[0] < float(streak[1].get("x", 0)) <= frame[2]
            checked.add(action)
    assert {"stand", "restaurant", "customer", "reveal", "draw", "flip", "coin"} <= checked
    without = drawn(after, 0)
    assert not [e for e in without.iter() if e.get("class") == "last-move"]


# ------------------------------------------------------------------ solo and approximate


def test_the_solo_stage_and_the_campaign() -> None:
    campaign = pb.MercadoDeLisboaCampaign(
        stages=[pb.MercadoDeLisboaStageRecord(stage=1, fame=2, money=90, game_id="g1")]
    )
    options = pb.MercadoDeLisboaOptions(stage=2, campaign=campaign)
    state = build(1, money=[62], options=options)
    view = GAME.view(state, 0)
    root = drawn(state, 0)
    stage = only(root, "solo-stage")
    assert texts(stage)[0] == f"Solo stage 2: {view.solo.stage_name}"
    fame = groups(stage, "fame")
    assert [title(f) for f in fame] == [
        "1 fame at 55 coins (reached)",
        "2 fame at 60 coins (reached)",
        "3 fame at 70 coins",
    ]
    facts = texts(only(stage, "campaign"))[0]
    assert "campaign fame so far 2" in facts
    assert "money from 4-customer tiles 0" in facts
    rules = " ".join(texts(only(stage, "stage-rules")))
    assert rules == " ".join(view.solo.rules.split())
    assert len(groups(root, "player")) == 1


def test_approximate_data_is_marked_with_the_whole_note() -> None:
    state = build(2)
    view = GAME.view(state, FULL)
    assert view.approximate, "the shipped board file is marked approximate"
    root = ET.fromstring(GAME.picture(view, approximate="tile goods guessed"))
    note = only(root, "approximate")
    assert title(note) == f"tile goods guessed; {view.approximate_note}"
    assert texts(note)[0].startswith("≈ tile goods guessed; ")
    view.approximate = False
    assert not groups(ET.fromstring(GAME.picture(view)), "approximate")
    assert groups(ET.fromstring(GAME.picture(view, approximate="x")), "approximate")
