"""Reads over Connect GET (issue 27): the read RPCs are marked `idempotency_level =
NO_SIDE_EFFECTS` in the .proto files, so the HTTP port answers them to a plain GET (the
request in the query string: `?connect=v1&encoding=json&message=...`), as `buf curl
--http1.1 --get`, browsers' caches and CDNs can use; a change refuses GET."""

from __future__ import annotations

import importlib
import json
import pkgutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from google.protobuf import descriptor

import tablelog.v1
from tablelog.service.api.server import BackgroundServer
from tablelog.service.logs import configure_logging
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN, play_random


def every_rpc() -> dict[str, descriptor.MethodDescriptor]:
    """Every RPC of every service in every generated module of tablelog.v1 (a new .proto
    file's services included), by path ("tablelog.v1.TablelogService/GetGame")."""
    found = {}
    for module_info in pkgutil.iter_modules(tablelog.v1.__path__):
        if not module_info.name.endswith("_pb2"):
            continue
        module = importlib.import_module(f"tablelog.v1.{module_info.name}")
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                found[f"{service.full_name}/{method.name}"] = method
    return found


def marked(method: descriptor.MethodDescriptor) -> bool:
    options = method.GetOptions()
    return bool(options.idempotency_level == options.NO_SIDE_EFFECTS)


READS_NOTHING_CHANGED = "changes nothing"
CHANGES = "changes something"
EFFECTS = {
    "tablelog.v1.TablelogService/ListGameTypes": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/CreateGame": CHANGES,
    "tablelog.v1.TablelogService/GetGame": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/ListGames": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/RecordMove": CHANGES,
    "tablelog.v1.TablelogService/UndoMove": CHANGES,
    "tablelog.v1.TablelogService/RedoMove": CHANGES,
    "tablelog.v1.TablelogService/AmendMove": CHANGES,
    "tablelog.v1.TablelogService/AbandonGame": CHANGES,
    "tablelog.v1.TablelogService/DeleteGame": CHANGES,
    "tablelog.v1.TablelogService/GetState": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/ListLegalMoves": READS_NOTHING_CHANGED,
    # Streams: marked as what they are; Connect GET is for unary calls, so they stay POST.
    "tablelog.v1.TablelogService/ReplayGame": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/WatchGame": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/AddAnnotation": CHANGES,
    "tablelog.v1.TablelogService/RemoveAnnotation": CHANGES,
    "tablelog.v1.TablelogService/ListAnnotations": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/GetAuditLog": READS_NOTHING_CHANGED,
    # Drops the stored checkpoints that do not hold (`Checkpoints.verify_stored`).
    "tablelog.v1.TablelogService/VerifyGame": CHANGES,
    "tablelog.v1.TablelogService/ImportGame": CHANGES,
    "tablelog.v1.TablelogService/ExportRecord": READS_NOTHING_CHANGED,
    "tablelog.v1.TablelogService/ImportRecord": CHANGES,
    "tablelog.v1.ClubService/WhoAmI": READS_NOTHING_CHANGED,
    "tablelog.v1.ClubService/ListMembers": READS_NOTHING_CHANGED,
    "tablelog.v1.ClubService/AddMember": CHANGES,
    "tablelog.v1.ClubService/RemoveMember": CHANGES,
    "tablelog.v1.ClubService/SetRole": CHANGES,
    "tablelog.v1.ClubService/CreateToken": CHANGES,
    "tablelog.v1.ClubService/ListTokens": READS_NOTHING_CHANGED,
    "tablelog.v1.ClubService/RevokeToken": CHANGES,
    "tablelog.v1.ClubService/CreateLinkToken": CHANGES,
    "tablelog.v1.ClubService/BindSeat": CHANGES,
    "tablelog.v1.ClubService/UpdateClub": CHANGES,
    "tablelog.v1.ClubService/ListPlayers": READS_NOTHING_CHANGED,
    "tablelog.v1.ClubService/RenamePlayer": CHANGES,
    "tablelog.v1.ClubService/MergePlayers": CHANGES,
    "tablelog.v1.ClubService/BindPlayer": CHANGES,
    "tablelog.v1.ClubService/ListRosterChanges": READS_NOTHING_CHANGED,
    "tablelog.v1.OperatorService/CreateClub": CHANGES,
    "tablelog.v1.OperatorService/ListClubs": READS_NOTHING_CHANGED,
    "tablelog.v1.OperatorService/SuspendClub": CHANGES,
    "tablelog.v1.OperatorService/ResumeClub": CHANGES,
    "tablelog.v1.OperatorService/DeleteClub": CHANGES,
    # Club memory reads its projections (an instance keeps what it computed, in memory).
    "tablelog.v1.StandingsService/GetStandings": READS_NOTHING_CHANGED,
    "tablelog.v1.StandingsService/GetPlayerRecord": READS_NOTHING_CHANGED,
    "tablelog.v1.StandingsService/GetGameTypeStats": READS_NOTHING_CHANGED,
    "tablelog.v1.StandingsService/ListSeasons": READS_NOTHING_CHANGED,
    "tablelog.v1.StandingsService/SetSeason": CHANGES,
    "tablelog.v1.StandingsService/RebuildProjections": CHANGES,
}
"""Every RPC, by what it does to what the server keeps (its Redis data: games, clubs,
tokens, rosters, projections, checkpoints). The one place a new RPC is classified: until it
is, `test_every_rpc_is_classified` fails. What changes nothing is marked `idempotency_level
= NO_SIDE_EFFECTS` (a caller, a browser's cache or a proxy may repeat or prefetch it), and
nothing else is. Unmarking a read breaks its GET callers (buf's own check of idempotency
levels is off, proto/buf.yaml, since it refuses additions too)."""


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


