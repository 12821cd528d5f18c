"""RecordMove's layers, each measured in-process: what each costs a call, and their sum
against the work a move requires, in one run.

    .venv/bin/python benchmarks/record_layers.py [--moves 400] [--repeat 5] [--baseline DIR]

`benchmarks/record.py` measures RecordMove end to end (gRPC, three processes); on a shared
machine its figures move by more than one layer costs. This times the server's own CPU
(`time.process_time`, one process per round, rounds alternating) with no gRPC around it:

* `stack`: the RecordMove handler exactly as the server registers it (the request decoded
  by its deserializer, the logging interceptor, the gate: token, role, the game's club;
  admission: the caller's rate bucket and storage club; the servicer; the response
  serialized by its serializer), called with a context made as the HTTP port makes one,
  logging one JSON line per call to /dev/null, with `tablelog serve`'s caller limits set
  out of reach (still checked);
* `recorder`: `Recorder.record_move` alone (the rules, the head, the fingerprint, the
  seal, the append script, the summary);
* `bound`: only what a move requires: the rules (parse, format, fold: record.py's
  `+rules`) and the append script storing one sealed event with a receipt's tag
  (record.py's `+append`, `floor_handler`), the request decoded and an empty answer
  encoded.

Then each layer alone in a loop of the same calls (the gate's admit, admission, the
request fingerprint, the chain's seal, the receipt, the summary, the events shown, the
response built and serialized, the log line), in us per call, so what each adds is seen
beside the whole. With `--baseline DIR` the stack and the recorder of another checkout
(e.g. main's worktree) run in the same rounds, alternating (the bound is this checkout's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

KINDS = ("stack", "recorder", "bound")
METHOD = "/tablelog.v1.TablelogService/RecordMove"
OUT_OF_REACH = 1_000_000


class BenchContext:
    """The servicer context the handlers read (as `tablelog.service.api.http_api.CallContext`
    is)."""

    transport = ""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata
        self._code: Any = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    def code(self) -> Any:
        return self._code

    def set_trailing_metadata(self, metadata: Any) -> None:
        self._trailing = metadata

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        self._code = code
        raise RuntimeError(f"aborted: {code} {details}")

    async def abort_with_status(self, status: Any) -> None:
        self._code = status.code
        raise RuntimeError(f"aborted: {status.code} {status.details}")


def measure(root: Path, kind: str, redis_url: str, key_file: str, lines: list[list[str]]) -> Any:
    """CPU us per move of `kind` with `root`'s modules (run in a process of its own)."""
    sys.path[:0] = [str(root), str(root / "proto"), str(ROOT)]
    if not os.environ.get("RECORD_LAYERS_STDERR"):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # the log lines go nowhere, as in record.py
    from tablelog.service.access.quotas import CallerLimits
    from tablelog.service.api.server import build_server, tune_gc
    from tablelog.service.logs import configure_logging
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import load_key_file
    from tablelog.v1 import events_pb2, service_pb2

    configure_logging("info", json=True)
    chain = load_key_file(Path(key_file))
    token = os.environ["TABLELOG_TOKEN"]
    metadata = (("authorization", f"Bearer {token}"), ("user-agent", "grpc-python/1.85"))

    async def run() -> float:
        store = RedisEventStore.from_url(redis_url, chain=chain)
        limits = CallerLimits(
            changes_per_second=OUT_OF_REACH,
            change_burst=OUT_OF_REACH,
            reads_per_second=OUT_OF_REACH,
            read_burst=OUT_OF_REACH,
        )
        built = build_server(store, "127.0.0.1:0", caller_limits=limits)
        recorder = built.recorder
        handler: Any = built.handlers.handlers[METHOD]  # grpc.RpcMethodHandler: untyped fields
        call, decode = handler.unary_unary, handler.request_deserializer
        encode = handler.response_serializer
        create: Any = built.handlers.handlers["/tablelog.v1.TablelogService/CreateGame"]
        games = []
        for line in lines:
            request = service_pb2.CreateGameRequest(
                game="splendor",
                players=[events_pb2.Player(name=n) for n in ("Ann", "Bob")],
                request_id=secrets.token_hex(8),
            )
            created = await create.unary_unary(request, BenchContext(metadata))
            games.append((created.game.game_id, created.game.version, line))
        actor = events_pb2.Actor(user="bench", client="record_layers")
        bound: Any = None
        if kind == "bound":
            import redis.asyncio as aioredis

            from benchmarks.record import floor_handler

            client = aioredis.Redis.from_url(redis_url)
            source = (ROOT / "service" / "store" / "append.lua").read_bytes()
            sha = await client.script_load(source)
            bound = floor_handler(client, frozenset({"rules", "append"}), chain.signing.secret, sha)
        tune_gc()
        moves = 0
        started = time.process_time()
        for game_id, version, line in games:
            for notation in line:
                request_id = secrets.token_hex(8)
                if kind == "stack":
                    data = service_pb2.RecordMoveRequest(
                        game_id=game_id,
                        notation=notation,
                        expected_version=version,
                        request_id=request_id,
                    ).SerializeToString()
                    response = await call(decode(data), BenchContext(metadata))
                    encode(response)
                    version = response.game.version
                elif kind == "recorder":
                    outcome = await recorder.record_move(
                        game_id, move=None, notation=notation, seat=None,
                        expected_version=version, request_id=request_id, actor=actor,
                    )  # fmt: skip
                    version = outcome.head.revision
                else:
                    data = service_pb2.RecordMoveRequest(
                        game_id=game_id,
                        notation=notation,
                        expected_version=version,
                        request_id=request_id,
                    ).SerializeToString()
                    await bound(data, None)
                    version += 1
                moves += 1
        spent = time.process_time() - started
        await store.close()
        return 1e6 * spent / moves

    return asyncio.run(run())


