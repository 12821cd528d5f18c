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
   written straight into the projection, then GetStandings and GetPlayerRecord, each timed
   in wall and CPU time: the first read (every outcome read whole, every game rated), reads
   right after one more game ended (stored by the projector's apply script, so the change
   log names it: that game read, added and rated alone), a player's record right after a
   game seating them ended, cached reads (`--reads`), each player's first record, reads
   after an amend of the run's middle game (half the run rated again), and the whole read
   that a change the log cannot name costs (every change, before the change log). The
   server's counts of whole reads and change log catch-ups say which path each took.
4. **Memory per game** in the projection: Redis's MEMORY USAGE of the outcomes hash divided
   by its games.
   `--profile FILE`: the server's rebuild under cProfile (its loop's thread only), the
   functions taking the most cumulative time printed, the stats dumped to FILE (pstats).
5. **Idle** (`--idle SECONDS`, first): the Redis calls per second the idle server makes
   (INFO commandstats before and after, every command, by command), its projector waiting.
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final, cast

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
from tablelog.service.memory import projector, results  # noqa: E402
from tablelog.service.memory.roster import fold_roster  # noqa: E402
from tablelog.service.memory.standings import (  # noqa: E402
    MODEL,
    in_order,
    outcome_of,
    rating_histories,
    seated,
)
from tablelog.service.recording.game_index import entry_of, index_club  # noqa: E402
from tablelog.service.store import RedisEventStore  # noqa: E402
from tablelog.service.store.chain import Chain, ChainKey  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis  # noqa: E402
from tablelog.service.store.memory import APPLY_SCRIPT, MemoryStore  # noqa: E402
from tablelog.v1 import events_pb2, service_pb2, standings_pb2  # noqa: E402
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


async def copy_games(
    store: RedisEventStore,
    club: str,
    templates: list[tuple[list[events_pb2.Event], service_pb2.GameSummary]],
    first: int,
    count: int,
    outcomes: list[standings_pb2.GameOutcome] | None = None,
) -> None:
    """Store games `first` .. `first + count - 1` as copies of the imported `templates` under
    new ids, straight through the store (`RedisEventStore.append`, the append script: each
    copy's chain sealed anew under the server's key, its head and summary written) and
    indexed in the club's listing, as an import leaves it, without checking every move of
    every copy again. Not noted for the projector: the rebuild below projects them. With
    `outcomes` (each template's, as the projector's fold gives it), each copy's result is
    sealed and stored as the projector stores it when a game ends: the template's outcome
    under the copy's id, bound to the copy's own head."""
    for start in range(first, first + count, 16):
        batch = []
        entries = []
        ids = []
        for index in range(start, min(first + count, start + 16)):
            events, summary = templates[index % len(templates)]
            game_id = f"copy{index:07d}"
            copies = []
            for event in events:
                copy = events_pb2.Event()
                copy.CopyFrom(event)
                for sealing in ("prev_hash", "hash", "chain_key_id"):
                    copy.ClearField(sealing)
                copies.append(copy)
            copies[0].game_created.game_id = game_id
            ids.append((game_id, index % len(templates)))
            listed = service_pb2.GameSummary()
            listed.CopyFrom(summary)
            listed.game_id = game_id
            entries.append(entry_of(listed))
            batch.append(
                store.append(
                    game_id,
                    copies,
                    expected_sequence=0,
                    prev_hash=b"",
                    expected_revision=None,
                    summary=listed.SerializeToString(),
                )
            )
        appended = await asyncio.gather(*batch)
        await store.index_games(club, entries)
        if outcomes is None:
            continue
        for (game_id, template), done in zip(ids, appended, strict=True):
            outcome = standings_pb2.GameOutcome()
            outcome.CopyFrom(outcomes[template])
            outcome.game_id = game_id
            result = projector.result_of(club, list(done.events), outcome)
            sealed = results.seal(store.chain, game_id, result)
            assert await store.results.put(game_id, sealed, done.events[-1].hash)


def timed_rebuild(client: Client, games: int, refold: bool) -> tuple[float, float, int]:
    """A RebuildProjections: its wall seconds, this process's CPU seconds and the games it
    folded."""
    wall, cpu = time.perf_counter(), time.process_time()
    done = client.rebuild_projections(refold=refold)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert done.games == games, done
    return wall, cpu, done.folded


