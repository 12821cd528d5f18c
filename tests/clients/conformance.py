"""The Python runner of the conformance scenario (clients/conformance/scenario.json).

A client like any other: it speaks to a live server through the generated `tablelog.v1` gRPC
stubs and reads google.rpc error details; it imports nothing from replay/ or service/.

    PYTHONPATH=proto .venv/bin/python tests/clients/conformance.py --address 127.0.0.1:50051

It calls as the member whose token is in $TABLELOG_TOKEN (a recorder), and the steps marked
`"as": "spectator"` as the one whose token is in $TABLELOG_SPECTATOR_TOKEN.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
from google.protobuf import json_format
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.v1 import (
    clubs_pb2,
    clubs_pb2_grpc,
    events_pb2,
    game_pb2,
    service_pb2,
    service_pb2_grpc,
    standings_pb2,
    standings_pb2_grpc,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "clients" / "conformance" / "scenario.json"
CLIENT_NAME = "tablelog-python-conformance/0.1.0"
TIMEOUT = 30.0
TOKEN_ENV = {"recorder": "TABLELOG_TOKEN", "spectator": "TABLELOG_SPECTATOR_TOKEN"}
"""Where the token of each identity a step may call as (`as`) is found."""
AMEND_CHANGES = ("replace", "insert", "delete")
POLL_SECONDS = 0.1
"""How often a step with `within_seconds` is tried again."""
TOLERANCE = 1e-6
"""How far a fractional figure (a win share, a rating, an average) may be from the expected
one: the server computes them in floating point."""

Json = dict[str, Any]
# The club memory's answers that say how far the projections lag behind the log.
LagAnswer = (
    standings_pb2.GetStandingsResponse
    | standings_pb2.GetPlayerRecordResponse
    | standings_pb2.GetGameTypeStatsResponse
)


class ScenarioFailure(AssertionError):
    """A step whose outcome differs from the scenario's expectation."""


@dataclass(frozen=True, slots=True)
class CallError:
    """A refused call: the status code's name and the ErrorInfo of its details."""

    code: str
    reason: str
    metadata: Mapping[str, str]
    message: str


def call_error(error: grpc.RpcError) -> CallError:
    """Reads the google.rpc.Status details of a failed call."""
    call = cast(grpc.Call, error)
    code = call.code().name
    message = call.details() or ""
    status = rpc_status.from_call(call)
    if status is not None:
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                return CallError(code, info.reason, dict(info.metadata), message)
    return CallError(code, "", {}, message)


def viewer(spec: object) -> service_pb2.Viewer:
    if spec is None or spec == "spectator":
        return service_pb2.Viewer(spectator=True)
    if spec == "full":
        return service_pb2.Viewer(full=True)
    if isinstance(spec, dict) and "seat" in spec:
        return service_pb2.Viewer(seat=int(spec["seat"]))
    raise ScenarioFailure(f"unknown viewer {spec!r}")


def describe_to_move(to_move: game_pb2.ToMove) -> str:
    kind = to_move.WhichOneof("who")
    if kind == "seat":
        return f"seat:{to_move.seat}"
    return kind or "unspecified"


def check(label: str, actual: object, expected: object) -> None:
    if actual != expected:
        raise ScenarioFailure(f"{label}: expected {expected!r}, got {actual!r}")


def near(label: str, actual: float, expected: float, tolerance: float = TOLERANCE) -> None:
    if abs(actual - float(expected)) > tolerance:
        raise ScenarioFailure(f"{label}: expected {expected!r}, got {actual!r}")


def expect_lag(answer: LagAnswer, what: str, bounds: Json) -> None:
    """The answer says the projections' lag, within the step's bounds (it depends on the
    moment read)."""
    if not answer.HasField("lag"):
        raise ScenarioFailure(f"{what}: the answer says nothing of the projections' lag")
    lag = answer.lag
    if "pending_games_at_most" in bounds and lag.pending_games > bounds["pending_games_at_most"]:
        raise ScenarioFailure(f"lag: {lag.pending_games} games pending, at most {bounds}")
    if "seconds_at_most" in bounds and lag.seconds > bounds["seconds_at_most"]:
        raise ScenarioFailure(f"lag: {lag.seconds} s, at most {bounds['seconds_at_most']} s")
    if lag.projected_games < bounds.get("projected_games_at_least", 0):
        raise ScenarioFailure(f"lag: {lag.projected_games} games projected, fewer than {bounds}")


