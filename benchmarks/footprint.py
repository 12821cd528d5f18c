"""What a recorded move and a game cost Redis in memory and on disk, for sizing a deployment
(docs/deploy.md, Sizes; docs/scaling.md).

    .venv/bin/python benchmarks/footprint.py [--games 40] [--players 2 3 4]
        [--request-id-retention SECONDS]

Starts Debian's redis-server with deploy/redis.conf's persistence (AOF, `appendfsync
always`, RDB preamble), a tablelog server (`tablelog.service.api.server.BackgroundServer`) on it,
and records whole seeded random Splendor games through the Python SDK, one notation per RecordMove,
as a recorder at the table does (each game also gets its creation, reveals and chance events). Then
it reads, per game, `MEMORY USAGE` of each of its keys (events stream, head, request ids, seed) and
the listing index, Redis's `used_memory` before and after, the append-only file's growth, and the
same file after `BGREWRITEAOF`. With `--request-id-retention`, the server keeps request ids
that long (a short one here, so as not to wait days): the games' keys are read again once it
has passed, when Redis holds what a game keeps for good.

The floor, measured on the same games: the bytes of the events themselves (each stream
entry's payload), which no store of this history can go below. Ratios against it say what
Redis's structures and the idempotency keys add.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import redis  # noqa: E402  (the path is set up just above)

from tablelog.service.access.identity import new_token  # noqa: E402
from tablelog.service.api.server import BackgroundServer  # noqa: E402
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.service.store.chain import Chain, ChainKey  # noqa: E402
from tablelog.service.store.embedded import free_port  # noqa: E402
from tablelog_client import Client  # noqa: E402
from tests.support.play import random_game  # noqa: E402

PERSISTENCE = (
    "--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "yes",
    "--save", "", "--maxmemory-policy", "noeviction",
)  # fmt: skip


def aof_bytes(directory: Path) -> int:
    """The append-only file's parts (Redis 7: a base, RDB with the preamble, and increments)."""
    return sum(f.stat().st_size for f in (directory / "appendonlydir").iterdir())


def wait_for_rewrite(client: redis.Redis) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        time.sleep(0.1)
    raise RuntimeError("the AOF rewrite did not finish")


def game_keys(client: redis.Redis, games: list[str]) -> tuple[dict[str, int], int, int]:
    """`MEMORY USAGE` of the games' keys by part (events, head, requests ...), and the
    bytes and number of the events themselves."""
    per_part: dict[str, int] = {}
    events = entries = 0
    for game in games:
        for key in client.scan_iter(match=f"*{{{game}}}*"):
            part = key.decode().rsplit(":", 1)[-1]
            used = client.memory_usage(key, samples=0)
            if used is None:
                continue  # expired between SCAN and now
            per_part[part] = per_part.get(part, 0) + int(used)
            if part == "events":
                for _id, fields in client.xrange(key) or []:
                    events += sum(len(value) for value in (fields or {}).values())
                    entries += 1
    return per_part, events, entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument(
        "--request-id-retention",
        type=float,
        default=None,
        help="seconds the server keeps request ids (default: the server's, days)",
    )
    options = parser.parse_args()
    configure_logging("warning", json=False)  # no line per RPC among the figures
    data = Path(tempfile.mkdtemp(prefix="tablelog-footprint-"))
    port = free_port()
    server_process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
         *PERSISTENCE],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    token = new_token()
    retention = {}
    if options.request_id_retention is not None:
        retention["request_id_retention"] = options.request_id_retention
    server = BackgroundServer(
        url, chain=Chain(ChainKey.of(secrets.token_bytes(32))), owner_token=token, **retention
    )
    server.start()
    try:
        memory_before = int(client.info("memory")["used_memory"])
        aof_before = aof_bytes(data)
        games: list[str] = []
        moves = 0
        started = time.monotonic()
        with Client(server.target, token=token) as sdk:
            for index in range(options.games):
                players = options.players[index % len(options.players)]
                line = random_game("splendor", players, seed=index).notations
                game = sdk.create_game("splendor", [f"P{n}" for n in range(players)]).game_id
                version = sdk.get_game(game).version
                for notation in line:
                    version = sdk.record(game, notation, expected_version=version).game.version
                moves += len(line)
                games.append(game)
        seconds = time.monotonic() - started
        memory_after = int(client.info("memory")["used_memory"])
        aof_grown = aof_bytes(data) - aof_before
        per_part, events, entries = game_keys(client, games)
        expired: dict[str, int] | None = None
        if options.request_id_retention is not None:
            # The keys go within 1.5 retentions of the last id stored (append.lua).
            until = started + seconds + options.request_id_retention * 1.5 + 0.5
            time.sleep(max(0.0, until - time.monotonic()))
            expired, _, _ = game_keys(client, games)  # reading an expired key removes it
            memory_expired = int(client.info("memory")["used_memory"])
        client.bgrewriteaof()
        time.sleep(0.2)
        wait_for_rewrite(client)
        aof_rewritten = aof_bytes(data)
    finally:
        server.stop()
        server_process.terminate()
        server_process.wait(30)

    print(f"{len(games)} Splendor games ({options.players} players), {moves:,} moves recorded "
          f"in {seconds:.1f} s, {entries:,} events stored")  # fmt: skip
    print(f"floor: the events' own bytes: {events:,} B, {events / moves:.0f} B per move")
    rows = [
        ("Redis used_memory growth", memory_after - memory_before),
        ("  of which, MEMORY USAGE of the games' keys", sum(per_part.values())),
        *((f"    {part}", size) for part, size in sorted(per_part.items())),
        ("AOF growth (every change, as written)", aof_grown),
        ("AOF after BGREWRITEAOF (RDB preamble)", aof_rewritten),
    ]
    print(f"{'':48} {'bytes':>12} {'per move':>9} {'per game':>9} {'vs floor':>8}")
    if expired is not None:
        rows += [
            (f"once the {options.request_id_retention:g} s retention passed:", 0),
            ("Redis used_memory growth", memory_expired - memory_before),
            ("  of which, MEMORY USAGE of the games' keys", sum(expired.values())),
            *((f"    {part}", size) for part, size in sorted(expired.items())),
        ]
    for name, value in rows:
        if name.endswith(":"):
            print(name)
            continue
        print(f"{name:48} {value:>12,} {value / moves:>9.0f} {value / len(games):>9.0f} "
              f"{value / events:>8.2f}")  # fmt: skip
    shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
