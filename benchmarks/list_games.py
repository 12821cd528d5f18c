"""ListGames over 100,000 games: the first, a middle and the last page, unfiltered and with
filters matching many, few and no games, against the floor of one index round trip.

    .venv/bin/python benchmarks/list_games.py [--games 100000] [--page-size 100] [--repeat 200]

One embedded Redis (no fsync) holds `--games` games of one club: each a head hash with a
summary cloned from a real game's (its id, kind, status and creation time changed: listing
reads only the summaries and the index) and that game's creation event as its stream's
only entry (what a rebuild reads the club from), indexed by the store's own
index script (`service.store.game_index`), 500 games a call. The kinds and statuses are
chosen so that the filters match many games (Splendor in progress: about 54%), few (the
ended games: 10) and none (Castello Methoni, medici ended).

Each case is timed `--repeat` times in-process (`Recorder.list_games`: the index read, the
summaries read and parsed) and over gRPC (a `Client` against a server in a thread: the
whole call); a middle or last page starts from the cursor the listing gives at that
depth. The floor, measured in the same run, is one `ZRANGE ... BYLEX REV LIMIT` of a page
of positions by a bare redis-py client, the least any cursor listing can cost; a second
one adds the pipelined HGET of the page's summaries (the data a page answers). Medians and
99th percentiles in milliseconds, and ratios against the floor and the 20 ms target. Last,
the time a rebuild of the whole index from the games takes (`tablelog serve --reindex`).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto")]

from service.embedded import Durability, EmbeddedRedis  # noqa: E402  (after sys.path)
from tablelog.v1 import service_pb2  # noqa: E402  (after sys.path)

TARGET_MS = 20.0
CLUB = "local"
"""The club the games are in: the local owner's, whose token the gRPC client carries."""

IN_PROGRESS: Final = service_pb2.GAME_STATUS_IN_PROGRESS
ENDED: Final = service_pb2.GAME_STATUS_ENDED
ABANDONED: Final = service_pb2.GAME_STATUS_ABANDONED
ANY: Final = service_pb2.GAME_STATUS_UNSPECIFIED


def spread(index: int, rng: random.Random) -> tuple[str, service_pb2.GameStatus.ValueType]:
    """The kind and status of game `index`: 60% Splendor, 40% medici; 10% abandoned; the
    ten ended games are Splendor, spread through the list."""
    kind = "splendor" if rng.random() < 0.6 else "medici"
    if index % 10_000 == 5_000:
        return "splendor", ENDED
    return kind, ABANDONED if rng.random() < 0.1 else IN_PROGRESS