def expect_standing(label: str, row: standings_pb2.StandingRow, expected: Json) -> None:
    if "games" in expected:
        check(f"{label} games", row.games, expected["games"])
    if "wins" in expected:
        near(f"{label} wins", row.wins, expected["wins"])
    if "points" in expected:
        check(f"{label} points", row.points, expected["points"])
    if "average_place" in expected:
        near(f"{label} average place", row.average_place, expected["average_place"])
    if "rating" in expected:
        expect_rating(f"{label} rating", row.rating, expected["rating"])


def expect_rating(label: str, point: standings_pb2.RatingPoint, expected: Json) -> None:
    for key in ("mu", "sigma", "ordinal"):
        if key in expected:
            near(f"{label} {key}", getattr(point, key), expected[key])


def seat_stats(stats: standings_pb2.GetGameTypeStatsResponse, order: int) -> tuple[int, float]:
    """The games and wins of a seat order (none yet: 0 and 0)."""
    for seat in stats.seats:
        if seat.order == order:
            return seat.games, seat.wins
    return 0, 0.0


@dataclass
class Runner:
    """Runs the steps in order against one server, tracking the game id and version."""

    channels: Mapping[str, grpc.Channel]
    scenario: Json
    log: Callable[[str], None] = print
    game_id: str = ""
    version: int = 0
    records: dict[str, tuple[service_pb2.RecordMoveRequest, service_pb2.RecordMoveResponse]] = (
        field(default_factory=dict)
    )
    members: dict[str, clubs_pb2.Member] = field(default_factory=dict)
    """Who each identity's token names, asked once (WhoAmI)."""
    run_tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    """What `$run` stands for in this run's names: its players are its own."""
    stats: dict[str, standings_pb2.GetGameTypeStatsResponse] = field(default_factory=dict)
    """Each game_type_stats step's answer, for a later step's `since`."""

    def named(self, text: str) -> str:
        """A scenario's string with `$run` replaced by this run's tag, and `$game` (the
        whole string) by the current game's id."""
        return self.game_id if text == "$game" else text.replace("$run", self.run_tag)

    def stub(self, step: Json) -> service_pb2_grpc.TablelogServiceStub:
        return service_pb2_grpc.TablelogServiceStub(self.channels[step.get("client", "a")])

    def metadata(self, step: Json) -> tuple[tuple[str, str], ...]:
        """Both clients call as the recorder, or as the spectator for a step marked so."""
        return self.metadata_as(step.get("as", "recorder"))

    def metadata_as(self, identity: str) -> tuple[tuple[str, str], ...]:
        if identity not in TOKEN_ENV:
            raise ScenarioFailure(f"unknown identity {identity!r}: one of {', '.join(TOKEN_ENV)}")
        token = os.environ.get(TOKEN_ENV[identity], "")
        if not token:
            raise ScenarioFailure(f"no {identity} token: set ${TOKEN_ENV[identity]}")
        return (("x-tablelog-client", CLIENT_NAME), ("authorization", f"Bearer {token}"))

    def member(self, identity: str) -> clubs_pb2.Member:
        """The member an identity's token names."""
        if identity not in self.members:
            stub = clubs_pb2_grpc.ClubServiceStub(self.channels["a"])
            response = stub.WhoAmI(
                clubs_pb2.WhoAmIRequest(), timeout=TIMEOUT, metadata=self.metadata_as(identity)
            )
            self.members[identity] = response.member
        return self.members[identity]

    def run(self, steps: Sequence[Json]) -> tuple[int, int]:
        passed = 0
        for step in steps:
            try:
                self.step(step)
            except (ScenarioFailure, grpc.RpcError) as error:
                if isinstance(error, grpc.RpcError):
                    error = ScenarioFailure(f"unexpected error {call_error(error)}")
                self.log(f"FAIL {step['id']} ({step['op']}): {error}")
                return passed, 1
            passed += 1
            self.log(f"ok   {step['id']} ({step['op']})")
        return passed, 0

    def step(self, step: Json) -> None:
        """One step; with `within_seconds`, tried again until it passes or that time is
        up (for reads of the projections, which follow the games a moment later)."""
        deadline = time.monotonic() + float(step.get("within_seconds", 0))
        while True:
            try:
                self.attempt(step)
                return
            except (ScenarioFailure, grpc.RpcError):
                if time.monotonic() >= deadline:
                    raise
            time.sleep(POLL_SECONDS)

    def attempt(self, step: Json) -> None:
        handler = getattr(self, "op_" + step["op"], None)
        if handler is None:
            raise ScenarioFailure(f"unknown op {step['op']!r}")
        expect: Json = step.get("expect", {})
        error = expect.get("error")
        try:
            handler(step, expect)
        except grpc.RpcError as failure:
            if error is None:
                raise
            self.expect_error(call_error(failure), error)
            return
        if error is not None:
            raise ScenarioFailure(f"expected {error['reason']}, but the call succeeded")

    def expect_error(self, actual: CallError, expected: Json) -> None:
        check("status code", actual.code, expected["code"])
        check("reason", actual.reason, expected["reason"])
        for key, value in expected.get("metadata", {}).items():
            if key not in actual.metadata:
                raise ScenarioFailure(f"error metadata has no {key!r}: {dict(actual.metadata)}")
            wanted = str(self.version) if value == "$version" else value
            if wanted != "*":
                check(f"error metadata {key}", actual.metadata[key], wanted)

    def expected_version(self, step: Json) -> int:
        spec = step.get("version", "current")
        if spec == "current":
            return self.version
        if spec == "stale":
            return self.version - 1
        return int(spec)

    def expect_game(self, game: service_pb2.GameSummary, expect: Json) -> None:
        if "version" in expect:
            check("version", game.version, expect["version"])
        if "move_count" in expect:
            check("move_count", game.move_count, expect["move_count"])
        if "to_move" in expect:
            check("to_move", describe_to_move(game.to_move), expect["to_move"])
        if "status" in expect:
            check("status", service_pb2.GameStatus.Name(game.status), expect["status"])

    # -- ops ------------------------------------------------------------------------------

    def op_create(self, step: Json, expect: Json) -> None:
        spec: Json = step.get("create") or self.scenario["create"]
        mode = game_pb2.MODE_DEALT if spec.get("mode") == "dealt" else game_pb2.MODE_TABLE
        request = service_pb2.CreateGameRequest(
            game=spec["game"],
            players=[events_pb2.Player(name=self.named(name)) for name in spec["players"]],
            mode=mode,
            title=self.named(spec.get("title", "")),
            request_id=step.get("request_id", ""),
        )
        game = self.stub(step).CreateGame(request, timeout=TIMEOUT, metadata=self.metadata(step))
        self.game_id, self.version = game.game.game_id, game.game.version
        self.expect_game(game.game, expect)

    def op_record(self, step: Json, expect: Json) -> None:
        if "retry_of" in step:
            request = self.records[step["retry_of"]][0]
        else:
            request = service_pb2.RecordMoveRequest(
                game_id=self.game_id,
                expected_version=self.expected_version(step),
                request_id=step.get("request_id", ""),
                include_state=bool(step.get("include_state", False)),
            )
            if "notation" in step:
                request.notation = step["notation"]
            else:
                json_format.ParseDict(step["move"], request.move)
        response = self.stub(step).RecordMove(
            request, timeout=TIMEOUT, metadata=self.metadata(step)
        )
        self.records[step["id"]] = (request, response)
        self.version = response.game.version
        self.expect_game(response.game, expect)
        if "notation" in expect:
            check("notation", response.events[0].move_recorded.notation, expect["notation"])
        if "events" in expect:
            check("events", len(response.events), expect["events"])
        if "state_revision" in expect:
            check("state revision", response.state.revision, expect["state_revision"])
            check("state to_move", describe_to_move(response.state.to_move), expect["to_move"])
        if expect.get("same_as_original"):
            original = self.records[step["retry_of"]][1]
            check("version of the retry", response.game.version, original.game.version)
            check("events of the retry", _event_ids(response.events), _event_ids(original.events))

    def op_play(self, step: Json, expect: Json) -> None:
        """Each of `notations` recorded in turn at the current version; the expectation is
        of the last answer."""
        response = None
        for notation in step["notations"]:
            request = service_pb2.RecordMoveRequest(
                game_id=self.game_id, expected_version=self.version, notation=notation
            )
            response = self.stub(step).RecordMove(
                request, timeout=TIMEOUT, metadata=self.metadata(step)
            )
            self.version = response.game.version
        if response is None:
            raise ScenarioFailure("a play step records at least one move")
        self.expect_game(response.game, expect)

    def op_undo(self, step: Json, expect: Json) -> None:
        request = service_pb2.UndoMoveRequest(
            game_id=self.game_id,
            expected_version=self.expected_version(step),
            request_id=step.get("request_id", ""),
            reason=step.get("reason", ""),
        )
        response = self.stub(step).UndoMove(request, timeout=TIMEOUT, metadata=self.metadata(step))
        self.version = response.game.version
        self.expect_game(response.game, expect)

    def op_redo(self, step: Json, expect: Json) -> None:
        request = service_pb2.RedoMoveRequest(
            game_id=self.game_id,
            expected_version=self.expected_version(step),
            request_id=step.get("request_id", ""),
        )
        response = self.stub(step).RedoMove(request, timeout=TIMEOUT, metadata=self.metadata(step))
        self.version = response.game.version
        self.expect_game(response.game, expect)

    def op_amend(self, step: Json, expect: Json) -> None:
        change = step.get("change", "replace")
        if change not in AMEND_CHANGES:
            raise ScenarioFailure(f"unknown amend change {change!r}")
        request = service_pb2.AmendMoveRequest(
            game_id=self.game_id,
            revision=int(step["revision"]),
            expected_version=self.expected_version(step),
            request_id=step.get("request_id", ""),
            reason=step.get("reason", ""),
        )
        if change == "delete":
            request.delete_move.SetInParent()
        else:
            new = request.replace_move if change == "replace" else request.insert_move
            if "notation" in step:
                new.notation = step["notation"]
            else:
                json_format.ParseDict(step["move"], new.move)
        response = self.stub(step).AmendMove(request, timeout=TIMEOUT, metadata=self.metadata(step))
        self.version = response.game.version
        self.expect_game(response.game, expect)

    def op_whoami(self, step: Json, expect: Json) -> None:
        identity = step.get("as", "recorder")
        self.members.pop(identity, None)  # asked afresh: this step is the check
        member = self.member(identity)
        if "role" in expect:
            check("role", clubs_pb2.Role.Name(member.role), expect["role"])
        if not member.member_id:
            raise ScenarioFailure(f"the {identity} token names no member")

    def op_game(self, step: Json, expect: Json) -> None:
        response = self.stub(step).GetGame(
            service_pb2.GetGameRequest(game_id=self.game_id),
            timeout=TIMEOUT,
            metadata=self.metadata(step),
        )
        self.expect_game(response.game, expect)

    def get_state(self, step: Json, revision: int, spec: object) -> service_pb2.StateSnapshot:
        request = service_pb2.GetStateRequest(
            game_id=self.game_id, revision=revision, viewer=viewer(spec)
        )
        response = self.stub(step).GetState(request, timeout=TIMEOUT, metadata=self.metadata(step))
        return response.state

    def op_state(self, step: Json, expect: Json) -> None:
        state = self.get_state(step, int(step.get("revision", 0)), step.get("viewer"))
        if "revision" in expect:
            check("revision", state.revision, expect["revision"])
        if "to_move" in expect:
            check("to_move", describe_to_move(state.to_move), expect["to_move"])
        if "moves" in expect:
            check("moves", list(state.moves), expect["moves"])
        if "moves_count" in expect:
            check("moves_count", len(state.moves), expect["moves_count"])
        for text in expect.get("text_contains", []):
            if text not in state.text:
                raise ScenarioFailure(f"state text lacks {text!r}:\n{state.text}")

    def op_legal_moves(self, step: Json, expect: Json) -> None:
        notations: list[str] = []
        token = ""
        while True:
            request = service_pb2.ListLegalMovesRequest(
                game_id=self.game_id, revision=int(step.get("revision", 0)), page_token=token
            )
            response = self.stub(step).ListLegalMoves(
                request, timeout=TIMEOUT, metadata=self.metadata(step)
            )
            notations.extend(move.notation for move in response.moves)
            token = response.next_page_token
            if not token:
                break
        for text in expect.get("contains", []):
            if text not in notations:
                raise ScenarioFailure(f"legal moves lack {text!r}: {notations}")
        for text in expect.get("excludes", []):
            if text in notations:
                raise ScenarioFailure(f"legal moves include {text!r}")
        if "total_size" in expect:
            check("total_size", response.total_size, expect["total_size"])
            check("moves listed", len(notations), expect["total_size"])
        if "to_move" in expect:
            check("to_move", describe_to_move(response.to_move), expect["to_move"])

    def op_annotate(self, step: Json, expect: Json) -> None:
        request = service_pb2.AddAnnotationRequest(
            game_id=self.game_id,
            revision=int(step["revision"]),
            comment=step.get("comment", ""),
            glyph=step.get("glyph", ""),
            request_id=step.get("request_id", ""),
        )
        response = self.stub(step).AddAnnotation(
            request, timeout=TIMEOUT, metadata=self.metadata(step)
        )
        for key in ("revision", "comment", "glyph"):
            if key in expect:
                check(key, getattr(response.annotation, key), expect[key])
        if not response.annotation.annotation_id:
            raise ScenarioFailure("the annotation has no id")
        game = self.stub(step).GetGame(
            service_pb2.GetGameRequest(game_id=self.game_id),
            timeout=TIMEOUT,
            metadata=self.metadata(step),
        )
        check("version after annotating", game.game.version, self.version)

    def op_annotations(self, step: Json, expect: Json) -> None:
        comments: list[str] = []
        token = ""
        while True:
            request = service_pb2.ListAnnotationsRequest(game_id=self.game_id, page_token=token)
            response = self.stub(step).ListAnnotations(
                request, timeout=TIMEOUT, metadata=self.metadata(step)
            )
            comments.extend(a.comment for a in response.annotations)
            token = response.next_page_token
            if not token:
                break
        if "count" in expect:
            check("annotations", len(comments), expect["count"])
        if "comments" in expect:
            check("comments", comments, expect["comments"])

    def op_replay(self, step: Json, expect: Json) -> None:
        request = service_pb2.ReplayGameRequest(
            game_id=self.game_id,
            from_revision=int(step.get("from", 0)),
            to_revision=int(step.get("to", 0)),
            viewer=viewer(step.get("viewer")),
        )
        items = list(
            self.stub(step).ReplayGame(request, timeout=TIMEOUT, metadata=self.metadata(step))
        )
        if "count" in expect:
            check("replayed items", len(items), expect["count"])
        if not items:
            raise ScenarioFailure("the replay streamed nothing")
        if "first_revision" in expect:
            check("first revision", items[0].event.revision, expect["first_revision"])
        if "last_revision" in expect:
            check("last revision", items[-1].event.revision, expect["last_revision"])
        if expect.get("compare_states"):
            for item in items:
                check("state revision", item.state.revision, item.event.revision)
                state = self.get_state(step, item.state.revision, step.get("viewer"))
                if state != item.state:
                    raise ScenarioFailure(
                        f"replayed state at revision {item.state.revision} differs from GetState"
                    )

    def op_watch(self, step: Json, expect: Json) -> None:
        start = self.version if step.get("from", "current") == "current" else int(step["from"])
        timeout = float(step.get("timeout_seconds", 15))
        request = service_pb2.WatchGameRequest(
            game_id=self.game_id,
            from_revision=start,
            viewer=viewer(step.get("viewer")),
            heartbeat_seconds=int(step.get("heartbeat_seconds", 1)),
        )
        stream = self.stub(step).WatchGame(request, metadata=self.metadata(step))
        items: queue.Queue[service_pb2.WatchGameResponse | BaseException | None] = queue.Queue()
        reader = threading.Thread(target=_drain, args=(stream, items), daemon=True)
        reader.start()
        try:
            # The stream is open once anything (a replayed event or a heartbeat) arrives.
            _next(items, timeout, "the watch sent nothing")
            self.step(step["during"])
            self.log(f"ok   {step['during']['id']} ({step['during']['op']}, during the watch)")
            deadline = time.monotonic() + timeout
            while True:
                item = _next(items, deadline - time.monotonic(), "the watch missed the move")
                if item.WhichOneof("item") != "update":
                    continue
                event = item.update.event
                if event.WhichOneof("body") != "move_recorded":
                    continue
                if event.move_recorded.notation != expect["notation"]:
                    continue
                if "revision" in expect:
                    check("watched revision", event.revision, expect["revision"])
                check("watched state revision", item.update.state.revision, event.revision)
                return
        finally:
            stream.cancel()
            reader.join(5)

    def op_audit(self, step: Json, expect: Json) -> None:
        entries: list[service_pb2.AuditEntry] = []
        token = ""
        while True:
            request = service_pb2.GetAuditLogRequest(game_id=self.game_id, page_token=token)
            response = self.stub(step).GetAuditLog(
                request, timeout=TIMEOUT, metadata=self.metadata(step)
            )
            entries.extend(response.entries)
            token = response.next_page_token
            if not token:
                break
        if "count" in expect:
            check("audit entries", len(entries), expect["count"])
        if "undone" in expect:
            check("undone entries", sum(entry.undone for entry in entries), expect["undone"])
        sequences = [entry.event.sequence for entry in entries]
        check("audit sequences", sequences, list(range(1, len(entries) + 1)))
        if "actor" in expect:
            member = self.member(expect["actor"])
            for entry in entries:
                actor = entry.event.actor
                check(f"actor of event {entry.event.sequence}", actor.member_id, member.member_id)
                check(
                    f"actor name of event {entry.event.sequence}", actor.user, member.display_name
                )

    def op_standings(self, step: Json, expect: Json) -> None:
        stub = standings_pb2_grpc.StandingsServiceStub(self.channels[step.get("client", "a")])
        response = stub.GetStandings(
            standings_pb2.GetStandingsRequest(game=step["game"], season=step.get("season", "")),
            timeout=TIMEOUT,
            metadata=self.metadata(step),
        )
        check("standings game", response.game, expect["game"])
        expect_lag(response, "standings", expect.get("lag", {}))
        check("standings rows", len(response.rows) <= response.lag.projected_games * 6, True)
        rows = {row.display_name: row for row in response.rows}
        for wanted in expect.get("rows", []):
            name = self.named(wanted["player"])
            if name not in rows:
                raise ScenarioFailure(f"the standings have no row of {name!r}")
            expect_standing(f"{name}'s", rows[name], wanted)

    def op_player(self, step: Json, expect: Json) -> None:
        stub = standings_pb2_grpc.StandingsServiceStub(self.channels[step.get("client", "a")])
        request = standings_pb2.GetPlayerRecordRequest(
            name=self.named(step["name"]), game=step.get("game", ""), season=step.get("season", "")
        )
        response = stub.GetPlayerRecord(request, timeout=TIMEOUT, metadata=self.metadata(step))
        expect_lag(response, "player's record", expect.get("lag", {}))
        if "display_name" in expect:
            check("display name", response.player.display_name, self.named(expect["display_name"]))
        if "games" not in expect:
            return
        check("game types", [r.game for r in response.games], [g["game"] for g in expect["games"]])
        for record, wanted in zip(response.games, expect["games"], strict=True):
            label = f"{record.game}:"
            expect_standing(label, record.standing, wanted.get("standing", {}))
            if "places" in wanted:
                check(f"{label} places", list(record.places), wanted["places"])
            if "scores" in wanted:
                check(f"{label} scores", list(record.scores), wanted["scores"])
            if "history" in wanted:
                check(f"{label} rating points", len(record.history), len(wanted["history"]))
                for index, (point, expected) in enumerate(
                    zip(record.history, wanted["history"], strict=True)
                ):
                    if "game_id" in expected:
                        check(
                            f"{label} rating {index}",
                            point.game_id,
                            self.named(expected["game_id"]),
                        )
                    expect_rating(f"{label} rating {index}", point, expected)
            if "head_to_head" in wanted:
                rows = [
                    {
                        "opponent": h.opponent_name,
                        "games": h.games,
                        "ahead": h.ahead,
                        "level": h.level,
                        "behind": h.behind,
                    }
                    for h in record.head_to_head
                ]
                expected_rows = [
                    {**h, "opponent": self.named(h["opponent"])} for h in wanted["head_to_head"]
                ]
                check(f"{label} head to head", rows, expected_rows)
            figures = {f.name: f.average for f in record.figures}
            for name, average in wanted.get("figures", {}).items():
                if name not in figures:
                    raise ScenarioFailure(f"{label} no statistic {name!r}: {sorted(figures)}")
                near(f"{label} {name}", figures[name], average)

    def op_game_type_stats(self, step: Json, expect: Json) -> None:
        stub = standings_pb2_grpc.StandingsServiceStub(self.channels[step.get("client", "a")])
        request = standings_pb2.GetGameTypeStatsRequest(
            game=step["game"], season=step.get("season", "")
        )
        stats = stub.GetGameTypeStats(request, timeout=TIMEOUT, metadata=self.metadata(step))
        self.stats[step["id"]] = stats
        if "game" in expect:
            check("statistics game", stats.game, expect["game"])
        expect_lag(stats, "statistics", expect.get("lag", {}))
        names = {f.name for f in stats.figures}
        for name in expect.get("figures", []):
            if name not in names:
                raise ScenarioFailure(f"no statistic {name!r}: {sorted(names)}")
        if "added" not in expect:
            return
        if step.get("since") not in self.stats:
            raise ScenarioFailure(f"no earlier game_type_stats step {step.get('since')!r}")
        earlier, added = self.stats[step["since"]], expect["added"]
        if "games" in added:
            check("games added", stats.games - earlier.games, added["games"])
        if "moves" in added:
            moves = stats.average_moves * stats.games - earlier.average_moves * earlier.games
            near("moves added", moves, added["moves"], TOLERANCE * max(1, stats.games))
        for seat in added.get("seats", []):
            games, wins = seat_stats(stats, seat["order"])
            before_games, before_wins = seat_stats(earlier, seat["order"])
            check(f"seat order {seat['order']} games added", games - before_games, seat["games"])
            near(f"seat order {seat['order']} wins added", wins - before_wins, seat["wins"])

    def op_verify(self, step: Json, expect: Json) -> None:
        response = self.stub(step).VerifyGame(
            service_pb2.VerifyGameRequest(game_id=self.game_id),
            timeout=TIMEOUT,
            metadata=self.metadata(step),
        )
        check("verify ok", response.ok, expect.get("ok", True))
        if "events_checked" in expect:
            check("events checked", response.events_checked, expect["events_checked"])


