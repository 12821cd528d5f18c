"""Redis that cannot write to its disk (issue 23, item 6): on main a full data disk reached
clients as "connection refused" or, with `--durability fast`, Redis's MISCONF as INTERNAL,
and health answered SERVING. Now every write refusal of Redis maps to a code
(`tablelog.service.store.errors.write_refusal`, `service/errors.py`'s table), and the health probe
turns NOT_SERVING, naming the disk, until Redis can write again. Under the default
`--durability disk` (``appendfsync always``) Redis does not refuse: it exits on the failed
write; the embedded Redis's data directory then says why
(`tablelog.service.store.data_disk`)."""

from __future__ import annotations

import os
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
from tablelog.service.store.data_disk import DataDisk
from tablelog.service.store.errors import write_refusal
from tablelog_client import Client, TablelogError
from tests.service.conftest import standalone_redis, standalone_redis_binary
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.service.support import ServeProcess


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
                # While it lasts, every call is refused for the disk (reads too).
                with pytest.raises(TablelogError) as during:
                    owner.get_game(game.game_id)
                assert during.value.reason == "STORE_DISK_FAILING"
                # The disk writable again: SERVING, and changes go through.
                raw.config_set("dir", str(tmp_path))
                raw.bgsave()
                _until(lambda: raw.info("persistence")["rdb_last_bgsave_status"] == "ok")
                _until(lambda: _health(served.target) == health_pb2.HealthCheckResponse.SERVING)
                owner.record(game.game_id, "take w u g", expected_version=game.version)
        finally:
            served.stop()
            raw.close()


def _incremental_files(data_dir: Path) -> list[int]:
    manifest = (data_dir / "appendonlydir" / "tablelog.aof.manifest").read_text()
    return [
        int(line.split()[1].split(".")[2]) for line in manifest.splitlines() if "type i" in line
    ]


def _rewrite(raw: redis.Redis) -> None:
    """A rewrite of the append-only file, which makes Redis 7 open a new incremental file
    (`tablelog.aof.<n+1>.incr.aof`), waited for."""
    raw.bgrewriteaof()
    _until(lambda: raw.info("persistence")["aof_rewrite_in_progress"] == 0, seconds=30)


def _fill_the_disk(data_dir: Path, raw: redis.Redis) -> Path:
    """From now on every write of Redis's append-only file fails with ENOSPC, as on a full
    disk: the next incremental file Redis opens is /dev/full (which takes no byte, even
    root's), and a rewrite makes it open it. (Redis 7's multi-part AOF: Debian's.)"""
    following = max(_incremental_files(data_dir)) + 1
    full = data_dir / "appendonlydir" / f"tablelog.aof.{following}.incr.aof"
    full.symlink_to("/dev/full")
    _rewrite(raw)
    assert max(_incremental_files(data_dir)) == following
    return full


