"""Backups as docs/deploy.md tells them: games recorded on a redis-server run with the
deploy's redis.conf and password, copied (deploy/redis-backup.sh's archive of the
append-only file, and `redis-cli --rdb` from outside), each copy restored into a fresh
redis-server, and every game found at its version and verified there."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import free_port
from tablelog_client import Client
from tests.deploy.support import DEPLOY, Mounts, redis_command, redis_server
from tests.service.helpers import CHAIN, OWNER_TOKEN, splendor_line

PASSWORD = "a-backup-test-password"


@contextmanager
def deployed_redis(data: Path, tmp_path: Path, *options: str) -> Iterator[tuple[int, str]]:
    """redis-server with deploy/redis.conf (its data directory `data`) and a password, on
    loopback: its port and URL."""
    data.mkdir(parents=True, exist_ok=True)
    conf = tmp_path / f"redis-{data.name}.conf"
    conf.write_text(
        Mounts({"/data": data}).apply((DEPLOY / "redis.conf").read_text(encoding="utf-8"))
        + f'requirepass "{PASSWORD}"\n',
        encoding="utf-8",
    )
    port = free_port()
    command = [redis_server(), str(conf), "--port", str(port), "--bind", "127.0.0.1", *options]
    with redis_command(command, port, PASSWORD):
        yield port, f"redis://:{PASSWORD}@127.0.0.1:{port}/0"


def record_games(client: Client, count: int, moves: int, seed: int = 0) -> dict[str, int]:
    """`count` Splendor games of `moves` recorded moves (one undone and redone): their
    versions."""
    versions: dict[str, int] = {}
    for index in range(count):
        game = client.create_game("splendor", ["Ana", "Ben", "Cy"][: 2 + index % 2]).game_id
        version = client.get_game(game).version
        for notation in splendor_line(seed + index, players=2 + index % 2)[:moves]:
            version = client.record(game, notation, expected_version=version).game.version
        client.undo(game)
        versions[game] = client.redo(game).game.version
    return versions


def check_restored(url: str, versions: dict[str, int]) -> None:
    """A server on the restored Redis (same chain key) finds each game at its version, and
    VerifyGame passes on every one."""
    server = BackgroundServer(url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    try:
        with Client(server.target, token=OWNER_TOKEN) as client:
            for game, version in versions.items():
                assert client.get_game(game).version == version, game
                verified = client.verify(game)
                assert verified.ok, (game, verified.problem)
                assert verified.events_checked >= version
    finally:
        server.stop()


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[int, str, Client]]:
    with deployed_redis(tmp_path / "data", tmp_path) as (port, url):
        server = BackgroundServer(url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
        try:
            with Client(server.target, token=OWNER_TOKEN) as client:
                yield port, url, client
        finally:
            server.stop()


@pytest.mark.slow
def test_the_append_only_file_copied_by_the_backup_script_restores_every_game(
    tmp_path: Path, league: tuple[int, str, Client]
) -> None:
    port, url, client = league
    versions = record_games(client, count=4, moves=25)
    # A rewrite made part of the file a snapshot; later moves are in its increment.
    redis.Redis.from_url(url).bgrewriteaof()
    time.sleep(0.5)
    versions |= record_games(client, count=2, moves=15, seed=10)
    password_file = tmp_path / "redis-password"
    password_file.write_text(PASSWORD + "\n", encoding="utf-8")
    backup = subprocess.run(
        ["sh", str(DEPLOY / "redis-backup.sh")],
        env={**os.environ, "REDIS_PORT": str(port), "REDIS_PASSWORD_FILE": str(password_file)},
        capture_output=True,
        timeout=120,
    )
    assert backup.returncode == 0, backup.stderr.decode()
    # The script puts automatic rewrites back as they were.
    assert redis.Redis.from_url(url).config_get("auto-aof-rewrite-percentage") == {
        "auto-aof-rewrite-percentage": "100"
    }
    # Moves after the copy are not in it.
    later = next(iter(versions))
    client.record(later, splendor_line(0)[25])

    restored = tmp_path / "restored"
    with tarfile.open(fileobj=io.BytesIO(backup.stdout)) as archive:
        archive.extractall(restored, filter="data")
    with deployed_redis(restored, tmp_path) as (_port, restored_url):
        check_restored(restored_url, versions)


@pytest.mark.long  # (brought up for real: .ci/run runs it; README, Quick start)
def test_a_snapshot_taken_from_outside_restores_every_game(
    tmp_path: Path, league: tuple[int, str, Client]
) -> None:
    port, _url, client = league
    versions = record_games(client, count=4, moves=20, seed=20)
    snapshot = tmp_path / "snapshot.rdb"
    taken = subprocess.run(
        ["redis-cli", "-p", str(port), "--rdb", str(snapshot)],
        env={**os.environ, "REDISCLI_AUTH": PASSWORD},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert taken.returncode == 0, taken.stderr

    # Restore as docs/deploy.md says: the snapshot as dump.rdb in an empty data directory,
    # loaded with the append-only file off, then turned on (Redis writes it from memory)...
    restored = tmp_path / "restored"
    restored.mkdir()
    (restored / "dump.rdb").write_bytes(snapshot.read_bytes())
    with deployed_redis(restored, tmp_path, "--appendonly", "no") as (restored_port, _):
        loading = redis.Redis(port=restored_port, password=PASSWORD)
        loading.config_set("appendonly", "yes")
        deadline = time.monotonic() + 60
        while loading.info("persistence")["aof_rewrite_in_progress"] or not any(
            (restored / "appendonlydir").glob("*.base.*")
        ):
            assert time.monotonic() < deadline, "the append-only file was not written"
            time.sleep(0.1)
        loading.close()
    # ...then Redis started as it runs (appendonly yes), from that file.
    with deployed_redis(restored, tmp_path) as (_port, restored_url):
        check_restored(restored_url, versions)
