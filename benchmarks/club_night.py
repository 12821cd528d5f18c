"""A club night on one instance (issue 29): tables recording, people watching and people
stepping through pictures all at once, against the recorders alone, alternating in one run.

    .venv/bin/python benchmarks/club_night.py                      # 20 tables, 60 s windows
    .venv/bin/python benchmarks/club_night.py --tables 6 --window 20 --backends embedded
    .venv/bin/python benchmarks/club_night.py --long --scale 0.05  # the long night, reduced
    .venv/bin/python benchmarks/club_night.py --instances 2 --tables 40 --backends standalone

For each backend (`--backends`: `embedded`, the default `tablelog serve` with its own Redis,
and `standalone`, a redis-server started here and given to `tablelog serve --redis-url`), the
script starts `tablelog serve` (default settings and limits, `--durability` aside; its log
lines to /dev/null) and plays a club night against it with grpc.aio and connect-python's
asynchronous client, so that a process is hundreds of people. The recorders play from this
process and the spectators (the watchers and the picture steppers) from a process of their
own (`--spectator-processes`, 1), so that a RecordMove's answer never waits in this
process's event loop behind the watchers' updates being read: this process tells the
spectators' one, through a pipe, each table's game, head and moves and when each event's
RecordMove was answered here (`time.monotonic()`, the system's monotonic clock, the same in
every process); the spectators' process takes each update's arrival time on the same clock
and reports per condition what it measured when the night ends:

* every person is a member of the server's club with a token of their own, made through
  the API (ClubService.AddMember, CreateToken, by the club's owner), and a connection of
  their own (`OWN_CONNECTION`);
* `--tables` tables (20), the five games in turn, dealt and table mode in turn, each with
  its players (members with the player role, bound to their seats at CreateGame) and one
  recorder (a member with the recorder role) who makes a move every `--move-seconds` (2 s)
  on average (exponential gaps): the next move is drawn at random from the server's own
  ListLegalMoves (so the client knows no rules; in table mode the table's reveals are in
  that list too), recorded by notation with the version from the last answer and a fresh
  request id; a game that ends (or reaches `--max-moves`, then it is abandoned) is followed
  by a new one at the same table;
* `--watchers` people per table (10), each a spectator member watching the table's game
  (WatchGame from revision 1, as a page opened mid-game, again at each new game); every
  update's event sequence is checked: a missed or a duplicated one is counted, and each
  update's delay after its RecordMove's answer arrived at the recorder is its delivery time
  (an update read before the answer is known in the spectators' process waits for it
  there; one that arrived before the answer counts as 0 ms and is counted as early);
* one person per table stepping through the table's game's pictures as the web app does
  (clients/web/src/picture.ts, game.ts): ReplayGame of a 32-revision block with pictures,
  as spectator, over the HTTP port with the Connect protocol (the web app's port and
  protocol), a block every `--step-seconds` (3 s) on average, from revision 1 to the head
  and again.

Windows of `--window` seconds (60) alternate the conditions for `--rounds` rounds (1): (a)
recorders only, (b) + the watchers, (c) + the watchers and the picture steppers (the order
rotates each round). A watcher closing at a window's end first reads on to what was
acknowledged when the window ended (until it has, or 5 s pass without an update; the
night's end waits up to 2 minutes for them): a gap in a watch's sequences is counted
missed (lost), and what a watch had not read when it gave up is counted unread (still
catching up after 5 s of silence, or lost: either way not delivered in time).

Printed per backend: RecordMove p50 / p95 / p99 / max (ms, timed here around the call),
delivery p50 / p99 (ms after the answer), picture block p50 / p99 (ms, the whole block),
the server's cores (CPU seconds of `tablelog serve` and its picture workers, not Redis, over
the window's seconds, from /proc), its RSS (the same processes) at the start and the end,
and the headline ratios of the recorder's p99, (c)/(a) and (b)/(a) (targets 2 and 1.5),
with each round's ratio (the spread); missed, unread and duplicated updates (must be 0).

`--long` is the long night (issue 29 item 4) at an accelerated pace: every condition at
once, recorders as fast as `--move-seconds` allows (default 0 in this mode: the next move
once the last is answered), games of at most `--max-moves` (200), each watcher re-opening
its watch halfway through each game from a random earlier revision, until 100,000 moves,
500 games and 10,000 watch opens are all reached (times `--scale`); the server's RSS is
sampled every `--sample-seconds`, and printed with whether it stayed flat within 10% over
the second half and the documented ceilings it must stay under.

For finding what holds memory: `--serve-setting FLAG VALUE` passes a setting to `tablelog
serve` (e.g. `head-cache-bytes 4M`), `--serve-env NAME=VALUE` an environment variable
(e.g. `MALLOC_ARENA_MAX=2`), and `--pictures-over grpc` has the steppers use the gRPC port.

`--instances N` starts N `tablelog serve` processes over the one Redis (standalone only:
the embedded Redis belongs to one instance) and spreads the tables over them: a table's
recorder, players and stepper talk to its instance, its watchers to each instance in turn
(as behind a load balancer), so that half of them get the moves through Redis from the
other instance.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import math
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "proto"), str(ROOT / "clients" / "python")]

import grpc  # noqa: E402  (the path is set up just above)
from grpc import aio  # noqa: E402

from tablelog.replay.games.castello_methoni.picture import FRAGMENTS_BYTES  # noqa: E402
from tablelog.service.recording.pictures import PictureLimits  # noqa: E402
from tablelog.service.store.embedded import free_port  # noqa: E402
from tablelog.v1 import (  # noqa: E402
    clubs_pb2,
    clubs_pb2_grpc,
    events_pb2,
    game_pb2,
    service_pb2,
    service_pb2_grpc,
)

OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)
"""Each person's channel on a TCP connection of its own, as each person's phone is: grpc
otherwise gives a process's channels to one server one shared connection, and the 200
watchers of an instance would take their catch-ups through one HTTP/2 connection's flow
control, one after the other (found 2026-12-02: one connection per process carried them)."""
CONDITIONS = ("a", "b", "c")
NAMES = {"a": "(a) recorders only", "b": "(b) + watchers", "c": "(c) + watchers, pictures"}
TARGETS = {"c": 2.0, "b": 1.5}
BLOCK = 32
"""Revisions per picture block (clients/web/src/picture.ts's BLOCK)."""
GAMES = ("splendor", "medici", "mercado-de-lisboa", "castello-methoni", "medici-card-game")
SEATS = 3
"""Players per table where the game allows it (else its nearest count)."""
LONG = {"moves": 100_000, "games": 500, "opens": 10_000}
DRAIN_SECONDS = 5.0
"""How long a watch reads on after its window, from its window's end or its last update."""
DRAIN_LIMIT = 120.0
"""The longest the night's end waits for its watches to read on to what was answered."""
OPENING_SECONDS = 3.0
"""The start of a window with watchers, when they all open (said apart in the report)."""


# ----------------------------------------------------------------------------- the server


def tablelog_pids(pid: int) -> list[int]:
    """`pid` and its descendants, Redis left out (the embedded Redis is a child of serve)."""
    try:
        if "redis" in Path(f"/proc/{pid}/comm").read_text():
            return []
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [pid] + [p for child in children for p in tablelog_pids(int(child))]


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


@dataclass
class Server:
    process: subprocess.Popen[str]
    target: str
    url: str

    def pids(self) -> list[int]:
        return tablelog_pids(self.process.pid)


def serve(
    data_dir: Path,
    redis_url: str | None,
    durability: str,
    extra: list[str],
    environment: dict[str, str],
    memray: str | None = None,
    census: str | None = None,
) -> Server:
    grpc_address = f"127.0.0.1:{free_port()}"
    http_address = f"127.0.0.1:{free_port()}"
    # Under memray (`--memray FILE`): every allocation, native ones (protobuf's arenas)
    # included, for benchmarks/memory_growth.py to say what the live heap grew by.
    profiler = (
        ["-m", "memray", "run", "--native", "--follow-fork", "-q", "-o", memray] if memray else []
    )
    # With `--census PREFIX`: through benchmarks/heap_census.py, which takes a census of
    # the heap at each SIGUSR2.
    program = [str(ROOT / "benchmarks" / "heap_census.py"), census] if census else [
        "-m", "tablelog_client.cli"]  # fmt: skip
    command = [sys.executable, *profiler, *program, "serve", "--data-dir", str(data_dir),
               "--address", grpc_address, "--http-address", http_address,
               "--durability", durability, *extra]  # fmt: skip
    if redis_url:
        command += ["--redis-url", redis_url]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, **environment, "PYTHONPATH": os.pathsep.join(sys.path[:3])},
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("web app: "):
            return Server(process, grpc_address, f"http://{http_address}")
    process.wait()
    raise RuntimeError("tablelog serve did not start")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


