"""Stopping `tablelog serve` (and its embedded Redis) between moves loses nothing."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import grpc
import pytest

from tablelog.service.api.server import background_server
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2
from tablelog_client import Client, TablelogError
from tests.service.helpers import CHAIN, OWNER_TOKEN, refused, splendor_line
from tests.service.support import ServeProcess, run_serve

pytestmark = pytest.mark.slow


def test_restart_keeps_every_game_and_recording_continues(tmp_path: Path) -> None:
    line = splendor_line(seed=23)[:16]
    first = ServeProcess(tmp_path / "data").start()
    try:
        with Client(first.address, token=first.token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            for notation in line[:8]:
                client.record(game.game_id, notation)
            client.annotate(game.game_id, "before the restart")
            before = client.state(game.game_id)
    finally:
        assert first.stop() == 0
    assert (tmp_path / "data" / "tablelog.aof").stat().st_size > 0
    second = ServeProcess(tmp_path / "data").start()
    try:
        with Client(second.address, token=second.token) as client:
            assert client.state(game.game_id) == before
            for notation in line[8:]:
                client.record(game.game_id, notation)
            events = client.export(game.game_id)
            assert [e.move_recorded.notation for e in events if e.HasField("move_recorded")] == (
                line
            )
            assert [a.comment for a in client.annotations(game.game_id)] == ["before the restart"]
            assert client.verify(game.game_id).ok
            assert game.game_id in {g.game_id for g in client.list_games()}
    finally:
        assert second.stop() == 0


def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    first = ServeProcess(tmp_path / "data").start()
    try:
        with pytest.raises(RuntimeError, match="exited"):
            ServeProcess(tmp_path / "data").start()
    finally:
        first.stop()


def test_demo_records_a_game_and_says_how_to_record(tmp_path: Path) -> None:
    demo = ServeProcess(tmp_path / "data", "--demo").start()
    try:
        lines = demo.read_lines(3)
        assert lines[0].startswith("Demo game ")
        game_id = lines[0].split()[2]
        assert "second terminal" in lines[1]
        assert f"tablelog show {game_id}" in lines[2]
        with Client(demo.address, token=demo.token) as client:
            game = client.get_game(game_id)
            assert game.move_count > 0
            assert client.verify(game_id).ok
            assert client.annotations(game_id)
            owner = client.whoami().member  # the demo is recorded as the local owner
            assert {e.event.actor.member_id for e in client.audit(game_id)} == {owner.member_id}
    finally:
        demo.stop()


def test_one_json_log_line_per_rpc(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        serving = ServeProcess(tmp_path / "data", "--log-level", "info", stderr=stderr).start()
        try:
            with Client(serving.address, token=serving.token) as client:
                game = client.create_game("splendor", ["Ann", "Bob"], request_id="log-test")
                client.record(game.game_id, splendor_line(seed=1)[0], request_id="move-1")
                with pytest.raises(TablelogError):
                    client.record(game.game_id, "nonsense")
        finally:
            serving.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    rpcs = [line for line in lines if line.get("event") == "rpc"]
    record = next(r for r in rpcs if r.get("request_id") == "move-1")
    assert record["method"] == "RecordMove"
    assert record["game_id"] == game.game_id
    assert record["revision"] == 2
    assert record["status"] == "OK"
    assert record["duration_ms"] >= 0
    refused = [r for r in rpcs if r["method"] == "RecordMove" and r["status"] != "OK"]
    assert refused[0]["status"] == "INVALID_ARGUMENT"
    assert {r["method"] for r in rpcs} >= {"CreateGame", "GetGame", "RecordMove"}


def test_workers_share_one_address_and_one_history(tmp_path: Path) -> None:
    serving = ServeProcess(tmp_path / "data", "--workers", "2").start()
    try:
        line = splendor_line(seed=29)[:12]
        with (
            Client(serving.address, token=serving.token) as first,
            Client(serving.address, token=serving.token) as second,
        ):
            game = first.create_game("splendor", ["Ann", "Bob"])
            for index, notation in enumerate(line):
                (first if index % 2 else second).record(game.game_id, notation)
            assert second.get_game(game.game_id).version == len(line) + 1
            assert first.verify(game.game_id).ok
    finally:
        assert serving.stop() == 0


def test_a_redis_orphaned_by_a_killed_server_is_stopped_at_restart(tmp_path: Path) -> None:
    first = ServeProcess(tmp_path / "data").start()
    with Client(first.address, token=first.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
    assert first.process is not None
    first.process.kill()  # no clean-up by the server (the kernel stops its Redis)
    first.process.wait(10)
    assert first.process.stdout is not None
    first.process.stdout.close()
    first.process = None
    second = ServeProcess(tmp_path / "data").start()
    try:
        with Client(second.address, token=second.token) as client:
            assert client.get_game(game.game_id).version == game.version
    finally:
        assert second.stop() == 0


def test_redis_down_is_unavailable_and_a_retry_after_it_stores_once(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path / "redis")
    redis.start()
    try:
        with (
            background_server(redis.url, CHAIN, OWNER_TOKEN) as serving,
            Client(serving.target, token=OWNER_TOKEN) as client,
        ):
            game = client.create_game("splendor", ["Ann", "Bob"])
            first = splendor_line(seed=37)[0]
            redis.stop()
            error = refused(lambda: client.record(game.game_id, first, expected_version=1))
            assert (error.code, error.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "STORE_UNAVAILABLE",
            )
            redis.start()  # same data directory: the game is back from the AOF
            done = client.record(game.game_id, first, expected_version=1, request_id="again")
            retry = client.record(game.game_id, first, expected_version=1, request_id="again")
            assert retry.events == done.events
            assert client.get_game(game.game_id).version == 2
    finally:
        redis.stop()


def test_record_move_returns_the_state_only_when_asked(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=41)
    plain = client.record(game.game_id, line[0])
    assert not plain.HasField("state")
    request = service_pb2.RecordMoveRequest(
        game_id=game.game_id,
        notation=line[1],
        expected_version=plain.game.version,
        include_state=True,
    )
    rich = client.stub.RecordMove(request)
    assert rich.state.revision == rich.game.version
    assert rich.state.text
    assert list(rich.state.moves) == line[:2]


def test_the_demo_game_is_recorded_once_per_data_directory(tmp_path: Path) -> None:
    """A second `serve --demo` on the same data shows the demo game again, not a new one
    in the club's list at every start."""
    first = ServeProcess(tmp_path / "data", "--demo").start()
    try:
        game_id = first.read_lines(3)[0].split()[2]
    finally:
        first.stop()
    again = ServeProcess(tmp_path / "data", "--demo").start()
    try:
        lines = again.read_lines(3)
        assert lines[0].startswith(
            f"Demo game {game_id} recorded at an earlier start of this data directory: "
        )
        assert f"show {game_id}" in lines[2]
        with Client(again.address, token=again.token) as client:
            demos = [g.game_id for g in client.list_games() if g.title == "tablelog demo"]
        assert demos == [game_id]
    finally:
        again.stop()


