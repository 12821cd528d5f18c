"""tablelog on a real Redis Cluster (three masters, three replicas on loopback, see
tests/support/cluster.py): two service instances record while the games' slots migrate to
another master, or while their masters fail over to their replicas; every move a client was
told is recorded is stored exactly once, in order, and the games verify. And `tablelog
serve --redis-url redis+cluster://...` passes the conformance scenario (record, replay,
watch) through the Python client.

(The store contract suite and the concurrency test run on the same cluster too: they are
parametrised with it.)"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from redis.crc import key_slot

from tablelog.service.api.server import background_server
from tablelog.service.store.cluster import ReplicaWait
from tablelog.service.store.embedded import free_port
from tablelog_client import Client, TablelogError
from tests.clients import conformance
from tests.clients.test_conformance import (
    GO,
    TYPESCRIPT,
    _assert_all_passed,
    _run,
    _scenario_steps,
    _typescript_built,
    serving_for_conformance,
)
from tests.service.helpers import CHAIN, OWNER_TOKEN, splendor_line
from tests.support.cluster import LocalCluster
from tests.support.tools import required_tools

pytestmark = pytest.mark.slow

GAMES = 4
MOVES = 36
BEFORE = 8
"""Moves recorded before the slots move (or fail over)."""
AFTER = 8
"""Moves recorded only once they have moved: each client meets the new layout."""
REDIRECTIONS = ("errorstat_MOVED", "errorstat_ASK", "errorstat_TRYAGAIN")


def game_slot(game_id: str) -> int:
    return key_slot(f"tl:{{{game_id}}}:events".encode())


@dataclass
class Recording:
    """One game recorded by one thread, each move through the other instance than the
    last, retrying an UNAVAILABLE with the same request id (as a client should)."""

    game_id: str
    line: list[str]
    acknowledged: list[str] = field(default_factory=list)
    failure: str = ""
    retries: int = 0


def record(
    targets: list[str], recording: Recording, started: threading.Event, done: threading.Event
) -> None:
    clients = [Client(target, token=OWNER_TOKEN, timeout=30) for target in targets]
    try:
        version = clients[0].get_game(recording.game_id).version
        for index, notation in enumerate(recording.line):
            if index == BEFORE:
                started.wait(30)
            if index == len(recording.line) - AFTER:
                done.wait(30)
            request_id = f"{recording.game_id}-{index}"
            deadline = time.monotonic() + 20
            while True:
                try:
                    reply = clients[index % 2].record(
                        recording.game_id, notation, expected_version=version,
                        request_id=request_id,
                    )  # fmt: skip
                    break
                except TablelogError as error:
                    if error.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                        raise
                    recording.retries += 1
                    time.sleep(0.05)
            recording.acknowledged.append(notation)
            version = reply.game.version
    except Exception as exc:  # reported by the test, with what was acknowledged
        recording.failure = f"{type(exc).__name__}: {exc}"
    finally:
        for client in clients:
            client.close()


def watch(target: str, game_id: str, last_revision: int, seen: list[str]) -> None:
    """The moves a WatchGame stream shows, until `last_revision` (resuming after an
    UNAVAILABLE, as the client does)."""
    with Client(target, token=OWNER_TOKEN, timeout=30) as client:
        for message in client.watch(game_id, from_revision=1, timeout=30, heartbeat_seconds=1):
            event = message.update.event
            if event.HasField("move_recorded"):
                seen.append(event.move_recorded.notation)
            if event.revision >= last_revision:
                return


def redirections(cluster: LocalCluster) -> int:
    """MOVED, ASK and TRYAGAIN answered by every node so far."""
    total = 0
    for port in cluster.ports:
        stats = cluster.client(port).info("errorstats")
        total += sum(int(stats.get(name, {}).get("count", 0)) for name in REDIRECTIONS)
    return total


def record_through(
    cluster: LocalCluster,
    disturb: Callable[[list[str]], None],
    replica_wait: ReplicaWait | None = None,
) -> list[Recording]:
    """GAMES games recorded through two instances while `disturb` (given the game ids) is
    done to the cluster; checks each game's stored moves against what was acknowledged."""
    with (
        background_server(cluster.url, CHAIN, OWNER_TOKEN, replica_wait) as first,
        background_server(cluster.url, CHAIN, OWNER_TOKEN, replica_wait) as second,
        Client(first.target, token=OWNER_TOKEN, timeout=30) as reader,
    ):
        recordings = []
        for seed in range(GAMES):
            game = reader.create_game("splendor", ["Ann", "Bob"])
            recordings.append(Recording(game.game_id, splendor_line(seed=100 + seed)[:MOVES]))
        started, done = threading.Event(), threading.Event()
        threads = [
            threading.Thread(
                target=record, args=([first.target, second.target], each, started, done)
            )
            for each in recordings
        ]
        watched: list[str] = []
        watcher = threading.Thread(
            target=watch, args=(second.target, recordings[0].game_id, MOVES + 1, watched)
        )
        watcher.start()
        for thread in threads:
            thread.start()
        try:
            while any(len(r.acknowledged) < BEFORE and not r.failure for r in recordings):
                time.sleep(0.01)
            started.set()
            disturb([r.game_id for r in recordings])
        finally:
            started.set()
            done.set()
            for thread in threads:
                thread.join(60)
        watcher.join(30)
        # A watcher of the first game, on the instance that did not create it, saw every
        # move once, in order, through the slots' moves (a tail's XREAD follows its slot).
        assert watched == recordings[0].acknowledged
        for each in recordings:
            assert not each.failure, (each.failure, len(each.acknowledged))
            assert each.acknowledged == each.line
            events = reader.export(each.game_id)
            stored = [e.move_recorded.notation for e in events if e.HasField("move_recorded")]
            assert stored == each.acknowledged  # each once, in order: none lost, none twice
            assert [e.sequence for e in events] == list(range(1, len(events) + 1))
            assert reader.verify(each.game_id).ok
        return recordings