def standalone_redis(directory: Path) -> tuple[subprocess.Popen[str], str]:
    """A redis-server of its own (AOF, fsync always as the embedded default's `disk`)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server on PATH for the standalone backend")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--save", "", "--appendonly", "yes", "--appendfsync", "always"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    import redis

    while True:
        try:
            redis.Redis(port=port).ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


# ----------------------------------------------------------------------------- people


def metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def retried(call: Callable[[], Any]) -> Any:
    """A call, again after a pause while the caller's rate is spent (setting a club up
    makes many changes at once; the rates stay the server's defaults)."""
    while True:
        try:
            return await call()
        except aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            await asyncio.sleep(0.2)


async def new_member(clubs: Any, owner: str, name: str, role: Any) -> tuple[str, str]:
    """A member of the club and their own token: (member id, token)."""
    added = await retried(
        lambda: clubs.AddMember(
            clubs_pb2.AddMemberRequest(display_name=name, role=role), metadata=metadata(owner)
        )
    )
    made = await retried(
        lambda: clubs.CreateToken(
            clubs_pb2.CreateTokenRequest(member_id=added.member.member_id),
            metadata=metadata(owner),
        )
    )
    return added.member.member_id, made.token


class Delays:
    """Delays (seconds) counted into buckets 0.1% wide, so that a night of a million
    updates holds a few thousand counts, not a million floats; a quantile is its bucket's
    middle, within 0.05% of the delay measured. Delays of 0 (or below) count apart."""

    STEP = math.log(1.001)

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.zeros = 0
        self.count = 0

    def add(self, seconds: float) -> None:
        self.count += 1
        if seconds <= 1e-9:
            self.zeros += 1
            return
        bucket = round(math.log(seconds) / self.STEP)
        self.buckets[bucket] = self.buckets.get(bucket, 0) + 1

    def merge(self, buckets: dict[int, int], zeros: int) -> None:
        """Adds another's counts (its `buckets` and `zeros`)."""
        self.count += zeros + sum(buckets.values())
        self.zeros += zeros
        for bucket, count in buckets.items():
            self.buckets[bucket] = self.buckets.get(bucket, 0) + count

    def quantile(self, share: float) -> float:
        """The value at `share` as `quantile` takes it of a sorted list."""
        if not self.count:
            return float("nan")
        rank = min(self.count - 1, int(self.count * share))
        if rank < self.zeros:
            return 0.0
        seen = self.zeros
        for bucket in sorted(self.buckets):
            seen += self.buckets[bucket]
            if seen > rank:
                return math.exp(bucket * self.STEP)
        raise AssertionError("the counts do not add up")

    def __len__(self) -> int:
        return self.count


@dataclass
class Stats:
    """What one condition's windows measured."""

    moves: list[float] = field(default_factory=list)
    deliveries: Delays = field(default_factory=Delays)
    settled: Delays = field(default_factory=Delays)
    """The deliveries that arrived `OPENING_SECONDS` or more after their watch opened (past
    its catch-up, and past the burst of opens at a window's or a game's start)."""
    blocks: list[float] = field(default_factory=list)
    cpu: float = 0.0
    seconds: float = 0.0
    refused: int = 0
    round_moves: list[list[float]] = field(default_factory=list)
    into: list[float] = field(default_factory=list)
    """Seconds into its window each of `moves` began (the watchers open at its start)."""


MEASURED = (*CONDITIONS, "warm", "long")
ERRORS_KEPT = 100
"""Errors kept to print (each is counted): a failing night stays bounded."""


@dataclass
class Tally:
    """What the spectators' process counted (each process its own; merged at the end)."""

    missed: int = 0
    """Updates a watch skipped: a gap in the event sequences it was given."""
    unread: int = 0
    """Updates answered before a watch closed that it had not read when it gave up (silent
    for `DRAIN_SECONDS` after its window or the night ended: still catching up, or lost)."""
    duplicated: int = 0
    early: int = 0
    """Updates that arrived before their RecordMove's answer reached the recorder."""
    unanswered: int = 0
    """Updates never matched to an answer (a game two games back, the night's end)."""
    opens: int = 0
    cpu: float = 0.0
    """CPU seconds of the spectators' process over the night."""
    errors: list[str] = field(default_factory=list)
    more_errors: int = 0

    def error(self, text: str) -> None:
        if len(self.errors) < ERRORS_KEPT:
            self.errors.append(text)
        else:
            self.more_errors += 1


@dataclass
class Night:
    """The run's state in the recorders' process."""

    condition: str = "warm"
    """What is measured now: a condition, "long", or "warm" (setting up, draining: not)."""
    stopping: bool = False
    stats: dict[str, Stats] = field(
        default_factory=lambda: {c: Stats(round_moves=[[]]) for c in MEASURED}
    )
    tally: Tally = field(default_factory=Tally)
    """The recorders' errors, then everything the spectators' processes counted."""
    opens: int = 0
    """Watch opens so far (from the spectators' processes, every half second)."""
    window_opened: float = 0.0
    recording_cpu: float = 0.0
    """CPU seconds of this process (the recorders) over the night."""
    moves: int = 0
    games: int = 0
    tell: Callable[[int, tuple[Any, ...]], None] = lambda number, message: None
    """Sends a message about table `number` to the spectators' process watching it."""


