"""Hostile callers against a live tablelog server (issue 11, build 7): fuzzed request bytes to
every RPC, fuzzed typed moves, notation and component files for every game, and racing
recorders over several service instances on one Redis. Each campaign counts what the server
answered; the service promises no INTERNAL or UNKNOWN answer, and that a refused call
changes nothing in Redis (`StoreDigest`). Used by tests/service/test_hostile_callers.py
(bounded counts) and benchmarks/hostile.py (counts as arguments)."""

from __future__ import annotations

import hashlib
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import redis
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from tablelog.replay.registry import all_games, find_game
from tablelog.service.api.server import channel
from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client import Client, TablelogError
from tests.service.helpers import OWNER_TOKEN

FORBIDDEN = frozenset({grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN})
SERVICE = service_pb2.DESCRIPTOR.services_by_name["TablelogService"]
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
CALL_TIMEOUT = 10.0
STREAM_TIMEOUT = 0.3
"""A fuzzed WatchGame on a real game would wait for moves: it ends at this deadline."""


@dataclass
class Tally:
    """What the server answered to one campaign."""

    calls: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    forbidden: list[str] = field(default_factory=list)
    """Calls answered INTERNAL or UNKNOWN (what was sent, what came back)."""
    changed: list[str] = field(default_factory=list)
    """Refused calls after which Redis was not what it was before."""

    def add(self, other: Tally) -> None:
        self.calls += other.calls
        self.codes.update(other.codes)
        self.forbidden += other.forbidden
        self.changed += other.changed

    def summary(self) -> str:
        codes = ", ".join(f"{code} {count}" for code, count in self.codes.most_common())
        return (
            f"{self.calls} calls ({codes}); {len(self.forbidden)} INTERNAL/UNKNOWN, "
            f"{len(self.changed)} refused calls that changed the store"
        )


class StoreDigest:
    """A digest of what every key in the server's Redis database holds (its content, in a
    canonical order: DUMP would not do, since Redis rehashes a hash incrementally on reads
    and DUMP then lists the same fields in another order): equal digests before and after a
    refused call mean it changed nothing."""

    def __init__(self, redis_url: str) -> None:
        self.redis = redis.Redis.from_url(redis_url)

    def __call__(self) -> bytes:
        keys = sorted(self.redis.scan_iter(count=1000))
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.type(key)
        kinds = pipe.execute()
        for key, kind in zip(keys, kinds, strict=True):
            if kind == b"hash":
                pipe.hgetall(key)
            elif kind == b"stream":
                pipe.xrange(key)
            elif kind == b"zset":
                pipe.zrange(key, 0, -1, withscores=True)
            elif kind == b"set":
                pipe.smembers(key)
            elif kind == b"list":
                pipe.lrange(key, 0, -1)
            else:
                pipe.get(key)
        digest = hashlib.sha256()
        for key, kind, value in zip(keys, kinds, pipe.execute(), strict=True):
            canonical = sorted(value.items()) if isinstance(value, dict) else value
            if isinstance(canonical, set):
                canonical = sorted(canonical)
            digest.update(repr((key, kind, canonical)).encode())
        return digest.digest()

    def close(self) -> None:
        self.redis.close()