def test_moves_recorded_while_their_slots_migrate_are_stored_exactly_once(
    redis_cluster: LocalCluster,
) -> None:
    before = redirections(redis_cluster)

    def migrate(game_ids: list[str]) -> None:
        for game_id in game_ids:
            slot = game_slot(game_id)
            masters = redis_cluster.masters()
            owner = redis_cluster.owner_of(slot)
            target = masters[(masters.index(owner) + 1) % len(masters)]
            redis_cluster.move_slot(slot, target, pause=0.02)
            assert redis_cluster.owner_of(slot) == target

    record_through(redis_cluster, migrate)
    # The clients did meet the slots on the move (or moved): redirected at least once each.
    assert redirections(redis_cluster) - before >= GAMES


# After a forced failover, some connections of a watch tail's cluster client (redis-py 8.1)
# to the node that turned replica outlive the client's close and are collected later, with
# the server's event loop closed: ResourceWarnings, whose origin inside redis-py's slot-map
# refresh is not pinned down yet; they are collected here, under this filter.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_moves_recorded_while_their_masters_fail_over_are_stored_exactly_once(
    redis_cluster: LocalCluster,
) -> None:
    """With --redis-wait 1, through forced failovers (the replica takes over without the
    master's agreement: what the master acknowledged alone is lost, so only what a replica
    confirmed may be acknowledged)."""
    promoted: list[int] = []

    def fail_over(game_ids: list[str]) -> None:
        owners = {redis_cluster.owner_of(game_slot(game_id)) for game_id in game_ids}
        for owner in sorted(owners):
            promoted.append(redis_cluster.fail_over(owner, force=True))

    record_through(redis_cluster, fail_over, ReplicaWait(1, 1000))
    assert promoted
    assert all(redis_cluster.role(port) == "master" for port in promoted)
    gc.collect()


