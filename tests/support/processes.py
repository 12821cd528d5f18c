"""Stopping the child processes tests start (`tablelog serve`, redis-server): asked first,
killed only when they do not stop in time, so no test leaves one running."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any


def stop_processes(
    processes: Sequence[subprocess.Popen[Any]],
    stop_signal: int = signal.SIGTERM,
    grace: float = 30,
    after_kill: float = 10,
) -> None:
    """Sends `stop_signal` to every process still running, then waits for each: one that
    has not exited within `grace` seconds is killed (and waited for `after_kill` more).
    All are signalled before any is waited for, so they stop in parallel."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(stop_signal)
    for process in processes:
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(after_kill)


def stop_process(
    process: subprocess.Popen[Any],
    stop_signal: int = signal.SIGTERM,
    grace: float = 30,
    after_kill: float = 10,
) -> None:
    """`stop_processes` for one process."""
    stop_processes([process], stop_signal, grace, after_kill)


@contextmanager
def environment_set(values: Mapping[str, str]) -> Iterator[None]:
    """`os.environ` with `values` set until the block ends; then each variable as it was
    (unset again if it was unset)."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
