"""ListLegalMoves names each move by its taps on the picture (issue 25, `LegalMove.touches`):
every touch is marked in the picture GetState draws for the same revision and viewer, no two
moves share their touches, pages carry the touches cut against the whole list, and a move
found by its taps alone records as its notation does."""

from __future__ import annotations

import re

import pytest

from tablelog.v1 import service_pb2
from tablelog_client import Client

pytestmark = pytest.mark.slow

TOUCH = re.compile(r'data-touch="([^"]+)"')


def by_taps(moves: list[service_pb2.LegalMove], taps: list[str]) -> service_pb2.LegalMove:
    """The one move `taps` selects, as the web app narrows: a prefix, or any order."""
    found = []
    for move in moves:
        touches = list(move.touches)
        if move.touches_any_order:
            if sorted(touches) == sorted(taps):
                found.append(move)
        elif touches == taps:
            found.append(move)
    assert len(found) == 1, f"{taps} selects {[m.notation for m in found]}"
    return found[0]


def test_every_listed_move_is_tapped_on_the_picture_of_its_revision(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"])
    # Table mode: the table reveals the market first; each reveal is a tap in the tray.
    for _ in range(3):
        _to_move, moves = client.legal_moves(game.game_id, viewer=client.viewer(full=True))
        picture = client.state(game.game_id, full=True, picture=True).picture
        ids = set(TOUCH.findall(picture))
        keys = set()
        for move in moves:
            assert move.touches, move.notation
            assert set(move.touches) <= ids, move.notation
            key = tuple(sorted(move.touches)) if move.touches_any_order else tuple(move.touches)
            assert key not in keys
            keys.add(key)
        first = moves[0]
        assert first.touches[0].startswith("tray-card-")
        client.record(game.game_id, first.notation)


def test_a_move_chosen_by_taps_records_like_its_notation(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    _to_move, moves = client.legal_moves(game.game_id)
    chosen = by_taps(moves, ["bank-g", "bank-w", "bank-u"])
    assert chosen.notation == "take w u g"
    assert chosen.touches_any_order
    client.record(game.game_id, chosen.notation)
    _to_move, moves = client.legal_moves(game.game_id)
    assert by_taps(moves, ["bank-r", "bank-r"]).notation == "take r r"


def test_a_page_carries_the_touches_cut_against_every_move(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    whole = client.stub.ListLegalMoves(
        service_pb2.ListLegalMovesRequest(game_id=game.game_id, page_size=1000)
    )
    page = client.stub.ListLegalMoves(
        service_pb2.ListLegalMovesRequest(game_id=game.game_id, page_size=5)
    )
    assert [list(m.touches) for m in page.moves] == [list(m.touches) for m in whole.moves[:5]]


def test_each_listed_move_is_said_in_words_for_the_viewer(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    for viewer in (None, client.viewer(seat=0), client.viewer()):
        _to_move, moves = client.legal_moves(game.game_id, viewer=viewer)
        said = {move.notation: move.words for move in moves}
        assert said["take w u g"] == "Ann takes white, blue and green."
        assert all(words.startswith("Ann ") for words in said.values()), said
        reserved = [m for m in moves if m.notation.startswith("reserve 1.") and m.detail]
        assert reserved
        assert all(f"reserves {m.detail} from slot" in m.words for m in reserved)