@pytest.fixture(scope="module")
def served_on_cluster(
    redis_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`tablelog serve --redis-url redis+cluster://...` on a free port; its address, with
    the conformance runner's member tokens in the environment (as in test_conformance).
    One for the module: its members live in the shared cluster."""
    address = f"127.0.0.1:{free_port()}"
    data_dir = tmp_path_factory.mktemp("served-on-cluster")
    with serving_for_conformance(address, data_dir, "--redis-url", redis_cluster.url):
        yield address


def test_tablelog_serve_on_the_cluster_passes_the_conformance_scenario(
    served_on_cluster: str,
) -> None:
    lines: list[str] = []
    passed, failed = conformance.run(served_on_cluster, conformance.load_scenario(), lines.append)
    assert failed == 0, "\n".join(lines)
    assert passed == len(conformance.load_scenario()["steps"]), "\n".join(lines)


def test_redis_wait_is_read_and_bounded() -> None:
    assert ReplicaWait.parse("1") == ReplicaWait(1, 1000)
    assert ReplicaWait.parse("2:250") == ReplicaWait(2, 250)
    for wrong in ("", "x", "0", "1:0", "17", "1:60001", "1:2:3"):
        with pytest.raises(ValueError, match="--redis-wait"):
            ReplicaWait.parse(wrong)


def test_an_append_no_replica_confirms_is_not_acknowledged(
    standalone_redis_url: str, game_id: str
) -> None:
    """--redis-wait 1 on a Redis without replicas: the append is refused as UNAVAILABLE
    (ReplicasBehind) though the primary keeps it, and so is its retry with the same
    request id, until a replica has it."""
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.cluster import ReplicasBehind
    from tests.service.test_store_contract import created

    async def main() -> None:
        store = RedisEventStore.from_url(
            standalone_redis_url, chain=CHAIN, replica_wait=ReplicaWait(1, 20)
        )
        try:
            for _attempt in range(2):
                with pytest.raises(ReplicasBehind, match="only 0 of the 1 replicas"):
                    await store.append(
                        game_id, [created(game_id)], expected_sequence=0, prev_hash=b"",
                        expected_revision=None, request_id="r1",
                    )  # fmt: skip
            assert [e.sequence for e in await store.read(game_id)] == [1]
        finally:
            await store.close()

    asyncio.run(main())


def test_the_typescript_and_go_clients_pass_the_scenario_on_the_cluster(
    served_on_cluster: str, tmp_path: Path
) -> None:
    """Every client records, replays and watches through a server on the cluster (the
    scenario's steps), not only the Python one."""
    _typescript_built()
    node = required_tools("node")["node"]
    output = _run(
        [node, "dist/src/conformance.js", "--address", served_on_cluster], TYPESCRIPT, 180
    )
    _assert_all_passed(output, _scenario_steps())
    go = required_tools("go")["go"]
    binary = tmp_path / "tablelog-conformance"
    _run([go, "build", "-o", str(binary), "./cmd/tablelog-conformance"], GO)
    _assert_all_passed(
        _run([str(binary), "--address", served_on_cluster], GO, 180), _scenario_steps()
    )


# (The same redis-py connections as above, after the replica's takeover.)
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_watcher_is_never_shown_a_move_no_replica_confirmed(redis_cluster: LocalCluster) -> None:
    """With --redis-wait 1, a move its primary stored alone is not acknowledged (the
    recorder is told UNAVAILABLE), and a replica that takes over never had it. A watcher
    must not have been shown it either: a tail reads the game's replica. (Before, it read
    the primary: the watcher saw the lost move, then either a chain check that called the
    game tampered or, resuming, the move recorded in its place skipped as seen.)"""
    cluster = redis_cluster
    with (
        background_server(cluster.url, CHAIN, OWNER_TOKEN, ReplicaWait(1, 300)) as server,
        Client(server.target, token=OWNER_TOKEN, timeout=30) as client,
    ):
        game_id = client.create_game("splendor", ["Ann", "Bob"]).game_id
        prefix = splendor_line(seed=11)[:20]
        version = client.get_game(game_id).version
        for notation in prefix:
            version = client.record(game_id, notation, expected_version=version).game.version
        watched: list[str] = []
        failures: list[str] = []

        def watch_until(count: int) -> None:
            try:
                with Client(server.target, token=OWNER_TOKEN, timeout=60) as own:
                    for item in own.watch(game_id, from_revision=1, timeout=60):
                        event = item.update.event
                        if item.HasField("update") and event.HasField("move_recorded"):
                            watched.append(event.move_recorded.notation)
                            if len(watched) == count:
                                return
            except TablelogError as error:
                failures.append(f"{error.code}: {error}")

        watcher = threading.Thread(target=watch_until, args=(len(prefix) + 2,))
        watcher.start()
        deadline = time.monotonic() + 10
        while len(watched) < len(prefix) and time.monotonic() < deadline:
            time.sleep(0.01)
        _to_move, legal = client.legal_moves(game_id)
        lost, instead = legal[0].notation, legal[1].notation
        master = cluster.owner_of(game_slot(game_id))
        replica = cluster.replica_of(master)
        pids = dict(zip(cluster.ports, cluster.redis_pids(), strict=True))
        # The replica stops, and its link is cut, so nothing more reaches it.
        os.kill(pids[replica], signal.SIGSTOP)
        try:
            cluster.command(master, "CLIENT", "KILL", "TYPE", "replica")
            with pytest.raises(TablelogError) as refused:
                client.record(game_id, lost, expected_version=version)
            assert refused.value.code == grpc.StatusCode.UNAVAILABLE
            time.sleep(0.5)  # (time for a tail to show it, were it going to)
            # The primary stops; its replica takes over without it.
            os.kill(pids[master], signal.SIGSTOP)
        finally:
            os.kill(pids[replica], signal.SIGCONT)
        try:
            cluster.command(replica, "CLUSTER", "FAILOVER", "TAKEOVER")
            while cluster.role(replica) != "master":
                time.sleep(0.02)
        finally:
            os.kill(pids[master], signal.SIGCONT)
        cluster.wait_until_settled()
        deadline = time.monotonic() + 20
        for chosen in (instead, None):
            while True:
                try:
                    if chosen is None:
                        _to_move, legal = client.legal_moves(game_id)
                        chosen = legal[0].notation
                    reply = client.record(game_id, chosen, expected_version=version)
                    version = reply.game.version
                    break
                except TablelogError as error:
                    if error.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        watcher.join(30)
        stored = [
            e.move_recorded.notation for e in client.export(game_id) if e.HasField("move_recorded")
        ]
        assert stored[len(prefix)] == instead != lost
        assert not failures
        assert watched == stored
        assert client.verify(game_id).ok
    gc.collect()
