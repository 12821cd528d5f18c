"""Running the real `tablelog` command in tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from service.embedded import free_port


def tablelog_command() -> list[str]:
    """The installed console script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "tablelog"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("tablelog")
    if found:
        return [found]
    return [sys.executable, "-m", "tablelog_client.cli"]


class ServeProcess:
    """`tablelog serve` as a child process on a free port with its own data directory."""

    def __init__(self, data_dir: Path, *extra: str, stderr: IO[str] | None = None) -> None:
        self.data_dir = data_dir
        self.stderr = stderr
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra = extra
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []

    def start(self, timeout: float = 30) -> ServeProcess:
        env = dict(os.environ, TABLELOG_REDIS_URL="")
        self.process = subprocess.Popen(
            [*tablelog_command(), "serve", "--address", self.address,
             "--data-dir", str(self.data_dir), *self.extra],
            stdout=subprocess.PIPE,
            stderr=self.stderr or subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )  # fmt: skip
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                self.stop()
                raise RuntimeError(f"tablelog serve exited: {''.join(self.output)}")
            self.output.append(line)
            if "listening on" in line:
                return self
        self.stop()
        raise RuntimeError("tablelog serve did not start")

    @property
    def token(self) -> str:
        """The local owner's token the server wrote to its data directory."""
        return (self.data_dir / "owner.token").read_text(encoding="utf-8").strip()

    def read_lines(self, count: int) -> list[str]:
        assert self.process is not None
        assert self.process.stdout is not None
        lines = [self.process.stdout.readline() for _ in range(count)]
        self.output += lines
        return lines

    def stop(self) -> int:
        if self.process is None:
            return 0
        self.process.terminate()
        code = self.process.wait(30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None
        return code
