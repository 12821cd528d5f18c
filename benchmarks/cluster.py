"""RecordMove on a Redis Cluster against a standalone Redis, measured in the same run.

    .venv/bin/python benchmarks/cluster.py [--moves 1500] [--clients 4] [--rounds 3]

Starts Debian's redis-server twice over: one standalone (the floor) and a local cluster of
three masters and three replicas (tests/support/cluster.py), all without persistence, on
loopback. In each round, for each setup:

* `standalone`, `cluster`: one service instance (`BackgroundServer`) on the standalone
  Redis, on the cluster;
* `standalone+wait1`, `cluster+wait1`: the same with `--redis-wait 1` (WAIT for one replica
  after each append; the standalone Redis then has a replica of its own, as each master of
  the cluster has);
* `standalone x2`, `cluster x2`: two instances, each client alternating between them move by
  move (each move goes through the other instance than the last, which first reads the
  events it has not seen: one XRANGE more per move than with one instance).

`--clients` threads each record their own Splendor games by notation (a new game when one
ends), with the version of the previous answer and a request id per move, until `--moves`
moves are acknowledged; an UNAVAILABLE is retried with the same request id. Printed per
setup (medians over the rounds): the latency of RecordMove (p50, p90, as the client sees
it), the Redis CPU per call of the primaries (what the processes ran, from
/proc/<pid>/schedstat, nanoseconds, less what they run idle over as long, measured just
before) and of the replicas, INFO commandstats' own usec per call summed over the
primaries, and their ratios to the standalone setup of the same kind. Then every game is
read back: the acknowledged moves that are not stored (lost) and those stored twice
(duplicated) are counted (both must be 0).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

import grpc  # noqa: E402  (the path is set up just above)
import redis  # noqa: E402

from tablelog.service.api.server import BackgroundServer  # noqa: E402
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.service.store.cluster import ReplicaWait  # noqa: E402
from tablelog.service.store.embedded import free_port  # noqa: E402
from tablelog_client import Client, TablelogError  # noqa: E402
from tests.service.helpers import CHAIN, OWNER_TOKEN  # noqa: E402
from tests.support.cluster import LocalCluster  # noqa: E402
from tests.support.play import random_game  # noqa: E402

IDLE_SECONDS = 1.0


@dataclass
class Game:
    game_id: str
    acknowledged: list[str] = field(default_factory=list)


@dataclass
class Round:
    latencies: list[float] = field(default_factory=list)
    games: list[Game] = field(default_factory=list)
    moves: int = 0
    retries: int = 0


def run_on_cpu(pid: int) -> int:
    """Nanoseconds process `pid` has run on a CPU (all its threads)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total


def command_usec(ports: list[int]) -> int:
    total = 0
    for port in ports:
        stats = redis.Redis(port=port).info("commandstats")
        total += sum(int(value["usec"]) for value in stats.values())
    return total


def reset_stats(ports: list[int]) -> None:
    for port in ports:
        redis.Redis(port=port).config_resetstat()


def record(targets: list[str], moves: int, seed: int, result: Round, lock: threading.Lock) -> None:
    clients = [Client(target, token=OWNER_TOKEN, timeout=30) for target in targets]
    try:
        done = 0
        game_seed = seed
        while done < moves:
            line = random_game("splendor", 2, game_seed).notations
            game_seed += 1000
            created = clients[0].create_game("splendor", ["Ann", "Bob"])
            game = Game(created.game_id)
            with lock:
                result.games.append(game)
            version = created.version
            for index, notation in enumerate(line):
                if done >= moves:
                    break
                request_id = f"{game.game_id}-{index}"
                while True:
                    start = time.perf_counter()
                    try:
                        reply = clients[index % len(clients)].record(
                            game.game_id, notation, expected_version=version,
                            request_id=request_id,
                        )  # fmt: skip
                    except TablelogError as error:
                        if error.code != grpc.StatusCode.UNAVAILABLE:
                            raise
                        with lock:
                            result.retries += 1
                        continue
                    break
                elapsed = time.perf_counter() - start
                version = reply.game.version
                game.acknowledged.append(notation)
                done += 1
                with lock:
                    result.latencies.append(elapsed)
                    result.moves += 1
    finally:
        for client in clients:
            client.close()


def lost_and_duplicated(target: str, games: list[Game]) -> tuple[int, int]:
    lost = duplicated = 0
    with Client(target, token=OWNER_TOKEN, timeout=30) as reader:
        for game in games:
            events = reader.export(game.game_id)
            stored = [e.move_recorded.notation for e in events if e.HasField("move_recorded")]
            # Every client retried until acknowledged: the stored moves must be exactly the
            # acknowledged ones. Past their common start, what is acknowledged and not stored
            # is lost, what is stored besides is stored twice (or never acknowledged).
            common = 0
            while common < min(len(stored), len(game.acknowledged)) and (
                stored[common] == game.acknowledged[common]
            ):
                common += 1
            lost += len(game.acknowledged) - common
            duplicated += len(stored) - common
            if not reader.verify(game.game_id).ok:
                raise SystemExit(f"game {game.game_id} does not verify")
    return lost, duplicated


@dataclass
class Setup:
    name: str
    urls: list[str]
    primaries: list[int]
    """Ports of the nodes whose CPU is the primaries'."""
    replicas: list[int]
    pids: dict[int, int]
    wait: ReplicaWait | None = None


@dataclass
class Figures:
    p50: list[float] = field(default_factory=list)
    p90: list[float] = field(default_factory=list)
    primary_cpu: list[float] = field(default_factory=list)
    replica_cpu: list[float] = field(default_factory=list)
    command_cpu: list[float] = field(default_factory=list)
    lost: int = 0
    duplicated: int = 0
    moves: int = 0
    retries: int = 0


