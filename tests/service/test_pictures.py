"""The picture of a state over the API (issue 13): GetState and ReplayGame draw it only when
asked, from the view the caller gets (another seat's blind reserve face down), with the move
that led to the state framed and the game's approximate components noted."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import grpc
import pytest

from tablelog.replay.picture import PHONE_WIDTH
from tablelog.replay.registry import find_game
from tablelog.v1 import game_pb2, service_pb2
from tablelog_client import Client

pytestmark = pytest.mark.slow

SVG = "{http://www.w3.org/2000/svg}"


def classes(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return [c for e in root.iter() for c in (e.get("class") or "").split()]


def reserved_titles(svg: str) -> list[str]:
    """What the picture says of each face-up reserved card, in words."""
    return [
        e.findtext(f"{SVG}title") or ""
        for e in ET.fromstring(svg).iter()
        if "reserved-card" in (e.get("class") or "").split()
    ]


def dealt_game_with_a_blind_reserve(client: Client) -> tuple[str, str]:
    """A dealt Splendor game (nobles marked approximate) where Ann has reserved blind; the
    game id and the text of the card dealt to her."""
    _cards, nobles = find_game("splendor").default_components()
    retyped = game_pb2.ComponentFile()
    retyped.CopyFrom(nobles)
    retyped.approximate = True
    retyped.approximate_note = "nobles retyped from a photo"
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt", components=[retyped])
    client.record(game.game_id, "take w u g")
    client.record(game.game_id, "take k r w")
    client.record(game.game_id, "reserve 3.deck")
    (held,) = client.state(game.game_id, seat=0).view.splendor.players[0].reserved
    assert held.card.id
    return game.game_id, held.card.text


def test_get_state_draws_the_callers_view_only_when_asked(client: Client) -> None:
    game_id, secret = dealt_game_with_a_blind_reserve(client)
    assert client.state(game_id, seat=1).picture == ""
    owner = client.state(game_id, seat=0, picture=True)
    other = client.state(game_id, seat=1, picture=True)
    (described,) = reserved_titles(owner.picture)
    assert described.startswith("reserved card 1: level 3 card")
    drawn = classes(other.picture)
    assert not reserved_titles(other.picture)
    # The three decks, and for Bob one more thing face down: Ann's blind reserve.
    assert drawn.count("face-down") == classes(owner.picture).count("face-down") + 1 == 4
    assert described not in other.picture
    assert secret not in other.picture
    for picture in (owner.picture, other.picture):
        assert "nobles retyped from a photo" in picture
        assert "approximate" in classes(picture)
    # The deal that named Ann's card is the last move: framed in her view, hidden from Bob's.
    assert "last-move" in classes(owner.picture)
    assert "last-move" not in drawn
    earlier = client.state(game_id, 2, seat=1, picture=True)
    assert earlier.revision == 2
    assert "last-move" in classes(earlier.picture)


def test_replay_items_carry_pictures_only_when_asked(client: Client) -> None:
    game_id, _secret = dealt_game_with_a_blind_reserve(client)
    plain = list(client.replay(game_id, seat=1))
    assert plain
    assert all(item.state.picture == "" for item in plain)
    drawn = list(client.replay(game_id, seat=1, picture=True))
    assert [item.state.revision for item in drawn] == [item.state.revision for item in plain]
    for item in drawn:
        assert "player" in classes(item.state.picture)
        assert not reserved_titles(item.state.picture)
    assert sum("last-move" in classes(item.state.picture) for item in drawn) >= 2


def test_a_picture_is_drawn_in_the_layout_asked_for(client: Client) -> None:
    """Issue 25: GetState and ReplayGame draw the phone layout when asked (the same view, a
    picture of its own: one layout is never served for the other from the cache)."""
    game_id, secret = dealt_game_with_a_blind_reserve(client)
    wide = client.state(game_id, seat=1, picture=True).picture
    phone = client.state(game_id, seat=1, picture=True, phone=True).picture
    assert ET.fromstring(wide).get("width") == "880"
    assert ET.fromstring(phone).get("width") == str(PHONE_WIDTH)
    assert client.state(game_id, seat=1, picture=True).picture == wide
    assert secret not in phone
    assert not reserved_titles(phone)
    request = service_pb2.ReplayGameRequest(
        game_id=game_id,
        viewer=service_pb2.Viewer(seat=1),
        picture=True,
        picture_layout=service_pb2.PICTURE_LAYOUT_PHONE,
    )
    items = list(client.stub.ReplayGame(request))
    assert items
    assert items[-1].state.picture == phone
    assert all(ET.fromstring(i.state.picture).get("width") == str(PHONE_WIDTH) for i in items)
    # A layout the schema does not define is refused (and nothing is drawn).
    request.picture_layout = 7  # type: ignore[assignment]
    with pytest.raises(grpc.RpcError) as refused:
        list(client.stub.ReplayGame(request))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
