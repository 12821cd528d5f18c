"""Live watching at scale (service/recording/watching.py): one tail per watched game shares its
reads and renders among all watchers, so watchers never take the connections a RecordMove needs;
each watcher gets every update once and in order; a slow one is ended with a status it can resume
from, and watchers resume from their last revision after a restart."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc import aio
from redis.asyncio.cluster import RedisCluster

from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.recording.watching import WatchLimits
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import EmbeddedRedis, free_port
from tablelog.v1 import events_pb2, game_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tests.service.helpers import CHAIN, OWNER_TOKEN, refused, splendor_line
from tests.service.support import ServeProcess, tablelog_command

pytestmark = pytest.mark.slow

POOL_SIZE = 4
CROWD = 120
SLOW_QUEUE = 4
RECENT = 8


@pytest.fixture(scope="module")
def crowded(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """A server with a small request pool (on main, every watcher held a connection)."""
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, pool_size=POOL_SIZE, owner_token=OWNER_TOKEN
    ).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def strict(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    """A server with tight watch limits: short queues, a short memory, few games."""
    limits = WatchLimits(games=2, watchers_per_game=3, queue=SLOW_QUEUE, recent=RECENT)
    running = BackgroundServer(
        embedded_redis.url, chain=CHAIN, watch_limits=limits, owner_token=OWNER_TOKEN
    ).start()
    yield running
    running.stop()


def redis_connections(url: str) -> int:
    with redis.Redis.from_url(url) as raw:
        return len(raw.client_list())


def create(stub: service_pb2_grpc.TablelogServiceStub, mode: Any = None) -> str:
    response = stub.CreateGame(
        service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            mode=mode or game_pb2.MODE_TABLE,
        ),
        timeout=30,
    )
    return response.game.game_id


def record_line(stub: service_pb2_grpc.TablelogServiceStub, game_id: str, line: list[str]) -> int:
    version = stub.GetGame(service_pb2.GetGameRequest(game_id=game_id), timeout=30).game.version
    for notation in line:
        response = stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game_id, notation=notation, expected_version=version
            ),
            timeout=30,
        )
        version = response.game.version
    return version


def sequences(items: list[service_pb2.WatchGameResponse]) -> list[int]:
    return [i.update.event.sequence for i in items if i.WhichOneof("item") == "update"]


def stored_sequences(stub: service_pb2_grpc.TablelogServiceStub, game_id: str) -> list[int]:
    log = stub.GetAuditLog(
        service_pb2.GetAuditLogRequest(game_id=game_id, page_size=1000), timeout=30
    )
    return [entry.event.sequence for entry in log.entries]


BEARER = (("authorization", f"Bearer {OWNER_TOKEN}"),)
"""The metadata of the watches made on channels of their own (see `slow_stream`)."""


def wait_until(condition: Any, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_crowd_of_watchers_leaves_record_move_its_connections(
    crowded: BackgroundServer, embedded_redis: EmbeddedRedis
) -> None:
    """120 watchers on one game, 4 request connections: every move is recorded, each
    watcher gets each update once and in order, and Redis sees one tail, not 120."""
    with channel(crowded.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        game_id = create(stub)
        line = splendor_line(seed=3)[:12]
        before = redis_connections(embedded_redis.url)
        received: list[list[service_pb2.WatchGameResponse]] = [[] for _ in range(CROWD)]
        during: list[int] = []

        async def crowd() -> int:
            async with aio.insecure_channel(crowded.target) as shared:
                watch = service_pb2_grpc.TablelogServiceStub(shared).WatchGame
                calls: list[Any] = [
                    watch(
                        service_pb2.WatchGameRequest(game_id=game_id, heartbeat_seconds=1),
                        metadata=BEARER,
                    )
                    for _ in range(CROWD)
                ]
                # Each call sends a heartbeat first: then all 120 are watching.
                for call, items in zip(calls, received, strict=True):
                    items.append(await call.read())

                async def follow(call: Any, items: list[service_pb2.WatchGameResponse]) -> None:
                    while len(sequences(items)) < len(line):
                        items.append(await call.read())
                    call.cancel()

                followers = asyncio.gather(
                    *(follow(c, i) for c, i in zip(calls, received, strict=True))
                )
                version = await asyncio.to_thread(record_line, stub, game_id, line)
                during.append(redis_connections(embedded_redis.url))
                await asyncio.wait_for(followers, 60)
                return version

        version = asyncio.run(crowd())
        expected = stored_sequences(stub, game_id)[-len(line) :]
    assert version == len(line) + 1
    assert during[0] - before <= POOL_SIZE + 1  # the request pool and one tail
    for items in received:
        assert items[0].WhichOneof("item") == "heartbeat"
        assert sequences(items) == expected
    wait_until(lambda: crowded.built is not None and crowded.built.watching.watched_games == 0)


def test_updates_are_the_replay_of_the_same_revisions(client: Client) -> None:
    """What a watcher is sent (rendered once, shared, its move list kept up to date move
    by move) is what ReplayGame gives, for the backlog and for live moves, undos and
    redos."""
    game = client.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=5)
    record = client.record
    version = game.version
    for notation in line[:6]:
        version = record(game.game_id, notation, expected_version=version).game.version
    client.annotate(game.game_id, "a note at the head")
    last = version + 6
    watched: list[service_pb2.WatchGameResponse] = []
    stream = client.watch(game.game_id, from_revision=3, heartbeat_seconds=1, timeout=30)

    def consume() -> None:
        for item in stream:
            if item.WhichOneof("item") == "update":
                watched.append(item)
                if item.update.event.revision == last:
                    return

    reader = threading.Thread(target=consume)
    reader.start()
    for notation in line[6:8]:
        version = record(game.game_id, notation, expected_version=version).game.version
    version = client.undo(game.game_id, expected_version=version).game.version
    version = client.undo(game.game_id, expected_version=version).game.version
    version = client.redo(game.game_id, expected_version=version).game.version
    version = record(game.game_id, line[7], expected_version=version).game.version
    assert version == last
    reader.join(30)
    replayed = list(client.replay(game.game_id, 3))
    assert [w.update for w in watched] == replayed
    assert [w.update.event.sequence for w in watched] == list(
        range(replayed[0].event.sequence, replayed[-1].event.sequence + 1)
    )


def slow_stream(target: str, game_id: str, from_revision: int = 0) -> tuple[grpc.Channel, Any]:
    """A watch whose reader stops reading: no BDP probing, so gRPC's own buffers stay
    small and the server's queue for it fills."""
    opened = grpc.insecure_channel(target, options=[("grpc.http2.bdp_probe", 0)])
    stub = service_pb2_grpc.TablelogServiceStub(opened)
    request = service_pb2.WatchGameRequest(
        game_id=game_id, from_revision=from_revision, heartbeat_seconds=300
    )
    return opened, stub.WatchGame(request, timeout=120, metadata=BEARER)