def test_a_deleted_demo_game_is_neither_announced_nor_recorded_again(tmp_path: Path) -> None:
    """The owner deleted the demo game: a later `serve --demo` on that data says so in one
    line, offers no commands for it, and records no other demo game."""
    first = ServeProcess(tmp_path / "data", "--demo").start()
    try:
        game_id = first.read_lines(3)[0].split()[2]
        with Client(first.address, token=first.token) as client:
            client.delete_game(game_id, reason="not ours")
    finally:
        first.stop()
    again = ServeProcess(tmp_path / "data", "--demo").start()
    try:
        said = again.read_lines(1)[0]
        assert said.startswith(
            f"The demo game {game_id} of this data directory was deleted; --demo records no other"
        ), said
        with Client(again.address, token=again.token) as client:
            # A deleted game is listed nowhere: no demo game listed is no new one recorded.
            assert [g.game_id for g in client.list_games() if g.title == "tablelog demo"] == []
            assert client.get_game(game_id).status == service_pb2.GAME_STATUS_DELETED
    finally:
        again.stop()
    assert f"show {game_id}" not in "".join(again.output)


def test_ports_in_use_are_named_with_their_flags(tmp_path: Path) -> None:
    """Both ports taken: both named, with the cause and the flags that choose others, and
    no line from gRPC's C core."""
    with socket.socket() as grpc_port, socket.socket() as http_port:
        for taken in (grpc_port, http_port):
            taken.bind(("127.0.0.1", 0))
            taken.listen()
        grpc_address = f"127.0.0.1:{grpc_port.getsockname()[1]}"
        http_address = f"127.0.0.1:{http_port.getsockname()[1]}"
        done = run_serve(
            "--address", grpc_address, "--http-address", http_address,
            "--data-dir", str(tmp_path / "data"),
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: cannot listen on {grpc_address} (--address): the port is in use (another "
        "tablelog serve, or another program)",
        f"cannot listen on {http_address} (--http-address): the port is in use (another "
        "tablelog serve, or another program)",
        "Stop what listens there, or choose other ports: --address HOST:PORT and "
        "--http-address HOST:PORT (--http-address for the web app and browsers).",
    ]