def _free_the_disk(full: Path, data_dir: Path) -> None:
    """The file Redis appends to a file again; Redis opens it at its next start, or opens a
    new one at a rewrite (asked for here: Redis may be down, ended by the probe's write)."""
    full.unlink()
    full.touch(mode=0o600)
    try:
        with redis.Redis.from_url((data_dir / "redis.url").read_text(), socket_timeout=5) as raw:
            _rewrite(raw)
    except redis.ConnectionError:
        pass  # restarting: it opens the (now plain) file as it starts


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["disk", "fast"])
def test_a_full_disk_is_said_so_in_every_durability_mode_until_writes_reach_it(
    tmp_path: Path, durability: str
) -> None:
    """Main under `disk` (appendfsync always): Redis exited on the failed write and was
    restarted, the move was refused STORE_UNAVAILABLE "Connection refused", and health said
    SERVING again as soon as Redis was back, while every write ended it again."""
    if os.name != "posix":
        pytest.skip("/dev/full is Linux's")
    data = tmp_path / "data"
    served = ServeProcess(
        data, "--redis-server", standalone_redis_binary(), "--durability", durability
    ).start()
    try:
        raw = redis.Redis.from_url((data / "redis.url").read_text())
        with Client(served.address, token=served.token, timeout=30) as owner:
            game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
            version = owner.record(game.game_id, "take w u g").game.version
            full = _fill_the_disk(data, raw)
            # Under `fast` Redis answers a change before it writes it: the first may be
            # acknowledged (kept in memory, written once the disk has room), the next is not.
            acknowledged: list[str] = []
            refusals: list[TablelogError] = []
            for notation in ("take w u k", "take w u r"):
                try:
                    version = owner.record(
                        game.game_id, notation, expected_version=version
                    ).game.version
                    acknowledged.append(notation)
                except TablelogError as refusal_error:
                    refusals.append(refusal_error)
                    break
            assert refusals, "a write to a full disk was acknowledged twice"
            assert len(acknowledged) <= (1 if durability == "fast" else 0)
            first = refusals[0]
            assert first.code is grpc.StatusCode.UNAVAILABLE
            assert first.reason == "STORE_DISK_FAILING", first.message
            assert "data disk" in first.message
            assert "No space left on device" in first.message
            _until(lambda: _health(served.address) == health_pb2.HealthCheckResponse.NOT_SERVING)
            # It stays NOT_SERVING while the disk is full (main: SERVING once Redis was
            # back), and changes stay refused, naming the disk.
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                assert _health(served.address) == health_pb2.HealthCheckResponse.NOT_SERVING
                time.sleep(0.2)
            with pytest.raises(TablelogError) as again:
                owner.record(game.game_id, "take u g r", expected_version=version)
            assert again.value.reason == "STORE_DISK_FAILING"
            assert str(data) in again.value.message
            _free_the_disk(full, data)
            _until(
                lambda: _health(served.address) == health_pb2.HealthCheckResponse.SERVING,
                seconds=60,
            )
            recorded = owner.record(game.game_id, "take u g r", expected_version=version)
            assert recorded.game.version == version + 1
            assert owner.verify(game.game_id).ok
        raw.close()
    finally:
        assert served.stop() == 0


def test_the_data_disk_finds_redis_last_words_and_a_disk_without_room(tmp_path: Path) -> None:
    """What `DataDisk` reads: Redis's log lines written since it last read (not those of
    an earlier incident), and, only for a Redis that cannot be reached, a disk with less
    room than its bound; what it found stands until a write reaches the disk again."""
    log = tmp_path / "redis.log"
    earlier = "1:M 03 Dec 2026 04:00:08.072 # Error writing to the AOF file: Input/output error\n"
    log.write_text(earlier)
    disk = DataDisk(tmp_path)
    assert disk.check(lost=True) is None  # an earlier incident's words; room enough
    with log.open("a") as more:
        more.write("2:M 03 Dec 2026 04:01:00.001 # Server initialized\n")
    assert disk.check(lost=True) is None
    with log.open("a") as more:
        more.write(
            "2:M 03 Dec 2026 04:01:09.693 # Error writing to the AOF file: "
            "No space left on device\n"
            "2:M 03 Dec 2026 04:01:09.693 # Can't recover from AOF write error when the AOF"
            " fsync policy is 'always'. Exiting...\n"
        )
    found = disk.check(lost=False)
    assert found is not None
    assert "Error writing to the AOF file: No space left on device" in found
    assert str(tmp_path) in found
    assert "bytes free on that disk" in found
    assert disk.check(lost=False) == found  # it stands
    disk.cleared()
    assert disk.check(lost=True) is None  # what was logged before is past
    # A disk with less room than the bound counts as full only when Redis is lost.
    cramped = DataDisk(tmp_path, low_space=(disk.free_bytes() or 0) + (1 << 40))
    assert not cramped.has_room()
    assert cramped.check(lost=False) is None
    full = cramped.check(lost=True)
    assert full is not None
    assert f"the data disk of {tmp_path} is full" in full
