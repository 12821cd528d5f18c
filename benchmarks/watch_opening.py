"""Watchers opening at once: how long until each has caught up, against a bare gRPC floor.

    .venv/bin/python benchmarks/watch_opening.py                       # 200 watchers, 20 games
    .venv/bin/python benchmarks/watch_opening.py --watchers 100 --games 10 --moves 80

A club night's watchers open their pages at the start of a game or in the middle of one,
each from revision 1 (benchmarks/club_night.py opens all of a window's watchers at its
start). A watch sends its backlog (every step from its `from_revision` to the head, each
with the state after it) before any live update, so an update recorded meanwhile reaches
that watcher only once its backlog is through: how long the backlogs of many watchers
opening in the same second take is what such an update waits.

The service (`tablelog.service.api.server.build_server`, as benchmarks/watch.py runs it,
on an embedded Redis) gets `--games` 4-player Splendor games of `--moves` moves; then
`--watchers` watchers (spread evenly over the games) open WatchGame from revision 1 at
the same moment, from this process with grpc.aio, and each notes when it has had the
game's last event. Then the same on the floor (benchmarks/watch.py's bare `grpc.aio` server:
the same number of messages per watch, each of the service's average size, from a list
kept per game; no Redis, no rules, no rendering).

Printed for each: when the watchers had caught up (p50, p99, max ms after the opening),
messages sent, the server process's CPU over the opening (from /proc) and per message,
and the service's figures over the floor's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from benchmarks.record import (  # noqa: E402  (path set above)
    authenticated_channel,
    bearer,
    cpu_seconds,
    random_lines,
    register_token,
    stop,
)
from benchmarks.watch import (  # noqa: E402
    STREAMS_PER_CHANNEL,
    Scenario,
    prepare_games,
    start_service,
)
from tablelog.service.store.embedded import EmbeddedRedis  # noqa: E402
from tablelog.v1 import service_pb2, service_pb2_grpc  # noqa: E402


async def open_all(target: str, heads: dict[str, int], count: int) -> dict[str, Any]:
    """`count` watchers over the games of `heads` (id: last sequence), opened at once from
    revision 1: when each had its game's last event, seconds after the opening."""
    from grpc import aio

    channels = [aio.insecure_channel(target) for _ in range(-(-count // STREAMS_PER_CHANNEL))]
    for channel in channels:
        await channel.channel_ready()
    games = list(heads)
    caught_up: list[float] = []
    sizes: list[int] = []

    async def watch(index: int) -> None:
        game_id = games[index % len(games)]
        watch_game: Any = channels[index // STREAMS_PER_CHANNEL].unary_stream(
            "/tablelog.v1.TablelogService/WatchGame"
        )
        request = service_pb2.WatchGameRequest(
            game_id=game_id, from_revision=1, heartbeat_seconds=300
        )
        call = watch_game(request.SerializeToString(), metadata=bearer())
        async for data in call:
            item = service_pb2.WatchGameResponse.FromString(data)
            if item.WhichOneof("item") != "update":
                continue
            sizes.append(len(data))
            if item.update.event.sequence >= heads[game_id]:
                caught_up.append(time.monotonic() - opened)
                break
        call.cancel()

    opened = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(watch(i) for i in range(count))), 300)
    for channel in channels:
        await channel.close()
    return {"caught_up": sorted(caught_up), "messages": len(sizes), "bytes": sum(sizes)}


def run(
    redis: EmbeddedRedis, args: Any, lines: list[list[str]], floor_bytes: int | None
) -> dict[str, Any]:
    """One opening on the service (on the floor, with `floor_bytes`)."""
    process, target = start_service(redis.url, floor_bytes)
    try:
        with authenticated_channel(target) as channel:
            stub = service_pb2_grpc.TablelogServiceStub(channel)
            scenario = Scenario("opening", args.watchers, args.games, args.moves, 0)
            prepared = prepare_games(stub, lines, scenario)
        # (a version is the head's revision; with moves alone, its event's sequence too)
        heads = {game_id: version for game_id, version, _rest in prepared}
        time.sleep(0.5)
        before = cpu_seconds(process.pid)
        result = asyncio.run(open_all(target, heads, args.watchers))
        result["cpu_s"] = cpu_seconds(process.pid) - before
    finally:
        stop(process)
    return result


def quantile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(len(values) * share))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--moves", type=int, default=45, help="moves of each game")
    parser.add_argument("--rounds", type=int, default=2, help="service then floor, repeated")
    args = parser.parse_args()
    lines = [line for line in random_lines(40, players=4, seed=100) if len(line) > args.moves]
    rows: list[tuple[str, dict[str, Any]]] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch, EmbeddedRedis(Path(scratch) / "redis") as redis:
        register_token(redis.url)
        for number in range(1, args.rounds + 1):
            print(f"round {number}: the service ...", file=sys.stderr)
            service = run(redis, args, lines, None)
            size = service["bytes"] // max(1, service["messages"])
            print(f"round {number}: the floor ({size} B a message) ...", file=sys.stderr)
            floor = run(redis, args, lines, size)
            rows += [(f"service, round {number}", service), (f"floor, round {number}", floor)]
    print(
        f"{args.watchers} watchers over {args.games} games of {args.moves} moves opening at once "
        f"from revision 1; load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} "
        "after"
    )
    print("| run | caught up p50 / p99 / max ms | messages | server CPU s | CPU us a message |")
    print("|---|---|---|---|---|")
    for name, row in rows:
        done = row["caught_up"]
        print(
            f"| {name} | {1000 * quantile(done, 0.5):.0f} / {1000 * quantile(done, 0.99):.0f} / "
            f"{1000 * done[-1]:.0f} | {row['messages']} | {row['cpu_s']:.2f} | "
            f"{1e6 * row['cpu_s'] / max(1, row['messages']):.0f} |"
        )
    for index in range(0, len(rows), 2):
        service, floor = rows[index][1], rows[index + 1][1]
        # /proc counts CPU in clock ticks (10 ms): a tiny opening's floor may count none.
        cpu = (
            f"{service['cpu_s'] / floor['cpu_s']:.2f}x the server CPU"
            if floor["cpu_s"] >= 0.05
            else "the floor's CPU too small to compare"
        )
        print(
            f"round {index // 2 + 1}: the service over the floor: the last watcher caught up "
            f"{service['caught_up'][-1] / floor['caught_up'][-1]:.2f}x later, {cpu}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
