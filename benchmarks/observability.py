"""What the logging interceptor costs per call, in process, against the same run's floor.

    .venv/bin/python benchmarks/observability.py [--calls 20000] [--rounds 5]

One RecordMove-shaped unary call (a RecordMoveRequest with a game id and a request id, three
metadata entries as a client sends them) through a handler that returns at once:

* floor: the bare handler, awaited;
* main: the handler wrapped by the interceptor of the commit this branch started from
  (`git show BASE:service/interceptors.py`, one JSON log line per call): the log line only;
* now: wrapped by today's interceptor: the log line, plus the Prometheus counter and
  histogram (`tablelog.service.metrics`), the trace id (read from `traceparent`, else made) and the
  request id returned as trailing metadata (`tablelog.service.tracing`).

The log lines go to /dev/null through the production chain (`tablelog.service.logs`, JSON). The
medians of `--rounds` rounds are printed in microseconds per call, and `now - main`: what
issue 27's observability adds to every call, RecordMove included."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from tablelog.service.api import interceptors  # noqa: E402  (the path is set up just above
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.v1 import service_pb2  # noqa: E402

BASE = "8e34d96"
"""The commit the observability work started from (main when the branch was made)."""
MOVED = {
    "service.admission": "tablelog.service.access.admission",
    "service.errors": "tablelog.service.errors",
    "service.logs": "tablelog.service.logs",
}
"""Where the modules BASE's interceptor imports are now (issue 22 put `service/` in rooms
under the one import name `tablelog`): its flat `service.*` imports are read at these."""
METHOD = "/tablelog.v1.TablelogService/RecordMove"


class Context:
    """The parts of grpc.aio's ServicerContext the interceptor touches."""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata
        self.trailing: Any = ()

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def code(self) -> None:
        return None

    def set_trailing_metadata(self, metadata: Any) -> None:
        self.trailing = metadata


async def handler(request: Any, context: Any) -> Any:
    return request


def _moved_import(found: re.Match[str]) -> str:
    if found.group(1) not in MOVED:
        raise SystemExit(f"{BASE}'s interceptor imports {found.group(1)}: add it to MOVED")
    return f"from {MOVED[found.group(1)]} import"


def base_interceptors() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{BASE}:service/interceptors.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    source = re.sub(r"^from (service\.\w+) import", _moved_import, source, flags=re.MULTILINE)
    module = types.ModuleType("base_interceptors")
    module.__file__ = "base_interceptors.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


async def timed(call: Any, request: Any, context: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await call(request, context)
    return (time.perf_counter() - started) / calls * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base = base_interceptors()  # before stderr goes: a failure to load it is said
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (the log lines' sink, for the run)
    configure_logging("info", json=True)
    request = service_pb2.RecordMoveRequest(
        game_id="k67zo2vpxrit", notation="take w u g", expected_version=7, request_id="r-1234"
    )
    metadata = (
        ("authorization", "Bearer tlm_0123456789abcdef"),
        ("user-agent", "grpc-python/1.85"),
        ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    )
    variants = {
        "floor": handler,
        "main": base._wrap_unary(METHOD, handler),
        "now": interceptors._wrap_unary(METHOD, handler),
    }
    results: dict[str, list[float]] = {name: [] for name in variants}
    loop = asyncio.new_event_loop()
    for _round in range(args.rounds):
        for name, call in variants.items():
            results[name].append(
                loop.run_until_complete(timed(call, request, Context(metadata), args.calls))
            )
    loop.close()
    median = {name: statistics.median(times) for name, times in results.items()}
    out = sys.__stdout__
    assert out is not None
    print(
        f"{'variant':<8} {'us/call':>8}   (median of {args.rounds} rounds of {args.calls})",
        file=out,
    )
    for name, value in median.items():
        print(f"{name:<8} {value:8.2f}", file=out)
    print(f"now - main: {median['now'] - median['main']:+.2f} us per call", file=out)
    print(f"main - floor (the log line): {median['main'] - median['floor']:.2f} us", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
