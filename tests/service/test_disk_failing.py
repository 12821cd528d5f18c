"""Redis that cannot write to its disk (issue 23, item 6): on main a full data disk reached
clients as "connection refused" or, with `--durability fast`, Redis's MISCONF as INTERNAL,
and health answered SERVING. Now every write refusal of Redis maps to a code
(`tablelog.service.store.errors.write_refusal`, `service/errors.py`'s table), and the health probe
turns NOT_SERVING, naming the disk, until Redis can write again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis import exceptions as redis_errors

from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.errors import refusal
from tablelog.service.store.errors import write_refusal
from tablelog_client import Client, TablelogError
from tests.service.conftest import standalone_redis
from tests.service.helpers import CHAIN, OWNER_TOKEN


@pytest.mark.parametrize(
    ("said", "code", "reason"),
    [
        (
            "MISCONF Errors writing to the AOF file: No space left on device",
            grpc.StatusCode.UNAVAILABLE,
            "STORE_DISK_FAILING",
        ),
        (
            "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
            "persist to disk.",
            grpc.StatusCode.UNAVAILABLE,
            "STORE_DISK_FAILING",
        ),
        ("READONLY You can't write against a read only replica.", None, "STORE_UNAVAILABLE"),
        ("NOREPLICAS Not enough good replicas to write.", None, "STORE_UNAVAILABLE"),
        ("OOM command not allowed when used memory > 'maxmemory'.", None, "STORE_FULL"),
    ],
)
def test_every_write_refusal_of_redis_maps_to_a_code(
    said: str, code: grpc.StatusCode | None, reason: str
) -> None:
    found = write_refusal(redis_errors.ResponseError(said))
    assert found is not None
    told = refusal(found)
    assert told.reason == reason
    if code is not None:
        assert told.code is code
    assert told.code is not grpc.StatusCode.INTERNAL
    assert write_refusal(redis_errors.ResponseError("ERR a script's own error")) is None


def _health(target: str) -> Any:
    with channel(target, OWNER_TOKEN) as opened:
        stub: Any = health_pb2_grpc.HealthStub(opened)
        return stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status


def _until(check: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def test_a_redis_that_cannot_write_its_disk_is_said_so_and_health_follows(
    tmp_path: Path,
) -> None:
    with standalone_redis(
        tmp_path, "--appendonly", "no", "--save", "3600 1", "--enable-protected-configs", "yes"
    ) as url:
        raw = redis.Redis.from_url(url)
        served = BackgroundServer(url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
        try:
            with Client(served.target, token=OWNER_TOKEN, timeout=30) as owner:
                game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
                # A snapshot that cannot be written (procfs takes no files, even root's):
                # Redis then refuses writes with MISCONF, as on a full disk.
                raw.config_set("dir", "/proc")
                raw.bgsave()
                _until(lambda: raw.info("persistence")["rdb_last_bgsave_status"] == "err")
                with pytest.raises(TablelogError) as info:
                    owner.record(game.game_id, "take w u g", expected_version=game.version)
                assert info.value.code is grpc.StatusCode.UNAVAILABLE
                assert "disk" in info.value.message
                _until(lambda: _health(served.target) == health_pb2.HealthCheckResponse.NOT_SERVING)
                # The disk writable again: SERVING, and changes go through.
                raw.config_set("dir", str(tmp_path))
                raw.bgsave()
                _until(lambda: raw.info("persistence")["rdb_last_bgsave_status"] == "ok")
                _until(lambda: _health(served.target) == health_pb2.HealthCheckResponse.SERVING)
                owner.record(game.game_id, "take w u g", expected_version=game.version)
        finally:
            served.stop()
            raw.close()
