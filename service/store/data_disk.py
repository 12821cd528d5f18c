"""The embedded Redis's data disk, as the service can see it: whether Redis was lost to it.

Under ``appendfsync always`` (`--durability disk`, the default) Redis does not refuse writes
when its append-only file cannot be written: it cannot take back the change it has applied
in memory, so it logs why and exits ("Can't recover from AOF write error when the AOF fsync
policy is 'always'. Exiting..."). The supervisor starts it again, it loads its file, serves
reads, and the next write ends it again. Nothing Redis answers then names the disk: callers
saw "connection refused". The service that runs the embedded Redis knows its data directory,
so when Redis cannot be reached it looks there: Redis's last words in its log (which a
full disk may keep from being written), and the free space of the directory's file system.

What it finds stands (`failure`) until a write to Redis succeeds again: the health probe
(`tablelog.service.api.health`) tries one, at growing intervals, once the disk has room
again. With an external Redis the service sees neither its log nor its disk: there is no
`DataDisk`, and a Redis that exits on its disk is only unreachable (docs/service.md, Health).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

LOW_SPACE = 1 << 20
"""Bytes free on the data directory's file system under which, when Redis has been lost,
the disk is taken for full: a write the size of an import no longer fits, and what Redis
failed to write was smaller than this."""

LOG_READ_LIMIT = 64 << 10
"""The most of Redis's log read at a time (its end): Redis logs at `warning` here, a few
lines per start, so its last words are within this."""

DISK_CHECK_KEY = "tl:disk-check"
"""Written by the health probe to learn whether Redis writes its disk again (the time of the
last such write, in unix seconds); the embedded Redis's store has the default prefix."""

DISK_WORDS = (
    "Error writing to the AOF file",
    "Short write while writing to the AOF file",
    "Can't recover from AOF write error",
    "Can't persist AOF for fsync error",
    "No space left on device",
)
"""What Redis 6.2 and 7 log when they cannot write or fsync their append-only file
(`flushAppendOnlyFile` in Redis's aof.c), and the words of ENOSPC wherever it was met."""


class DataDisk:
    """The data directory of the embedded Redis (its log is `redis.log` there, as
    `tablelog.service.store.embedded.EmbeddedRedis` writes it). Safe to use from the health
    probe's thread and the server's loop at once."""

    def __init__(self, data_dir: Path, low_space: int = LOW_SPACE) -> None:
        self.data_dir = Path(data_dir)
        self.log_file = self.data_dir / "redis.log"
        self.low_space = low_space
        self.failure: str | None = None
        """Why Redis cannot write its disk, from the last `check` that found it, until
        `cleared`."""
        self._lock = threading.Lock()
        # What Redis logged before this process started is another incident's.
        self._read_to = self._log_size()

    def free_bytes(self) -> int | None:
        """Bytes this process's user may still write on the data directory's file system
        (None when it cannot be told)."""
        try:
            found = os.statvfs(self.data_dir)
        except (OSError, AttributeError):  # gone, or no statvfs (Windows)
            return None
        return found.f_bavail * found.f_frsize

    def has_room(self) -> bool:
        free = self.free_bytes()
        return free is None or free >= self.low_space

    def check(self, *, lost: bool) -> str | None:
        """Why Redis cannot write its data disk, or None: its log's lines since the last
        check name a failed write of its append-only file, or (when `lost`: Redis could
        not be reached) the disk has less than `low_space` free. A finding stands until
        `cleared`."""
        with self._lock:
            words = self._new_disk_words()
            if words is not None:
                self.failure = (
                    f"Redis could not write its append-only file in {self.data_dir} "
                    f"({words}){self._free_words()}"
                )
            elif lost and self.failure is None and not self.has_room():
                self.failure = f"the data disk of {self.data_dir} is full{self._free_words()}"
            return self.failure

    def cleared(self) -> None:
        """A write reached Redis's disk again: what the log said before is past."""
        with self._lock:
            self.failure = None
            self._read_to = self._log_size()

    def _free_words(self) -> str:
        free = self.free_bytes()
        return "" if free is None else f"; {free:,} bytes free on that disk"

    def _log_size(self) -> int:
        try:
            return self.log_file.stat().st_size
        except OSError:
            return 0

    def _new_disk_words(self) -> str | None:
        """The last line Redis logged since the last read that names its disk, without its
        pid and time stamp (None: none)."""
        size = self._log_size()
        if size < self._read_to:  # a new log (removed, or rotated): read it from its start
            self._read_to = 0
        if size == self._read_to:
            return None
        start = max(self._read_to, size - LOG_READ_LIMIT)
        try:
            with self.log_file.open("rb") as log:
                log.seek(start)
                text = log.read(size - start).decode(errors="replace")
        except OSError:
            return None
        self._read_to = size
        found = [line for line in text.splitlines() if any(w in line for w in DISK_WORDS)]
        if not found:
            return None
        # The last line that says the cause (the errno's words) over "... Exiting".
        causes = [line for line in found if not line.endswith("Exiting...")]
        last = (causes or found)[-1]
        # "21017:M 03 Dec 2026 04:00:08.072 # Error writing to the AOF file: No space ..."
        return last.partition(" # ")[2].strip() or last.strip()
