"""Running the real `tablelog` command in tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tablelog.service.store.embedded import free_port


def tablelog_command() -> list[str]:
    """The installed console script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "tablelog"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("tablelog")
    if found:
        return [found]
    return [sys.executable, "-m", "tablelog_client.cli"]


OUT_OF_REACH_LIMITS = {
    "TABLELOG_CHANGES_PER_SECOND": "1000000",
    "TABLELOG_CHANGE_BURST": "1000000",
    "TABLELOG_READS_PER_SECOND": "1000000",
    "TABLELOG_READ_BURST": "1000000",
}
"""The rate per caller of a `tablelog serve` under test: every caller of a test is the one
machine, and these tests record as fast as they can (the limits are tested on servers
of their own, tests/service/test_caller_limits.py)."""


class ServeProcess:
    """`tablelog serve` as a child process on a free port with its own data directory
    (its rate per caller out of reach: `OUT_OF_REACH_LIMITS`)."""

    def __init__(
        self, data_dir: Path, *extra: str, stderr: IO[str] | None = None, http: bool = False
    ) -> None:
        """With `http`, the HTTP port too, on a free port (`http_url`); without, none."""
        self.data_dir = data_dir
        self.stderr = stderr
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.http_address = f"127.0.0.1:{free_port()}" if http else "off"
        self.extra = extra
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []

    def start(self, timeout: float = 30) -> ServeProcess:
        env = dict(os.environ, TABLELOG_REDIS_URL="", **OUT_OF_REACH_LIMITS)
        self.process = subprocess.Popen(
            [*tablelog_command(), "serve", "--address", self.address,
             "--http-address", self.http_address, "--data-dir", str(self.data_dir),
             *self.extra],
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
    def http_url(self) -> str:
        """The HTTP port's base URL, without the final slash."""
        if self.http_address == "off":
            raise RuntimeError("started without the HTTP port (http=True)")
        return f"http://{self.http_address}"

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


@dataclass(frozen=True)
class Certificates:
    """A CA and a server certificate it signed, for localhost and 127.0.0.1 (PEM files)."""

    ca: Path
    certificate: Path
    key: Path


def make_certificates(directory: Path, name: str = "tablelog") -> Certificates:
    """A fresh CA and server certificate made with `openssl` (valid for a day)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / f"{name}-ca.pem", directory / f"{name}-ca.key"
    request, certificate, key = (
        directory / f"{name}.csr",
        directory / f"{name}.pem",
        directory / f"{name}.key",
    )
    extensions = directory / f"{name}.ext"
    extensions.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for command in (
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", ca_key, "-out", ca, "-days", "1", "-subj", f"/CN={name} test CA"],
        ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", request, "-subj", "/CN=localhost"],
        ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", certificate, "-days", "1", "-extfile", extensions],
    ):  # fmt: skip
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True, timeout=30)
    return Certificates(ca, certificate, key)


def run_serve(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`tablelog serve` run to its end (for a start refused at once)."""
    return subprocess.run(
        [*tablelog_command(), "serve", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, TABLELOG_REDIS_URL=""),
        stdin=subprocess.DEVNULL,
    )
