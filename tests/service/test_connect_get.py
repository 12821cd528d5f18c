"""Reads over Connect GET (issue 27): the read RPCs are marked `idempotency_level =
NO_SIDE_EFFECTS` in the .proto files, so the HTTP port answers them to a plain GET (the
request in the query string: `?connect=v1&encoding=json&message=...`), as `buf curl
--http1.1 --get`, browsers' caches and CDNs can use; a change refuses GET."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import clubs_pb2, service_pb2
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN, play_random

READS = {
    f"{service.full_name}/{method.name}"
    for module in (service_pb2, clubs_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
    for method in service.methods
    if method.GetOptions().idempotency_level == method.GetOptions().NO_SIDE_EFFECTS
}


@pytest.fixture(scope="module")
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    configure_logging("warning", json=True)
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    yield running
    running.stop()


def get(served: BackgroundServer, path: str, message: dict[str, object]) -> tuple[int, object]:
    query = urllib.parse.urlencode(
        {"connect": "v1", "encoding": "json", "message": json.dumps(message)}
    )
    request = urllib.request.Request(
        f"{served.http_url}/{path}?{query}", headers={"authorization": f"Bearer {OWNER_TOKEN}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def get_with_headers(
    served: BackgroundServer, path: str, message: dict[str, object]
) -> tuple[int, dict[str, str], object]:
    """A Connect GET as a browser sends it: the status, the headers (lower-case names) and
    the answer (JSON, or the refusal's text)."""
    query = urllib.parse.urlencode(
        {"connect": "v1", "encoding": "json", "message": json.dumps(message)}
    )
    request = urllib.request.Request(
        f"{served.http_url}/{path}?{query}", headers={"authorization": f"Bearer {OWNER_TOKEN}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            headers = {key.lower(): value for key, value in answer.headers.items()}
            return answer.status, headers, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        headers = {key.lower(): value for key, value in refused.headers.items()}
        return refused.code, headers, refused.read().decode()


MARKED = {
    "tablelog.v1.TablelogService/ListGameTypes",
    "tablelog.v1.TablelogService/GetGame",
    "tablelog.v1.TablelogService/ListGames",
    "tablelog.v1.TablelogService/GetState",
    "tablelog.v1.TablelogService/ListLegalMoves",
    "tablelog.v1.TablelogService/ListAnnotations",
    "tablelog.v1.TablelogService/GetAuditLog",
    "tablelog.v1.TablelogService/ExportRecord",
    "tablelog.v1.ClubService/WhoAmI",
    "tablelog.v1.ClubService/ListMembers",
    "tablelog.v1.ClubService/ListTokens",
}
"""The reads callers may GET. It may grow; a read leaving it breaks GET callers (buf's own
check of idempotency levels is off, proto/buf.yaml, since it refuses additions too)."""


def test_the_reads_are_marked_and_the_changes_are_not() -> None:
    assert MARKED <= READS
    assert not {p for p in READS if p.rsplit("/", 1)[1].startswith(("Record", "Create", "Add"))}


def test_a_read_is_answered_to_connect_get(served: BackgroundServer) -> None:
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
    status, answer = get(served, "tablelog.v1.TablelogService/GetGame", {"gameId": game.game_id})
    assert status == 200, answer
    assert isinstance(answer, dict)
    assert answer["game"]["gameId"] == game.game_id
    status, answer = get(served, "tablelog.v1.TablelogService/ListGameTypes", {})
    assert status == 200, answer


def test_a_change_is_not_answered_to_get(served: BackgroundServer) -> None:
    status, _answer = get(
        served,
        "tablelog.v1.TablelogService/CreateGame",
        {"game": "splendor", "players": [{"name": "A"}, {"name": "B"}]},
    )
    assert status in (405, 415)


GET_STATE = "tablelog.v1.TablelogService/GetState"


def test_a_past_state_seen_by_a_named_viewer_is_immutable_and_the_head_is_not_stored(
    served: BackgroundServer,
) -> None:
    """Issue 27 (and issue 24's immutable past pictures): a revision below the head, seen
    by a viewer the request names, is the same answer forever, so the caller's browser keeps
    it (private: it is what this token may see); the head, an unnamed viewer (it grows to
    the full view when the game ends) and a refusal are never stored."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
        play_random(client, game.game_id, 3)
    gid = game.game_id
    status, _headers, head = get_with_headers(served, GET_STATE, {"gameId": gid})
    assert status == 200, head
    assert isinstance(head, dict)
    top = int(head["state"]["revision"])
    assert top >= 3

    for viewer in ({"spectator": True}, {"full": True}, {"seat": 1}):
        past = {"gameId": gid, "revision": top - 1, "viewer": viewer, "picture": True}
        status, headers, answer = get_with_headers(served, GET_STATE, past)
        assert status == 200, answer
        assert isinstance(answer, dict)
        assert answer["state"]["picture"].startswith("<svg")
        assert headers["cache-control"] == "private, max-age=31536000, immutable", viewer
        assert "authorization" in headers["vary"].lower()

    changing: list[dict[str, object]] = [
        {"gameId": gid},  # the head
        {"gameId": gid, "revision": top, "viewer": {"spectator": True}},  # the head, by number
        {"gameId": gid, "revision": 1},  # as entitled: not the same view after the end
        {"gameId": gid, "revision": top + 5, "viewer": {"spectator": True}},  # refused
        {"gameId": "nosuchgame00", "revision": 1, "viewer": {"spectator": True}},  # refused
    ]
    for message in changing:
        status, headers, answer = get_with_headers(served, GET_STATE, message)
        assert headers["cache-control"] == "no-store", (message, status, answer)
        assert "public" not in headers["cache-control"]
    status, headers, _answer = get_with_headers(
        served, "tablelog.v1.TablelogService/GetGame", {"gameId": gid}
    )
    assert status == 200
    assert headers["cache-control"] == "no-store"


def test_each_picture_layout_is_an_immutable_answer_of_its_own(served: BackgroundServer) -> None:
    """Issue 25: the layout is part of the request, so of the GET's address: a past revision's
    phone picture and its wide picture are two answers, each kept for good, never one for the
    other; a layout the schema does not define is refused."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
        play_random(client, game.game_id, 3)
        top = client.get_game(game.game_id).version
    past = {"gameId": game.game_id, "revision": top - 1, "viewer": {"seat": 0}, "picture": True}
    pictures = {}
    for layout in ("PICTURE_LAYOUT_UNSPECIFIED", "PICTURE_LAYOUT_PHONE"):
        asked = {**past, "pictureLayout": layout}
        status, headers, answer = get_with_headers(served, GET_STATE, asked)
        assert status == 200, answer
        assert isinstance(answer, dict)
        assert headers["cache-control"] == "private, max-age=31536000, immutable"
        pictures[layout] = answer["state"]["picture"]
    assert 'width="880"' in pictures["PICTURE_LAYOUT_UNSPECIFIED"].split(">", 1)[0]
    assert 'width="340"' in pictures["PICTURE_LAYOUT_PHONE"].split(">", 1)[0]
    status, headers, _refused = get_with_headers(served, GET_STATE, {**past, "pictureLayout": 7})
    assert status == 400
    assert headers["cache-control"] == "no-store"


def test_a_post_for_a_past_state_carries_no_cache_promise(served: BackgroundServer) -> None:
    """Browsers keep no POST answer; the mark is for GET alone."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
        play_random(client, game.game_id, 2)
    body = json.dumps(
        {"gameId": game.game_id, "revision": 1, "viewer": {"spectator": True}}
    ).encode()
    request = urllib.request.Request(
        f"{served.http_url}/{GET_STATE}",
        data=body,
        headers={"authorization": f"Bearer {OWNER_TOKEN}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
        assert "immutable" not in (answer.headers.get("cache-control") or "")
