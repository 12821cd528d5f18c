"""Amending a move 200 moves before the head of a 1,000-move game: what re-checking the tail
costs, against floors measured in the same run.

    .venv/bin/python benchmarks/amend.py [--moves 1000] [--back 200] [--repeat 7]

No game reaches 1,000 moves: random play ends by 250 moves in Splendor, Castello Methoni,
Mercado and the Medici card game, and near 550 in Medici with 6 players; Splendor whose
players put the end off as long as the rules let them (take and return tokens) ends near
550 too, when the bank runs dry. So the longest games are measured (Medici, 6 players, and
the stalling Splendor game), with the cost per later move re-checked (the slope): the work
of an amendment is the tail it re-checks, so 200 moves back costs the same in a 1,000-move
game but for walking the longer list of moves in effect (a pointer per move).

For each game: the move `--back` moves before the head is replaced by another legal move
whose amendment keeps the whole tail (the first found; the move itself when none does, the
same work), and timed, best of `--repeat` in CPU time:

- `amend`: `tablelog.replay.fold.amend`, the rules core's corrected history (the re-check of the
tail);
- floors: recording the same tail afresh (`tablelog.replay.fold.record` of each later move on the
  amended move's position, notation given: the least a re-check can do), and a plain fold
  of the whole game's events (decode + fold);
- through the service: `Recorder.amend_move` (the use case on a real embedded Redis, cached
  head, appended) in wall time, against a `Recorder.record_move` on the same game.

Then the slope: `amend` at several distances from the head, in microseconds per later move.
The target is 100 ms for the service's amendment 200 moves back; the exit status is 1 when
it is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay import fold as folding  # noqa: E402  (the path is set up just above)
from tablelog.replay.core import CHANCE, TERMINAL  # noqa: E402
from tablelog.service.recording.recorder import Recorder  # noqa: E402
from tablelog.service.store import RedisEventStore  # noqa: E402
from tablelog.service.store.chain import Chain, ChainKey  # noqa: E402
from tablelog.service.store.embedded import EmbeddedRedis  # noqa: E402
from tablelog.v1 import events_pb2, service_pb2  # noqa: E402
from tests.support.play import choose, events_of, new_position  # noqa: E402

TARGET_MS = 100.0


def stalling_splendor(moves: int, seed: int = 0) -> folding.Position:
    """Splendor (2 players, table mode) whose players put off the end: they take and return
    tokens when they can, else make the legal move that leaves the best score lowest (and
    the game unfinished while it can). Legal play throughout; it still ends, near 550 moves,
    when the bank runs dry. Stops at `moves`."""
    rng = random.Random(seed)
    position = new_position("splendor", 2)
    game = position.game
    while position.move_count < moves and position.to_move() != TERMINAL:
        state = position.state
        if game.to_move(state) == CHANCE:
            inner = choose(game, state, rng)
        else:
            legal = list(game.legal_moves(state))
            stalling = [m for m in legal if game.format(m, state).split()[0] in ("take", "return")]
            if stalling:
                inner = rng.choice(stalling)
            else:

                def lead(move: Any, state: Any = state) -> int:
                    after = game.apply(state, move)
                    if game.to_move(after) == TERMINAL:
                        return 1 << 20
                    return max(score.total for score in game.result(after).scores)

                inner = min(legal, key=lead)
        position = folding.record(position, position.table.wrap(inner), game.format(inner, state))
    return position


def random_game_position(name: str, players: int, seed: int) -> folding.Position:
    rng = random.Random(seed)
    position = new_position(name, players)
    while position.to_move() != TERMINAL:
        inner = choose(position.game, position.state, rng)
        position = folding.record(
            position, position.table.wrap(inner), position.game.format(inner, position.state)
        )
    return position


def best_cpu(run: Callable[[], object], repeat: int) -> float:
    """The best process CPU time of `run`, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return 1e3 * best


def replacement(position: folding.Position, back: int) -> tuple[folding.Applied, Any, bool]:
    """The move `back` moves before the head, a move to put in its place whose amendment
    keeps the tail, and whether it differs from the move (False: none did, itself used)."""
    moves = position.moves()
    target = moves[len(moves) - back]
    game = position.game
    if game.to_move(target.before) != CHANCE:
        for inner in game.legal_moves(target.before):
            move = position.table.wrap(inner)
            if move == target.move:
                continue
            if folding.amend(position, folding.REPLACE, target.revision, move).broken is None:
                return target, move, True
    return target, target.move, False