class Table:
    """One table's recording (in the recorders' process): its game and its recorder."""

    def __init__(
        self, night: Night, number: int, game: Any, target: str, url: str, args: Any
    ) -> None:
        self.night = night
        self.number = number
        self.info = game
        self.mode = game_pb2.MODE_DEALT if number % 2 == 0 else game_pb2.MODE_TABLE
        self.target = target
        self.url = url
        self.args = args
        self.random = random.Random(number)
        self.players: list[tuple[str, str]] = []
        self.recorder = ("", "")
        self.watchers: list[tuple[str, str]] = []
        self.stepper = ("", "")
        self.game_id = ""
        self.version = 0
        self.revision = 0
        self.to_move: Any = None
        self.hidden_reveals = False
        self.owner = ""
        self.moves = 0

    async def join(self, clubs: Any, owner: str) -> None:
        self.owner = owner
        seats = max(self.info.min_players, min(SEATS, self.info.max_players))
        for seat in range(seats):
            self.players.append(
                await new_member(clubs, owner, f"t{self.number} p{seat}", clubs_pb2.ROLE_PLAYER)
            )
        self.recorder = await new_member(
            clubs, owner, f"t{self.number} recorder", clubs_pb2.ROLE_RECORDER
        )
        for index in range(self.args.watchers):
            self.watchers.append(
                await new_member(clubs, owner, f"t{self.number} w{index}", clubs_pb2.ROLE_SPECTATOR)
            )
        self.stepper = await new_member(
            clubs, owner, f"t{self.number} stepper", clubs_pb2.ROLE_SPECTATOR
        )

    # ------------------------------------------------------------------------- recording

    async def record(self) -> None:
        channel = aio.insecure_channel(self.target, OWN_CONNECTION)
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        token = metadata(self.recorder[1])
        try:
            await self._create(stub, token)
            while not self.night.stopping:
                pause = (
                    self.random.expovariate(1 / self.args.move_seconds)
                    if (self.args.move_seconds > 0)
                    else 0.0
                )
                await asyncio.sleep(pause)
                if self.night.stopping:
                    break
                await self._move(stub, token)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # reported, and the run goes on
            self.night.tally.error(f"table {self.number} recorder: {error!r}")
        finally:
            await channel.close()

    async def _create(self, stub: Any, token: Any) -> None:
        made = await retried(
            lambda: stub.CreateGame(
                service_pb2.CreateGameRequest(
                    game=self.info.name,
                    mode=self.mode,
                    players=[
                        events_pb2.Player(name=f"Seat {seat + 1}", member_id=member)
                        for seat, (member, _) in enumerate(self.players)
                    ],
                    request_id=os.urandom(8).hex(),
                ),
                metadata=token,
            )
        )
        self.game_id = made.game.game_id
        self.version = made.game.version
        self.to_move = made.game.to_move
        self.revision = 0
        self.moves = 0
        self.night.tell(self.number, ("game", self.number, self.game_id, self.version))
        self.night.games += 1

    def _answered(self, events: Any, answered: float) -> None:
        """Tells the spectators' process the table's new head and when each event's
        answer arrived here (their delivery times are measured from it)."""
        for event in events:
            self.revision = max(self.revision, event.revision)
        sequences = [(event.sequence, answered) for event in events]
        self.night.tell(
            self.number,
            ("moved", self.number, self.game_id, self.version, self.revision, self.moves,
             sequences),
        )  # fmt: skip

    async def _move(self, stub: Any, token: Any) -> None:
        lister, viewer, mover = self._mover()
        try:
            legal = await retried(
                lambda: stub.ListLegalMoves(
                    service_pb2.ListLegalMovesRequest(
                        game_id=self.game_id, page_size=500, viewer=viewer
                    ),
                    metadata=lister,
                )
            )
        except aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.PERMISSION_DENIED or self.hidden_reveals:
                raise
            self.hidden_reveals = True  # this game's reveals are listed by the host
            return
        if legal.to_move.HasField("terminal") or not legal.moves:
            await self._next_game(stub, token, abandon=False)
            return
        if self.moves >= self.args.max_moves:
            await self._next_game(stub, token, abandon=True)
            return
        notation = self.random.choice(legal.moves).notation
        condition = self.night.condition
        started = time.monotonic()
        try:
            answer = await stub.RecordMove(
                service_pb2.RecordMoveRequest(
                    game_id=self.game_id,
                    notation=notation,
                    expected_version=self.version,
                    request_id=os.urandom(8).hex(),
                ),
                metadata=mover,
            )
        except aio.AioRpcError as error:
            self.night.stats[condition].refused += 1
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                await asyncio.sleep(0.5)
                return
            raise
        answered = time.monotonic()
        self.night.stats[condition].moves.append(answered - started)
        self.night.stats[condition].round_moves[-1].append(answered - started)
        self.night.stats[condition].into.append(started - self.night.window_opened)
        self.night.moves += 1
        self.moves += 1
        self.version = answer.game.version
        self.to_move = answer.game.to_move
        self._answered(answer.events, answered)
        if answer.game.to_move.HasField("terminal"):
            await self._next_game(stub, token, abandon=False)

    def _mover(self) -> tuple[Any, Any, Any]:
        """Who lists the next move's choices, as whose eyes, and who records it. A seat's
        decision is listed by the player in that seat, as their seat (only they may see
        their hand); in a dealt game they record it too, in table mode the table's recorder
        types every move. The table's own decisions (table mode's reveals) are listed by
        the recorder, or, when the list would show what is hidden from a recorder, by the
        host who holds the box: the club's owner, as the full view."""
        recorder = metadata(self.recorder[1])
        if self.to_move.HasField("seat"):
            seat = self.to_move.seat
            player = metadata(self.players[seat][1])
            dealt = self.mode == game_pb2.MODE_DEALT
            return player, service_pb2.Viewer(seat=seat), player if dealt else recorder
        if self.hidden_reveals:
            return metadata(self.owner), service_pb2.Viewer(full=True), recorder
        return recorder, None, recorder

    async def _next_game(self, stub: Any, token: Any, abandon: bool) -> None:
        if abandon:
            answer = await retried(
                lambda: stub.AbandonGame(
                    service_pb2.AbandonGameRequest(
                        game_id=self.game_id,
                        expected_version=self.version,
                        request_id=os.urandom(8).hex(),
                    ),
                    metadata=token,
                )
            )
            self.version = answer.game.version
            # (AbandonGame answers the game, not its events: the abandonment's delivery is
            # not timed. Reading `answer.events` here ended the table's recorder.)
            self._answered((), time.monotonic())
        self.night.tell(self.number, ("ended", self.number))
        await self._create(stub, token)


# ----------------------------------------------------------------------------- spectators


