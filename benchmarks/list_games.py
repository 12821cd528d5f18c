"""ListGames over 100,000 games: the first, a middle and the last page, unfiltered and with
filters (game, status, player, and the player with the others) matching many, few and no
games, against the floor of one index round trip; and what the player sets cost in memory.

    .venv/bin/python benchmarks/list_games.py [--games 100000] [--page-size 100] [--repeat 200]

One embedded Redis (no fsync) holds `--games` games of one club: each a head hash with a
summary cloned from a real game's (its id, kind, status and creation time changed: listing
reads only the summaries and the index) and that game's creation event as its stream's
only entry (what a rebuild reads the club from), indexed by the store's own
index script (`tablelog.service.store.game_index`), 500 games a call. The kinds and statuses are
chosen so that the filters match many games (Splendor in progress: about 54%), few (the
ended games: 10) and none (Castello Methoni, medici ended). Each game has four seats: Ann in
half of the games (many), Rita in ten (few), the others drawn from 200 regulars (about 1,500
games each); nobody is called Nobody (none). The player with the other filters: Ann's
Splendor games in progress (many), Ann's ended games (few: about 5), Rita's medici games
ended (none).

Each case is timed `--repeat` times in-process (`Recorder.list_games`: the index read, the
summaries read and parsed) and over gRPC (a `Client` against a server in a thread: the
whole call); a middle or last page starts from the cursor the listing gives at that
depth. The floor, measured in the same run, is one `ZRANGE ... BYLEX REV LIMIT` of a page
of positions by a bare redis-py client, the least any cursor listing can cost; a second
one adds the pipelined HGET of the page's summaries (the data a page answers). Medians and
99th percentiles in milliseconds, and ratios against the floor and the 20 ms target. Then
the memory the index takes (MEMORY USAGE of every key: the player sets apart from the rest),
and last the time a rebuild of the whole index from the games takes (`tablelog serve
--reindex`).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
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

from tablelog.service.store.embedded import Durability, EmbeddedRedis  # noqa: E402  (after sys.path)
from tablelog.v1 import events_pb2, service_pb2  # noqa: E402  (after sys.path)

TARGET_MS = 20.0
CLUB = "local"
"""The club the games are in: the local owner's, whose token the gRPC client carries."""

IN_PROGRESS: Final = service_pb2.GAME_STATUS_IN_PROGRESS
ENDED: Final = service_pb2.GAME_STATUS_ENDED
ABANDONED: Final = service_pb2.GAME_STATUS_ABANDONED
ANY: Final = service_pb2.GAME_STATUS_UNSPECIFIED


REGULARS = [f"Regular {n:03d}" for n in range(200)]
FEW_PLAYER_EVERY = 10_000
"""Rita sits at one game in this many (10 of 100,000), spread through the list."""


def seats(index: int, rng: random.Random) -> list[str]:
    """The four players of game `index` (see the module)."""
    names = rng.sample(REGULARS, 4)
    if rng.random() < 0.5:
        names[0] = "Ann"
    if index % FEW_PLAYER_EVERY == 7_000:
        names[1] = "Rita"
    return names


def spread(index: int, rng: random.Random) -> tuple[str, service_pb2.GameStatus.ValueType]:
    """The kind and status of game `index`: 60% Splendor, 40% medici; 10% abandoned; the
    ten ended games are Splendor, spread through the list."""
    kind = "splendor" if rng.random() < 0.6 else "medici"
    if index % 10_000 == 5_000:
        return "splendor", ENDED
    return kind, ABANDONED if rng.random() < 0.1 else IN_PROGRESS


async def populate(redis_url: str, games: int) -> None:
    from tablelog.service.recording import game_index
    from tablelog.service.recording.recorder import Recorder
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain import Chain, ChainKey
    from tablelog.service.store.game_index import INDEX_VERSION

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
            del summary.players[:]
            summary.players.extend(events_pb2.Player(name=n) for n in seats(index, rng))
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


