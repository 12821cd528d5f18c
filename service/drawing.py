"""Processes that draw pictures, spoken to over pipes from the event loop.

Not `concurrent.futures.ProcessPoolExecutor`: its manager and feeder threads pickle and
unpickle under the GIL beside the loop, and measured in a 200-move replay with pictures
each submit held the loop about 1 ms waiting for the GIL back (benchmarks/readers.py). Here
the loop pickles a request (the view, 1-7 KB: 30-130 us), writes it to an idle worker's
stdin through asyncio's non-blocking transport and awaits the answer on its stdout: no
thread of ours runs beside the loop.

A worker is `python -c "import <this module>; main()"` (this module's own name, so it
follows the package wherever it is installed), started with the parent's `sys.path`, and
draws one picture at a time: a frame in (4-byte length, then a pickle of the game's name,
its rules version, the view, the last move and the approximate notes) and a frame out
(the SVG text, or the error's words). It runs at a lower CPU priority (`NICENESS`). A
worker that dies fails the draw it had (the caller
gets an internal error, nothing is cached) and is replaced for the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import struct
import sys
from typing import Any, Final

from google.protobuf.message import Message

from replay.registry import all_games, find_game, rules_recorded_under

FRAME: Final = struct.Struct(">I")
NICENESS: Final = 10
"""How much lower a worker's CPU priority is than the server's: on a machine short of CPU,
the loop that answers RecordMove runs before a picture is drawn (a reader waits longer,
a recorder does not)."""
MAX_FRAME: Final = 64 << 20
"""Larger than any view or picture (a picture is some tens of KB)."""


class DrawingFailed(Exception):
    """A worker could not draw (its words: `answered`), or died while drawing."""

    def __init__(self, message: str, *, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


def draw(
    game_name: str, rules_version: str, view: Any, last_move: Message | None, approximate: str
) -> str:
    """The picture of `view`, the game found again by its name and the rules version it was
    recorded under, as the fold finds it."""
    game = rules_recorded_under(find_game(game_name), rules_version)
    return game.picture(view, last_move=last_move, approximate=approximate)


def main() -> None:
    """A worker: draw what comes on stdin until it closes."""
    with contextlib.suppress(OSError):  # (not everywhere may a process lower its priority)
        os.nice(NICENESS)
    all_games()  # every game imported before the first picture
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = source.read(FRAME.size)
        if len(header) < FRAME.size:
            return
        (size,) = FRAME.unpack(header)
        arguments = pickle.loads(source.read(size))
        try:
            answer: tuple[bool, str] = (True, draw(*arguments))
        except Exception as exc:  # told to the caller, who raises it
            answer = (False, f"{type(exc).__name__}: {exc}")
        data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(FRAME.pack(len(data)) + data)
        sink.flush()


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

    async def draw(self, arguments: tuple[Any, ...]) -> str:
        process = self.process
        assert process.stdin is not None
        assert process.stdout is not None
        data = pickle.dumps(arguments, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            process.stdin.write(FRAME.pack(len(data)) + data)
            await process.stdin.drain()
            (size,) = FRAME.unpack(await process.stdout.readexactly(FRAME.size))
            if size > MAX_FRAME:
                raise DrawingFailed("the drawing process answered too much")
            ok, text = pickle.loads(await process.stdout.readexactly(size))
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise DrawingFailed(f"the drawing process ended ({exc})") from None
        if not ok:
            raise DrawingFailed(text, answered=True)
        assert isinstance(text, str)
        return text

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()


class DrawingPool:
    """`size` workers, each drawing one picture at a time; a draw waits for an idle one."""

    def __init__(self, size: int) -> None:
        self.size = size
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

    async def draw(self, *arguments: Any) -> str:
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())
        await asyncio.shield(self._starting)
        assert self._idle is not None
        worker = await self._idle.get()
        sound = False
        try:
            answer = await worker.draw(arguments)
            sound = True
            return answer
        except DrawingFailed as failed:
            sound = failed.answered
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
