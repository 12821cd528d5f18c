"""GetState at a past revision of long games, through checkpoints, against a fresh fold.

    .venv/bin/python benchmarks/long_games.py                    # 100 / 1,000 / 10,000 events
    .venv/bin/python benchmarks/long_games.py --lengths 100 1000 --repeat 5
    .venv/bin/python benchmarks/long_games.py --intervals 50 100 200 400   # choose the interval

Everything runs on one embedded Redis (the redis-server `tablelog serve` runs) in this
process. Each game is a seeded random history of `--game` (`tests.support.histories`:
moves, with undos, redos, amendments and annotations among them, as a long-lived table
game gathers them; at the game's end a move is taken back and play goes on, so the moves
in effect stay near a whole game's), appended to the store as the service appends
(sealed, chained).

For each length and each revision (2, the middle, the last before the head; with the moves
in effect there, which a snapshot's size follows) it times, best of `--repeat`, in wall
time and in this process's CPU time (Redis runs in its own; on a loaded machine the CPU
time is the steadier figure):

* GetState's work through the service: `Recorder.position_at` (the cached head, then the
  nearest checkpoint and the events after it, verified) and the full-view snapshot the
  answer carries (`tablelog.service.recording.views.snapshot`);
* the floor, in the same run: the same answer made as it was before checkpoints: the whole
  stream read and verified (`Heads.verified_events`), folded up to the revision, the same
  snapshot.

It prints both, their ratio, and the target (issue 14): at most 20 ms at any revision of a
10,000-event game, the same at any length. Then a cold head (a watch or a read of a game
no longer cached: `Heads.load` after `forget`) from the latest checkpoint against a full
rebuild; RecordMove's median with checkpoints written every `--interval` events against
none (they are written after the append is answered); and, with `--intervals`, what each
interval costs a read in the middle of the longest game and in Redis memory.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay.core import FULL, TERMINAL  # noqa: E402
from tablelog.service.recording.checkpoints import DEFAULT_INTERVAL  # noqa: E402
from tablelog.service.recording.heads import Heads  # noqa: E402
from tablelog.service.recording.recorder import Recorder  # noqa: E402
from tablelog.service.recording.views import snapshot  # noqa: E402
from tablelog.service.store import RedisEventStore  # noqa: E402
from tablelog.service.store.chain import Chain, ChainKey  # noqa: E402
from tablelog.service.store.embedded import EmbeddedRedis  # noqa: E402
from tablelog.v1 import events_pb2, service_pb2  # noqa: E402
from tests.support.histories import players_of, random_history  # noqa: E402
from tests.support.play import choose  # noqa: E402

TARGET_MS = 20.0


def long_history(game: str, length: int) -> list[events_pb2.Event]:
    """A long-lived game: moves, a tenth of them taken back (some redone), a few notes and
    amendments; at its end a move is taken back and play goes on, so the moves in effect
    stay near a whole game's (the largest positions to checkpoint)."""
    return random_history(game, length, seed=length, undo_weight=0.1, amend_weight=0.005)


async def best_ms(call: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """The best wall time of `repeat` calls, in ms."""
    return (await best_wall_cpu(call, repeat))[0]


async def best_wall_cpu(call: Callable[[], Awaitable[Any]], repeat: int) -> tuple[float, float]:
    """The best wall time and the best CPU time of this process (Redis runs in its own:
    this is the service's share, steadier than wall time on a loaded machine) of `repeat`
    calls, in ms."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        await call()
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return wall * 1000, cpu * 1000


async def store_game(store: RedisEventStore, events: Sequence[events_pb2.Event]) -> str:
    game_id = "bench" + secrets.token_hex(6)
    # The creation names the game it creates (a history verifies only under its own id).
    first = events_pb2.Event()
    first.CopyFrom(events[0])
    first.game_created.game_id = game_id
    events = [first, *events[1:]]
    sequence, last_hash = 0, b""
    for start in range(0, len(events), 200):
        batch = events[start : start + 200]
        result = await store.append(
            game_id, batch, expected_sequence=sequence, prev_hash=last_hash, expected_revision=None
        )
        sequence, last_hash = batch[-1].sequence, result.events[-1].hash
    return game_id


async def through_checkpoints(recorder: Recorder, game_id: str, revision: int) -> None:
    """GetState's work: the position at `revision`, and the full view's snapshot of it."""
    snapshot(await recorder.position_at(game_id, revision), FULL)


async def fresh_fold(heads: Heads, game_id: str, revision: int) -> None:
    """The same answer as before checkpoints: the whole stream read and verified, folded
    up to `revision`, the same snapshot."""
    events = await heads.verified_events(game_id)
    snapshot(folding.fold(events, until_revision=revision), FULL)


async def cold_head(recorder: Recorder, game_id: str) -> None:
    """A head not cached: what opening a watch of it, or any read of it, loads first."""
    recorder.forget(game_id)
    await recorder.load(game_id)


async def warm(recorder: Recorder, game_id: str) -> int:
    """The game's head cached and its checkpoints written (by a read past all of them, as
    the first read of a game does); the head's revision."""
    head = await recorder.load(game_id)
    await recorder.position_at(game_id, head.revision - 1)
    await recorder.settle()
    return head.revision