def _drain(
    stream: Iterator[service_pb2.WatchGameResponse],
    items: queue.Queue[service_pb2.WatchGameResponse | BaseException | None],
) -> None:
    try:
        for item in stream:
            items.put(item)
    except grpc.RpcError as error:
        if cast(grpc.Call, error).code() != grpc.StatusCode.CANCELLED:
            items.put(error)
    items.put(None)


def _next(
    items: queue.Queue[service_pb2.WatchGameResponse | BaseException | None],
    timeout: float,
    message: str,
) -> service_pb2.WatchGameResponse:
    try:
        item = items.get(timeout=max(timeout, 0.0))
    except queue.Empty:
        raise ScenarioFailure(f"{message} within the timeout") from None
    if item is None:
        raise ScenarioFailure(f"{message}: the stream ended")
    if isinstance(item, BaseException):
        raise ScenarioFailure(f"{message}: {item}")
    return item


def _event_ids(events: Sequence[events_pb2.Event]) -> list[tuple[int, bytes]]:
    return [(event.sequence, event.hash) for event in events]


def load_scenario(path: Path = SCENARIO) -> Json:
    return cast(Json, json.loads(path.read_text(encoding="utf-8")))


def run(address: str, scenario: Json, log: Callable[[str], None] = print) -> tuple[int, int]:
    """Runs the whole scenario; returns (passed, failed) step counts."""
    channels = {name: grpc.insecure_channel(address) for name in ("a", "b")}
    try:
        runner = Runner(channels, scenario, log)
        passed, failed = runner.run(scenario["steps"])
    finally:
        for channel in channels.values():
            channel.close()
    steps = len(scenario.get("steps", []))
    if not failed and (steps == 0 or passed != steps):  # skipped steps show nothing
        log(f"FAIL ran {passed} of the scenario's {steps} steps")
        failed = 1
    log(f"conformance: {passed} passed, {failed} failed")
    return passed, failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--scenario", type=Path, default=SCENARIO)
    args = parser.parse_args(argv)
    _passed, failed = run(args.address, load_scenario(args.scenario))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