def rebuild(
    server: BackgroundServer, client: Client, games: int, kinds: int, refold: bool = True
) -> None:
    histories = [ended_history(seed) for seed in range(min(games, kinds))]
    moves = sum(len(h) for h in histories)
    print(
        f"rebuild: {games:,} ended games of medici-card-game ({len(histories)} distinct seeded "
        f"games, {moves / len(histories):.0f} events each on average)"
    )
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
        f"  floor, one core: decode + fold {len(blobs) / fold_only:,.0f} games/s; "
        f"decode + fold + outcome (insights) {len(blobs) / with_outcome:,.0f} games/s"
    )
    assert server.built is not None
    store = server.built.recorder.store
    assert isinstance(store, RedisEventStore)
    started = time.perf_counter()
    imported = [client.import_events(h, accept_unverified=True).game_id for h in histories]
    took_imports = time.perf_counter() - started
    templates = []
    for game_id in imported:
        events = server.run(store.read(game_id))
        summary = server.run(store.summary(game_id))
        assert isinstance(events, list)
        assert isinstance(summary, bytes)
        templates.append((events, service_pb2.GameSummary.FromString(summary)))
    club = index_club(templates[0][0][0].game_created)
    outcomes = None
    if not refold:
        # No refolding rebuild to seal the copies' results: sealed as they are stored.
        outcomes = []
        for game_id, (events, _summary) in zip(imported, templates, strict=True):
            _sequence, outcome = projector.project(game_id, events)
            assert outcome is not None
            outcomes.append(outcome)
    started = time.perf_counter()
    for first in range(len(imported), games, 1000):
        count = min(1000, games - first)
        server.run(copy_games(store, club, templates, first, count, outcomes))
    took_copies = time.perf_counter() - started
    print(
        f"  stored: {len(imported)} imported through ImportGame in {took_imports:.1f} s "
        f"(every move checked), {games - len(imported):,} copies of them under new ids "
        f"through the store's append script in {took_copies:.1f} s (each chain sealed anew"
        f"{'; each result sealed as the projector seals it' if outcomes else ''})"
    )
    # The imports are followed by the projector first: the rebuilds are timed alone.
    while client.standings("medici-card-game").lag.pending_games:
        time.sleep(0.05)
    # Before: every game folded from its verified stream (this also seals every game's
    # result, as the projector does when a game ends). After: from the sealed results.
    if refold:
        wall, cpu, folded = timed_rebuild(client, games, refold=True)
        assert folded == games
        print(
            f"  RebuildProjections refold=true (every game folded): {games / wall:,.0f} "
            f"games/s wall, {games / cpu:,.0f} games/s of CPU ({cpu:.1f} s)"
        )
    raw = redis.Redis.from_url(server.redis_url)
    sample = [f"tl:{{copy{index:07d}}}:result" for index in range(len(imported), games, 97)]
    sample = sample or [f"tl:{{{game_id}}}:result" for game_id in imported]
    held = [raw.memory_usage(key, samples=0) or 0 for key in sample]
    used = raw.info("memory")["used_memory"]
    print(
        f"  Redis holds {used / 2**20:,.0f} MiB in all; a sealed result "
        f"{sum(held) / len(held):,.0f} bytes (MEMORY USAGE, {len(held)} sampled)"
    )
    PROFILING[0] = True
    wall, cpu, folded = timed_rebuild(client, games, refold=False)
    PROFILING[0] = False
    assert folded == 0, folded
    verdict = "met" if games / cpu >= REBUILD_TARGET else "NOT met"
    print(
        f"  RebuildProjections (sealed results, none folded): {games / wall:,.0f} games/s "
        f"wall, {games / cpu:,.0f} games/s of CPU ({cpu:.2f} s; target {REBUILD_TARGET:,}: "
        f"{verdict})"
    )
    # What the results gave is what folding gives: a sample of the copies folded again.
    key = f"tl:{{club:{club}}}:memory:outcomes"
    for index in random.Random(5).sample(range(games), min(games, 20)):
        game_id = imported[index] if index < len(imported) else f"copy{index:07d}"
        events = server.run(store.read(game_id))
        assert isinstance(events, list)
        _sequence, outcome = projector.project(game_id, events)
        assert outcome is not None
        assert raw.hget(key, game_id) == outcome.SerializeToString(deterministic=True)
    # The ratings are computed on the first read after a change, in game order: the
    # rebuild's games rated, then the table.
    wall, cpu = time.perf_counter(), time.process_time()
    table = client.standings("medici-card-game")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"  then GetStandings, first read (every outcome parsed, {games:,} games rated in "
        f"order, {len(table.rows)} players): {wall:.2f} s wall, {cpu:.2f} s CPU"
    )
    ratings(server, club)