def core_figures(
    label: str, position: folding.Position, back: int, repeat: int
) -> dict[str, float]:
    target, move, differs = replacement(position, back)
    moves = position.moves()
    tail = moves[len(moves) - back + 1 :]
    events = events_of(position.table.created, [a.move for a in moves], [a.notation for a in moves])
    stored = [e.SerializeToString() for e in events]

    def amend() -> None:
        amended = folding.amend(position, folding.REPLACE, target.revision, move)
        assert amended.broken is None

    start = folding.record(position_before(position, target), move, "x")

    def record_tail() -> None:
        again = start
        for applied in tail:
            again = folding.record(again, applied.move, applied.notation)

    def plain_fold() -> None:
        folding.fold(events_pb2.Event.FromString(data) for data in stored)

    figures = {
        "amend": best_cpu(amend, repeat),
        "record_tail": best_cpu(record_tail, repeat),
        "fold": best_cpu(plain_fold, repeat),
    }
    kind = "another legal move" if differs else "the same move (no other kept the tail)"
    print(
        f"{label}: {len(moves)} moves, revision {target.revision} ({back} back) replaced by {kind}"
    )
    amend_ms, tail_ms, fold_ms = figures["amend"], figures["record_tail"], figures["fold"]
    print(
        f"  amend {amend_ms:.2f} ms CPU | floors: record the {len(tail)}-move tail afresh "
        f"{tail_ms:.2f} ms (amend {amend_ms / tail_ms:.2f}x), fold all {len(events)} events "
        f"{fold_ms:.2f} ms (amend {amend_ms / fold_ms:.2f}x)"
    )
    return figures


def position_before(position: folding.Position, target: folding.Applied) -> folding.Position:
    """The position just before `target`, as the fold had it."""
    node = position.applied
    while node is not None and node.head is not target:
        node = node.tail
    assert node is not None
    count = sum(1 for _ in node.tail or ())
    return folding.Position(
        position.table, target.before, target.revision - 1, position.sequence, applied=node.tail,
        move_count=count,
    )  # fmt: skip


def slope(position: folding.Position, repeat: int) -> None:
    moves = position.moves()
    rows = []
    for back in (25, 50, 100, 200, 400, 800):
        if back >= len(moves) - 12:
            break
        target = moves[len(moves) - back]

        def amend(target: folding.Applied = target) -> None:
            folding.amend(position, folding.REPLACE, target.revision, target.move)

        rows.append((back, best_cpu(amend, repeat)))
    (b0, t0), (b1, t1) = rows[0], rows[-1]
    per_move = 1e3 * (t1 - t0) / (b1 - b0)
    print("  slope: " + ", ".join(f"{b} back {t:.2f} ms" for b, t in rows))
    print(f"  {per_move:.1f} us per later move re-checked (from {b0} to {b1} back)")


async def service_figures(position: folding.Position, back: int, repeat: int) -> float:
    """Median wall time of AmendMove's use case (appended on a real Redis) on copies of
    the game, printed against RecordMove's on the same games."""
    moves = position.moves()
    target, move, _differs = replacement(position, back)
    actor = events_pb2.Actor(user="bench", client="benchmarks/amend")
    with tempfile.TemporaryDirectory() as scratch, EmbeddedRedis(Path(scratch)) as redis:
        store = RedisEventStore.from_url(
            redis.url, chain=Chain(ChainKey.of(secrets.token_bytes(32)))
        )
        recorder = Recorder(store)
        amend_ms: list[float] = []
        record_ms: list[float] = []
        for _copy in range(repeat):
            created_as = position.table.created
            made = await recorder.create_game(
                service_pb2.CreateGameRequest(
                    game=created_as.game,
                    players=list(created_as.players),
                    request_id=secrets.token_hex(8),
                ),
                actor,
            )
            game_id, version = made.head.game_id, made.head.revision
            *early, last = moves
            for applied in early:
                outcome = await recorder.record_move(
                    game_id, move=applied.move, notation=None, seat=None,
                    expected_version=version, request_id=secrets.token_hex(8), actor=actor,
                )  # fmt: skip
                version = outcome.head.revision
            started = time.perf_counter()
            outcome = await recorder.record_move(
                game_id, move=last.move, notation=None, seat=None, expected_version=version,
                request_id=secrets.token_hex(8), actor=actor,
            )  # fmt: skip
            record_ms.append(1e3 * (time.perf_counter() - started))
            version = outcome.head.revision
            started = time.perf_counter()
            await recorder.amend_move(
                game_id, revision=target.revision, kind=folding.REPLACE, move=move,
                notation=None, seat=None, expected_version=version,
                request_id=secrets.token_hex(8), reason="benchmark", drop_tail=False,
                actor=actor,
            )  # fmt: skip
            amend_ms.append(1e3 * (time.perf_counter() - started))
        await store.close()
    amend_ms.sort()
    record_ms.sort()
    amended, recorded = amend_ms[len(amend_ms) // 2], record_ms[len(record_ms) // 2]
    print(
        f"  service (Recorder.amend_move on embedded Redis, median of {repeat} games): "
        f"{amended:.1f} ms; floor: RecordMove of the game's last move {recorded:.2f} ms "
        f"(amend {amended / recorded:.1f}x); target {TARGET_MS:.0f} ms: "
        f"{TARGET_MS / amended:.1f}x under it"
    )
    return amended


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--moves", type=int, default=1_000)
    parser.add_argument("--back", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    worst = 0.0
    for label, position in (
        ("medici, 6 players, random play", random_game_position("medici", 6, seed=2)),
        ("splendor, 2 players putting the end off", stalling_splendor(args.moves)),
    ):
        core_figures(label, position, args.back, args.repeat)
        slope(position, args.repeat)
        worst = max(worst, asyncio.run(service_figures(position, args.back, args.repeat)))
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