class Campaign:
    """Sends calls to one server and tallies the answers, checking after each refused call
    that the store is unchanged."""

    def __init__(self, target: str, redis_url: str) -> None:
        self.channel = channel(target, OWNER_TOKEN)
        self.digest = StoreDigest(redis_url)
        self.tally = Tally()
        self._before = self.digest()

    def close(self) -> None:
        self.channel.close()
        self.digest.close()

    def send(self, path: str, payload: bytes, *, streaming: bool, what: str) -> bytes | None:
        """Send raw request bytes to `path`; the answer's bytes when it succeeded."""
        self.tally.calls += 1
        answer: bytes | None = None
        code = grpc.StatusCode.OK
        details = ""
        try:
            # Raw bytes both ways: no serializer, no deserializer.
            if streaming:
                call: Any = self.channel.unary_stream(path)
                call = call(payload, timeout=STREAM_TIMEOUT)
                for item in call:
                    answer = item
            else:
                unary: Any = self.channel.unary_unary(path)
                answer = unary(payload, timeout=CALL_TIMEOUT)
        except grpc.RpcError as error:
            failed: Any = error
            code, details = failed.code(), failed.details() or ""
        self.tally.codes[code.name] += 1
        if code in FORBIDDEN:
            self.tally.forbidden.append(f"{path} {what}: {code.name} {details[:200]!r}")
        after = self.digest()
        refused = code not in (grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED)
        if refused and after != self._before:
            self.tally.changed.append(f"{path} {what}: {code.name} {details[:200]!r}")
        self._before = after
        return answer if code == grpc.StatusCode.OK else None

    def call(self, method: str, request: Message, what: str) -> bytes | None:
        streaming = SERVICE.methods_by_name[method].server_streaming
        path = f"/{SERVICE.full_name}/{method}"
        return self.send(path, request.SerializeToString(), streaming=streaming, what=what)


# ---------------------------------------------------------------- random values and messages

_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(1 << 31), (1 << 31) - 1),
    FieldDescriptor.TYPE_SINT32: (-(1 << 31), (1 << 31) - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(1 << 31), (1 << 31) - 1),
    FieldDescriptor.TYPE_UINT32: (0, (1 << 32) - 1),
    FieldDescriptor.TYPE_FIXED32: (0, (1 << 32) - 1),
    FieldDescriptor.TYPE_INT64: (-(1 << 63), (1 << 63) - 1),
    FieldDescriptor.TYPE_SINT64: (-(1 << 63), (1 << 63) - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(1 << 63), (1 << 63) - 1),
    FieldDescriptor.TYPE_UINT64: (0, (1 << 64) - 1),
    FieldDescriptor.TYPE_FIXED64: (0, (1 << 64) - 1),
}
_EXTREMES = (0, 1, 2, 3, 5, 9, 12, 40, 99, 100, 1000, -1, -2, 1 << 31, (1 << 32) - 1, 1 << 64)
_TEXTS = ("", "a", "1", "1.2", "h1", "deck", "é", "\u202e", "x" * 300, "9" * 5000, "\0")


def random_integer(kind: int, rng: random.Random) -> int:
    low, high = _RANGES[kind]
    value = rng.choice(_EXTREMES) if rng.random() < 0.6 else rng.randrange(-3, 20)
    return min(max(value, low), high)


def random_message(cls: type[Message], rng: random.Random, depth: int = 0) -> Message:
    """A message of type `cls` with random fields: small and extreme integers, long and odd
    texts, long lists, enum numbers the schema does not define."""
    message = cls()
    for described in message.DESCRIPTOR.fields:
        if rng.random() < 0.5:
            continue
        if described.message_type is not None and described.message_type.GetOptions().map_entry:
            continue
        repeats = rng.choice((1, 1, 2, 3, 70)) if described.is_repeated else 1
        for _ in range(repeats):
            _set_random(message, described, rng, depth)
    return message


def _set_random(message: Message, described: Any, rng: random.Random, depth: int) -> None:
    name = described.name
    kind = described.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        if depth >= 4:
            return
        target = getattr(message, name).add() if described.is_repeated else getattr(message, name)
        target.CopyFrom(random_message(type(target), rng, depth + 1))
        return
    if kind in _RANGES:
        value: Any = random_integer(kind, rng)
    elif kind == FieldDescriptor.TYPE_BOOL:
        value = rng.random() < 0.5
    elif kind == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in described.enum_type.values]
        value = rng.choice([*numbers, 77, -5])
    elif kind == FieldDescriptor.TYPE_STRING:
        value = rng.choice(_TEXTS)
    elif kind == FieldDescriptor.TYPE_BYTES:
        value = rng.choice(_TEXTS).encode() + rng.randbytes(rng.choice((0, 4, 40)))
    else:  # floats and doubles
        value = rng.choice((0.0, -1.0, 1e300, float("nan")))
    if described.is_repeated:
        getattr(message, name).append(value)
    else:
        setattr(message, name, value)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """`data` with random damage: bytes flipped, cut, repeated or inserted."""
    buffer = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        choice = rng.randrange(5)
        at = rng.randrange(len(buffer) + 1)
        if choice == 0 and buffer:
            buffer[min(at, len(buffer) - 1)] ^= 1 << rng.randrange(8)
        elif choice == 1:
            del buffer[at:]
        elif choice == 2:
            buffer[at:at] = rng.randbytes(rng.randrange(1, 12))
        elif choice == 3:
            buffer[at:at] = buffer[at : at + 8] * rng.choice((2, 50))
        else:
            buffer[at:at] = rng.choice((b"\xff" * 10, b"\x0a\xff\xff\xff\xff\x0f", b"\x80" * 11))
    return bytes(buffer)


