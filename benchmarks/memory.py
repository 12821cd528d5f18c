"""Club memory (issue 28): rebuilding the projections, the projector's lag after a game
ends while clients record, and reading standings and a player's record.

    .venv/bin/python benchmarks/memory.py                       # the defaults below
    .venv/bin/python benchmarks/memory.py --games 200 --outcomes 2000 --clients 8

A `tablelog` server runs in this process (a BackgroundServer on its own loop) on an embedded
Redis (fast durability). Figures:

1. **Rebuild.** `--games` ended games (Medici: The Card Game, 2-6 players; seeded random
   play) are imported, then `RebuildProjections` folds every one from its stream and stores
   its outcome. Games per second of wall time and of this process's CPU time (the server's
   loop and the client share the process; the client only waits). The floor in the same
   run: `tablelog.replay.fold.fold` of the same games' events alone, and fold + `outcome_of` (the
   fold with the insights), on one core: the rebuild cannot be faster than the second.
2. **Lag.** `--clients` threads record seeded Splendor games move by move through the API,
   `--per-client` games each; for every game, the time from the answer to the move that
   ended it until its outcome is in the club's projection (polled every 2 ms). p50/p99.
3. **Reads.** `--outcomes` synthetic outcomes of Splendor (2-4 of `--players` players)
   written straight into the projection, then GetStandings and GetPlayerRecord: the first
   read (rating every game in range), reads right after one more game ended (rated alone,
   the ratings before it kept), and later reads (cached). p50/p99 over `--reads` reads.
4. **Memory per game** in the projection: Redis's MEMORY USAGE of the outcomes hash divided
   by its games.
   `--profile FILE`: the server's rebuild under cProfile (its loop's thread only), the
   functions taking the most cumulative time printed, the stats dumped to FILE (pstats).
5. **Idle** (`--idle SECONDS`, first): the Redis calls per second the idle server makes
   (INFO commandstats before and after, every command, by command), its projector waiting.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import random
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import redis  # noqa: E402  (after sys.path)
from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402

from tablelog.replay import fold as folding  # noqa: E402
from tablelog.service.access.identity import new_token  # noqa: E402
from tablelog.service.api.server import BackgroundServer  # noqa: E402
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.service.memory import projector  # noqa: E402
from tablelog.service.memory.standings import outcome_of  # noqa: E402
from tablelog.service.store.chain import Chain, ChainKey  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis  # noqa: E402
from tablelog.v1 import events_pb2, standings_pb2  # noqa: E402
from tablelog_client import Client  # noqa: E402
from tests.support.play import created, events_of, random_game  # noqa: E402

CLUB: Final = "local"
REBUILD_TARGET: Final = 2_000
LAG_TARGET: Final = 1.0
READ_TARGET: Final = 0.020


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def ended_history(seed: int) -> list[events_pb2.Event]:
    """A seeded random game of Medici: The Card Game with its GameEnded, unsealed."""
    players = 2 + seed % 5
    played = random_game("medici-card-game", players, seed)
    events = events_of(created("medici-card-game", players), played.moves, played.notations)
    position = played.position
    last = events[-1]
    end = events_pb2.Event(sequence=last.sequence + 1, revision=last.revision + 1)
    end.game_ended.result.CopyFrom(position.game.result(position.state))
    end.time.FromSeconds(1_780_000_000 + seed)
    events.append(end)
    return events


def rebuild(client: Client, games: int) -> None:
    histories = [ended_history(seed) for seed in range(games)]
    moves = sum(len(h) for h in histories)
    print(f"rebuild: {games} ended games of medici-card-game, {moves} events")
    blobs = [[e.SerializeToString() for e in h] for h in histories]
    started = time.process_time()
    for stored in blobs:
        folding.fold(events_pb2.Event.FromString(b) for b in stored)
    fold_only = time.process_time() - started
    started = time.process_time()
    for index, stored in enumerate(blobs):
        position = folding.fold(events_pb2.Event.FromString(b) for b in stored)
        outcome_of(str(index), position, Timestamp(seconds=1), position.sequence)
    with_outcome = time.process_time() - started
    print(
        f"  floor, one core: decode + fold {games / fold_only:,.0f} games/s; "
        f"decode + fold + outcome (insights) {games / with_outcome:,.0f} games/s"
    )
    for history in histories:
        client.import_events(history, accept_unverified=True)
    # The imports are followed by the projector first: the rebuild is timed alone.
    while client.standings("medici-card-game").lag.pending_games:
        time.sleep(0.05)
    wall, cpu = time.perf_counter(), time.process_time()
    done = client.rebuild_projections()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert done.games == games, done
    verdict = "met" if games / cpu >= REBUILD_TARGET else "NOT met"
    print(
        f"  RebuildProjections: {games / wall:,.0f} games/s wall, {games / cpu:,.0f} games/s "
        f"of CPU (target {REBUILD_TARGET:,}: {verdict})"
    )


def lag(server: BackgroundServer, token: str, clients: int, per_client: int) -> None:
    store = redis.Redis.from_url(server.redis_url)
    key = f"tl:{{club:{CLUB}}}:memory:outcomes"
    samples: list[float] = []
    lock = threading.Lock()

    def record(index: int) -> None:
        with Client(server.target, token=token, timeout=60) as client:
            for game in range(per_client):
                seed = 1000 + index * 100 + game
                line = random_game("splendor", 2, seed).notations
                created_game = client.create_game("splendor", [f"A{index}", f"B{index}"])
                version = created_game.version
                for notation in line:
                    version = client.record(
                        created_game.game_id, notation, expected_version=version
                    ).game.version
                ended = time.perf_counter()
                while not store.hexists(key, created_game.game_id):
                    time.sleep(0.002)
                with lock:
                    samples.append(time.perf_counter() - ended)

    threads = [threading.Thread(target=record, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - started
    p99 = percentile(samples, 0.99)
    print(
        f"lag: {clients} clients recording {per_client} Splendor game(s) each "
        f"({len(samples)} games in {took:.1f} s): after a game ends, its outcome is "
        f"projected in p50 {statistics.median(samples) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
        f"max {max(samples) * 1000:.0f} ms (target {LAG_TARGET:.0f} s: "
        f"{'met' if p99 <= LAG_TARGET else 'NOT met'})"
    )


def synthetic(count: int, players: int, seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    names = [f"Player {i:03d}" for i in range(players)]
    found: dict[str, bytes] = {}
    for index in range(count):
        seated = rng.sample(names, rng.choice((2, 3, 4)))
        scores = [rng.randrange(5, 22) for _ in seated]
        best = max(scores)
        winners = [i for i, s in enumerate(scores) if s == best]
        outcome = standings_pb2.GameOutcome(
            game_id=f"syn{index:06d}",
            game="splendor",
            ended_time=Timestamp(seconds=1_770_000_000 + index * 600),
            sequence=100,
            figures={"moves": 90.0, "table_moves": 40.0, "rounds": 30.0},
        )
        for i, name in enumerate(seated):
            place = 1 if i in winners else 1 + sum(1 for s in scores if s > scores[i])
            outcome.seats.append(
                standings_pb2.OutcomeSeat(
                    name=name,
                    place=place,
                    score=scores[i],
                    win_share=1 / len(winners) if i in winners else 0.0,
                    first=i == 0,
                    figures={"purchases": float(rng.randrange(8, 20)), "turns": 30.0},
                )
            )
        found[outcome.game_id] = outcome.SerializeToString(deterministic=True)
    return found


def reads(server: BackgroundServer, token: str, outcomes: int, players: int, count: int) -> None:
    store = redis.Redis.from_url(server.redis_url)
    key = f"tl:{{club:{CLUB}}}:memory:outcomes"
    store.delete(key)
    blobs = synthetic(outcomes, players, 7)
    for start in range(0, len(blobs), 1000):
        store.hset(key, mapping=dict(list(blobs.items())[start : start + 1000]))
    store.incr(f"tl:{{club:{CLUB}}}:memory:version")
    usage = store.memory_usage(key, samples=0) or 0
    print(
        f"reads: {outcomes} Splendor outcomes, {players} players; the projection holds "
        f"{usage / outcomes:,.0f} bytes per game (MEMORY USAGE of the outcomes hash)"
    )
    with Client(server.target, token=token, timeout=120) as client:
        started, cpu = time.perf_counter(), time.process_time()
        client.standings("splendor")
        first = time.perf_counter() - started
        first_cpu = time.process_time() - cpu
        # A game ending: one more outcome at the end of the run (rated alone: the ratings
        # before it are kept), then the next read.
        added: list[float] = []
        added_cpu: list[float] = []
        extra = synthetic(outcomes + 5, players, 7)
        for index in range(outcomes, outcomes + 5):
            game_id = f"syn{index:06d}"
            store.hset(key, game_id, extra[game_id])
            store.incr(f"tl:{{club:{CLUB}}}:memory:version")
            started, cpu = time.perf_counter(), time.process_time()
            client.standings("splendor")
            added.append(time.perf_counter() - started)
            added_cpu.append(time.process_time() - cpu)
        warm: list[float] = []
        # The collector's passes in this process (the server's loop and the client share
        # it) while the cached reads run: (generation, seconds) each.
        passes: list[tuple[int, float]] = []
        began: list[float] = [0.0]

        def collector(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                passes.append((info["generation"], time.perf_counter() - began[0]))

        gc.callbacks.append(collector)
        try:
            for _ in range(count):
                started = time.perf_counter()
                client.standings("splendor")
                warm.append(time.perf_counter() - started)
        finally:
            gc.callbacks.remove(collector)
        oldest = [seconds for generation, seconds in passes if generation == 2]
        player: list[float] = []
        for index in range(count):
            started = time.perf_counter()
            client.player_record(f"Player {index % players:03d}", "splendor")
            player.append(time.perf_counter() - started)
    p99 = percentile(warm, 0.99)
    print(
        f"  GetStandings, first read (parses every outcome, rates every game): "
        f"{first * 1000:.0f} ms wall, {first_cpu * 1000:.0f} ms CPU; after a game ended "
        f"(parses every outcome, rates that game): median {statistics.median(added) * 1000:.0f}"
        f" ms wall, {statistics.median(added_cpu) * 1000:.0f} ms CPU, of 5"
    )
    print(
        f"  GetStandings, no change since: p50 {statistics.median(warm) * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms (target {READ_TARGET * 1000:.0f} ms: "
        f"{'met' if p99 <= READ_TARGET else 'NOT met'}); meanwhile the collector ran "
        f"{len(passes)} passes, {sum(s for _g, s in passes) * 1000:.0f} ms, of them "
        f"{len(oldest)} of the oldest generation, {sum(oldest) * 1000:.0f} ms"
        f"{f' (longest {max(oldest) * 1000:.0f} ms)' if oldest else ''}"
    )
    print(
        f"  GetPlayerRecord, each player's first read then cached: p50 "
        f"{statistics.median(player) * 1000:.1f} ms, p99 {percentile(player, 0.99) * 1000:.1f} ms"
    )


def profile_rebuilds(path: str) -> None:
    """Profile `Projector.rebuild_club` on the server's loop (cProfile follows the thread
    that enables it: the rebuild's coroutine runs on the loop's)."""
    plain = projector.Projector.rebuild_club

    async def profiled(self: projector.Projector, club_id: str) -> int:
        profile = cProfile.Profile()
        profile.enable()
        try:
            return await plain(self, club_id)
        finally:
            profile.disable()
            profile.dump_stats(path)
            stats = pstats.Stats(path)
            stats.sort_stats("cumulative").print_stats(r"tablelog|hmac|redis/asyncio/client", 25)

    projector.Projector.rebuild_club = profiled  # type: ignore[method-assign]


def idle(server: BackgroundServer, seconds: float) -> None:
    store = redis.Redis.from_url(server.redis_url)

    def calls() -> dict[str, int]:
        stats = store.info("commandstats")
        return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}

    time.sleep(2)  # the start-up's sweep and first rounds done
    before = calls()
    time.sleep(seconds)
    after = calls()
    # INFO itself is the benchmark's, not the server's.
    delta = {
        name: count - before.get(name, 0)
        for name, count in after.items()
        if name != "info" and count > before.get(name, 0)
    }
    ranked = ", ".join(
        f"{n} {c / seconds:.2f}" for n, c in sorted(delta.items(), key=lambda x: -x[1])
    )
    print(
        f"idle: {sum(delta.values()) / seconds:.2f} Redis calls/s over {seconds:.0f} s "
        f"(INFO commandstats delta; by command: {ranked or 'none'})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200, help="ended games rebuilt (default 200)")
    parser.add_argument("--clients", type=int, default=8, help="recording clients (default 8)")
    parser.add_argument("--per-client", type=int, default=2, help="games each (default 2)")
    parser.add_argument("--outcomes", type=int, default=2_000, help="outcomes read (default 2,000)")
    parser.add_argument("--players", type=int, default=100, help="players among them (default 100)")
    parser.add_argument("--reads", type=int, default=200, help="reads timed (default 200)")
    parser.add_argument(
        "--idle", type=float, default=0.0, help="seconds the idle server's calls are counted"
    )
    parser.add_argument(
        "--only",
        choices=("idle", "rebuild", "lag", "reads"),
        action="append",
        help="run only these parts (repeatable; default all but idle)",
    )
    parser.add_argument("--profile", help="profile the rebuild with cProfile into this file")
    args = parser.parse_args()
    token = new_token()
    if args.profile:
        profile_rebuilds(args.profile)
    configure_logging("warning", json=True)
    with (
        tempfile.TemporaryDirectory(prefix="tl-memory-") as scratch,
        EmbeddedRedis(Path(scratch), durability=Durability.FAST) as embedded,
    ):
        server = BackgroundServer(
            embedded.url, chain=Chain(ChainKey.of(secrets.token_bytes(32))), owner_token=token
        ).start()
        try:
            parts = set(args.only or ("rebuild", "lag", "reads"))
            if args.idle or "idle" in parts:
                idle(server, args.idle or 10.0)
            if "rebuild" in parts:
                with Client(server.target, token=token, timeout=600) as client:
                    rebuild(client, args.games)
            if "lag" in parts:
                lag(server, token, args.clients, args.per_client)
            if "reads" in parts:
                reads(server, token, args.outcomes, args.players, args.reads)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