def test_every_rpc_is_classified() -> None:
    found = set(every_rpc())
    assert "tablelog.v1.StandingsService/GetStandings" in found  # every module is read
    assert sorted(found - EFFECTS.keys()) == [], "classify the new RPCs in EFFECTS"
    assert sorted(EFFECTS.keys() - found) == [], "RPCs no longer in the .proto files"


def test_what_changes_nothing_is_marked_and_nothing_else_is() -> None:
    rpcs = every_rpc()
    unmarked_reads = [
        p for p, e in EFFECTS.items() if e is READS_NOTHING_CHANGED and not marked(rpcs[p])
    ]
    marked_changes = [p for p, e in EFFECTS.items() if e is CHANGES and marked(rpcs[p])]
    assert unmarked_reads == []
    assert marked_changes == []


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


def unary_reads() -> list[str]:
    return sorted(
        path
        for path, method in every_rpc().items()
        if marked(method) and not method.server_streaming
    )


@pytest.mark.parametrize("path", unary_reads())
def test_every_marked_unary_read_is_answered_to_get_and_kept_by_no_cache(
    served: BackgroundServer, path: str
) -> None:
    """An empty request: answered, or refused for what it lacks (a game id, a name), but
    never as a method GET may not call (405); and none of these answers is kept."""
    status, headers, answer = get_with_headers(served, path, {})
    assert status not in (404, 405, 415), (status, answer)
    assert headers["cache-control"] == "no-store", (status, answer)


NEWLY_MARKED_READS: list[tuple[str, dict[str, object], str]] = [
    ("tablelog.v1.ClubService/ListPlayers", {}, "players"),
    ("tablelog.v1.ClubService/ListRosterChanges", {}, ""),
    ("tablelog.v1.OperatorService/ListClubs", {}, "clubs"),
    ("tablelog.v1.StandingsService/GetStandings", {"game": "splendor"}, "game"),
    ("tablelog.v1.StandingsService/GetGameTypeStats", {"game": "splendor"}, "season"),
    ("tablelog.v1.StandingsService/ListSeasons", {}, ""),
    # No game of Ursula's has ended: the handler's own refusal, not the port's. (Not Ann:
    # the server's Redis is the module's, and other tests end games that seat an Ann.)
    ("tablelog.v1.StandingsService/GetPlayerRecord", {"name": "Ursula"}, "PLAYER_NOT_FOUND"),
]
"""Issue 27's audit: the reads of the roster, the operator and club memory were not marked;
each with a request it answers, and a field its answer has (none: empty may be all) or the
reason of the handler's refusal."""


@pytest.mark.parametrize(("path", "message", "expected"), NEWLY_MARKED_READS)
def test_the_roster_operator_and_club_memory_reads_are_answered_to_get(
    served: BackgroundServer, path: str, message: dict[str, object], expected: str
) -> None:
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        # Ursula is seated, so a player of the club, in a game that never ends.
        client.create_game("splendor", ["Ursula", "Bob"])
    status, headers, answer = get_with_headers(served, path, message)
    if expected.isupper():
        assert status == 404, answer
        assert isinstance(answer, str)
        refusal = json.loads(answer)
        assert refusal["code"] == "not_found"
        assert refusal["details"][0]["type"] == "google.rpc.ErrorInfo"
    else:
        assert status == 200, answer
        assert isinstance(answer, dict)
        assert not expected or expected in answer, answer
    # Standings, rosters and clubs change with the next game or rename: never kept.
    assert headers["cache-control"] == "no-store"


def test_a_stream_is_not_answered_to_get(served: BackgroundServer) -> None:
    """Marked (they change nothing), the streams are still POST only: Connect GET is for
    unary calls (connect-python would take a GET for a marked stream, and answer it with an
    error inside a stream: `http_api.method_info` does not let it)."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
    status, _answer = get(
        served, "tablelog.v1.TablelogService/ReplayGame", {"gameId": game.game_id}
    )
    assert status == 405