# ---------------------------------------------------------------- the campaigns


@dataclass
class TargetGame:
    """A live game the fuzzed calls aim at (so they reach the rules, not only the look-up)."""

    game_id: str
    name: str
    version: int


def create_targets(client: Client, mode: str = "table") -> list[TargetGame]:
    """One live game of every registered game, a few moves in."""
    targets = []
    for name, game in all_games().items():
        players = [f"P{i + 1}" for i in range(max(game.min_players, 2))]
        chosen_mode = mode if any(m == game_pb2.MODE_DEALT for m in game.modes) else "table"
        summary = client.create_game(name, players, mode=chosen_mode)
        version = summary.version
        for _ in range(3):
            _to_move, legal = client.legal_moves(summary.game_id)
            if not legal:
                break
            version = client.record(
                summary.game_id, legal[0].notation, expected_version=version
            ).game.version
        targets.append(TargetGame(summary.game_id, name, version))
    return targets


def valid_requests(target: TargetGame) -> dict[str, Message]:
    """One sensible request of every RPC aimed at `target` (what the byte fuzzer damages)."""
    game_id, version = target.game_id, target.version
    s = service_pb2
    return {
        "ListGameTypes": s.ListGameTypesRequest(),
        "CreateGame": s.CreateGameRequest(
            game=target.name,
            players=[events_pb2.Player(name="A"), events_pb2.Player(name="B")],
            request_id="fuzz-create",
        ),
        "GetGame": s.GetGameRequest(game_id=game_id),
        "ListGames": s.ListGamesRequest(game=target.name, page_size=2),
        "RecordMove": s.RecordMoveRequest(
            game_id=game_id, notation="take w u g", expected_version=version, request_id="fz"
        ),
        "UndoMove": s.UndoMoveRequest(game_id=game_id, expected_version=1, request_id="fz-u"),
        "RedoMove": s.RedoMoveRequest(game_id=game_id, expected_version=1, request_id="fz-r"),
        "AmendMove": s.AmendMoveRequest(
            game_id=game_id,
            revision=2,
            replace_move=s.NewMove(notation="take w u g"),
            expected_version=1,
            request_id="fz-a",
        ),
        "AbandonGame": s.AbandonGameRequest(game_id=game_id, expected_version=1, reason="x"),
        # Another id of the same shape: a deleted target would be closed to the phases after
        # this one (typed moves, amendments, notation).
        "DeleteGame": s.DeleteGameRequest(
            game_id=game_id[:-1] + ("1" if game_id.endswith("0") else "0"), reason="x"
        ),
        "GetState": s.GetStateRequest(game_id=game_id, viewer=s.Viewer(seat=1)),
        "ListLegalMoves": s.ListLegalMovesRequest(game_id=game_id, page_size=3),
        "ReplayGame": s.ReplayGameRequest(game_id=game_id, from_revision=1, to_revision=2),
        "WatchGame": s.WatchGameRequest(game_id=game_id, from_revision=1, heartbeat_seconds=1),
        "AddAnnotation": s.AddAnnotationRequest(game_id=game_id, revision=1, glyph="!?"),
        "RemoveAnnotation": s.RemoveAnnotationRequest(game_id=game_id, annotation_id="00"),
        "ListAnnotations": s.ListAnnotationsRequest(game_id=game_id, page_size=1),
        "GetAuditLog": s.GetAuditLogRequest(game_id=game_id, page_size=1),
        "VerifyGame": s.VerifyGameRequest(game_id=game_id),
        "ExportRecord": s.ExportRecordRequest(game_ids=[game_id]),
        "ImportRecord": s.ImportRecordRequest(
            text=f'[Game "{target.name}"]\n[Players "Ann; Bob"]\n\n*\n', request_id="fz-i"
        ),
        "ImportGame": s.ImportGameRequest(
            events=[
                events_pb2.Event(
                    sequence=1,
                    revision=1,
                    game_created=events_pb2.GameCreated(game=target.name, players=[]),
                )
            ]
        ),
    }