@dataclass
class Watched:
    """One table as the spectators' process knows it, from the recorders' messages."""

    number: int
    target: str
    """The table's instance (the stepper's, with `url`)."""
    url: str
    watchers: list[tuple[str, str]]
    """Each watcher's token and the instance it watches on."""
    stepper: str
    game_id: str = ""
    version: int = 0
    revision: int = 0
    moves: int = 0
    ended: bool = False
    answered: dict[str, dict[int, float]] = field(default_factory=dict)
    """When each event's RecordMove was answered, by game and sequence: this game's and the
    one before's (its watchers may still be reading on)."""
    waiting: dict[tuple[str, int], list[tuple[float, float, str]]] = field(default_factory=dict)
    """Updates read before their answer was known here, by (game, sequence): when each
    arrived, when its watch opened and the condition then."""
    changed: asyncio.Event | None = None
    """Set (and replaced) when the game changes or ends."""

    def wake(self) -> None:
        if self.changed is not None:
            self.changed.set()
        self.changed = asyncio.Event()


class Spectators:
    """The watchers and the picture steppers of some tables, in a process of their own."""

    def __init__(self, tables: list[Watched], args: Any, connection: Any) -> None:
        self.tables = {table.number: table for table in tables}
        self.args = args
        self.connection = connection
        self.condition = "warm"
        self.watching = asyncio.Event()
        self.stepping = asyncio.Event()
        self.stopping = asyncio.Event()
        self.stats = {c: Stats() for c in MEASURED}
        self.tally = Tally()
        self.watches = 0
        """Watches open and picture blocks asked now (draining waits for them)."""
        for table in tables:
            table.wake()

    # ------------------------------------------------------------------------- messages

    def apply(self, message: tuple[Any, ...]) -> None:
        """One message from the recorders' process (in the order they were sent)."""
        kind = message[0]
        if kind == "moved":
            _, number, game_id, version, revision, moves, sequences = message
            table = self.tables[number]
            if game_id == table.game_id:
                table.version, table.revision, table.moves = version, revision, moves
            answers = table.answered.setdefault(game_id, {})
            for sequence, answered in sequences:
                answers[sequence] = answered
                for arrived, opened, condition in table.waiting.pop((game_id, sequence), ()):
                    if answered >= opened:
                        self._delivered(condition, arrived - answered, arrived - opened)
        elif kind == "game":
            _, number, game_id, version = message
            table = self.tables[number]
            kept = {game_id: {}, table.game_id: table.answered.get(table.game_id, {})}
            table.answered = kept
            for key in [key for key in table.waiting if key[0] not in kept]:
                self.tally.unanswered += len(table.waiting.pop(key))
            table.game_id, table.version = game_id, version
            table.revision = table.moves = 0
            table.ended = False
            table.wake()
        elif kind == "ended":
            table = self.tables[message[1]]
            table.ended = True
            table.wake()
        elif kind == "window":
            _, self.condition, watching, stepping = message
            (self.watching.set if watching else self.watching.clear)()
            (self.stepping.set if stepping else self.stepping.clear)()
        elif kind == "drain":
            asyncio.get_running_loop().create_task(self._drain())
        elif kind == "stop":
            self.stopping.set()
            self.watching.set()
            self.stepping.set()
            for table in self.tables.values():
                table.wake()

    def _delivered(self, condition: str, delay: float, since_open: float) -> None:
        if delay < 0:
            self.tally.early += 1  # it arrived before its answer reached the recorder
        self.stats[condition].deliveries.add(max(0.0, delay))
        if since_open >= OPENING_SECONDS:
            self.stats[condition].settled.add(max(0.0, delay))

    async def _drain(self) -> None:
        """Waits for the watches reading on to what was answered, then says so."""
        drained = time.monotonic() + DRAIN_LIMIT
        while self.watches and time.monotonic() < drained:
            await asyncio.sleep(0.05)
        self.connection.send(("drained",))

    async def progress(self) -> None:
        """The watch opens so far, for the long night's count, every half second."""
        while not self.stopping.is_set():
            self.connection.send(("progress", self.tally.opens))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), 0.5)

    # ------------------------------------------------------------------------- watching

    async def watch(self, table: Watched, token: str, target: str) -> None:
        """One watcher (on the instance at `target`): watches the table's game while watching
        is on, from revision 1 (in the long night from a random revision, and again halfway
        through what is left)."""
        channel = aio.insecure_channel(target, OWN_CONNECTION)
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        mine = random.Random(token)
        try:
            while not self.stopping.is_set():
                await self.watching.wait()
                game_id = table.game_id
                if self.stopping.is_set():
                    break
                if table.ended or not game_id:
                    await self._next_game_of(table, game_id)
                    continue
                start, reopen = 1, 0
                if self.args.long:
                    start = mine.randint(1, max(1, table.revision))
                    reopen = table.revision + max(1, (self.args.max_moves - table.moves) // 2)
                ended = await self._watch_game(stub, metadata(token), table, start, reopen)
                if ended:
                    await self._next_game_of(table, game_id)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # reported, and the run goes on
            self.tally.error(f"table {table.number} watcher: {error!r}")
        finally:
            await channel.close()

    async def _next_game_of(self, table: Watched, game_id: str) -> None:
        while table.game_id == game_id and not self.stopping.is_set():
            assert table.changed is not None
            await table.changed.wait()

    async def _watch_game(
        self, stub: Any, token: Any, table: Watched, start: int, reopen: int
    ) -> bool:
        """One WatchGame: until the game ends (then True), watching stops (then on to what
        had been answered, at most DRAIN_SECONDS) or, with `reopen`, that revision; checks
        every update's sequence against the one before."""
        game_id = table.game_id
        self.tally.opens += 1
        self.watches += 1
        opened = time.monotonic()
        seen = table.version
        call = stub.WatchGame(
            service_pb2.WatchGameRequest(
                game_id=game_id,
                from_revision=start,
                viewer=service_pb2.Viewer(spectator=True),
            ),
            metadata=token,
        )
        last = 0
        closing: float | None = None
        target = 0
        # A task reads the stream into a queue: cancelling a wait on the stream itself (to
        # look at the clock) would close its iterator.
        arrived: asyncio.Queue[Any] = asyncio.Queue()

        async def read() -> None:
            try:
                async for item in call:
                    arrived.put_nowait((time.monotonic(), item))
            except aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.CANCELLED:
                    self.tally.error(f"table {table.number} watch: {error.details()}")
            finally:
                arrived.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            while True:
                if closing is None and (not self.watching.is_set() or self.stopping.is_set()):
                    # Every answer sent before watching stopped is known here by now (the
                    # pipe keeps the recorders' order).
                    closing = time.monotonic()
                    target = max(table.answered.get(game_id, {}), default=0)
                if closing is not None and (
                    last >= target or time.monotonic() - closing > DRAIN_SECONDS
                ):
                    # (`closing` moves on with each update read: a watch still catching up
                    # reads on, one silent for DRAIN_SECONDS gives up on the rest.)
                    self.tally.unread += max(0, target - last)
                    return False
                try:
                    got = await asyncio.wait_for(arrived.get(), timeout=0.25)
                except TimeoutError:
                    continue
                if got is None:
                    self.tally.error(f"table {table.number}: a watch ended early")
                    return False
                if closing is None and not self.watching.is_set():
                    # Watching stopped while this one waited: it is read on, not counted in
                    # the condition that follows.
                    closing = time.monotonic()
                    target = max(table.answered.get(game_id, {}), default=0)
                now, item = got
                if not item.HasField("update"):
                    continue
                event = item.update.event
                if last and event.sequence <= last:
                    self.tally.duplicated += 1
                    continue
                if last and event.sequence > last + 1:
                    self.tally.missed += event.sequence - last - 1
                last = event.sequence
                answered = table.answered.get(game_id, {}).get(event.sequence)
                if closing is not None:
                    # Read on after its window: not the next condition's delivery.
                    closing = max(closing, now)
                elif answered is not None:
                    if answered >= opened:
                        self._delivered(self.condition, now - answered, now - opened)
                elif event.sequence > seen and game_id in table.answered:
                    # Its answer is on its way here: measured when it comes.
                    table.waiting.setdefault((game_id, event.sequence), []).append(
                        (now, opened, self.condition)
                    )
                if event.HasField("game_ended"):
                    return True
                if reopen and event.revision >= reopen:
                    return False
        finally:
            self.watches -= 1
            call.cancel()
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    # ------------------------------------------------------------------------- pictures

    async def step(self, table: Watched) -> None:
        """The picture stepper: a 32-revision block of the table's game every few seconds,
        as the web app fetches them (ReplayGame with pictures, Connect, the HTTP port)."""
        from connectrpc.client import ConnectClient
        from connectrpc.code import Code
        from connectrpc.compat import google_protobuf_binary_codec
        from connectrpc.errors import ConnectError

        from tablelog.service.api.http_api import method_info

        client = ConnectClient(
            table.url,
            codec=google_protobuf_binary_codec(),
            send_compression=None,
            accept_compression=(),
        )
        replay = method_info("/tablelog.v1.TablelogService/ReplayGame")
        over_grpc = self.args.pictures_over == "grpc"
        channel = aio.insecure_channel(table.target, OWN_CONNECTION) if over_grpc else None
        grpc_stub = None if channel is None else service_pb2_grpc.TablelogServiceStub(channel)
        headers = {"authorization": f"Bearer {table.stepper}"}
        mine = random.Random(table.number + 1000)
        first = 1
        game_id = ""
        try:
            while not self.stopping.is_set():
                await self.stepping.wait()
                await asyncio.sleep(mine.expovariate(1 / self.args.step_seconds))
                if not self.stepping.is_set() or self.stopping.is_set():
                    continue
                if game_id != table.game_id:
                    game_id, first = table.game_id, 1
                head = table.revision
                if head < 1:
                    continue
                if first > head:
                    first = 1
                last = min(head, first + BLOCK - 1)
                condition = self.condition
                started = time.monotonic()
                self.watches += 1
                request = service_pb2.ReplayGameRequest(
                    game_id=game_id,
                    from_revision=first,
                    to_revision=last,
                    viewer=service_pb2.Viewer(spectator=True),
                    picture=True,
                )
                try:
                    if grpc_stub is not None:  # --pictures-over grpc
                        async for _ in grpc_stub.ReplayGame(
                            request, metadata=metadata(table.stepper), timeout=60
                        ):
                            pass
                    else:
                        async for _ in client.execute_server_stream(
                            request=request, method=replay, headers=headers, timeout_ms=60_000
                        ):
                            pass
                except aio.AioRpcError as error:
                    self.stats[condition].refused += 1
                    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        self.tally.error(f"table {table.number} stepper: {error!r}")
                    continue
                except ConnectError as error:
                    self.stats[condition].refused += 1
                    if error.code != Code.RESOURCE_EXHAUSTED:  # busy: asked again later
                        self.tally.error(f"table {table.number} stepper: {error!r}")
                    continue
                finally:
                    self.watches -= 1
                # A block counts in the condition it was asked in.
                self.stats[condition].blocks.append(time.monotonic() - started)
                first = last + 1
        except asyncio.CancelledError:
            pass
        finally:
            await client.close()
            if channel is not None:
                await channel.close()


def spectate(connection: Any, args: Any) -> None:
    """The spectators' process: its tables first (it starts while their members are
    being made), then its watchers and steppers until told to stop, then what they
    measured, sent back."""
    try:
        kind, tables = connection.recv()
    except (EOFError, OSError):  # the recorders' process stopped before the night began
        return
    assert kind == "tables"
    asyncio.run(_spectate(connection, tables, args))


async def _spectate(connection: Any, tables: list[Watched], args: Any) -> None:
    loop = asyncio.get_running_loop()
    spectators = Spectators(tables, args, connection)

    def receive() -> None:
        """Reads the recorders' messages (in a thread: a blocking read, in their order)."""
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):  # the recorders' process is gone
                message = ("stop",)
            loop.call_soon_threadsafe(spectators.apply, message)
            if message[0] == "stop":
                return

    threading.Thread(target=receive, name="recorders' messages", daemon=True).start()
    tasks = [
        asyncio.create_task(spectators.watch(table, token, target))
        for table in tables
        for token, target in table.watchers
    ]
    tasks += [asyncio.create_task(spectators.step(table)) for table in tables]
    tasks.append(asyncio.create_task(spectators.progress()))
    connection.send(("ready",))
    await spectators.stopping.wait()
    _, pending = await asyncio.wait(tasks, timeout=10)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for table in tables:
        spectators.tally.unanswered += sum(len(waiting) for waiting in table.waiting.values())
    spectators.tally.cpu = time.process_time()
    # Plain data: a class of this script, run as __main__, is another module's in the
    # recorders' process.
    measured = {
        condition: (
            (got.deliveries.buckets, got.deliveries.zeros),
            (got.settled.buckets, got.settled.zeros),
            got.blocks,
            got.refused,
        )
        for condition, got in spectators.stats.items()
    }
    connection.send(("report", measured, dataclasses.asdict(spectators.tally)))