CASES: list[tuple[str, str, service_pb2.GameStatus.ValueType, str, str]] = [
    # name, kind, status, player, depth
    ("every game, first page", "", ANY, "", "first"),
    ("every game, middle page", "", ANY, "", "middle"),
    ("every game, last page", "", ANY, "", "last"),
    ("many: splendor in progress, first", "splendor", IN_PROGRESS, "", "first"),
    ("many: splendor in progress, middle", "splendor", IN_PROGRESS, "", "middle"),
    ("many: splendor in progress, last", "splendor", IN_PROGRESS, "", "last"),
    ("many: abandoned, middle", "", ABANDONED, "", "middle"),
    ("few: ended (10 games)", "", ENDED, "", "first"),
    ("none: castello-methoni", "castello-methoni", ANY, "", "first"),
    ("none: medici ended", "medici", ENDED, "", "first"),
    ("player, many: Ann, first", "", ANY, "Ann", "first"),
    ("player, many: ann, middle", "", ANY, " ann ", "middle"),
    ("player, many: ANN, last", "", ANY, "ANN", "last"),
    ("player, few: Rita (10 games)", "", ANY, "Rita", "first"),
    ("player, none: Nobody", "", ANY, "Nobody", "first"),
    ("player+both, many: Ann splendor in progress, mid", "splendor", IN_PROGRESS, "Ann", "middle"),
    ("player+status, few: Ann ended", "", ENDED, "Ann", "first"),
    ("player+both, none: Rita medici ended", "medici", ENDED, "Rita", "first"),
]