def fuzz_request_bytes(
    campaign: Campaign, targets: Sequence[TargetGame], per_method: int, seed: int
) -> None:
    """Random and damaged request bytes, and well-formed requests with random fields, to
    every RPC of the service and to the health check."""
    rng = random.Random(seed)
    for method in SERVICE.methods:
        path = f"/{SERVICE.full_name}/{method.name}"
        request_cls: Any = getattr(service_pb2, method.input_type.name)
        for index in range(per_method):
            target = targets[index % len(targets)]
            valid = valid_requests(target)[method.name].SerializeToString()
            kind = index % 3
            if kind == 0:
                payload, what = rng.randbytes(rng.choice((1, 7, 64, 900))), "random bytes"
            elif kind == 1:
                payload, what = mutate(valid, rng), "damaged request"
            else:
                fields = random_message(request_cls, rng)
                aimed = "game_id" in fields.DESCRIPTOR.fields_by_name
                if aimed and method.name != "DeleteGame" and rng.random() < 0.5:
                    fields.game_id = target.game_id  # type: ignore[attr-defined]  # aim at a game
                payload, what = fields.SerializeToString(), f"random fields {str(fields)[:120]!r}"
            campaign.send(path, payload, streaming=method.server_streaming, what=what)
    for _ in range(per_method):
        campaign.send(HEALTH_CHECK, rng.randbytes(16), streaming=False, what="random bytes")


def fuzz_typed_moves(
    campaign: Campaign, targets: Sequence[TargetGame], count: int, seed: int
) -> None:
    """Typed moves of every game with random fields (extreme counts, odd texts, undefined
    enum numbers), sent at the target game's current version."""
    rng = random.Random(seed)
    for target in targets:
        game = find_game(target.name)
        for _ in range(count):
            inner = random_message(game.move_type, rng)
            move = game_pb2.Move()
            getattr(move, game.oneof_field).CopyFrom(inner)
            if rng.random() < 0.3:
                move.seat = rng.choice((0, 1, 7, 1 << 31))
            request = service_pb2.RecordMoveRequest(
                game_id=target.game_id,
                move=move,
                expected_version=target.version,
                request_id=uuid.uuid4().hex,
            )
            answer = campaign.call("RecordMove", request, f"typed move {str(inner)[:160]!r}")
            if answer is not None:
                target.version = service_pb2.RecordMoveResponse.FromString(answer).game.version


def fuzz_amendments(
    campaign: Campaign, targets: Sequence[TargetGame], count: int, seed: int
) -> None:
    """AmendMove with random changes: typed moves of random fields (as `fuzz_typed_moves`),
    deletions, odd revisions and seats, with and without drop_tail, sent at the target
    game's current version (an amendment that is accepted moves the version on)."""
    rng = random.Random(seed)
    for target in targets:
        game = find_game(target.name)
        for _ in range(count):
            revision = rng.choice((0, 1, 2, rng.randrange(1, target.version + 2), 1 << 63))
            request = service_pb2.AmendMoveRequest(
                game_id=target.game_id,
                revision=revision,
                expected_version=target.version,
                request_id=uuid.uuid4().hex,
                reason=rng.choice(_TEXTS),
                drop_tail=rng.random() < 0.5,
            )
            change = rng.choice(("replace_move", "insert_move", "delete_move"))
            if change == "delete_move":
                request.delete_move.SetInParent()
            else:
                new = getattr(request, change)
                getattr(new.move, game.oneof_field).CopyFrom(random_message(game.move_type, rng))
                if rng.random() < 0.3:
                    new.seat = rng.choice((0, 1, 7, 1 << 31))
            answer = campaign.call("AmendMove", request, f"amendment {str(request)[:160]!r}")
            if answer is not None:
                target.version = service_pb2.AmendMoveResponse.FromString(answer).game.version


