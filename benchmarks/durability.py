"""What acknowledging only what is on disk costs: RecordMove through the service on the
embedded Redis with `--durability disk` (the default, ``appendfsync always``: Redis writes
and fsyncs the append-only file before it answers) against `--durability fast`
(``everysec``), the floor, measured in the same run on the same disk.

    .venv/bin/python benchmarks/durability.py [--seconds 3] [--clients 1 8] [--repeat 3]

Each round starts, for each setting, a fresh embedded Redis (its own data directory, in
the directory given by --dir, default the system's temporary directory: put it on the disk
you mean to measure), the service in its own process and the load in another
(`benchmarks/record.py`'s server and load: notation moves into Splendor games, only
RecordMove timed, CPU per call from /proc). The settings alternate within each round;
medians of the rounds are printed, with the ratios of `disk` to `fast`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from benchmarks.record import (  # noqa: E402  (path set just above)
    random_lines,
    register_token,
    run_load,
    start_server,
    stop,
)
from tablelog.service.store.chain_keys import KEY_FILE_NAME, data_dir_chain  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis  # noqa: E402

MEASURES = ("per_second", "p50_ms", "p99_ms", "cpu_us", "redis_cpu_us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are shown")
    parser.add_argument("--dir", type=Path, default=None, help="where the data directories go")
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        print("preparing games ...", file=sys.stderr)
        lines_file = Path(scratch) / "lines.json"
        lines_file.write_text(json.dumps(random_lines(60)))
        data_dir_chain(Path(scratch))  # the service processes of the run share this key
        key_file = str(Path(scratch) / KEY_FILE_NAME)
        for round_number in range(args.repeat):
            for clients in args.clients:
                for durability in (Durability.FAST, Durability.DISK):
                    data = Path(scratch) / f"{durability.value}-{round_number}-{clients}"
                    with EmbeddedRedis(data, durability=durability) as redis:
                        assert redis.pid is not None
                        register_token(redis.url)
                        process, target = start_server("service", redis.url, key_file)
                        try:
                            row = run_load(
                                target, "service", clients, args.seconds, str(lines_file),
                                process.pid, redis.pid,
                            )  # fmt: skip
                        finally:
                            stop(process)
                    row["durability"] = durability.value
                    runs.append(row)
                    print(
                        f"round {round_number + 1}, {clients} clients, {durability.value}: "
                        f"{row['per_second']:.0f}/s, p50 {row['p50_ms']:.2f} ms",
                        file=sys.stderr,
                    )
    print(f"medians of {args.repeat} rounds of {args.seconds:g} s; CPU in us per call")
    print(
        f"{'clients':>7} {'durability':>10} {'calls/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'vs fast':>7} {'p50 x':>6} {'server CPU':>10} {'Redis CPU':>9}"
    )
    for clients in args.clients:
        rows = {
            setting: {
                key: statistics.median(
                    r[key] for r in runs if (r["clients"], r["durability"]) == (clients, setting)
                )
                for key in MEASURES
            }
            for setting in ("fast", "disk")
        }
        for setting, row in rows.items():
            throughput = row["per_second"] / rows["fast"]["per_second"]
            latency = row["p50_ms"] / rows["fast"]["p50_ms"]
            print(
                f"{clients:>7} {setting:>10} {row['per_second']:>9.0f} {row['p50_ms']:>7.2f} "
                f"{row['p99_ms']:>7.2f} {throughput:>7.2f} {latency:>6.2f} "
                f"{row['cpu_us']:>10.0f} {row['redis_cpu_us']:>9.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