async def cursor_at(
    store: Any, kind: str, status: int, player: str, depth: str, page_size: int
) -> str:
    """The page token a client paging from the top would hold at `depth`: the cursor after
    the game the previous page ended with (found in the set that listing reads)."""
    from tablelog.service.recording import game_index

    if depth == "first":
        return ""
    seat = game_index.player_key(player)
    key = store.game_index.set_key(CLUB, kind, status, seat)
    total = await store.redis.zcard(key)
    skip = total // 2 if depth == "middle" else max(0, total - page_size)
    skip -= skip % page_size
    if skip == 0:
        return ""
    rows = await store.redis.zrange(key, "+", "-", desc=True, bylex=True, offset=skip - 1, num=1)
    return game_index.cursor_token(kind, status, rows[0].decode(), seat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    from tablelog.service.api.server import BackgroundServer
    from tablelog.service.logs import configure_logging
    from tablelog.service.recording.recorder import Recorder
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain import Chain, ChainKey
    from tablelog.service.store.game_index import game_of
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
            for name, kind, status, player, depth in CASES:
                token = await cursor_at(store, kind, status, player, depth, args.page_size)
                tokens[name] = token
                found: list[int] = []

                async def page(
                    kind: str = kind,
                    status: int = status,
                    player: str = player,
                    token: str = token,
                    found: list[int] = found,
                ) -> None:
                    games, _next = await recorder.list_games(
                        kind, status, args.page_size, token, CLUB, player
                    )
                    found[:] = [len(games)]

                samples = await time_async(page, args.repeat)
                median, p99 = timed(samples)
                rows.append((f"{name} (in-process)", median, p99, found[0]))
            await store.close()
            return tokens, floor_samples, data_samples

        tokens, floor_samples, data_samples = asyncio.run(in_process())

        async def walk_alternative() -> tuple[float, int, int]:
            """What the player sets with the other filters spare: Ann's ended games found by
            walking her set and checking each entry's status (1,000 a round trip), as a
            listing without those sets would have to before it could say there is no next
            page. Median milliseconds, entries read, games found."""
            from tablelog.service.recording import game_index

            store = RedisEventStore.from_url(redis.url, chain=chain)
            key = store.game_index.set_key(CLUB, player=game_index.player_key("Ann"))
            entries_key = store.game_index.base(CLUB) + ":entries"
            seen: list[int] = [0, 0]

            async def walk() -> None:
                top, read, found = "+", 0, 0
                while True:
                    rows: list[Any] = await store.redis.zrange(
                        key, top, "-", desc=True, bylex=True, offset=0, num=1_000
                    )
                    if not rows:
                        break
                    texts: list[Any] = await store.redis.hmget(
                        entries_key, [game_of(row.decode()) for row in rows]
                    )
                    read += len(rows)
                    found += sum(text.split(b" ")[2] == b"%d" % ENDED for text in texts)
                    top = "(" + rows[-1].decode()
                seen[:] = [read, found]

            samples = await time_async(walk, max(1, args.repeat // 20))
            await store.close()
            return statistics.median(samples), seen[0], seen[1]

        walk_ms, walk_read, walk_found = asyncio.run(walk_alternative())

        async def index_one_game() -> tuple[float, float]:
            """What indexing a new game costs (the script call before a creation's append),
            median milliseconds: a four-seat game's entry, and the same entry naming no
            players (what the index wrote before the player sets). In a club of its own, so
            the listing and the rebuild above are untouched."""
            from tablelog.service.recording import game_index

            store = RedisEventStore.from_url(redis.url, chain=chain)
            rng = random.Random(2)
            made = itertools.count()

            def entry(seated: bool) -> Any:
                summary = service_pb2.GameSummary(game_id=f"w{next(made):07d}", game="splendor")
                summary.created_time.FromSeconds(1_800_000_000 + next(made))
                summary.status = IN_PROGRESS
                if seated:
                    summary.players.extend(events_pb2.Player(name=name) for name in seats(0, rng))
                return game_index.entry_of(summary)

            medians = []
            for seated in (True, False):

                async def put(seated: bool = seated) -> None:
                    await store.index_games("bench-writes", [entry(seated)])

                medians.append(statistics.median(await time_async(put, args.repeat)))
            await store.close()
            return medians[0], medians[1]

        seated_ms, unseated_ms = asyncio.run(index_one_game())
        floor_ms, floor_p99 = timed(floor_samples)
        data_ms, data_p99 = timed(data_samples)

        server = BackgroundServer(redis.url, chain=chain).start()
        try:
            with Client(server.target, token=server.owner_token, timeout=30) as client:
                for name, kind, status, player, _depth in CASES:
                    request = service_pb2.ListGamesRequest(
                        game=kind,
                        status=status,
                        player=player,
                        page_size=args.page_size,
                        page_token=tokens[name],
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

        async def index_memory() -> tuple[int, int, int]:
            """Bytes of the index's keys: the player sets, those of a player alone (what a
            walk of a player's games checking kind and status would keep instead), and the
            rest (the entries, the game and status sets)."""
            store = RedisEventStore.from_url(redis.url, chain=chain)
            players, alone, rest = 0, 0, 0
            async for key in store.redis.scan_iter(
                match=store.game_index.base(CLUB) + ":*", count=1000
            ):
                size = int(await store.redis.memory_usage(key, samples=0) or 0)
                if b":player:" not in key:
                    rest += size
                    continue
                players += size
                if b":game:" not in key and b":status:" not in key:
                    alone += size
            await store.close()
            return players, alone, rest

        player_bytes, alone_bytes, rest_bytes = asyncio.run(index_memory())

        async def rebuild() -> tuple[float, int]:
            from tablelog.service.recording import game_index

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
        f"{'case':<64} {'games':>5} {'median':>8} {'p99':>8} {'x floor':>8} "
        f"{'x data':>7} {'med/20ms':>8} {'p99/20ms':>8}"
    )
    for name, median, p99, count in rows:
        print(
            f"{name:<64} {count:>5} {median:>6.2f}ms {p99:>6.2f}ms {median / floor_ms:>8.1f} "
            f"{median / data_ms:>7.2f} {median / TARGET_MS:>8.2f} {p99 / TARGET_MS:>8.2f}"
        )
    print(
        f"index memory: {rest_bytes / 2**20:.1f} MiB for the entries and the game/status sets, "
        f"{player_bytes / 2**20:.1f} MiB for the player sets ({player_bytes / args.games:.0f} "
        f"bytes a four-seat game, {player_bytes / max(rest_bytes, 1):.1f} times the rest), "
        f"of which {alone_bytes / 2**20:.1f} MiB the sets of a player alone"
    )
    print(
        f"indexing a new game: median {seated_ms:.3f} ms with four seats, {unseated_ms:.3f} ms "
        "naming no players (as before the player sets)"
    )
    print(
        f"without the player's sets with the other filters: Ann's ended games by a walk of her "
        f"set, {walk_read:,} entries read for {walk_found} games, median {walk_ms:.1f} ms"
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