def fuzz_notation(
    campaign: Campaign, client: Client, targets: Sequence[TargetGame], count: int, seed: int
) -> None:
    """Notation: legal moves' text damaged (characters changed, tokens repeated, odd
    Unicode), random printable text, and text over the length limit."""
    rng = random.Random(seed)
    for target in targets:
        _to_move, legal = client.legal_moves(target.game_id)
        texts = [m.notation for m in legal] or ["pass"]
        for _ in range(count):
            text = rng.choice(texts)
            choice = rng.randrange(5)
            if choice == 0:
                at = rng.randrange(len(text) + 1)
                text = text[:at] + rng.choice("0123456789 .:|-+wugrkh\u00e9\u202e\0") + text[at:]
            elif choice == 1:
                text = " ".join([text] * rng.choice((2, 30)))
            elif choice == 2:
                text = "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(1, 60)))
            elif choice == 3:
                text = text.replace(text[: rng.randrange(1, len(text) + 1)], "9" * 150, 1)
            else:
                text = text + " " + "x" * rng.choice((10, 250))
            request = service_pb2.RecordMoveRequest(
                game_id=target.game_id,
                notation=text,
                expected_version=target.version,
                request_id=uuid.uuid4().hex,
            )
            answer = campaign.call("RecordMove", request, f"notation {text[:120]!r}")
            if answer is not None:
                target.version = service_pb2.RecordMoveResponse.FromString(answer).game.version


def hostile_contents(content: bytes, rng: random.Random) -> bytes:
    """A component file damaged the ways a hostile caller would: huge numbers, deep
    nesting, non-text bytes, cut short."""
    choice = rng.randrange(6)
    if choice == 0:
        return mutate(content, rng)
    if choice == 1:  # a number of thousands of digits where a number was
        at = next((i for i, b in enumerate(content) if chr(b).isdigit()), 0)
        return content[:at] + b"9" * rng.choice((19, 5000, 100_000)) + content[at + 1 :]
    if choice == 2:
        depth = rng.choice((17, 1000, 100_000))
        return b"[" * depth + content + b"]" * depth
    if choice == 3:
        return content[: rng.randrange(len(content) + 1)]
    if choice == 4:
        return rng.randbytes(rng.choice((1, 100, 5000)))
    return content.replace(b",", b",\xff", 1)


def fuzz_component_files(campaign: Campaign, count: int, seed: int) -> None:
    """CreateGame with each game's default component files damaged."""
    rng = random.Random(seed)
    for name, game in all_games().items():
        defaults = list(game.default_components())
        if not defaults:
            continue
        for _ in range(count):
            files = [game_pb2.ComponentFile() for _ in defaults]
            for file, default in zip(files, defaults, strict=True):
                file.CopyFrom(default)
            victim = rng.randrange(len(files))
            files[victim].content = hostile_contents(files[victim].content, rng)
            if rng.random() < 0.2:
                files[victim].name = rng.choice(("x" * 5000, "board\0", ""))
            players = [events_pb2.Player(name=f"P{i + 1}") for i in range(game.min_players)]
            request = service_pb2.CreateGameRequest(
                game=name, players=players, components=files, request_id=uuid.uuid4().hex
            )
            campaign.call("CreateGame", request, f"{name} {files[victim].name[:40]!r}")


# ---------------------------------------------------------------- memory of the server process


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of process `pid` in KiB: its resident memory now and at its peak."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