class SpectatorProcesses:
    """The recorders' side of the spectators' processes: table `n`'s watchers and stepper
    are in process `n % len(processes)`."""

    def __init__(self, args: Any) -> None:
        """Starts the processes (each then waits for its tables: `begin`)."""
        context = multiprocessing.get_context("spawn")  # no fork of a process running gRPC
        count = max(1, min(args.spectator_processes, args.tables))
        self.connections: list[Any] = []
        self.processes: list[Any] = []
        self.opens = [0] * count
        self.reports: list[tuple[dict[str, Any], dict[str, Any]] | None] = [None] * count
        self.ready = [asyncio.Event() for _ in range(count)]
        self.drained = [asyncio.Event() for _ in range(count)]
        self.ended = [asyncio.Event() for _ in range(count)]
        for index in range(count):
            mine, theirs = context.Pipe()
            # (daemon: one left waiting for its tables ends with this process)
            process = context.Process(
                target=spectate, args=(theirs, args), name=f"spectators {index}", daemon=True
            )
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)
            asyncio.get_running_loop().add_reader(mine.fileno(), self._receive, index)

    def begin(self, tables: list[Table], servers: list[Server]) -> None:
        """Sends each process its tables, their watchers' and steppers' tokens."""
        count = len(self.processes)
        for index in range(count):
            watched = [
                Watched(
                    table.number,
                    table.target,
                    table.url,
                    [
                        (token, servers[(table.number + k) % len(servers)].target)
                        for k, (_, token) in enumerate(table.watchers)
                    ],
                    table.stepper[1],
                )
                for table in tables
                if table.number % count == index
            ]
            self.connections[index].send(("tables", watched))

    def abandon(self) -> None:
        """Ends the processes before the night began (each reads the end of its pipe)."""
        for index, connection in enumerate(self.connections):
            asyncio.get_running_loop().remove_reader(connection.fileno())
            connection.close()
            self.processes[index].join(10)
            if self.processes[index].is_alive():
                self.processes[index].kill()

    def tell(self, number: int, message: tuple[Any, ...]) -> None:
        connection = self.connections[number % len(self.connections)]
        if not connection.closed:
            connection.send(message)

    def tell_all(self, message: tuple[Any, ...]) -> None:
        for connection in self.connections:
            if not connection.closed:
                connection.send(message)

    def _receive(self, index: int) -> None:
        connection = self.connections[index]
        try:
            message = connection.recv()
        except (EOFError, OSError):
            message = ("gone",)
        kind = message[0]
        if kind == "progress":
            self.opens[index] = message[1]
        elif kind == "ready":
            self.ready[index].set()
        elif kind == "drained":
            self.drained[index].set()
        elif kind == "report":
            self.reports[index] = (message[1], message[2])
        if kind in ("report", "gone"):
            asyncio.get_running_loop().remove_reader(connection.fileno())
            self.ready[index].set()
            self.drained[index].set()
            self.ended[index].set()

    async def wait(self, events: list[asyncio.Event], seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), seconds)

    async def finish(self, night: Night) -> None:
        """Stops the spectators and adds what they measured to the night's figures."""
        self.tell_all(("stop",))
        await self.wait(self.ended, 60)
        for index, report in enumerate(self.reports):
            if report is None:
                night.tally.error(f"the spectators' process {index} did not report")
                continue
            measured, tally = report
            for condition, (deliveries, settled, blocks, refused) in measured.items():
                stats = night.stats[condition]
                stats.deliveries.merge(*deliveries)
                stats.settled.merge(*settled)
                stats.blocks += blocks
                stats.refused += refused
            for name in (
                "missed",
                "unread",
                "duplicated",
                "early",
                "unanswered",
                "cpu",
                "more_errors",
            ):
                setattr(night.tally, name, getattr(night.tally, name) + tally[name])
            for error in tally["errors"]:
                night.tally.error(error)
            self.opens[index] = tally["opens"]
        night.opens = sum(self.opens)
        for index, process in enumerate(self.processes):
            await asyncio.to_thread(process.join, 10)
            if process.is_alive():
                process.kill()
                await asyncio.to_thread(process.join)
            connection = self.connections[index]
            if not self.ended[index].is_set():
                asyncio.get_running_loop().remove_reader(connection.fileno())
            connection.close()


