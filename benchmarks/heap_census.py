"""What a night's server holds in its Python heap, and what of it is garbage waiting in
reference cycles, at moments of a club night (issue 29: the long night's slow growth was
such garbage, which the server's rare full collections left for tens of minutes).

    .venv/bin/python benchmarks/club_night.py --long --tables 20 --watchers 10 \\
        --step-seconds 3 --backends standalone --census /tmp/census --census-every 300

runs each `tablelog serve` through this file, which takes a census when the process gets
SIGUSR2 (the night sends it every `--census-every` seconds) and writes it to
PREFIX.<pid>.<unix seconds>:

* the objects the cyclic collector tracks, by type: those made since start-up (the server
  freezes what exists then, `tune_gc`), so a type that grows from one census to the next
  is what the night accumulates;
* the watch tails (found through their tasks) and the head cache;
* pymalloc's arenas and glibc malloc's own totals (in use, and held free);
* the collector's counts, then a full collection's garbage by type, with the coroutines,
  frames and exceptions in it named.

The full collection frees that garbage: a census changes the night it measures, so take
few, and none in a night whose resident size is the figure."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import gc
import os
import runpy
import signal
import sys
import time
from typing import Any


def take(path: str) -> None:
    """Write the census to `path` (and pymalloc's own statistics to `path`.malloc)."""
    lines: list[str] = []
    descriptor = os.open(path + ".malloc", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    saved = os.dup(2)
    os.dup2(descriptor, 2)  # (sys._debugmallocstats writes to the C stderr)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(descriptor)
    lines += _malloc_totals()
    tracked = gc.get_objects()
    lines.append(f"tracked objects made since start-up: {len(tracked)}")
    counted = collections.Counter(type(o).__name__ for o in tracked)
    lines += [f"  {name} {count}" for name, count in counted.most_common(40)]
    del tracked, counted
    lines += _holders()
    lines.append(f"collector: {gc.get_stats()}, counts {gc.get_count()}")
    started = time.perf_counter()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        found = gc.collect()
    finally:
        gc.set_debug(0)
    garbage = list(gc.garbage)
    gc.garbage.clear()
    lines.append(f"a full collection: {found} unreachable, {time.perf_counter() - started:.3f} s")
    lines.append("garbage by type: " + _most(type(o).__name__ for o in garbage))
    lines.append(
        "its coroutines: "
        + _most(
            getattr(o, "__qualname__", "?")
            for o in garbage
            if asyncio.iscoroutine(o) or type(o).__name__ == "async_generator"
        )
    )
    lines.append(
        "its frames: "
        + _most(
            f"{o.f_code.co_name}@{o.f_code.co_filename.rsplit('/', 1)[-1]}"
            for o in garbage
            if type(o).__name__ == "frame"
        )
    )
    lines.append(
        "its exceptions: "
        + _most(type(o).__name__ for o in garbage if isinstance(o, BaseException))
    )
    del garbage
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def _most(names: Any, top: int = 25) -> str:
    return ", ".join(f"{n} {c}" for n, c in collections.Counter(names).most_common(top))


def _holders() -> list[str]:
    """The watch hub (through a tail's task) and the head cache, with what they hold."""
    with contextlib.suppress(RuntimeError):
        for task in asyncio.all_tasks(asyncio.get_running_loop()):
            frame = task.get_coro().cr_frame  # type: ignore[union-attr]
            if not task.get_name().startswith("watch-tail-") or frame is None:
                continue
            hub = frame.f_locals["self"].hub
            updates = renders = rendered = queued = 0
            for tail in hub._tails.values():
                updates += len(tail.history) + len(tail.recent)
                for update in [*tail.history, *tail.recent]:
                    renders += len(update._rendered)
                    rendered += sum(len(b) for b in update._rendered.values())
                queued += sum(len(w._queue) + len(w._backlog) for w in tail.watchers)
            cache = hub.heads.cache
            return [
                f"watch hub: {len(hub._tails)} tails, {len(hub._tasks)} tail tasks, "
                f"{hub._watchers} watchers, {len(hub._idle_readers)} idle readers; "
                f"{updates} updates held, {renders} renders ({rendered >> 20} MiB), "
                f"{queued} queued",
                f"head cache: {len(cache._entries)} heads in play, {len(cache._finished)} "
                f"finished, {cache.bytes >> 20} MiB by its count",
            ]
    return ["watch hub: none found (no game watched)"]


def _malloc_totals() -> list[str]:
    """glibc malloc's totals (`malloc_info`): what its heaps hold, and how much is free."""
    try:
        libc = ctypes.CDLL(None)
        libc.open_memstream.restype = ctypes.c_void_p
        buffer, size = ctypes.c_char_p(), ctypes.c_size_t()
        stream = libc.open_memstream(ctypes.byref(buffer), ctypes.byref(size))
        libc.malloc_info(0, ctypes.c_void_p(stream))
        libc.fclose(ctypes.c_void_p(stream))
        text = (buffer.value or b"").decode()
        libc.free(buffer)
    except (OSError, AttributeError):
        return ["malloc: not glibc"]
    tail = text[text.rfind("</heap>") :]  # the totals over every arena
    values = {}
    for kind in ("fast", "rest", "mmap"):
        marker = f'<total type="{kind}" count="'
        start = tail.find(marker)
        if start >= 0:
            values[kind] = int(tail[start:].split('size="')[1].split('"')[0])
    marker = '<system type="current" size="'
    start = tail.find(marker)
    current = int(tail[start + len(marker) :].split('"')[0]) if start >= 0 else 0
    free = values.get("fast", 0) + values.get("rest", 0)
    return [
        f"malloc: heaps {current >> 20} MiB, of it free {free >> 20} MiB; "
        f"mmapped {values.get('mmap', 0) >> 20} MiB"
    ]


def install(prefix: str) -> None:
    def on_signal(_signum: int, _frame: Any) -> None:
        take(f"{prefix}.{os.getpid()}.{int(time.time())}")

    signal.signal(signal.SIGUSR2, on_signal)


def main() -> None:
    """heap_census.py PREFIX ARGS...: `tablelog ARGS...` (a server) with the census on."""
    install(sys.argv[1])
    sys.argv = ["tablelog", *sys.argv[2:]]
    runpy.run_module("tablelog_client.cli", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
