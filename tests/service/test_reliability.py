"""Faults on real processes, bounded to a few seconds each (longer runs with counts as
arguments: benchmarks/faults.py): Redis killed right after a burst of acknowledged
moves, the service killed, Redis frozen or down; and what the durability setting and the
data directory's permissions promise."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis

from tablelog.service.api.cli import warn_if_not_durable
from tablelog.service.api.server import background_server
from tablelog.service.store import RedisEventStore
from tablelog.service.store.embedded import Durability, EmbeddedRedis, free_port
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.service.support import ServeProcess
from tests.support.faults import (
    SERVING,
    StandaloneRedis,
    burst_then_kill_redis,
    health_status,
    kill_service_during_burst,
    outage_trial,
    process_gone,
    redis_children,
    splendor_lines,
    wait_for_health,
    wait_gone,
)
from tests.support.tools import unavailable

pytestmark = pytest.mark.slow

HEALTH_LIMIT = 2.0
"""Seconds within which health must say NOT_SERVING after Redis fails."""


@pytest.fixture(scope="module")
def lines() -> list[list[str]]:
    return splendor_lines(8)


@pytest.fixture
def external(tmp_path: Path) -> Iterator[StandaloneRedis]:
    """Debian's redis-server as an operator runs it: unsupervised, killed by the test."""
    if StandaloneRedis.binary() is None:
        unavailable("no standalone redis-server is installed (apt-get install redis-server)")
    running = StandaloneRedis(tmp_path / "external", free_port()).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def supervised(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """An embedded Redis of the test's own (the test kills it), restarted without backoff."""
    embedded = EmbeddedRedis(tmp_path / "redis", restart_delays=(0.1,))
    embedded.start()
    try:
        yield embedded
    finally:
        pid = embedded.pid
        if pid is not None:
            os.kill(pid, signal.SIGCONT)  # a failed freeze test must not hang the stop
        embedded.stop()


# ------------------------------------------------------------------------ durability


def test_redis_killed_right_after_a_burst_loses_no_acknowledged_move(
    supervised: EmbeddedRedis, lines: list[list[str]]
) -> None:
    """With `--durability fast` (everysec, the old default) the same procedure lost
    acknowledged moves in 10 of 10 trials (benchmarks/faults.py burst --durability fast)."""
    assert supervised.durability is Durability.DISK
    with background_server(supervised.url, CHAIN, OWNER_TOKEN) as serving:
        losses = burst_then_kill_redis(supervised, serving.target, lines, trials=10)
        assert losses.trials == 10
        assert losses.acknowledged > 10 * 10
        assert (losses.lost, losses.notes) == (0, [])
        assert supervised.restarts == 10
        wait_for_health(serving.target, SERVING, within=HEALTH_LIMIT)  # recovered, no restart


def test_the_durability_setting_is_the_embedded_redis_appendfsync(tmp_path: Path) -> None:
    for durability, appendfsync in ((Durability.DISK, "always"), (Durability.FAST, "everysec")):
        with EmbeddedRedis(tmp_path / durability.value, durability=durability) as embedded:
            client = redis.Redis.from_url(embedded.url, decode_responses=True)
            assert client.config_get("appendfsync") == {"appendfsync": appendfsync}
            assert client.config_get("appendonly") == {"appendonly": "yes"}
            client.close()


def test_serve_takes_the_durability_setting(tmp_path: Path) -> None:
    for extra, appendfsync in (((), "always"), (("--durability", "fast"), "everysec")):
        serving = ServeProcess(tmp_path / appendfsync, *extra).start()
        try:
            url = (tmp_path / appendfsync / "redis.url").read_text()
            with redis.Redis.from_url(url, decode_responses=True) as client:
                assert client.config_get("appendfsync") == {"appendfsync": appendfsync}
        finally:
            assert serving.stop() == 0


class Lines:
    """A logger that keeps what it is given."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append(("warning", event, fields))

    def info(self, event: str, **fields: Any) -> None:
        self.lines.append(("info", event, fields))


def test_an_external_redis_that_acknowledges_before_the_disk_is_warned_about(
    external: StandaloneRedis,
) -> None:
    client = redis.Redis.from_url(external.url)
    try:

        async def warnings() -> list[tuple[str, str, dict[str, Any]]]:
            store = RedisEventStore.from_url(external.url, chain=CHAIN)
            logged = Lines()
            try:
                await warn_if_not_durable(store.redis, logged)
            finally:
                await store.close()
            return logged.lines

        assert [(level, fields) for level, _, fields in asyncio.run(warnings())] == [
            ("info", {"appendfsync": "always"})
        ]
        client.config_set("appendfsync", "everysec")
        [(level, event, fields)] = asyncio.run(warnings())
        assert (level, fields) == ("warning", {"appendfsync": "everysec"})
        assert "can lose acknowledged changes" in event
        client.config_set("appendonly", "no")
        [(level, event, fields)] = asyncio.run(warnings())
        assert (level, fields) == ("warning", {"appendonly": "no"})
    finally:
        client.close()


# ---------------------------------------------------------------- supervision


def test_the_service_killed_leaves_no_redis_running_and_loses_nothing(
    tmp_path: Path, lines: list[list[str]]
) -> None:
    def start_service(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
        started = ServeProcess(data_dir).start()
        assert started.process is not None
        return started.process, started.address

    losses, orphans = kill_service_during_burst(tmp_path / "data", lines, 2, start_service)
    assert orphans == 0
    assert losses.trials == 2
    assert losses.acknowledged > 2 * 10
    assert (losses.lost, losses.notes) == (0, [])


def test_a_killed_embedded_redis_is_restarted_and_stopped_with_it(tmp_path: Path) -> None:
    embedded = EmbeddedRedis(tmp_path / "redis", restart_delays=(0.1,))
    embedded.start()
    try:
        first = embedded.pid
        assert first is not None
        redis.Redis.from_url(embedded.url).set("kept", "yes")
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while embedded.pid == first or embedded.restarts == 0:
            assert time.monotonic() < deadline, "not restarted"
            time.sleep(0.02)
        client = redis.Redis.from_url(embedded.url, socket_timeout=5)
        for _ in range(200):  # the new one may still be loading its file
            try:
                assert client.get("kept") == b"yes"
                break
            except (redis.ConnectionError, redis.BusyLoadingError):
                time.sleep(0.02)
        client.close()
        second = embedded.pid
    finally:
        embedded.stop()
    assert second is not None
    assert process_gone(second)
    assert embedded.restarts == 1


def test_a_program_killed_with_its_embedded_redis_takes_it_along(tmp_path: Path) -> None:
    """Started from a short-lived thread, as a test server might: the parent-death signal
    must follow the supervisor thread, not the thread that called `start`."""
    program = (
        "import sys, threading\n"
        "from tablelog.service.store.embedded import EmbeddedRedis\n"
        "embedded = EmbeddedRedis(sys.argv[1])\n"
        "starter = threading.Thread(target=embedded.start)\n"
        "starter.start(); starter.join()\n"
        "print(embedded.pid, flush=True)\n"
        "threading.Event().wait()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program, str(tmp_path / "redis")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        redis_pid = int(line)
        time.sleep(0.3)  # the starting thread has exited: Redis must still run
        assert not process_gone(redis_pid)
        assert redis_children(process.pid) == [redis_pid]
    finally:
        process.kill()
        process.wait(10)
        process.stdout.close()
    try:
        wait_gone(redis_pid, within=3)
    except TimeoutError:
        os.kill(redis_pid, signal.SIGKILL)  # leave no orphan behind a failed test
        raise


# ------------------------------------------------------------------------ health


def test_a_frozen_redis_makes_the_service_unhealthy_and_calls_fail_fast(
    supervised: EmbeddedRedis, lines: list[list[str]]
) -> None:
    pid = supervised.pid
    assert pid is not None
    with background_server(supervised.url, CHAIN, OWNER_TOKEN) as serving:
        assert health_status(serving.target) == SERVING
        outage = outage_trial(
            serving.target,
            lambda: supervised.url,
            inject=lambda: os.kill(pid, signal.SIGSTOP),
            repair=lambda: os.kill(pid, signal.SIGCONT),
            lines=lines,
            call_deadline=3.0,
        )
    assert outage.not_serving_after < HEALTH_LIMIT
    assert outage.call_code == grpc.StatusCode.UNAVAILABLE
    assert outage.call_seconds < HEALTH_LIMIT
    assert outage.serving_again_after < HEALTH_LIMIT
    assert outage.acknowledged_kept
    assert supervised.restarts == 0  # frozen is not dead: nothing was restarted


def test_a_redis_down_makes_the_service_unhealthy_until_it_is_back(
    external: StandaloneRedis, lines: list[list[str]]
) -> None:
    """An external Redis (not supervised: it stays down until its operator starts it)."""
    with background_server(external.url, CHAIN, OWNER_TOKEN) as serving:
        outage = outage_trial(
            serving.target,
            lambda: external.url,
            inject=external.kill,
            repair=external.start,
            lines=lines,
            call_deadline=3.0,
        )
    assert outage.not_serving_after < HEALTH_LIMIT
    assert outage.call_code == grpc.StatusCode.UNAVAILABLE
    assert outage.call_seconds < HEALTH_LIMIT
    assert outage.serving_again_after < HEALTH_LIMIT
    assert outage.acknowledged_kept


# ------------------------------------------------------------------------ privacy


def test_the_data_directory_and_its_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)  # as an older version left it
    (data / "tablelog.aof").write_bytes(b"")
    (data / "tablelog.aof").chmod(0o644)
    with EmbeddedRedis(data, durability=Durability.DISK) as embedded:
        client = redis.Redis.from_url(embedded.url)
        client.set("seed", "secret")
        first = (data / "tablelog.aof").stat().st_ino
        client.bgrewriteaof()  # a new file, created by Redis itself (umask 077)
        deadline = time.monotonic() + 10
        while (data / "tablelog.aof").stat().st_ino == first or client.info("persistence")[
            "aof_rewrite_in_progress"
        ]:
            assert time.monotonic() < deadline, "the rewrite did not finish"
            time.sleep(0.02)
        client.close()
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in data.iterdir()}
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert modes.pop("redis.sock") == 0o700
    assert modes == dict.fromkeys(
        ["tablelog.aof", "tablelog.lock", "redis.url", "redis.log"], 0o600
    )