# ----------------------------------------------------------------------------- the night


@dataclass
class Report:
    backend: str
    instances: int
    night: Night
    rss_start: int
    rss_end: int
    main_start: int
    main_end: int
    samples: list[tuple[float, int, int]]
    """(seconds, RSS of the servers and their picture workers, RSS of the servers alone)"""
    gauges: list[dict[str, float]]
    seconds: float


async def play(servers: list[Server], owner: str, args: Any, backend: str) -> Report:
    night = Night()
    channel = aio.insecure_channel(servers[0].target)
    clubs = clubs_pb2_grpc.ClubServiceStub(channel)
    tablelog = service_pb2_grpc.TablelogServiceStub(channel)
    types = await tablelog.ListGameTypes(
        service_pb2.ListGameTypesRequest(), metadata=metadata(owner)
    )
    infos = {info.name: info for info in types.games}
    tables = [
        Table(
            night,
            number,
            infos[GAMES[number % len(GAMES)]],
            servers[number % len(servers)].target,
            servers[number % len(servers)].url,
            args,
        )
        for number in range(args.tables)
    ]
    print(f"{backend}: {args.tables} tables, making their members ...", file=sys.stderr)
    spectators = SpectatorProcesses(args)  # (its processes start meanwhile)
    try:
        await clubs.UpdateClub(  # players record their own moves in dealt games
            clubs_pb2.UpdateClubRequest(players_may_record=True), metadata=metadata(owner)
        )
        for table in tables:
            await table.join(clubs, owner)
        await channel.close()
    except BaseException:
        spectators.abandon()
        raise
    people = sum(len(t.players) + 2 + len(t.watchers) for t in tables)
    print(f"{backend}: {people} members with their own tokens", file=sys.stderr)

    def pids() -> list[int]:
        return [pid for server in servers for pid in server.pids()]

    rss_start = rss_bytes(pids())
    main_start = rss_bytes([server.process.pid for server in servers])
    spectators.begin(tables, servers)
    night.tell = spectators.tell
    tasks = [asyncio.create_task(table.record()) for table in tables]
    await spectators.wait(spectators.ready, 120)
    while any(not table.game_id for table in tables) and not night.tally.errors:
        await asyncio.sleep(0.1)
    samples: list[tuple[float, int, int]] = []
    gauges: list[dict[str, float]] = []
    started = time.monotonic()
    recording_cpu = time.process_time()

    async def window(condition: str, seconds: float) -> None:
        night.condition = condition
        stats = night.stats[condition]
        if stats.round_moves[-1]:
            stats.round_moves.append([])
        spectators.tell_all(
            ("window", condition, condition in ("b", "c", "long"), condition in ("c", "long"))
        )
        before, opened = cpu_seconds(pids()), time.monotonic()
        night.window_opened = opened
        await asyncio.sleep(seconds)
        stats.cpu += cpu_seconds(pids()) - before
        stats.seconds += time.monotonic() - opened

    try:
        await window("warm", min(5.0, args.window / 4))
        if args.long:
            wanted = {name: int(count * args.scale) for name, count in LONG.items()}
            if args.watchers == 0:  # (a night without watchers, to tell what they hold)
                wanted["opens"] = 0
            night.condition = "long"
            spectators.tell_all(("window", "long", True, True))
            before, opened = cpu_seconds(pids()), time.monotonic()
            last_print = last_census = 0.0
            while time.monotonic() - opened < args.long_seconds:
                now = time.monotonic() - started
                if args.census and now - last_census >= args.census_every:
                    if last_census:  # (not at the start)
                        for server in servers:
                            server.process.send_signal(signal.SIGUSR2)
                    last_census = now
                serving = [server.process.pid for server in servers]
                samples.append((now, rss_bytes(pids()), rss_bytes(serving)))
                gauges.append(await asyncio.to_thread(scrape, servers[0].url))
                night.opens = sum(spectators.opens)
                done = {"moves": night.moves, "games": night.games, "opens": night.opens}
                if now - last_print > 30:
                    last_print = now
                    print(f"  {now:.0f} s: {done}, RSS {samples[-1][1] >> 20} MiB, "
                          f"{gauges[-1]}", file=sys.stderr)  # fmt: skip
                if all(done[name] >= wanted[name] for name in wanted):
                    break
                await asyncio.sleep(args.sample_seconds)
            night.stats["long"].cpu = cpu_seconds(pids()) - before
            night.stats["long"].seconds = time.monotonic() - opened
        else:
            for number in range(args.rounds):
                order = CONDITIONS[number % 3 :] + CONDITIONS[: number % 3]
                for condition in order:
                    print(f"{backend}: round {number + 1}, {NAMES[condition]} ...",
                          file=sys.stderr)  # fmt: skip
                    await window(condition, args.window)
        night.condition = "warm"  # what follows is not measured
        spectators.tell_all(("window", "warm", False, False))
        spectators.tell_all(("drain",))  # reading on to what was answered
        await spectators.wait(spectators.drained, DRAIN_LIMIT + 5)
    finally:
        seconds = time.monotonic() - started
        night.recording_cpu = time.process_time() - recording_cpu
        rss_end = rss_bytes(pids())
        main_end = rss_bytes([server.process.pid for server in servers])
        night.stopping = True
        _, pending = await asyncio.wait(tasks, timeout=10)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await spectators.finish(night)
    return Report(
        backend,
        len(servers),
        night,
        rss_start,
        rss_end,
        main_start,
        main_end,
        samples,
        gauges,
        seconds,
    )