def layers(
    root: Path, redis_url: str, key_file: str, line: list[str], calls: int
) -> dict[str, float]:
    """Each layer alone, in a loop of `calls` calls on one recorded move: us per call
    (with `root`'s modules)."""
    sys.path[:0] = [str(root), str(root / "proto")]
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    from tablelog.service.access.admission import Admission
    from tablelog.service.access.authentication import _caller, current_caller, member_keys
    from tablelog.service.access.quotas import CallerLimits
    from tablelog.service.api import interceptors
    from tablelog.service.api.server import build_server
    from tablelog.service.api.servicer import _outcome
    from tablelog.service.logs import configure_logging
    from tablelog.service.recording.appending import fingerprint
    from tablelog.service.recording.entitlement import entitled_viewer
    from tablelog.service.recording.views import summarize
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import load_key_file
    from tablelog.v1 import events_pb2, service_pb2

    configure_logging("info", json=True)
    chain = load_key_file(Path(key_file))
    token = os.environ["TABLELOG_TOKEN"]
    metadata = (("authorization", f"Bearer {token}"), ("user-agent", "grpc-python/1.85"))
    results: dict[str, float] = {}

    def timed(name: str, work: Callable[[], object]) -> None:
        work()
        started = time.process_time()
        for _ in range(calls):
            work()
        results[name] = 1e6 * (time.process_time() - started) / calls

    async def run() -> None:
        store = RedisEventStore.from_url(redis_url, chain=chain)
        limits = CallerLimits(
            changes_per_second=OUT_OF_REACH,
            change_burst=OUT_OF_REACH,
            reads_per_second=OUT_OF_REACH,
            read_burst=OUT_OF_REACH,
        )
        built = build_server(store, "127.0.0.1:0", caller_limits=limits)
        recorder, gate = built.recorder, built.gate
        created = await recorder.create_game(
            service_pb2.CreateGameRequest(
                game="splendor", players=[events_pb2.Player(name=n) for n in ("Ann", "Bob")]
            ),
            events_pb2.Actor(user="bench"),
        )
        game_id, version = created.head.game_id, created.head.revision
        built.gate.games.learn(game_id, created.head.position.table.created.club or "local")
        for notation in line[:-1]:
            outcome = await recorder.record_move(
                game_id, move=None, notation=notation, seat=None, expected_version=version,
                request_id=secrets.token_hex(8), actor=events_pb2.Actor(user="bench"),
            )  # fmt: skip
            version = outcome.head.revision
        request = service_pb2.RecordMoveRequest(
            game_id=game_id, notation=line[-1], expected_version=version, request_id="r" * 16
        )
        data = request.SerializeToString()
        handler: Any = built.handlers.handlers[METHOD]  # grpc.RpcMethodHandler: untyped fields
        decode, encode = handler.request_deserializer, handler.response_serializer
        caller = await gate.admit(METHOD, request, metadata)
        started = time.process_time()
        for _ in range(calls):
            await gate.admit(METHOD, request, metadata)
        results["gate (cached token, role, club)"] = 1e6 * (time.process_time() - started) / calls
        _caller.set(caller)  # as the gate sets it for the handlers inside it
        admitting = Admission(limits, member_keys)
        context = BenchContext(metadata)
        timed(
            "admission (keys, rate bucket)",
            lambda: admitting.admit("RecordMove", member_keys(context)),
        )
        timed("request decoded (guard)", lambda: decode(data))
        timed(
            "fingerprint",
            lambda: fingerprint("RecordMove", game_id, b"", line[-1], None, version),
        )
        outcome = await recorder.record_move(
            game_id, move=None, notation=line[-1], seat=None, expected_version=version,
            request_id=secrets.token_hex(8), actor=current_caller().actor(),
        )  # fmt: skip
        head = recorder.cached(game_id)
        assert head is not None
        event = events_pb2.Event()
        event.CopyFrom(outcome.events[-1])
        event.ClearField("hash")
        timed("chain seal (one event)", lambda: chain.seal([event], outcome.head.last_hash))
        timed("receipt", lambda: recorder.receipt(outcome))
        timed("summary (GameSummary of the head)", lambda: summarize(outcome.head))
        viewer = entitled_viewer(outcome.head.position, caller.role, (), None)
        started = time.process_time()
        for _ in range(calls):
            await recorder.shown_change(outcome, viewer)
        results["events shown (entitlement, hides_from)"] = (
            1e6 * (time.process_time() - started) / calls
        )

        def respond() -> bytes:
            response = service_pb2.RecordMoveResponse(
                game=_outcome(outcome), events=outcome.events, receipt=recorder.receipt(outcome)
            )
            serialized: bytes = encode(response)
            return serialized

        timed("response built and serialized (with its receipt)", respond)
        fields = {
            "method": "RecordMove",
            "game_id": game_id,
            "request_id": "r" * 16,
            "revision": version + 1,
            "member_id": caller.member_id,
            "club": caller.club_id,
        }
        timed(
            "log line (JSON to /dev/null)",
            lambda: interceptors._finish(dict(fields), time.perf_counter(), "OK"),
        )
        await store.close()

    asyncio.run(run())
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--moves", type=int, default=400, help="moves per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are shown")
    parser.add_argument("--calls", type=int, default=2000, help="calls per layer's loop")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout, same rounds")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a round's process: its root
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    parser.add_argument("--layers", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    parser.add_argument("--key-file", help=argparse.SUPPRESS)
    parser.add_argument("--lines", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        lines = json.loads(Path(args.lines).read_text())
        if args.layers:
            layered = layers(
                Path(args.measure), args.redis_url, args.key_file, lines[0], args.calls
            )
            print(json.dumps(layered))
        else:
            print(measure(Path(args.measure), args.kind, args.redis_url, args.key_file, lines))
        return 0

    sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]
    from benchmarks.record import random_lines, register_token
    from tablelog.service.store.chain_keys import KEY_FILE_NAME, data_dir_chain
    from tablelog.service.store.embedded import Durability, EmbeddedRedis

    lines, total = [], 0
    for line in random_lines(40, seed=7):
        lines.append(line[: args.moves - total])
        total += len(lines[-1])
        if total >= args.moves:
            break
    roots = {"": ROOT}
    if args.baseline:
        roots["baseline "] = Path(args.baseline).resolve()
    kinds_of = {prefix: KINDS if not prefix else KINDS[:2] for prefix in roots}
    results: dict[str, list[float]] = {
        f"{prefix}{kind}": [] for prefix in roots for kind in kinds_of[prefix]
    }
    with tempfile.TemporaryDirectory() as scratch:
        data_dir_chain(Path(scratch))
        key_file = str(Path(scratch) / KEY_FILE_NAME)
        lines_file = Path(scratch) / "lines.json"
        lines_file.write_text(json.dumps(lines))
        with EmbeddedRedis(Path(scratch) / "redis", durability=Durability.FAST) as redis:
            register_token(redis.url)

            def run(root: Path, *extra: str) -> str:
                done = subprocess.run(
                    [sys.executable, __file__, "--measure", str(root), "--redis-url", redis.url,
                     "--key-file", key_file, "--lines", str(lines_file),
                     "--calls", str(args.calls), *extra],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    raise SystemExit(f"{root} --kind {extra}: failed:\n{done.stderr}")
                return done.stdout.split("\n")[-2]

            for _round in range(args.repeat):
                for prefix, root in roots.items():
                    for kind in kinds_of[prefix]:
                        results[f"{prefix}{kind}"].append(float(run(root, "--kind", kind)))
            each = {prefix: json.loads(run(root, "--layers")) for prefix, root in roots.items()}
    medians = {name: statistics.median(values) for name, values in results.items()}
    print(f"{total} moves per round, medians of {args.repeat} rounds; CPU us per move")
    for name, values in results.items():
        shown = " ".join(f"{v:.0f}" for v in values)
        print(f"{name:>18}: {medians[name]:7.1f}   (rounds: {shown})")
    bound = medians["bound"]
    for prefix in roots:
        stack = medians[f"{prefix}stack"]
        print(f"{prefix}stack / bound: {stack / bound:.2f}  (the layers: {stack - bound:.0f} us)")
    if args.baseline:
        print(f"stack / baseline stack: {medians['stack'] / medians['baseline stack']:.3f}")
    print(f"each layer alone, us per call (loops of {args.calls}), then the baseline's:")
    for name, value in each[""].items():
        others = "".join(f" {each[prefix].get(name, 0.0):7.1f}" for prefix in roots if prefix)
        print(f"  {name:<52} {value:7.1f}{others}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