def test_a_slow_watcher_is_ended_resumably_while_the_others_continue(
    strict: BackgroundServer,
) -> None:
    assert strict.built is not None
    hub = strict.built.watching
    with (
        channel(strict.target, OWNER_TOKEN) as opened,
        Client(strict.target, token=OWNER_TOKEN) as fast,
    ):
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        game_id = create(stub)
        line = splendor_line(seed=8)
        # A backlog longer than gRPC buffers: it may be ended while still catching up.
        recorded = 110
        record_line(stub, game_id, line[:recorded])
        slow_channel, slow = slow_stream(strict.target, game_id, from_revision=1)
        wait_until(lambda: hub.watchers == 1)
        kept: list[service_pb2.WatchGameResponse] = []
        stream = fast.watch(game_id, from_revision=1, heartbeat_seconds=1, timeout=120)
        done = threading.Event()

        def follow() -> None:
            for item in stream:
                kept.append(item)
                if done.is_set() and sequences(kept)[-1:] == [final[-1]]:
                    return

        final: list[int] = []
        reader = threading.Thread(target=follow)
        reader.start()
        wait_until(lambda: hub.watchers == 2)
        while hub.watchers == 2:
            assert recorded < len(line) - 2, "the slow watcher was never ended"
            record_line(stub, game_id, line[recorded : recorded + 1])
            recorded += 1
        record_line(stub, game_id, line[recorded : recorded + 2])  # after its end
        final += stored_sequences(stub, game_id)
        done.set()
        reader.join(60)
        assert sequences(kept) == final  # the fast watcher missed nothing

        got: list[service_pb2.WatchGameResponse] = []
        with pytest.raises(grpc.RpcError) as info:
            got.extend(slow)
        slow_channel.close()
        error = TablelogError.from_rpc_error(info.value)
        assert error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error.reason == "WATCHER_TOO_SLOW"
        resume_from = int(error.metadata["resume_from_revision"])
        last = int(error.metadata["last_sequence"])
        assert sequences(got) == final[: len(sequences(got))]
        assert sequences(got)[-1] == last
        again = stub.WatchGame(
            service_pb2.WatchGameRequest(game_id=game_id, from_revision=resume_from),
            timeout=30,
        )
        rest: list[service_pb2.WatchGameResponse] = []
        for item in again:
            rest.append(item)
            if sequences(rest)[-1:] == [final[-1]]:
                break
        again.cancel()
    resumed = [s for s in sequences(rest) if s > last]
    assert sequences(got) + resumed == final