GAUGES = ("tablelog_head_cache_bytes", "tablelog_watched_games", "tablelog_watchers")


def scrape(url: str) -> dict[str, float]:
    """The first instance's gauges of what it holds, from its /metrics."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    found: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in GAUGES:
            found[name] = float(value)
    return found


def quantile(values: list[float] | Delays, share: float) -> float:
    if isinstance(values, Delays):
        return values.quantile(share)
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def ms(values: list[float] | Delays, share: float) -> str:
    return "-" if not values else f"{1000 * quantile(values, share):.1f}"


def print_report(report: Report, args: Any) -> bool:
    """The table; whether the night held (no missed or duplicated update, no error)."""
    night = report.night
    tally = night.tally
    print(
        f"\n{report.backend} Redis, {report.instances} instance(s): {args.tables} tables "
        f"({', '.join(GAMES)} in turn, dealt and table mode in turn), a move every "
        f"{args.move_seconds:g} s per table, {args.watchers} watchers per table, a picture "
        f"block every {args.step_seconds:g} s per table; "
        + (
            f"the long night ({report.seconds:.0f} s)"
            if args.long
            else f"{args.rounds} round(s) of {args.window:g} s windows"
        )
    )
    print(
        "| condition | RecordMove p50 / p95 / p99 / max ms | moves | delivery p50 / p99 ms "
        "| picture block p50 / p99 ms | server cores | refused |"
    )
    print("|---|---|---|---|---|---|---|")
    for condition in ("long",) if args.long else CONDITIONS:
        stats = night.stats[condition]
        moves = stats.moves
        print(
            f"| {NAMES.get(condition, 'all at once')} | {ms(moves, 0.5)} / {ms(moves, 0.95)} / "
            f"{ms(moves, 0.99)} / {ms(moves, 1.0)} | {len(moves)} | "
            f"{ms(stats.deliveries, 0.5)} / {ms(stats.deliveries, 0.99)} | "
            f"{ms(stats.blocks, 0.5)} / {ms(stats.blocks, 0.99)} | "
            f"{stats.cpu / max(stats.seconds, 1e-9):.2f} | {stats.refused} |"
        )
    print(
        f"server RSS (tablelog serve and its picture workers, not Redis): "
        f"{report.rss_start / 2**20:.0f} MiB at start, {report.rss_end / 2**20:.0f} MiB at end "
        f"(the serving process alone: {report.main_start / 2**20:.0f} MiB, then "
        f"{report.main_end / 2**20:.0f} MiB)"
    )
    if not args.long:
        a = night.stats["a"]
        for condition in ("c", "b"):
            got = night.stats[condition]
            ratio = quantile(got.moves, 0.99) / quantile(a.moves, 0.99)
            rounds = [
                quantile(w, 0.99) / quantile(f, 0.99)
                for f, w in zip(a.round_moves, got.round_moves, strict=False)
                if f and w
            ]
            spread = ", ".join(f"{r:.2f}" for r in rounds)
            print(
                f"RecordMove p99 ({condition})/(a): {ratio:.2f}x (target <= "
                f"{TARGETS[condition]:g}x; per round: {spread})"
            )
        for condition in ("b", "c"):
            got = night.stats[condition]
            print(
                f"delivery in ({condition}) of the updates that arrived {OPENING_SECONDS:g} s "
                f"or more after their watch opened: p50 {ms(got.settled, 0.5)}, p99 "
                f"{ms(got.settled, 0.99)} ms ({len(got.settled)} of {len(got.deliveries)})"
            )
        # Whether the slow moves with spectators are the burst of watch opens at a window's
        # start (every watcher opens from revision 1 then) or spread over the window.
        bar = quantile(a.moves, 0.99)
        for condition in ("b", "c"):
            got = night.stats[condition]
            slow = [t for m, t in zip(got.moves, got.into, strict=True) if m > bar]
            early = sum(t < OPENING_SECONDS for t in slow)
            print(
                f"moves in ({condition}) slower than (a)'s p99 ({1000 * bar:.1f} ms): "
                f"{len(slow)} of {len(got.moves)}, {early} of them begun in the first "
                f"{OPENING_SECONDS:g} s of their window (the watchers' opening; "
                f"{min(1.0, OPENING_SECONDS / args.window):.0%} of its time)"
            )
    print(
        f"watch opens {night.opens}, moves {night.moves}, games {night.games}; updates "
        f"missed {tally.missed} (gaps in a watch's sequence), unread {tally.unread} (not "
        f"read when a watch gave up, {DRAIN_SECONDS:g} s silent after its window), "
        f"duplicated {tally.duplicated} (all three must be 0); "
        f"{tally.early} arrived before their RecordMove's answer (counted as 0 ms)"
        + (f"; {tally.unanswered} never matched to an answer" if tally.unanswered else "")
    )
    print(
        f"CPU over the night's {report.seconds:.0f} s: the recorders' process "
        f"{night.recording_cpu:.1f} s, the spectators' process(es) "
        f"({args.spectator_processes}) {tally.cpu:.1f} s"
    )
    if args.long:
        print_long(report, args)
    for error in tally.errors[:10]:
        print(f"error: {error}")
    errors = len(tally.errors) + tally.more_errors
    if errors > 10:
        print(f"error: and {errors - 10} more")
    return tally.missed == 0 and tally.unread == 0 and tally.duplicated == 0 and not errors


CEILINGS = (
    ("head-cache-bytes", "the cached game heads", "256M"),
    ("picture-cache-bytes", "the drawn pictures", "64M"),
)


def size_of(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def print_long(report: Report, args: Any) -> None:
    samples = report.samples
    if len(samples) < 4:
        print("too few RSS samples for the second half")
        return
    half = samples[len(samples) // 2 :]

    def second_half(rss: list[int]) -> str:
        low, high = min(rss), max(rss)
        return f"{low / 2**20:.0f} to {high / 2**20:.0f} MiB ({high / low - 1:+.1%})"

    every = max(1, len(samples) // 12)
    print(
        "RSS over the night (s: MiB): "
        + ", ".join(f"{t:.0f}: {r / 2**20:.0f}" for t, r, _ in samples[::every])
        + f", {samples[-1][0]:.0f}: {samples[-1][1] / 2**20:.0f}"
    )
    totals = [r for _, r, _ in half]
    flat = max(totals) <= 1.10 * min(totals)
    print(
        f"second half: {second_half(totals)}: "
        f"{'flat within 10%' if flat else 'NOT flat within 10%'}; the serving process(es) "
        f"{second_half([m for _, _, m in half])}, the picture worker(s) "
        f"{second_half([max(1, r - m) for _, r, m in half])}"
    )
    heads = [g.get("tablelog_head_cache_bytes", 0.0) for g in report.gauges]
    if heads:
        print(
            f"the head cache's own count of its bytes (first instance): "
            f"{heads[len(heads) // 2] / 2**20:.0f} MiB halfway, {heads[-1] / 2**20:.0f} MiB "
            f"at the end; watched games {report.gauges[-1].get('tablelog_watched_games')}, "
            f"watchers {report.gauges[-1].get('tablelog_watchers')}"
        )
    settings = dict(args.serve_setting)
    ceilings = 0
    for flag, what, default in CEILINGS:
        size = size_of(settings.get(flag, default))
        ceilings += size * report.instances
        print(f"  ceiling --{flag} {size / 2**20:g} MiB: {what}, per instance")
    workers = int(settings.get("picture-workers", str(PictureLimits().workers)))
    # (With no worker the server draws, and remembers the parts, itself.)
    ceilings += FRAGMENTS_BYTES * max(1, workers) * report.instances
    print(
        f"  ceiling {FRAGMENTS_BYTES / 2**20:g} MiB (fixed): the board parts a picture worker "
        f"remembers (the server, with no worker), {workers} worker(s) per instance"
    )
    print(
        "  watcher queues: 256 updates per watcher (docs/service.md, Watching), at most "
        "--max-watchers (10,000) per instance"
    )
    # The fixed base: the servers before any call, and the picture workers (started at the
    # first picture, they import the five games in their first seconds) 5 s after first seen.
    seen = [(t, r - m) for t, r, m in samples if r - m > 0]
    workers_start = next((w for t, w in seen if t >= seen[0][0] + 5), seen[-1][1]) if seen else 0
    base = report.rss_start + workers_start
    largest = max(r for _, r, _ in samples)
    print(
        f"largest RSS {largest / 2**20:.0f} MiB against the ceilings {ceilings >> 20} MiB + "
        f"the fixed base {base / 2**20:.0f} MiB (the servers at the start "
        f"{report.rss_start / 2**20:.0f} MiB, the picture workers once started "
        f"{workers_start / 2**20:.0f} MiB): {'under' if largest <= ceilings + base else 'OVER'}"
    )


def run(backend: str, args: Any) -> bool:
    with tempfile.TemporaryDirectory(prefix="tablelog-club-night-") as scratch:
        directory = Path(scratch)
        redis_process = None
        servers: list[Server] = []
        try:
            redis_url = None
            if backend == "standalone":
                (directory / "redis").mkdir()
                redis_process, redis_url = standalone_redis(directory / "redis")
            extra = [f"--{flag}={value}" for flag, value in args.serve_setting]
            for index in range(args.instances):
                environment = dict(pair.split("=", 1) for pair in args.serve_env)
                memray = args.memray and f"{args.memray}.{backend}.{index}"
                census = args.census and f"{args.census}.{backend}.{index}"
                servers.append(
                    serve(
                        directory / "data", redis_url, args.durability, extra, environment,
                        memray, census,
                    )
                )  # fmt: skip
            owner = (directory / "data" / "owner.token").read_text(encoding="utf-8").strip()
            report = asyncio.run(play(servers, owner, args, backend))
        finally:
            for server in servers:
                stop(server.process)
            if redis_process is not None:
                redis_process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    redis_process.wait(10)
    return print_report(report, args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--backends", nargs="+", default=["embedded", "standalone"],
                        choices=("embedded", "standalone"))  # fmt: skip
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--watchers", type=int, default=10, help="per table")
    parser.add_argument("--move-seconds", type=float, help="a table's mean gap between moves "
                        "(default 2; 0 in the long night: as fast as answered)")  # fmt: skip
    parser.add_argument("--step-seconds", type=float, default=3.0,
                        help="a stepper's mean gap between picture blocks")  # fmt: skip
    parser.add_argument("--window", type=float, default=60.0, help="seconds per condition")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-moves", type=int, help="a game is abandoned past this many "
                        "moves (default 300; 200 in the long night)")  # fmt: skip
    parser.add_argument("--long", action="store_true", help="the long night (issue 29 item 4)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="the long night's counts, times this")  # fmt: skip
    parser.add_argument("--long-seconds", type=float, default=4 * 3600.0,
                        help="the long night stops here even short of its counts")  # fmt: skip
    parser.add_argument("--sample-seconds", type=float, default=5.0)
    parser.add_argument("--instances", type=int, default=1,
                        help="tablelog serve processes on one Redis")  # fmt: skip
    parser.add_argument("--spectator-processes", type=int, default=1,
                        help="processes the watchers and steppers play from (the "
                        "recorders have this one to themselves)")  # fmt: skip
    parser.add_argument("--durability", default="disk", choices=("disk", "fast"))
    parser.add_argument("--serve-setting", nargs=2, action="append", default=[],
                        metavar=("FLAG", "VALUE"),
                        help="a setting of tablelog serve: head-cache-bytes 64M")  # fmt: skip
    parser.add_argument("--pictures-over", choices=("http", "grpc"), default="http",
                        help="the steppers' port: HTTP (the web app's) or gRPC")  # fmt: skip
    parser.add_argument("--serve-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable of tablelog serve")  # fmt: skip
    parser.add_argument("--memray", metavar="FILE",
                        help="run each tablelog serve under memray (pip install memray), "
                        "writing FILE.BACKEND.N; see benchmarks/memory_growth.py")  # fmt: skip
    parser.add_argument("--census", metavar="PREFIX",
                        help="the long night: a census of each server's heap every "
                        "--census-every seconds, to PREFIX.BACKEND.N.PID.TIME (each one a "
                        "full collection, which changes the night); see "
                        "benchmarks/heap_census.py")  # fmt: skip
    parser.add_argument("--census-every", type=float, default=300.0, metavar="SECONDS")
    args = parser.parse_args(argv)
    if args.move_seconds is None:
        args.move_seconds = 0.0 if args.long else 2.0
    if args.max_moves is None:
        args.max_moves = 200 if args.long else 300
    if args.spectator_processes < 1:
        parser.error("--spectator-processes must be 1 or more")
    if args.instances > 1 and "embedded" in args.backends:
        parser.error("--instances > 1 needs --backends standalone (one Redis for them all)")
    held = True
    for backend in args.backends:
        held = run(backend, args) and held
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