def measure(setup: Setup, moves: int, clients: int, seed: int, figures: Figures) -> None:
    servers = [
        BackgroundServer(url, chain=CHAIN, owner_token=OWNER_TOKEN, replica_wait=setup.wait)
        for url in setup.urls
    ]
    for server in servers:
        server.start()
    try:
        targets = [server.target for server in servers]
        ports = setup.primaries + setup.replicas
        # What the nodes burn idle (their timers, the cluster bus, the health probes) is
        # measured first and taken off: a cluster has three primaries idling, not one.
        idle_start = {port: run_on_cpu(setup.pids[port]) for port in ports}
        time.sleep(IDLE_SECONDS)
        idle = {port: (run_on_cpu(setup.pids[port]) - idle_start[port]) / IDLE_SECONDS
                for port in ports}  # fmt: skip
        reset_stats(ports)
        before = {port: run_on_cpu(setup.pids[port]) for port in ports}
        started = time.perf_counter()
        result = Round()
        lock = threading.Lock()
        threads = [
            threading.Thread(
                target=record, args=(targets, moves // clients, seed + i, result, lock)
            )
            for i in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        used = {
            port: run_on_cpu(setup.pids[port]) - before[port] - idle[port] * elapsed
            for port in ports
        }
        usec = command_usec(setup.primaries)
        # The games' creations ran too: their calls are counted with the moves.
        calls = result.moves + len(result.games)
        figures.primary_cpu.append(sum(used[p] for p in setup.primaries) / calls / 1000)
        figures.replica_cpu.append(sum(used[p] for p in setup.replicas) / calls / 1000)
        figures.command_cpu.append(usec / calls)
        ordered = sorted(result.latencies)
        figures.p50.append(ordered[len(ordered) // 2] * 1000)
        figures.p90.append(ordered[len(ordered) * 9 // 10] * 1000)
        lost, duplicated = lost_and_duplicated(targets[0], result.games)
        figures.lost += lost
        figures.duplicated += duplicated
        figures.moves += result.moves
        figures.retries += result.retries
    finally:
        for server in servers:
            server.stop()


def start_redis(port: int, data: Path, *options: str) -> subprocess.Popen[bytes]:
    """A redis-server as the cluster's nodes run (no persistence), once it answers."""
    data.mkdir(parents=True)
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(data), "--repl-diskless-sync-delay", "0", *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    while True:
        try:
            redis.Redis(port=port).ping()
            return process
        except redis.ConnectionError:
            time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=1500, help="moves per setup and round")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configure_logging("error", json=True)
    with tempfile.TemporaryDirectory() as tmp:
        port, replica_port = free_port(), free_port()
        standalone = start_redis(port, Path(tmp) / "standalone")
        replica = start_redis(
            replica_port, Path(tmp) / "replica", "--replicaof", "127.0.0.1", str(port)
        )
        cluster = LocalCluster(Path(tmp) / "cluster").start()
        try:
            while redis.Redis(port=port).info("replication")["connected_slaves"] < 1:
                time.sleep(0.05)
            pids = {p: proc.pid for p, proc in zip(cluster.ports, cluster.processes, strict=True)}
            masters = cluster.masters()
            replicas = [p for p in cluster.ports if p not in masters]
            alone = f"redis://127.0.0.1:{port}/0"
            both = {port: standalone.pid, replica_port: replica.pid}
            wait = ReplicaWait(1, 1000)
            setups = [
                Setup("standalone", [alone], [port], [], both),
                Setup("cluster", [cluster.url], masters, replicas, pids),
                Setup("standalone+wait1", [alone], [port], [replica_port], both, wait),
                Setup("cluster+wait1", [cluster.url], masters, replicas, pids, wait),
                Setup("standalone x2", [alone] * 2, [port], [], both),
                Setup("cluster x2", [cluster.url] * 2, masters, replicas, pids),
            ]  # fmt: skip
            results = {setup.name: Figures() for setup in setups}
            for round_index in range(args.rounds):
                for setup in setups:
                    measure(
                        setup, args.moves, args.clients, 1 + round_index * 100,
                        results[setup.name],
                    )  # fmt: skip
            report(results, args)
        finally:
            cluster.stop()
            for process in (replica, standalone):
                process.terminate()
                process.wait(10)
    return 0


def report(results: dict[str, Figures], args: argparse.Namespace) -> None:
    floors = {
        name: (statistics.median(figures.primary_cpu), statistics.median(figures.command_cpu))
        for name, figures in results.items()
        if name.startswith("standalone")
    }
    print(
        f"RecordMove, {args.clients} clients, {args.moves} moves per setup and round, "
        f"{args.rounds} rounds (medians)"
    )
    print(
        f"{'setup':<17}{'p50 ms':>8}{'p90 ms':>8}{'primary us':>12}{'ratio':>7}"
        f"{'replica us':>12}{'cmd us':>8}{'ratio':>7}{'lost':>6}{'dup':>5}{'retried':>9}"
    )
    for name, figures in results.items():
        # Each setup against the standalone one of the same kind (replica, instances).
        floor_cpu, floor_command = floors[name.replace("cluster", "standalone")]
        cpu = statistics.median(figures.primary_cpu)
        command = statistics.median(figures.command_cpu)
        print(
            f"{name:<17}{statistics.median(figures.p50):>8.2f}"
            f"{statistics.median(figures.p90):>8.2f}{cpu:>12.1f}{cpu / floor_cpu:>7.2f}"
            f"{statistics.median(figures.replica_cpu):>12.1f}{command:>8.1f}"
            f"{command / floor_command:>7.2f}{figures.lost:>6}{figures.duplicated:>5}"
            f"{figures.retries:>9}"
        )


if __name__ == "__main__":
    sys.exit(main())
