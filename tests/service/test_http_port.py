"""The HTTP port (`tablelog.service.api.http_port`): the same API as the gRPC port over the Connect
protocol (JSON and binary) and gRPC-Web, called with connect-python's own client against a
live server on the session's embedded Redis; the same refusals with the same google.rpc
details, the same gate, the same watch hub and limits; the request bounds; the origin
rule; and the web app's files."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import io
import json
import queue
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import grpc
import pytest
import structlog
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.service.access.anonymous import SAMPLER
from tablelog.service.api import http_port
from tablelog.service.api.http_api import method_info, paths
from tablelog.service.api.http_port import HttpApp
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.api.transport import TlsFiles
from tablelog.service.api.webapp_files import IMMUTABLE, REVALIDATE, WebappFiles
from tablelog.service.limits import MAX_MESSAGE_BYTES
from tablelog.service.logs import configure_logging
from tablelog.service.recording.watching import WatchLimits
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import clubs_pb2, events_pb2, game_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN, UNPACKED_DETAILS, rpc_refused
from tests.service.support import ServeProcess, make_certificates, tablelog_command

TABLELOG = "/tablelog.v1.TablelogService/"
CLUBS = "/tablelog.v1.ClubService/"
PROTOCOLS: dict[str, tuple[ProtocolType, Codec]] = {
    "connect-json": (ProtocolType.CONNECT, google_protobuf_json_codec()),
    "connect-proto": (ProtocolType.CONNECT, google_protobuf_binary_codec()),
    "grpc-web": (ProtocolType.GRPC_WEB, google_protobuf_binary_codec()),
    "grpc-web-json": (ProtocolType.GRPC_WEB, google_protobuf_json_codec()),
}


@pytest.fixture(scope="module")
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """A server with both ports."""
    configure_logging("warning", json=True)
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN, http_address="127.0.0.1:0"
    ).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def strict(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """A server with both ports that takes two watchers at once."""
    running = BackgroundServer(
        embedded_redis.url,
        chain=CHAIN,
        owner_token=OWNER_TOKEN,
        http_address="127.0.0.1:0",
        watch_limits=WatchLimits(watchers=2),
    ).start()
    yield running
    running.stop()


@pytest.fixture(params=sorted(PROTOCOLS))
def protocol(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def owner(served: BackgroundServer) -> Iterator[Client]:
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as connected:
        yield connected


class Served(Protocol):
    """A running server with an HTTP port (`BackgroundServer`, `ServeProcess`)."""

    @property
    def http_url(self) -> str: ...


def http_client(served: Served, protocol: str) -> ConnectClientSync:
    kind, codec = PROTOCOLS[protocol]
    return ConnectClientSync(served.http_url, protocol=kind, codec=codec)


def call(
    served: BackgroundServer,
    protocol: str,
    path: str,
    request: Any,
    token: str | None = OWNER_TOKEN,
    timeout_ms: int | None = 30_000,
) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    with http_client(served, protocol) as client:
        return client.execute_unary(
            request=request, method=method_info(path), headers=headers, timeout_ms=timeout_ms
        )


def refusal(error: ConnectError) -> tuple[Code, str, list[Any]]:
    """The code, message and unpacked google.rpc details of a refused HTTP call."""
    details: list[Any] = []
    for detail in error.details:
        for kind in UNPACKED_DETAILS:
            if detail.type_name == kind.DESCRIPTOR.full_name:
                details.append(kind.FromString(detail.message_bytes))
    return error.code, error.message, details


def new_game(owner: Client) -> service_pb2.GameSummary:
    return owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")


def an_illegal_move(owner: Client, game_id: str) -> str:
    legal = {m.notation for m in owner.legal_moves(game_id)[1]}
    return next(text for text in ("buy 3.1", "buy 3.2", "buy 2.1", "buy 2.2") if text not in legal)


def test_every_method_of_both_services_is_served(served: BackgroundServer) -> None:
    assert served.built is not None
    assert served.built.http is not None
    # TCP: asyncio turns Nagle off only then (benchmarks/http_port.py: 40 ms a call with it).
    assert served.built.http.listening.proto == socket.IPPROTO_TCP
    assert set(paths()) == set(served.built.handlers.handlers)
    assert any(p.startswith(TABLELOG) for p in paths())
    assert any(p.startswith(CLUBS) for p in paths())


def test_a_unary_call_answers_what_the_grpc_port_answers(
    served: BackgroundServer, owner: Client, protocol: str
) -> None:
    made = call(
        served,
        protocol,
        TABLELOG + "CreateGame",
        service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            mode=game_pb2.MODE_DEALT,
            title=f"over {protocol}",
        ),
    )
    game_id = made.game.game_id
    over_http = call(
        served, protocol, TABLELOG + "GetGame", service_pb2.GetGameRequest(game_id=game_id)
    )
    with channel(served.target, OWNER_TOKEN) as opened:
        over_grpc = service_pb2_grpc.TablelogServiceStub(opened).GetGame(
            service_pb2.GetGameRequest(game_id=game_id)
        )
    assert over_http == over_grpc
    assert over_http.game.title == f"over {protocol}"
    assert owner.get_game(game_id).version == over_http.game.version
    who = call(served, protocol, CLUBS + "WhoAmI", clubs_pb2.WhoAmIRequest())
    assert who.member.role == clubs_pb2.ROLE_OWNER


def test_an_illegal_move_is_refused_with_the_grpc_ports_code_message_and_details(
    served: BackgroundServer, owner: Client, protocol: str
) -> None:
    game = new_game(owner)
    version = owner.get_game(game.game_id).version
    request = service_pb2.RecordMoveRequest(
        game_id=game.game_id,
        notation=an_illegal_move(owner, game.game_id),
        expected_version=version,
    )
    with pytest.raises(ConnectError) as refused:
        call(served, protocol, TABLELOG + "RecordMove", request)
    code, message, details = refusal(refused.value)
    with channel(served.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        grpc_code, grpc_details = rpc_refused(lambda: stub.RecordMove(request))
    assert (grpc_code, code) == (grpc.StatusCode.FAILED_PRECONDITION, Code.FAILED_PRECONDITION)
    assert details == grpc_details
    info = details[0]
    assert (info.domain, info.reason) == ("tablelog.v1", "ILLEGAL_MOVE")
    assert info.metadata["rule"].isupper()
    assert message
    assert owner.get_game(game.game_id).version == version  # refused: nothing changed


def test_undecodable_bytes_are_refused_as_the_grpc_port_refuses_them(
    served: BackgroundServer,
) -> None:
    """The adapter decodes with the method's own deserializer (the guard's)."""
    for body, content_type in ((b"\xff\xff\xff", "application/proto"), (b"{", "application/json")):
        status, _headers, answer = raw(
            served,
            "POST",
            TABLELOG + "GetGame",
            body,
            {"content-type": content_type, "authorization": f"Bearer {OWNER_TOKEN}"},
        )
        assert status == 400, answer
        assert b'"code":"invalid_argument"' in answer.replace(b" ", b"")
        assert b"google.rpc.ErrorInfo" in answer
        assert b"google.rpc.BadRequest" in answer


def test_no_token_is_unauthenticated(served: BackgroundServer, protocol: str) -> None:
    with pytest.raises(ConnectError) as refused:
        call(served, protocol, TABLELOG + "ListGames", service_pb2.ListGamesRequest(), token=None)
    code, _message, details = refusal(refused.value)
    assert code == Code.UNAUTHENTICATED
    assert details[0].reason == "TOKEN_MISSING"
    with pytest.raises(ConnectError) as unknown:
        call(served, protocol, TABLELOG + "ListGames", service_pb2.ListGamesRequest(), "nope")
    assert unknown.value.code == Code.UNAUTHENTICATED


def test_calls_over_http_are_logged_as_grpc_calls_are_with_their_transport(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured = io.StringIO()
    # Every refusal's line here: other tests' anonymous calls may have spent this second's
    # sampled lines (`tablelog.service.access.anonymous.SAMPLER`).
    monkeypatch.setattr(SAMPLER, "per_second", 1_000_000)
    monkeypatch.setattr(
        "tablelog.service.api.interceptors.log",
        structlog.wrap_logger(
            structlog.PrintLogger(captured),
            processors=[structlog.processors.JSONRenderer()],
            wrapper_class=structlog.BoundLogger,  # whatever level the session configured
        ),
    )
    call(served, "connect-proto", TABLELOG + "ListGameTypes", service_pb2.ListGameTypesRequest())
    with pytest.raises(ConnectError):
        call(served, "grpc-web", TABLELOG + "GetGame", service_pb2.GetGameRequest(), token=None)
    with channel(served.target, OWNER_TOKEN) as opened:
        service_pb2_grpc.TablelogServiceStub(opened).ListGameTypes(
            service_pb2.ListGameTypesRequest()
        )
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert [(x["method"], x["status"], x.get("transport")) for x in lines] == [
        ("ListGameTypes", "OK", "http"),
        ("GetGame", "UNAUTHENTICATED", "http"),
        ("ListGameTypes", "OK", None),
    ]
    assert lines[0]["member_id"] == lines[2]["member_id"]


def test_a_spectator_may_not_record(served: BackgroundServer, owner: Client, protocol: str) -> None:
    game = new_game(owner)
    spectator = owner.add_member(f"watcher {protocol}", "spectator")
    token = owner.create_token(spectator.member_id).token
    version = owner.get_game(game.game_id).version
    legal = owner.legal_moves(game.game_id)[1][0].notation
    with pytest.raises(ConnectError) as refused:
        call(
            served,
            protocol,
            TABLELOG + "RecordMove",
            service_pb2.RecordMoveRequest(
                game_id=game.game_id, notation=legal, expected_version=version
            ),
            token=token,
        )
    code, _message, details = refusal(refused.value)
    assert code == Code.PERMISSION_DENIED
    assert details[0].metadata["role"].lower() == "spectator"
    assert owner.get_game(game.game_id).version == version
    # What a spectator may do, it does over HTTP too.
    shown = call(
        served, protocol, TABLELOG + "GetGame", service_pb2.GetGameRequest(game_id=game.game_id)
    )
    assert shown.game.game_id == game.game_id


def test_a_replay_streams_what_the_grpc_port_streams(
    served: BackgroundServer, owner: Client, protocol: str
) -> None:
    game = new_game(owner)
    for _ in range(3):
        owner.record(game.game_id, owner.legal_moves(game.game_id)[1][0].notation)
    request = service_pb2.ReplayGameRequest(game_id=game.game_id, picture=True)
    with http_client(served, protocol) as client:
        over_http = list(
            client.execute_server_stream(
                request=request,
                method=method_info(TABLELOG + "ReplayGame"),
                headers={"authorization": f"Bearer {OWNER_TOKEN}"},
                timeout_ms=30_000,
            )
        )
    with channel(served.target, OWNER_TOKEN) as opened:
        over_grpc = list(service_pb2_grpc.TablelogServiceStub(opened).ReplayGame(request))
    assert over_http == over_grpc
    assert len(over_http) == owner.get_game(game.game_id).version  # revisions 1 to the head
    assert over_http[-1].state.picture.startswith("<svg")


class Watch:
    """WatchGame over HTTP in a thread: its messages, then the ConnectError or None that
    ended it, arrive in `received`; `close` hangs up (after the next message)."""

    def __init__(
        self,
        served: Served,
        protocol: str,
        request: service_pb2.WatchGameRequest,
        timeout_ms: int,
        token: str = OWNER_TOKEN,
    ) -> None:
        self.received: queue.Queue[Any] = queue.Queue()
        self._closing = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(served, protocol, request, timeout_ms, token), daemon=True
        )
        self._thread.start()

    def _run(
        self,
        served: Served,
        protocol: str,
        request: service_pb2.WatchGameRequest,
        timeout_ms: int,
        token: str,
    ) -> None:
        try:
            with http_client(served, protocol) as client:
                for message in client.execute_server_stream(
                    request=request,
                    method=method_info(TABLELOG + "WatchGame"),
                    headers={"authorization": f"Bearer {token}"},
                    timeout_ms=timeout_ms,
                ):
                    self.received.put(message)
                    if self._closing.is_set():
                        break
        except ConnectError as ended:
            self.received.put(ended)
        else:
            self.received.put(None)

    def next(self) -> Any:
        return self.received.get(timeout=20)

    def close(self) -> None:
        self._closing.set()
        self._thread.join(20)
        assert not self._thread.is_alive()


def test_a_move_recorded_over_grpc_reaches_a_watcher_over_http(
    served: BackgroundServer, owner: Client, protocol: str
) -> None:
    game = new_game(owner)
    head = owner.get_game(game.game_id).version
    watching = Watch(
        served,
        protocol,
        service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1),
        timeout_ms=20_000,
    )
    first = watching.next()  # the watch is open once its first heartbeat arrives
    assert first.WhichOneof("item") == "heartbeat"
    move = owner.legal_moves(game.game_id)[1][0].notation
    owner.record(game.game_id, move)
    while True:
        item = watching.next()
        assert not isinstance(item, ConnectError), item
        if item.WhichOneof("item") == "update":
            break
    event = item.update.event
    assert event.revision == head + 1
    assert event.move_recorded.notation == move
    watching.close()


def test_a_deadline_ends_a_watch_with_deadline_exceeded(
    served: BackgroundServer, owner: Client, protocol: str
) -> None:
    game = new_game(owner)
    watching = Watch(
        served,
        protocol,
        service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=60),
        timeout_ms=400,
    )
    ended = watching.next()  # no heartbeat within the deadline: its end comes first
    assert isinstance(ended, ConnectError), ended
    assert ended.code == Code.DEADLINE_EXCEEDED
    watching.close()


def test_watchers_over_http_count_against_the_same_watch_limits(
    strict: BackgroundServer,
) -> None:
    """The server takes two watchers: two over HTTP leave none for gRPC, nor for HTTP."""
    with Client(strict.target, token=OWNER_TOKEN, timeout=30) as owner:
        game = new_game(owner)
    request = service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1)
    watches = [Watch(strict, "connect-proto", request, timeout_ms=20_000) for _ in range(2)]
    for watching in watches:
        assert watching.next().WhichOneof("item") == "heartbeat"
    with channel(strict.target, OWNER_TOKEN) as opened:
        stream = service_pb2_grpc.TablelogServiceStub(opened).WatchGame(request, timeout=5)
        code, details = rpc_refused(lambda: next(iter(stream)))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert isinstance(details[0], error_details_pb2.ErrorInfo)
    assert details[0].reason == "TOO_MANY_WATCHERS"
    third = Watch(strict, "grpc-web", request, timeout_ms=5_000)
    refused = third.next()
    assert isinstance(refused, ConnectError)
    assert refused.code == Code.RESOURCE_EXHAUSTED
    for watching in watches:
        watching.close()


def raw(
    served: Served,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request sent as it is (no client-side normalization of the path)."""
    port = int(served.http_url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def test_a_body_over_the_message_limit_is_refused_before_it_is_parsed(
    served: BackgroundServer,
) -> None:
    auth = {"authorization": f"Bearer {OWNER_TOKEN}", "content-type": "application/proto"}
    status, _headers, answer = raw(
        served, "POST", TABLELOG + "ListGames", b"\0" * (MAX_MESSAGE_BYTES + 1), auth
    )
    assert status == 429, answer  # resource_exhausted
    assert b"resource_exhausted" in answer
    # A small body inflating past the limit is stopped while it inflates.
    bomb = gzip.compress(b"\0" * (MAX_MESSAGE_BYTES + 1024))
    assert len(bomb) < MAX_MESSAGE_BYTES // 100
    status, _headers, answer = raw(
        served, "POST", TABLELOG + "ListGames", bomb, {**auth, "content-encoding": "gzip"}
    )
    assert status == 429, answer
    # The port serves on.
    assert raw(served, "POST", TABLELOG + "ListGames", b"", auth)[0] == 200


def test_only_the_pages_own_origin_may_call_by_default(served: BackgroundServer) -> None:
    host = served.http_url.removeprefix("http://")
    base = {"authorization": f"Bearer {OWNER_TOKEN}", "content-type": "application/json"}
    same = raw(served, "POST", TABLELOG + "ListGames", b"{}", {**base, "origin": served.http_url})
    assert same[0] == 200
    behind_a_proxy = {**base, "origin": f"https://{host}"}  # TLS ended in front of the port
    assert raw(served, "POST", TABLELOG + "ListGames", b"{}", behind_a_proxy)[0] == 200
    other_port = {**base, "origin": f"http://{host.rsplit(':', 1)[0]}:1"}
    assert raw(served, "POST", TABLELOG + "ListGames", b"{}", other_port)[0] == 403
    other = raw(
        served, "POST", TABLELOG + "ListGames", b"{}", {**base, "origin": "https://evil.example"}
    )
    assert other[0] == 403
    assert "access-control-allow-origin" not in other[1]
    preflight = raw(
        served,
        "OPTIONS",
        TABLELOG + "ListGames",
        headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
    )
    assert preflight[0] == 403
    assert "access-control-allow-origin" not in preflight[1]


def asgi(app: Any, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    """The status and headers `app` answers a request with, called in process."""
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "http",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "server": ("127.0.0.1", 8080),
        "client": ("127.0.0.1", 40000),
        "http_version": "1.1",
        "asgi": {"version": "3.0"},
    }
    started: dict[str, Any] = {}

    requested: list[bool] = []

    async def receive() -> dict[str, Any]:
        # As a server does: the request once, then nothing until the client goes away
        # (Starlette 1.x listens for that disconnect while it sends a file).
        if requested:
            await asyncio.Event().wait()
        requested.append(True)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            started.update(message)

    asyncio.run(app(scope, receive, send))
    answered = {k.decode(): v.decode() for k, v in started["headers"]}
    return started["status"], answered


def test_an_allowed_origin_gets_its_preflight_answered(served: BackgroundServer) -> None:
    assert served.built is not None
    app = HttpApp(served.built.handlers.handlers, cors_origins=["https://club.example"])
    status, headers = asgi(
        app,
        "OPTIONS",
        TABLELOG + "ListGames",
        {
            "host": "127.0.0.1:8080",
            "origin": "https://club.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,content-type,connect-protocol-version",
        },
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == "https://club.example"
    assert "authorization" in headers["access-control-allow-headers"].lower()
    refused, _ = asgi(
        app,
        "OPTIONS",
        TABLELOG + "ListGames",
        {"host": "127.0.0.1:8080", "origin": "https://evil.example"},
    )
    assert refused == 403


def test_the_web_app_is_served_from_slash(served: BackgroundServer) -> None:
    status, headers, page = raw(served, "GET", "/")
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    assert headers["cache-control"] == REVALIDATE
    assert b"<html" in page
    routed = raw(served, "GET", "/games/abc123")
    assert (routed[0], routed[2]) == (200, page)  # the app routes it in the browser
    assert raw(served, "GET", "/games/abc123/app.js")[0] == 404
    assert raw(served, "GET", "/missing.js")[0] == 404
    assert raw(served, "POST", "/")[0] == 405


@pytest.mark.parametrize(
    "path",
    [
        "/../http_port.py",
        "/../../pyproject.toml",
        "/%2e%2e/http_port.py",
        "/..%2fhttp_port.py",
        "/games/../../http_port.py",
        "//etc/passwd",
    ],
)
def test_nothing_outside_the_web_app_directory_is_reachable(
    served: BackgroundServer, path: str
) -> None:
    status, _headers, body = raw(served, "GET", path)
    assert b"import" not in body
    assert b"root:" not in body
    assert status in (200, 404)
    if status == 200:  # only the app's own page, for a path it routes
        assert b"<html" in body


def files(
    directory: Path, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str]]:
    return asgi(WebappFiles(directory), "GET", path, headers or {})


def test_hashed_assets_are_cached_and_links_out_are_not_followed(tmp_path: Path) -> None:
    app = tmp_path / "webapp"
    (app / "assets").mkdir(parents=True)
    (app / "index.html").write_text("<html>app</html>")
    (app / "assets" / "app-5XK2J7QD.js").write_text("console.log(1)")
    (app / "assets" / "style.css").write_text("body{}")
    (tmp_path / "secret.txt").write_text("secret")
    (app / "link.txt").symlink_to(tmp_path / "secret.txt")
    status, headers = files(app, "/assets/app-5XK2J7QD.js")
    assert status == 200
    assert headers["content-type"].startswith("text/javascript")
    assert headers["cache-control"] == IMMUTABLE
    status, headers = files(app, "/assets/style.css")
    assert (status, headers["cache-control"]) == (200, REVALIDATE)
    assert headers["content-type"].startswith("text/css")
    revalidated, _ = files(app, "/assets/style.css", {"if-none-match": headers["etag"]})
    assert revalidated == 304
    assert files(app, "/link.txt")[0] == 404
    assert files(app, "/../secret.txt")[0] == 404


def test_serve_prints_the_web_apps_address_and_serves_it(tmp_path: Path) -> None:
    served = ServeProcess(tmp_path / "data", "--demo", http=True).start()
    try:
        lines = served.read_lines(8)  # web app, then the demo: 6 lines and its page
        shown = [line for line in served.output if line.startswith("web app: ")]
        # On a loopback address the fragment signs the local owner in (api/cli.py), with
        # a 12-hour token minted for it: owner.token itself is never printed.
        assert len(shown) == 1
        assert shown[0].startswith(f"web app: {served.http_url}/#token=tlm_")
        signed_in = "#" + shown[0].strip().split("#", 1)[1]
        assert served.token not in "".join(served.output)
        opened = next(line for line in lines if line.startswith("Or open it in a browser: "))
        game_url, fragment = opened.split(": ", 1)[1].strip().split("#", 1)
        assert game_url.startswith(f"{served.http_url}/games/")
        assert f"#{fragment}" == signed_in
        port = int(served.http_url.rsplit(":", 1)[1])
        for path in ("/", game_url.removeprefix(served.http_url)):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", path)
            answer = connection.getresponse()
            assert (answer.status, b"<html" in answer.read()) == (200, True)
            connection.close()
        kind, codec = PROTOCOLS["connect-json"]
        with ConnectClientSync(served.http_url, protocol=kind, codec=codec) as client:
            listed = client.execute_unary(
                request=service_pb2.ListGamesRequest(),
                method=method_info(TABLELOG + "ListGames"),
                headers={"authorization": f"Bearer {signed_in.removeprefix('#token=')}"},
            )
        assert game_url.rsplit("/", 1)[1] in {g.game_id for g in listed.games}
    finally:
        assert served.stop() == 0


def test_serve_refuses_a_plaintext_http_port_other_machines_can_reach(tmp_path: Path) -> None:
    done = subprocess.run(
        [*tablelog_command(), "serve", "--data-dir", str(tmp_path), "--address",
         "127.0.0.1:0", "--http-address", "0.0.0.0:0"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0:0 without TLS" in done.stderr


def test_with_tls_files_the_http_port_speaks_https(
    embedded_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    certificates = make_certificates(tmp_path)
    running = BackgroundServer(
        embedded_redis.url,
        chain=CHAIN,
        owner_token=OWNER_TOKEN,
        tls=TlsFiles(certificates.certificate, certificates.key),
        http_address="127.0.0.1:0",
    ).start()
    try:
        assert running.http_url.startswith("https://127.0.0.1:")
        port = int(running.http_url.rsplit(":", 1)[1])
        trusted = ssl.create_default_context(cafile=str(certificates.ca))
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=trusted, timeout=30)
        connection.request(
            "POST",
            TABLELOG + "ListGameTypes",
            body=b"{}",
            headers={"content-type": "application/json", "authorization": f"Bearer {OWNER_TOKEN}"},
        )
        answer = connection.getresponse()
        assert (answer.status, b'"splendor"' in answer.read()) == (200, True)
        connection.close()
        plaintext = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        plaintext.request("GET", "/")
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            plaintext.getresponse().read()
        plaintext.close()
    finally:
        running.stop()


def test_past_its_connections_the_http_port_answers_503(tmp_path: Path) -> None:
    """--http-max-connections 2: a watch (its connection and its call) leaves no room."""
    served = ServeProcess(tmp_path / "data", "--http-max-connections", "2", http=True).start()
    try:
        with Client(served.address, token=served.token, timeout=30) as owner:
            game = new_game(owner)
        request = service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1)
        watching = Watch(served, "connect-proto", request, 20_000, token=served.token)
        assert watching.next().WhichOneof("item") == "heartbeat"
        assert raw(served, "GET", "/")[0] == 503
        watching.close()
        deadline = time.monotonic() + 20
        while raw(served, "GET", "/")[0] == 503 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert raw(served, "GET", "/")[0] == 200
    finally:
        assert served.stop() == 0


def test_a_request_past_its_connections_is_counted_and_logged_with_its_ids(
    tmp_path: Path,
) -> None:
    """Issue 27: uvicorn answered the 503 itself, so it was in no metric and its line (plain
    "Exceeded concurrency limit.") named neither the call nor its ids."""
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        served = ServeProcess(
            tmp_path / "data", "--http-max-connections", "2", "--json-logs", stderr=stderr,
            http=True,
        ).start()  # fmt: skip
        try:
            with Client(served.address, token=served.token, timeout=30) as owner:
                game = new_game(owner)
            request = service_pb2.WatchGameRequest(game_id=game.game_id, heartbeat_seconds=1)
            watching = Watch(served, "connect-proto", request, 20_000, token=served.token)
            assert watching.next().WhichOneof("item") == "heartbeat"
            trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
            sent = {
                "content-type": "application/json",
                "authorization": f"Bearer {served.token}",
                "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01",
                "x-request-id": "crowded-call-1",
            }
            status, headers, _body = raw(served, "POST", TABLELOG + "ListGameTypes", b"{}", sent)
            assert status == 503
            assert headers["x-request-id"] == "crowded-call-1"
            assert raw(served, "GET", "/", headers={"x-request-id": "crowded-page-1"})[0] == 503
            watching.close()
            deadline = time.monotonic() + 20
            while raw(served, "GET", "/")[0] == 503 and time.monotonic() < deadline:
                time.sleep(0.1)
            metrics = raw(served, "GET", "/metrics")[2].decode()
        finally:
            assert served.stop() == 0
    assert (
        'tablelog_rpc_calls_total{code="UNAVAILABLE",method="ListGameTypes",transport="http"} 1.0'
        in metrics
    )
    refusals = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith('tablelog_refused_calls_total{reason="TOO_MANY_CONNECTIONS"}')
    ]
    assert refusals
    assert refusals[0] >= 2
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    call = [line for line in lines if line.get("request_id") == "crowded-call-1"]
    assert len(call) == 1, lines
    assert (call[0]["method"], call[0]["transport"], call[0]["status"]) == (
        "ListGameTypes",
        "http",
        "UNAVAILABLE",
    )
    assert call[0]["trace_id"] == trace_id
    page = [line for line in lines if line.get("request_id") == "crowded-page-1"]
    assert len(page) == 1, lines
    assert page[0]["path"] == "/"
    assert len(page[0]["trace_id"]) == 32


def test_a_connection_that_sends_no_head_in_time_is_closed(
    served: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller trickling a request line (or sending nothing) holds its connection only
    HEAD_SECONDS; one that sends its head in time is answered."""
    monkeypatch.setattr(http_port, "HEAD_SECONDS", 0.5)
    port = int(served.http_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never the blank line
        started = time.monotonic()
        assert slow.recv(1024) == b""  # closed by the server
        assert time.monotonic() - started < 5
    assert raw(served, "GET", "/")[0] == 200


def test_connections_past_the_limit_are_closed_as_they_are_accepted(tmp_path: Path) -> None:
    """uvicorn alone would hold them open until each sent a request."""
    served = ServeProcess(tmp_path / "data", "--http-max-connections", "3", http=True).start()
    port = int(served.http_url.rsplit(":", 1)[1])
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
    try:
        extra = socket.create_connection(("127.0.0.1", port), timeout=10)
        assert extra.recv(1024) == b""  # closed at once, not after HEAD_SECONDS
        extra.close()
    finally:
        for connection in held:
            connection.close()
        assert served.stop() == 0