def test_resume_from_a_revision_older_than_the_tail_remembers(strict: BackgroundServer) -> None:
    with channel(strict.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        game_id = create(stub)
        record_line(stub, game_id, splendor_line(seed=9)[: RECENT * 2])
        everything = stored_sequences(stub, game_id)
        holding = stub.WatchGame(
            service_pb2.WatchGameRequest(game_id=game_id, heartbeat_seconds=1), timeout=30
        )
        next(holding)  # the tail is up and remembers only the last RECENT updates
        for start in (2, len(everything) - 2):
            backlog = stub.WatchGame(
                service_pb2.WatchGameRequest(game_id=game_id, from_revision=start), timeout=30
            )
            seen: list[service_pb2.WatchGameResponse] = []
            for item in backlog:
                seen.append(item)
                if sequences(seen)[-1:] == [everything[-1]]:
                    break
            backlog.cancel()
            assert sequences(seen) == everything[start - 1 :]
        holding.cancel()


def test_watch_limits_refuse_with_resource_exhausted(strict: BackgroundServer) -> None:
    assert strict.built is not None
    hub = strict.built.watching
    with channel(strict.target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        games = [create(stub) for _ in range(3)]
        open_calls = []
        for _ in range(3):
            call = stub.WatchGame(
                service_pb2.WatchGameRequest(game_id=games[0], heartbeat_seconds=1), timeout=30
            )
            next(call)
            open_calls.append(call)
        fourth = stub.WatchGame(service_pb2.WatchGameRequest(game_id=games[0]), timeout=30)
        with pytest.raises(grpc.RpcError) as info:
            next(fourth)
        error = TablelogError.from_rpc_error(info.value)
        assert (error.code, error.reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "TOO_MANY_WATCHERS",
        )
        other = stub.WatchGame(
            service_pb2.WatchGameRequest(game_id=games[1], heartbeat_seconds=1), timeout=30
        )
        next(other)
        third_game = stub.WatchGame(service_pb2.WatchGameRequest(game_id=games[2]), timeout=30)
        with pytest.raises(grpc.RpcError) as info:
            next(third_game)
        error = TablelogError.from_rpc_error(info.value)
        assert error.reason == "TOO_MANY_WATCHED_GAMES"
        assert hub.watched_games == 2
        for call in [*open_calls, other]:
            call.cancel()
        # The last watcher gone, each tail stops and its connection closes.
        wait_until(lambda: hub.watched_games == 0 and hub.watchers == 0)
        missing = stub.WatchGame(service_pb2.WatchGameRequest(game_id="nosuchgame"), timeout=30)
        with pytest.raises(grpc.RpcError) as info:
            next(missing)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        wait_until(lambda: hub.watched_games == 0)


def test_the_python_client_resumes_a_watch_across_a_server_restart(
    embedded_redis: EmbeddedRedis, client: Client
) -> None:
    """`tablelog watch` (the SDK's watch) follows a game through a restart of the server it
    watches on: every update once, in order. The moves go through another instance."""
    address = f"127.0.0.1:{free_port()}"
    first = BackgroundServer(
        embedded_redis.url, address, chain=CHAIN, owner_token=OWNER_TOKEN
    ).start()
    game = client.create_game("splendor", ["Ann", "Bob"])
    line = splendor_line(seed=12)[:8]
    updates: list[events_pb2.Event] = []
    with Client(address, token=OWNER_TOKEN) as watcher:
        # From what follows the creation: a watch from "now" may start after a move or two
        # when its server is slow to read the head.
        stream = watcher.watch(
            game.game_id, from_revision=game.version + 1, heartbeat_seconds=1, timeout=60
        )

        def follow() -> None:
            for item in stream:
                if item.WhichOneof("item") == "update":
                    updates.append(item.update.event)
                    if len(updates) == len(line):
                        return

        reader = threading.Thread(target=follow)
        reader.start()
        stub = service_pb2_grpc.TablelogServiceStub(channel(client.address, OWNER_TOKEN))
        wait_until(lambda: first.built is not None and first.built.watching.watchers == 1)
        record_line(stub, game.game_id, line[:4])
        wait_until(lambda: len(updates) == 4)
        first.stop()
        record_line(stub, game.game_id, line[4:6])  # while nobody serves the watcher
        second = BackgroundServer(
            embedded_redis.url, address, chain=CHAIN, owner_token=OWNER_TOKEN
        ).start()
        try:
            record_line(stub, game.game_id, line[6:])
            reader.join(60)
        finally:
            second.stop()
    assert [e.move_recorded.notation for e in updates] == line
    assert [e.sequence for e in updates] == list(range(2, 2 + len(line)))


def test_serve_takes_its_pool_size_and_watch_limits_from_the_command_line(
    tmp_path: Path,
) -> None:
    serving = ServeProcess(tmp_path, "--redis-pool-size", "2", "--max-watchers", "1").start()
    try:
        with Client(serving.address, token=serving.token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            first = client.watch(game.game_id, heartbeat_seconds=1, timeout=30)
            assert next(first).WhichOneof("item") == "heartbeat"
            error = refused(lambda: next(client.watch(game.game_id, timeout=30)))
            assert error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert (error.reason, error.metadata["limit"]) == ("TOO_MANY_WATCHERS", "1")
    finally:
        assert serving.stop() == 0
    rejected = subprocess.run(
        [*tablelog_command(), "serve", "--redis-pool-size", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rejected.returncode == 2
    assert "--redis-pool-size" in rejected.stderr


def test_the_request_pool_is_bounded_and_callers_wait_for_a_connection(
    embedded_redis: EmbeddedRedis,
) -> None:
    """More concurrent calls than connections: all are answered, over at most the pool's
    connections (a full pool makes callers wait, it neither fails them nor grows)."""

    async def crowd() -> tuple[list[Any], int]:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN, pool_size=3)
        try:
            # Each call holds its connection for a while (a blocking pop that times out).
            answers = await asyncio.gather(
                *(store.redis.blpop(["tl:nothing"], 0.05) for _ in range(12))
            )
            assert not isinstance(store.redis, RedisCluster)
            pool = store.redis.connection_pool
            return answers, len(pool._in_use_connections) + len(pool._available_connections)
        finally:
            await store.close()

    answers, connections = asyncio.run(crowd())
    assert answers == [None] * 12
    assert connections == 3


def test_a_caller_that_gives_up_waiting_for_a_connection_leaves_the_pool_sound(
    embedded_redis: EmbeddedRedis,
) -> None:
    async def scenario() -> list[Any]:
        store = RedisEventStore.from_url(embedded_redis.url, chain=CHAIN, pool_size=1)

        async def hold() -> object:
            return await store.redis.blpop(["tl:nothing"], 0.2)

        async def ping() -> bool:
            return bool(await store.redis.ping())

        try:
            holder = asyncio.create_task(hold())
            await asyncio.sleep(0.05)  # the one connection is taken
            waiters = [asyncio.create_task(ping()) for _ in range(3)]
            await asyncio.sleep(0.05)
            waiters[0].cancel()  # gives up while waiting
            await holder
            answers = await asyncio.wait_for(asyncio.gather(*waiters[1:]), 10)
            return [waiters[0].cancelled(), *answers, await store.redis.ping()]
        finally:
            await store.close()

    assert asyncio.run(scenario()) == [True, True, True, True]
