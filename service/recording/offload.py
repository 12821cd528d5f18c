"""Worker processes for the heavy pure reads, spoken to over pipes from the event loop:
pictures (`tablelog.service.recording.pictures`), VerifyGame's check of a whole history, the audit
log, and the replay of an annotation's variation. The loop sends the inputs and awaits the answer,
serving RecordMove meanwhile.

Not `concurrent.futures.ProcessPoolExecutor`: its manager and feeder threads pickle and
unpickle under the GIL beside the loop, and measured in a 200-move replay with pictures
each submit held the loop about 1 ms waiting for the GIL back (benchmarks/readers.py). Here
the loop pickles a request (a view is 1-7 KB: 30-130 us), writes it to an idle worker's
stdin through asyncio's non-blocking transport and awaits the answer on its stdout: no
thread of ours runs beside the loop.

A worker is `python -c "import <this module>; main()"` (this module's own name, so it
follows the package wherever it is installed), started with the parent's `sys.path`, at a
lower CPU priority (`NICENESS`), and runs one call at a time: a frame in (4-byte length,
then a pickle of the function's module and name and its arguments: only functions of this
package that `OFFLOADED` names) and a frame out (the answer, or the error's words). A
worker that dies fails the call it had (the caller gets an internal error) and is replaced
for the next one. The calls running or waiting for a worker are bounded (`queue`): one more
is refused at once with RESOURCE_EXHAUSTED, reason READERS_BUSY, and `retry_after_ms`.
VerifyGame's inputs include the chain's keys: they go down a pipe to a child process of the
server's own, as they are in the server's memory already.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import pickle
import struct
import sys
from collections.abc import Callable
from typing import Any, Final, TypeVar

from google.protobuf.message import Message

from tablelog.replay.registry import all_games, find_game, rules_recorded_under
from tablelog.service.errors import Exhausted

Answer = TypeVar("Answer")
FRAME: Final = struct.Struct(">I")
NICENESS: Final = 10
"""How much lower a worker's CPU priority is than the server's: on a machine short of CPU,
the loop that answers RecordMove runs before a picture is drawn (a reader waits longer,
a recorder does not)."""
MAX_FRAME: Final = 64 << 20
"""Larger than any input or answer (a long game's events are some hundreds of KB)."""
RETRY_AFTER_MS: Final = 200
"""What a refused call tells its caller to wait."""
OFFLOADED: Final = frozenset(
    {
        "tablelog.service.recording.offload.draw",
        "tablelog.service.recording.verification.verify_entries",
        "tablelog.service.recording.reads.audit_entries",
        "tablelog.service.recording.reads.variation_items",
    }
)
"""The functions a worker runs, by module and name: pure, their inputs and answers picklable."""


class WorkerFailed(Exception):
    """A worker's call failed (its words: `answered`), or the worker died during it."""

    def __init__(self, message: str, *, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


def draw(
    game_name: str,
    rules_version: str,
    view: Any,
    last_move: Message | None,
    approximate: str,
    layout: str = "wide",
) -> str:
    """The picture of `view` in `layout`, the game found again by its name and the rules
    version it was recorded under, as the fold finds it."""
    game = rules_recorded_under(find_game(game_name), rules_version)
    return game.picture(view, last_move=last_move, approximate=approximate, layout=layout)


def main() -> None:
    """A worker: run what comes on stdin until it closes."""
    with contextlib.suppress(OSError):  # (not everywhere may a process lower its priority)
        os.nice(NICENESS)
    all_games()  # every game imported before the first call
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = source.read(FRAME.size)
        if len(header) < FRAME.size:
            return
        (size,) = FRAME.unpack(header)
        module, name, arguments = pickle.loads(source.read(size))
        if f"{module}.{name}" not in OFFLOADED:
            data = pickle.dumps((False, f"{module}.{name} is not run by a worker"))
            sink.write(FRAME.pack(len(data)) + data)
            sink.flush()
            continue
        try:
            function = getattr(importlib.import_module(module), name)
            data = pickle.dumps((True, function(*arguments)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # raised again to the caller: the same refusal, or its words
            data = _refusal(exc)
        sink.write(FRAME.pack(len(data)) + data)
        sink.flush()


def _refusal(exc: Exception) -> bytes:
    """`exc` as it can be raised again in the server (a domain refusal: NotFound,
    IllegalMove ...: its class, arguments and attributes, which their own constructors'
    signatures keep plain pickling from restoring), else its words."""
    cls = type(exc)
    try:
        whole = (cls.__module__, cls.__qualname__, exc.args, dict(vars(exc)))
        return pickle.dumps((False, whole), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # (what cannot be pickled is told in words)
        return pickle.dumps((False, f"{cls.__name__}: {exc}"))


def _raised_again(whole: tuple[str, str, tuple[Any, ...], dict[str, Any]]) -> Exception:
    module, name, args, attributes = whole
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return WorkerFailed(f"the worker raised {module}.{name}", answered=True)
    exc: Exception = cls.__new__(cls)
    Exception.__init__(exc, *args)
    vars(exc).update(attributes)
    return exc


class Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> Worker:
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            f"import {__name__} as drawing; drawing.main()",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=environment,
        )
        return cls(process)

    async def call(self, request: tuple[str, str, tuple[Any, ...]]) -> Any:
        process = self.process
        assert process.stdin is not None
        assert process.stdout is not None
        data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            process.stdin.write(FRAME.pack(len(data)) + data)
            await process.stdin.drain()
            (size,) = FRAME.unpack(await process.stdout.readexactly(FRAME.size))
            if size > MAX_FRAME:
                raise WorkerFailed("the worker process answered too much")
            ok, answer = pickle.loads(await process.stdout.readexactly(size))
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise WorkerFailed(f"the worker process ended ({exc})") from None
        if not ok:
            if isinstance(answer, tuple):
                raise _raised_again(answer)
            raise WorkerFailed(answer, answered=True)
        return answer

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()


class WorkerPool:
    """`size` workers, each running one call at a time; a call waits for an idle one, and
    at most `queue` calls run or wait at once."""

    def __init__(self, size: int, queue: int) -> None:
        self.size = size
        self.queue = queue
        self.calls = 0
        """Calls running or waiting for a worker."""
        self._idle: asyncio.Queue[Worker] | None = None
        self._workers: list[Worker] = []
        self._starting: asyncio.Task[None] | None = None

    async def _start(self) -> None:
        idle: asyncio.Queue[Worker] = asyncio.Queue()
        for _ in range(self.size):
            worker = await Worker.start()
            self._workers.append(worker)
            idle.put_nowait(worker)
        self._idle = idle

    async def call(self, function: Callable[..., Answer], *arguments: Any) -> Answer:
        """`function(*arguments)` run by a worker (one of `OFFLOADED`)."""
        if self.calls >= self.queue:
            raise Exhausted(
                "READERS_BUSY",
                f"This server is running its {self.queue} heavy reads at once; try again "
                "in a moment.",
                metadata={"limit": str(self.queue), "retry_after_ms": str(RETRY_AFTER_MS)},
            )
        self.calls += 1
        try:
            answer: Answer = await self._call((function.__module__, function.__name__, arguments))
            return answer
        finally:
            self.calls -= 1

    async def _call(self, request: tuple[str, str, tuple[Any, ...]]) -> Any:
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())
        await asyncio.shield(self._starting)
        assert self._idle is not None
        worker = await self._idle.get()
        sound = False
        try:
            answer = await worker.call(request)
            sound = True
            return answer
        except WorkerFailed as failed:
            sound = failed.answered
            raise
        except Exception:  # the call's own refusal, raised again here
            sound = True
            raise
        finally:
            if not sound:  # it died, or was left part way through a frame: a new one
                worker = await self._replace(worker)
            self._idle.put_nowait(worker)

    async def _replace(self, dead: Worker) -> Worker:
        dead.stop()
        fresh = await Worker.start()
        self._workers[self._workers.index(dead)] = fresh
        return fresh

    async def close(self) -> None:
        if self._starting is not None:
            self._starting.cancel()
            with contextlib.suppress(BaseException):
                await self._starting
        for worker in self._workers:
            worker.stop()
            await worker.process.wait()
        self._workers.clear()