def ratings(server: BackgroundServer, club: str) -> None:
    """OpenSkill's cost per game, alone: the club's stored outcomes rated in order."""
    raw = redis.Redis.from_url(server.redis_url).hvals(f"tl:{{club:{club}}}:memory:outcomes")
    ordered = in_order(standings_pb2.GameOutcome.FromString(b) for b in raw if isinstance(b, bytes))
    roster = fold_roster([])
    started = time.process_time()
    rating_histories(ordered, roster)
    rated = time.process_time() - started
    started = time.process_time()
    for outcome in ordered:
        seated(outcome, roster)
    seating = time.process_time() - started
    teams = [[[MODEL.rating()] for _ in outcome.seats] for outcome in ordered]
    started = time.process_time()
    for outcome, team in zip(ordered, teams, strict=True):
        MODEL.rate(team, ranks=[float(seat.place) for seat in outcome.seats])
    alone = time.process_time() - started
    seats = sum(len(o.seats) for o in ordered) / len(ordered)
    print(
        f"  ratings of {len(ordered):,} games ({seats:.1f} seats on average), one core: "
        f"rating_histories {rated / len(ordered) * 1e6:.0f} us a game "
        f"({len(ordered) / rated:,.0f} games/s), of which openskill's PlackettLuce.rate "
        f"alone {alone / len(ordered) * 1e6:.0f} us and the roster's matching "
        f"{seating / len(ordered) * 1e6:.0f} us"
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


class Timed:
    """Wall and CPU time of this process (the server's loop and the client share it, the
    client only waits: the CPU time is the server's work, undisturbed by other programs)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __call__(self, read: Callable[[], object]) -> object:
        started, cpu = time.perf_counter(), time.process_time()
        found = read()
        self.wall.append(time.perf_counter() - started)
        self.cpu.append(time.process_time() - cpu)
        return found

    def line(self) -> str:
        if len(self.wall) == 1:
            return f"{self.wall[0] * 1000:.1f} ms wall, {self.cpu[0] * 1000:.1f} ms CPU"
        return (
            f"p50 {statistics.median(self.wall) * 1000:.1f} / p99 "
            f"{percentile(self.wall, 0.99) * 1000:.1f} ms wall, p50 "
            f"{statistics.median(self.cpu) * 1000:.1f} / p99 "
            f"{percentile(self.cpu, 0.99) * 1000:.1f} ms CPU, of {len(self.wall)}"
        )

    def verdict(self) -> str:
        p99 = percentile(self.wall, 0.99)
        cpu = percentile(self.cpu, 0.99)
        met = "met" if p99 <= READ_TARGET else ("met in CPU" if cpu <= READ_TARGET else "NOT met")
        return f"(target p99 {READ_TARGET * 1000:.0f} ms: {met})"


def reads(server: BackgroundServer, token: str, outcomes: int, players: int, count: int) -> None:
    store = redis.Redis.from_url(server.redis_url)
    memory = MemoryStore(cast(Any, None))
    key = memory.key(CLUB, "memory:outcomes")
    store.delete(key)
    blobs = synthetic(outcomes, players, 7)
    for start in range(0, len(blobs), 1000):
        store.hset(key, mapping=dict(list(blobs.items())[start : start + 1000]))
    # (written straight, not through the apply script: a version the change log never
    # saw, as after a rebuild; the first read reads everything anyway)
    store.incr(memory.key(CLUB, "memory:version"))
    usage = store.memory_usage(key, samples=0) or 0
    built: Any = server.built
    following: projector.Projector = built.projector
    extra = synthetic(outcomes + 10 * count, players, 7)
    added = iter(range(outcomes, outcomes + 10 * count))

    def apply(game_id: str, blob: bytes) -> None:
        """Store an outcome the way the projector does (APPLY_SCRIPT: the change log too)."""
        keys = [
            memory.key(CLUB, part)
            for part in (
                "memory:outcomes",
                "memory:seen",
                "memory:checkpoint",
                "memory:version",
                "club",
                "memory:changes",
            )
        ]
        sequence = int(store.hget(keys[1], game_id) or 100) + 1
        if not store.eval(APPLY_SCRIPT, len(keys), *keys, game_id, str(sequence), blob, ""):
            raise SystemExit(f"the apply script stored nothing for {game_id} (no club record?)")

    def end_game() -> list[str]:
        """One more game ends, after every other: the names it seats."""
        game_id = f"syn{next(added):06d}"
        apply(game_id, extra[game_id])
        return [seat.name for seat in standings_pb2.GameOutcome.FromString(extra[game_id]).seats]

    def paths() -> tuple[int, int]:
        return following.reloads, following.caught_up

    print(
        f"reads: {outcomes:,} Splendor outcomes, {players} players "
        f"({outcomes * 3 / players:,.0f} games a player on average); the projection holds "
        f"{usage / outcomes:,.0f} bytes per game (MEMORY USAGE of the outcomes hash)\n"
        f"  Each figure: wall time of the call, and CPU time of this process (server and "
        f"client share it; on a busy machine CPU is the figure to trust). 'Whole' reads "
        f"every outcome and builds every model from zero; 'change log' reads only the games "
        f"changed since the copy held."
    )
    with Client(server.target, token=token, timeout=600) as client:
        first = Timed()
        first(lambda: client.standings("splendor"))
        before = paths()
        ended = Timed()
        for _ in range(count // 10 or 1):
            end_game()
            ended(lambda: client.standings("splendor"))
        by_log = paths()
        record_after = Timed()
        names: list[str] = []
        for _ in range(count // 10 or 1):
            client.standings("splendor")  # (caught up: only the next game is new)
            names.append(end_game()[0])
            record_after(partial(client.player_record, names[-1], "splendor"))
        # The same players' records right after a game that does not seat them ended: kept
        # by the view (the table's changed rows made again).
        record_kept = Timed()
        for name in names:
            while name in end_game():
                pass
            record_kept(partial(client.player_record, name, "splendor"))
        warm = Timed()
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
                warm(lambda: client.standings("splendor"))
        finally:
            gc.callbacks.remove(collector)
        oldest = [seconds for generation, seconds in passes if generation == 2]
        player = Timed()
        for index in range(count):
            name = f"Player {index % players:03d}"
            player(partial(client.player_record, name, "splendor"))
        # An amend of a game in the middle of the run: the ratings after it rated again.
        amended = Timed()
        for index in range(3):
            game_id = f"syn{outcomes // 2 + index:06d}"
            changed = standings_pb2.GameOutcome.FromString(blobs[game_id])
            changed.seats[0].score += 30
            changed.seats[0].place = 1
            apply(game_id, changed.SerializeToString(deterministic=True))
            amended(lambda: client.standings("splendor"))
        # The whole read after a change (what every change cost before the change log): a
        # version the log does not name.
        whole = Timed()
        for _ in range(2):
            store.incr(memory.key(CLUB, "memory:version"))
            whole(lambda: client.standings("splendor"))
        end = paths()
    print(
        f"  GetStandings, first read (whole: parses every outcome, rates every game): "
        f"{first.line()}"
    )
    print(
        f"  GetStandings right after a game ended (change log: that game read and rated "
        f"alone): {ended.line()} {ended.verdict()}"
    )
    print(
        f"  GetPlayerRecord right after a game seating the player ended (change log; the "
        f"record computed from the player's own games): {record_after.line()} "
        f"{record_after.verdict()}"
    )
    print(
        f"  GetPlayerRecord of the same players right after a game not seating them ended "
        f"(change log; their records kept by the view): {record_kept.line()} "
        f"{record_kept.verdict()}"
    )
    print(
        f"  GetStandings, no change since (cached): {warm.line()} {warm.verdict()}; meanwhile "
        f"the collector ran {len(passes)} passes, {sum(s for _g, s in passes) * 1000:.0f} ms, "
        f"of them {len(oldest)} of the oldest generation, {sum(oldest) * 1000:.0f} ms"
        f"{f' (longest {max(oldest) * 1000:.0f} ms)' if oldest else ''}"
    )
    print(
        f"  GetPlayerRecord, each player's first read, no change since: {player.line()} "
        f"{player.verdict()}"
    )
    print(
        f"  GetStandings right after an amend of the run's middle game (change log; the "
        f"ratings of the half after it computed again): {amended.line()}"
    )
    print(
        f"  GetStandings after a change the log cannot name (whole, as every change was "
        f"read before the change log): {whole.line()}"
    )
    print(
        f"  paths taken by the server: whole reads {end[0]}, change log catch-ups {end[1]} "
        f"(the first read {before[0]} whole; the reads after a game ended "
        f"{by_log[1] - before[1]} by the change log of {len(ended.wall)})"
    )


PROFILING = [False]
"""Whether the next rebuild is profiled (the one from the sealed results)."""


def profile_rebuilds(path: str) -> None:
    """Profile `Projector.rebuild_club` from the sealed results on the server's loop
    (cProfile follows the thread that enables it: the rebuild's coroutine runs on the
    loop's)."""
    plain = projector.Projector.rebuild_club

    async def profiled(
        self: projector.Projector, club_id: str, refold: bool = False
    ) -> projector.Rebuilt:
        if not PROFILING[0]:
            return await plain(self, club_id, refold)
        profile = cProfile.Profile()
        profile.enable()
        try:
            return await plain(self, club_id, refold)
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
    parser.add_argument(
        "--kinds",
        type=int,
        default=200,
        help="distinct seeded games imported; the others are copies of them (default 200)",
    )
    parser.add_argument(
        "--no-refold",
        action="store_true",
        help="skip the refolding rebuild (the copies' results are then sealed as stored)",
    )
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
                with Client(server.target, token=token, timeout=7200) as client:
                    rebuild(server, client, args.games, args.kinds, not args.no_refold)
            if "lag" in parts:
                lag(server, token, args.clients, args.per_client)
            if "reads" in parts:
                reads(server, token, args.outcomes, args.players, args.reads)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