async def populate(redis_url: str, games: int) -> None:
    from service import game_index
    from service.chain import Chain, ChainKey
    from service.recorder import Recorder
    from service.store import RedisEventStore
    from service.store.game_index import INDEX_VERSION
    from tablelog.v1 import events_pb2

    store = RedisEventStore.from_url(redis_url, chain=Chain(ChainKey.of(b"k" * 32)))
    real = await Recorder(store).create_game(
        service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name=n) for n in ("Ann", "Bob", "Cleo")],
            title="A club night",
        ),
        events_pb2.Actor(user="bench", club=CLUB),
    )
    template = service_pb2.GameSummary.FromString(await store.summary(real.head.game_id) or b"")
    # Its creation event, as each clone's first: a rebuild reads the club from it.
    (_sequence, created), *_ = await store.read_raw(real.head.game_id)
    await store.redis.flushdb()  # the real game's keys: only the clones are listed
    rng = random.Random(1)
    start = 1_700_000_000
    batch = 1_000
    for first in range(0, games, batch):
        summaries = []
        for index in range(first, min(first + batch, games)):
            summary = service_pb2.GameSummary()
            summary.CopyFrom(template)
            summary.game_id = f"g{index:07d}"
            summary.game, summary.status = spread(index, rng)
            # A few games a minute, some at the same second (then their ids order them).
            summary.created_time.FromSeconds(start + index * 17 // 2)
            summaries.append(summary)
        async with store.redis.pipeline(transaction=False) as pipe:
            for summary in summaries:
                pipe.hset(
                    store.key(summary.game_id, "head"),
                    mapping={"sequence": 1, "revision": 1, "summary": summary.SerializeToString()},
                )
                pipe.xadd(store.key(summary.game_id, "events"), {"e": created}, id="1-0")
            await pipe.execute()
        await store.index_games(CLUB, [game_index.entry_of(s) for s in summaries])
    await store.mark_game_index_version(INDEX_VERSION)
    await store.close()


def timed(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def time_async(call: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    await call()  # warm
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def time_sync(call: Callable[[], Any], repeat: int) -> list[float]:
    call()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


CASES: list[tuple[str, str, service_pb2.GameStatus.ValueType, str]] = [
    # name, kind, status, depth
    ("every game, first page", "", ANY, "first"),
    ("every game, middle page", "", ANY, "middle"),
    ("every game, last page", "", ANY, "last"),
    ("many: splendor in progress, first", "splendor", IN_PROGRESS, "first"),
    ("many: splendor in progress, middle", "splendor", IN_PROGRESS, "middle"),
    ("many: splendor in progress, last", "splendor", IN_PROGRESS, "last"),
    ("many: abandoned, middle", "", ABANDONED, "middle"),
    ("few: ended (10 games)", "", ENDED, "first"),
    ("none: castello-methoni", "castello-methoni", ANY, "first"),
    ("none: medici ended", "medici", ENDED, "first"),
]


async def cursor_at(store: Any, kind: str, status: int, depth: str, page_size: int) -> str:
    """The page token a client paging from the top would hold at `depth`: the cursor after
    the game the previous page ended with (found in the set that listing reads)."""
    from service import game_index

    if depth == "first":
        return ""
    key = store.game_index.set_key(CLUB, kind, status)
    total = await store.redis.zcard(key)
    skip = total // 2 if depth == "middle" else max(0, total - page_size)
    skip -= skip % page_size
    if skip == 0:
        return ""
    rows = await store.redis.zrange(key, "+", "-", desc=True, bylex=True, offset=skip - 1, num=1)
    return game_index.cursor_token(kind, status, rows[0].decode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    from service.chain import Chain, ChainKey
    from service.logs import configure_logging
    from service.recorder import Recorder
    from service.server import BackgroundServer
    from service.store import RedisEventStore
    from service.store.game_index import game_of
    from tablelog_client import Client

    configure_logging("warning", json=True)
    with (
        tempfile.TemporaryDirectory() as scratch,
        EmbeddedRedis(Path(scratch), durability=Durability.FAST) as redis,
    ):
        started = time.perf_counter()
        asyncio.run(populate(redis.url, args.games))
        print(f"{args.games:,} games stored and indexed in {time.perf_counter() - started:.1f} s")
        chain = Chain(ChainKey.of(b"k" * 32))
        rows: list[tuple[str, float, float, int]] = []

        async def in_process() -> tuple[dict[str, str], list[float], list[float]]:
            store = RedisEventStore.from_url(redis.url, chain=chain)
            recorder = Recorder(store)
            tokens: dict[str, str] = {}
            key = store.game_index.set_key(CLUB)
            bare = store.redis

            async def floor() -> None:
                await bare.zrange(
                    key, "+", "-", desc=True, bylex=True, offset=0, num=args.page_size
                )

            async def floor_with_summaries() -> None:
                positions: list[Any] = await bare.zrange(
                    key, "+", "-", desc=True, bylex=True, offset=0, num=args.page_size
                )
                async with bare.pipeline(transaction=False) as pipe:
                    for position in positions:
                        pipe.hget(store.key(game_of(position.decode()), "head"), "summary")
                    await pipe.execute()

            floor_samples = await time_async(floor, args.repeat)
            data_samples = await time_async(floor_with_summaries, args.repeat)
            for name, kind, status, depth in CASES:
                token = await cursor_at(store, kind, status, depth, args.page_size)
                tokens[name] = token
                found: list[int] = []

                async def page(
                    kind: str = kind,
                    status: int = status,
                    token: str = token,
                    found: list[int] = found,
                ) -> None:
                    games, _next = await recorder.list_games(
                        kind, status, args.page_size, token, CLUB
                    )
                    found[:] = [len(games)]

                samples = await time_async(page, args.repeat)
                median, p99 = timed(samples)
                rows.append((f"{name} (in-process)", median, p99, found[0]))
            await store.close()
            return tokens, floor_samples, data_samples

        tokens, floor_samples, data_samples = asyncio.run(in_process())
        floor_ms, floor_p99 = timed(floor_samples)
        data_ms, data_p99 = timed(data_samples)

        server = BackgroundServer(redis.url, chain=chain).start()
        try:
            with Client(server.target, token=server.owner_token, timeout=30) as client:
                for name, kind, status, _depth in CASES:
                    request = service_pb2.ListGamesRequest(
                        game=kind, status=status, page_size=args.page_size, page_token=tokens[name]
                    )
                    answered: list[int] = []

                    def call(
                        request: service_pb2.ListGamesRequest = request,
                        answered: list[int] = answered,
                    ) -> None:
                        answered[:] = [len(client.stub.ListGames(request).games)]

                    median, p99 = timed(time_sync(call, args.repeat))
                    rows.append((f"{name} (gRPC)", median, p99, answered[0]))
        finally:
            server.stop()

        async def rebuild() -> tuple[float, int]:
            from service import game_index

            store = RedisEventStore.from_url(redis.url, chain=chain)
            before = await store.redis.zcard(store.game_index.set_key(CLUB))
            started = time.perf_counter()
            indexed = await game_index.rebuild_game_index(store, from_scratch=True)
            spent = time.perf_counter() - started
            assert await store.redis.zcard(store.game_index.set_key(CLUB)) == before == indexed
            await store.close()
            return spent, indexed

        rebuild_seconds, rebuilt = asyncio.run(rebuild())

    print(
        f"floor, one ZRANGE of {args.page_size} positions: median {floor_ms:.2f} ms, "
        f"p99 {floor_p99:.2f} ms"
    )
    print(
        f"floor with the page's summaries (ZRANGE + pipelined HGET): median {data_ms:.2f} ms, "
        f"p99 {data_p99:.2f} ms"
    )
    print(
        f"{'case':<50} {'games':>5} {'median':>8} {'p99':>8} {'x floor':>8} "
        f"{'x data':>7} {'med/20ms':>8} {'p99/20ms':>8}"
    )
    for name, median, p99, count in rows:
        print(
            f"{name:<50} {count:>5} {median:>6.2f}ms {p99:>6.2f}ms {median / floor_ms:>8.1f} "
            f"{median / data_ms:>7.2f} {median / TARGET_MS:>8.2f} {p99 / TARGET_MS:>8.2f}"
        )
    print(
        f"rebuild from scratch (tablelog serve --reindex): {rebuilt:,} games in "
        f"{rebuild_seconds:.1f} s"
    )
    worst_median = max(median for _name, median, _p99, _count in rows)
    worst_p99 = max(p99 for _name, _median, p99, _count in rows)
    print(
        f"worst median {worst_median:.2f} ms ({worst_median / TARGET_MS:.2f} of the "
        f"{TARGET_MS:.0f} ms target), worst p99 {worst_p99:.2f} ms "
        f"({worst_p99 / TARGET_MS:.2f}; the data floor's own p99, {data_p99:.2f} ms, says "
        "how much of it is the machine)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