# ---------------------------------------------------------------- racing recorders


@dataclass
class RaceReport:
    """What racing recorders saw, and what the stored games hold afterwards."""

    calls: Counter[str] = field(default_factory=Counter)
    forbidden: list[str] = field(default_factory=list)
    acknowledged: dict[str, list[events_pb2.Event]] = field(default_factory=dict)
    """Events each acknowledged change appended, by its request id (an annotation's answer
    names no event: its list is empty, and exactly one AnnotationAdded must be stored)."""
    missing_or_doubled: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    games: list[str] = field(default_factory=list)

    def summary(self) -> str:
        codes = ", ".join(f"{code} {count}" for code, count in self.calls.most_common())
        return (
            f"{sum(self.calls.values())} calls ({codes}); {len(self.acknowledged)} acknowledged "
            f"changes; {len(self.forbidden)} INTERNAL/UNKNOWN; {len(self.missing_or_doubled)} "
            f"acknowledged events missing or doubled; {len(self.unverified)} games not verified"
        )


def race(targets: Sequence[str], clients: int, games: int, seconds: float, seed: int) -> RaceReport:
    """`clients` threads, each with its own connection to one of `targets` (service
    instances over one Redis), recording, undoing and annotating the same `games` Splendor
    games for `seconds`; then every acknowledged event is looked for in the stored games
    (exactly once, under its request id) and every game is verified."""
    report = RaceReport()
    lock = threading.Lock()
    with Client(targets[0], token=OWNER_TOKEN, timeout=30) as setup:
        report.games = [
            setup.create_game("splendor", ["Ann", "Bob", "Cleo"]).game_id for _ in range(games)
        ]
    deadline = time.monotonic() + seconds

    def racer(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        with Client(targets[index % len(targets)], token=OWNER_TOKEN, timeout=30) as client:
            while time.monotonic() < deadline:
                game_id = rng.choice(report.games)
                request_id = uuid.uuid4().hex
                action = rng.random()
                kind, events = _race_step(client, game_id, request_id, action, rng)
                with lock:
                    report.calls[kind] += 1
                    if kind in {code.name for code in FORBIDDEN}:
                        report.forbidden.append(f"{game_id} {request_id} {kind}")
                    if events is not None:
                        report.acknowledged[request_id] = events

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with Client(targets[-1], token=OWNER_TOKEN, timeout=60) as checker:
        stored: dict[str, list[events_pb2.Event]] = {}
        for game_id in report.games:
            exported = checker.export(game_id)
            for event in exported:
                if event.request_id:
                    stored.setdefault(event.request_id, []).append(event)
            verified = checker.verify(game_id)
            if not verified.ok:
                report.unverified.append(f"{game_id}: {verified.problem}")
        for request_id, events in report.acknowledged.items():
            found = stored.get(request_id, [])
            if events:
                held = found == events
            else:
                held = [e.WhichOneof("body") for e in found] == ["annotation_added"]
            if not held:
                report.missing_or_doubled.append(request_id)
    return report


def _race_step(
    client: Client, game_id: str, request_id: str, action: float, rng: random.Random
) -> tuple[str, list[events_pb2.Event] | None]:
    """One change by a racing recorder: (the answer's code name, the events it appended)."""
    try:
        version = client.get_game(game_id).version
        if action < 0.6:
            _to_move, legal = client.legal_moves(game_id)
            if not legal:
                return "NO_MOVE", None
            text = rng.choice(legal).notation
            recorded = client.record(game_id, text, expected_version=version, request_id=request_id)
            return "OK", list(recorded.events)
        if action < 0.8:
            undone = client.undo(game_id, expected_version=version, request_id=request_id)
            return "OK", list(undone.events)
        request = service_pb2.AddAnnotationRequest(
            game_id=game_id, comment="racing", request_id=request_id
        )
        try:
            client.stub.AddAnnotation(request, timeout=30)
        except grpc.RpcError as error:
            raise TablelogError.from_rpc_error(error) from error
        return "OK", []
    except TablelogError as error:
        return error.code.name, None