async def lengths_table(
    store: RedisEventStore, game: str, lengths: Sequence[int], interval: int, repeat: int
) -> list[tuple[int, int, float]]:
    recorder = Recorder(store, checkpoint_interval=interval)
    rows: list[tuple[int, int, float]] = []
    print(
        f"GetState at a past revision ({game}, checkpoint every {interval} events), "
        f"best of {repeat}; target <= {TARGET_MS:.0f} ms at any length"
    )
    print(
        f"{'events':>7} {'revision':>9} {'moves':>6} {'checkpoints ms':>15} {'(cpu)':>7} "
        f"{'fresh fold ms':>14} {'(cpu)':>7} {'fresh/checkpoints':>18}"
    )
    for length in lengths:
        events = long_history(game, length)
        game_id = await store_game(store, events)
        head_revision = await warm(recorder, game_id)
        heads = recorder.heads
        for revision in sorted({2, head_revision // 2, head_revision - 1}):
            fast, fast_cpu = await best_wall_cpu(
                partial(through_checkpoints, recorder, game_id, revision), repeat
            )
            floor, floor_cpu = await best_wall_cpu(
                partial(fresh_fold, heads, game_id, revision), repeat
            )
            rows.append((length, revision, fast))
            moves = (await recorder.position_at(game_id, revision)).move_count
            print(
                f"{len(events):7d} {revision:9d} {moves:6d} {fast:15.2f} {fast_cpu:7.2f} "
                f"{floor:14.2f} {floor_cpu:7.2f} {floor / fast:17.1f}x"
            )
        cold = await best_ms(partial(cold_head, recorder, game_id), repeat)
        full = await best_ms(partial(recorder.rebuild, game_id), repeat)
        print(
            f"{'':7} cold head (opening a watch, a game not cached): from the latest checkpoint "
            f"{cold:.2f} ms, full rebuild {full:.2f} ms ({full / cold:.1f}x)"
        )
    worst = max(ms for _, _, ms in rows)
    verdict = "met" if worst <= TARGET_MS else "NOT MET"
    per_length = ", ".join(
        f"{length:,} events {max(ms for n, _, ms in rows if n == length):.2f} ms"
        for length in lengths
    )
    print(
        f"target <= {TARGET_MS:.0f} ms at any revision: {verdict} (worst {worst:.2f} ms); "
        f"worst revision by length: {per_length} (a read costs what the position holds, the "
        "moves in effect, and at most one interval of events, not the stream's length)"
    )
    return rows


async def record_moves(recorder: Recorder, game: str, moves: int, seed: int) -> list[float]:
    """RecordMove's wall time for `moves` random moves of new games (one after another)."""
    actor = events_pb2.Actor(user="bench")
    rng = random.Random(seed)
    times: list[float] = []
    while len(times) < moves:
        players = [events_pb2.Player(name=f"p{i}") for i in range(players_of(game))]
        created = await recorder.create_game(
            service_pb2.CreateGameRequest(game=game, players=players), actor
        )
        head = created.head
        while len(times) < moves and head.position.to_move() != TERMINAL:
            position = head.position
            inner = choose(position.game, position.state, rng)
            started = time.perf_counter()
            outcome = await recorder.record_move(
                head.game_id,
                move=position.table.wrap(inner),
                notation=None,
                seat=None,
                expected_version=head.revision,
                request_id="",
                actor=actor,
            )
            times.append(time.perf_counter() - started)
            head = outcome.head
        await recorder.settle()
    return times


async def record_move_table(store: RedisEventStore, game: str, interval: int) -> None:
    moves = 600
    quiet = await record_moves(Recorder(store, checkpoint_interval=10**9), game, moves, 1)
    busy = await record_moves(Recorder(store, checkpoint_interval=interval), game, moves, 1)
    quiet_ms = statistics.median(quiet) * 1000
    busy_ms = statistics.median(busy) * 1000
    print(
        f"RecordMove median over {moves} moves: checkpoint every {interval} events "
        f"{busy_ms:.3f} ms, never {quiet_ms:.3f} ms ({busy_ms / quiet_ms:.2f}x)"
    )


async def intervals_table(
    store: RedisEventStore, game: str, length: int, intervals: Sequence[int], repeat: int
) -> None:
    events = long_history(game, length)
    print(f"checkpoint interval, {len(events)} events of {game}: a read in the middle, memory")
    print(
        f"{'interval':>9} {'middle ms':>10} {'(cpu)':>7} {'last ms':>8} {'(cpu)':>7} "
        f"{'checkpoint KB':>14} {'of stream':>10}"
    )
    for interval in intervals:
        recorder = Recorder(store, checkpoint_interval=interval)
        game_id = await store_game(store, events)
        head_revision = await warm(recorder, game_id)
        times: list[float] = []
        for revision in (head_revision // 2, head_revision - 1):
            read = partial(through_checkpoints, recorder, game_id, revision)
            times.extend(await best_wall_cpu(read, repeat))
        stored = await store.checkpoints.every(game_id)
        checkpoint_bytes = sum(len(data) for _, data in stored)
        stream = await store.read_raw(game_id)
        stream_bytes = sum(len(data) for _, data in stream)
        per_checkpoint = checkpoint_bytes / max(1, len(stored)) / 1024
        print(
            f"{interval:9d} {times[0]:10.2f} {times[1]:7.2f} {times[2]:8.2f} {times[3]:7.2f} "
            f"{per_checkpoint:14.1f} {checkpoint_bytes / stream_bytes:9.2f}x"
        )


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as data:
        redis = EmbeddedRedis(Path(data))
        redis.start()
        try:
            chain = Chain(ChainKey.of(secrets.token_bytes(32)))
            store = RedisEventStore.from_url(redis.url, chain=chain)
            try:
                if args.intervals:
                    await intervals_table(
                        store, args.game, max(args.lengths), args.intervals, args.repeat
                    )
                    return
                await lengths_table(store, args.game, args.lengths, args.interval, args.repeat)
                await record_move_table(store, args.game, args.interval)
            finally:
                await store.close()
        finally:
            redis.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="splendor")
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--interval", type=int, default=DEFAULT_INTERVAL)
    parser.add_argument("--intervals", type=int, nargs="+", help="compare these intervals")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs; the best counts")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
