"""The reliability trials of tests/service/test_reliability.py, as many times as asked.

    .venv/bin/python benchmarks/faults.py burst [--trials 25] [--durability disk|fast]
    .venv/bin/python benchmarks/faults.py service [--trials 10]
    .venv/bin/python benchmarks/faults.py outage [--trials 10]
    .venv/bin/python benchmarks/faults.py all [--trials N]

* burst: the service records moves from 3 clients beside other traffic on its embedded
  Redis, which is killed (SIGKILL) while it flushes its append-only file in the background
  (or once a second boundary has passed) and restarted by the supervisor; counts the
  acknowledged moves Redis no longer holds. `--durability fast` shows the window that
  setting opens.
* service: `tablelog serve` killed (SIGKILL) while 2 clients record; counts Redis
  processes left running (orphans) and acknowledged moves lost.
* outage: the embedded Redis frozen (SIGSTOP) for 2.5 s, then an external Redis (Debian's
  redis-server) killed and started again 2.5 s later, each with the same running service;
  reports the seconds to NOT_SERVING, how a RecordMove sent at the fault ended and in how
  long (deadline 3 s), the seconds to SERVING after the repair, and whether every
  acknowledged move was kept.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from tablelog.service.api.server import background_server  # noqa: E402
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis, free_port  # noqa: E402  (path set just above)
from tests.service.helpers import CHAIN  # noqa: E402
from tests.service.support import ServeProcess  # noqa: E402
from tests.support.faults import (  # noqa: E402
    Losses,
    Outage,
    StandaloneRedis,
    burst_then_kill_redis,
    kill_service_during_burst,
    outage_trial,
    splendor_lines,
)


def show_losses(name: str, losses: Losses, seconds: float) -> None:
    print(
        f"{name}: {losses.trials} trials in {seconds:.1f} s, {losses.acknowledged} versions "
        f"acknowledged, {losses.lost} lost, {losses.trials_with_loss} trials with a loss"
        + (f", {losses.during_background_fsync} killed during a background flush")
    )
    for note in losses.notes[:10]:
        print(f"  {note}")


def burst(trials: int, durability: Durability, scratch: Path) -> None:
    lines = splendor_lines(max(8, trials * 3))
    began = time.monotonic()
    with (
        EmbeddedRedis(scratch / "burst", durability=durability, restart_delays=(0.1,)) as redis,
        background_server(redis.url, CHAIN) as serving,
    ):
        losses = burst_then_kill_redis(redis, serving.target, lines, trials)
    show_losses(f"burst ({durability.value})", losses, time.monotonic() - began)


def service(trials: int, scratch: Path) -> None:
    def start_service(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
        started = ServeProcess(data_dir).start()
        assert started.process is not None
        return started.process, started.address

    began = time.monotonic()
    losses, orphans = kill_service_during_burst(
        scratch / "service", splendor_lines(max(8, trials * 2)), trials, start_service
    )
    show_losses("service killed", losses, time.monotonic() - began)
    print(f"  redis-server processes left running: {orphans}")


def outage(trials: int, scratch: Path) -> None:
    lines = splendor_lines(4)
    frozen: list[Outage] = []
    down: list[Outage] = []
    with (
        EmbeddedRedis(scratch / "frozen", restart_delays=(0.1,)) as embedded,
        background_server(embedded.url, CHAIN) as serving,
    ):
        pid = embedded.pid
        assert pid is not None
        for _ in range(trials):
            frozen.append(
                outage_trial(
                    serving.target,
                    lambda: embedded.url,
                    inject=lambda: os.kill(pid, signal.SIGSTOP),
                    repair=lambda: os.kill(pid, signal.SIGCONT),
                    lines=lines,
                )
            )
    external = StandaloneRedis(scratch / "external", free_port()).start()
    try:
        with background_server(external.url, CHAIN) as serving:
            for _ in range(trials):
                down.append(
                    outage_trial(
                        serving.target,
                        lambda: external.url,
                        inject=external.kill,
                        repair=external.start,
                        lines=lines,
                    )
                )
    finally:
        external.stop()
    for name, outages in (("frozen (SIGSTOP)", frozen), ("killed (external)", down)):
        codes = sorted({o.call_code.name if o.call_code else "OK" for o in outages})
        print(
            f"redis {name}: {len(outages)} trials; NOT_SERVING after "
            f"{spread([o.not_serving_after for o in outages])} s; the call ended "
            f"{'/'.join(codes)} after {spread([o.call_seconds for o in outages])} s "
            f"(deadline 3 s); SERVING again after "
            f"{spread([o.serving_again_after for o in outages])} s; acknowledged moves kept "
            f"in {sum(o.acknowledged_kept for o in outages)} of {len(outages)}"
        )


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} (max {max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("trial", choices=("burst", "service", "outage", "all"))
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--durability", choices=[d.value for d in Durability], default=Durability.DISK.value
    )
    args = parser.parse_args()
    configure_logging("critical", json=True)  # the faults are expected: keep the output short
    with tempfile.TemporaryDirectory() as scratch:
        if args.trial in ("burst", "all"):
            burst(args.trials, Durability(args.durability), Path(scratch))
        if args.trial in ("service", "all"):
            service(args.trials, Path(scratch))
        if args.trial in ("outage", "all"):
            outage(args.trials, Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
