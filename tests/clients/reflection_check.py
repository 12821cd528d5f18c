"""A grpcurl-style check: run the start of the conformance scenario with no .proto files.

Every message type is learnt from the server's reflection service; requests are built from
JSON and responses read back as JSON, as `grpcurl -d '{...}' HOST:PORT tablelog.v1....`
would. Nothing generated from proto/ is imported (the check asserts it).

    .venv/bin/python tests/clients/reflection_check.py --address 127.0.0.1:50051

It calls as the recorder ($TABLELOG_TOKEN), the steps marked `"as": "spectator"` as the
spectator ($TABLELOG_SPECTATOR_TOKEN).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
from google.protobuf import descriptor_pool, json_format, message, message_factory
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "clients" / "conformance" / "scenario.json"
SERVICE = "tablelog.v1.TablelogService"
CLUBS = "tablelog.v1.ClubService"
STANDINGS = "tablelog.v1.StandingsService"
TIMEOUT = 30.0
CLIENT_NAME = "tablelog-reflection-check/0.1.0"
TOKEN_ENV = {"recorder": "TABLELOG_TOKEN", "spectator": "TABLELOG_SPECTATOR_TOKEN"}
"""Where the token of each identity a step may call as (`as`) is found."""
AMEND_CHANGES = {"replace": "replace_move", "insert": "insert_move", "delete": "delete_move"}

Json = dict[str, Any]


class CheckFailure(AssertionError):
    """A step whose outcome differs from the scenario's expectation."""


def check(label: str, actual: object, expected: object) -> None:
    if actual != expected:
        raise CheckFailure(f"{label}: expected {expected!r}, got {actual!r}")


class ReflectedService:
    """Calls the service's unary methods with JSON, every type found through reflection."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))

    def services(self) -> list[str]:
        database = ProtoReflectionDescriptorDatabase(self.channel)
        return sorted(database.get_services())

    def call(
        self, method: str, request: Json, identity: str = "recorder", service: str = SERVICE
    ) -> Json:
        descriptor = self.pool.FindServiceByName(service).FindMethodByName(method)
        request_class = message_factory.GetMessageClass(descriptor.input_type)
        response_class = message_factory.GetMessageClass(descriptor.output_type)
        invoke = self.channel.unary_unary(
            f"/{service}/{method}",
            request_serializer=_serialize,
            response_deserializer=response_class.FromString,
        )
        response = invoke(
            json_format.ParseDict(request, request_class()),
            timeout=TIMEOUT,
            metadata=metadata_as(identity),
        )
        return json_format.MessageToDict(response, preserving_proto_field_name=True)


def metadata_as(identity: str) -> tuple[tuple[str, str], ...]:
    if identity not in TOKEN_ENV:
        raise CheckFailure(f"unknown identity {identity!r}: one of {', '.join(TOKEN_ENV)}")
    token = os.environ.get(TOKEN_ENV[identity], "")
    if not token:
        raise CheckFailure(f"no {identity} token: set ${TOKEN_ENV[identity]}")
    return (("x-tablelog-client", CLIENT_NAME), ("authorization", f"Bearer {token}"))


def viewer(spec: object) -> Json:
    if spec is None or spec == "spectator":
        return {"spectator": True}
    if spec == "full":
        return {"full": True}
    if isinstance(spec, dict) and "seat" in spec:
        return {"seat": int(spec["seat"])}
    raise CheckFailure(f"unknown viewer {spec!r}")


def _serialize(request: message.Message) -> bytes:
    return request.SerializeToString()


def describe_to_move(to_move: Json) -> str:
    if "seat" in to_move:
        return f"seat:{to_move['seat']}"
    for kind in ("chance", "terminal"):
        if to_move.get(kind):
            return kind
    return "unspecified"


@dataclass
class ReflectionRunner:
    service: ReflectedService
    scenario: Json
    log: Callable[[str], None] = print
    game_id: str = ""
    version: int = 0
    requests: dict[str, Json] = field(default_factory=dict)
    responses: dict[str, Json] = field(default_factory=dict)

    def expect_game(self, game: Json, expect: Json) -> None:
        if "version" in expect:
            check("version", int(game.get("version", 0)), expect["version"])
        if "move_count" in expect:
            check("move_count", int(game.get("move_count", 0)), expect["move_count"])
        if "to_move" in expect:
            check("to_move", describe_to_move(game.get("to_move", {})), expect["to_move"])
        if "status" in expect:
            check("status", game.get("status"), expect["status"])

    def step(self, step: Json) -> None:
        expect: Json = step.get("expect", {})
        op = step["op"]
        try:
            self.dispatch(op, step, expect)
        except grpc.RpcError as failure:
            if "error" not in expect:
                raise
            self.expect_error(cast(grpc.Call, failure), expect["error"])
            return
        if "error" in expect:
            raise CheckFailure(f"expected {expect['error']['reason']}, but the call succeeded")

    def expect_error(self, call: grpc.Call, expected: Json) -> None:
        check("status code", call.code().name, expected["code"])
        status = rpc_status.from_call(call)
        reasons = []
        metadata: dict[str, str] = {}
        for detail in status.details if status is not None else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reasons.append(info.reason)
                metadata.update(info.metadata)
        check("reason", reasons[:1], [expected["reason"]])
        for key, value in expected.get("metadata", {}).items():
            wanted = str(self.version) if value == "$version" else value
            if key not in metadata or wanted not in ("*", metadata[key]):
                raise CheckFailure(f"error metadata {key}: wanted {wanted!r}, got {metadata}")

    def expected_version(self, step: Json) -> int:
        spec = step.get("version", "current")
        if spec == "current":
            return self.version
        if spec == "stale":
            return self.version - 1
        return int(spec)

    def dispatch(self, op: str, step: Json, expect: Json) -> None:
        identity = step.get("as", "recorder")

        def call(method: str, request: Json, service: str = SERVICE) -> Json:
            return self.service.call(method, request, identity, service)

        if op == "create":
            spec = self.scenario["create"]
            response = call(
                "CreateGame",
                {
                    "game": spec["game"],
                    "players": [{"name": name} for name in spec["players"]],
                    "mode": "MODE_DEALT" if spec.get("mode") == "dealt" else "MODE_TABLE",
                    "title": spec.get("title", ""),
                },
            )
            self.game_id = response["game"]["game_id"]
            self.version = int(response["game"]["version"])
            self.expect_game(response["game"], expect)
        elif op == "record":
            if "retry_of" in step:
                request = self.requests[step["retry_of"]]
            else:
                request = {
                    "game_id": self.game_id,
                    "expected_version": str(self.expected_version(step)),
                    "request_id": step.get("request_id") or str(uuid.uuid4()),
                }
                if "notation" in step:
                    request["notation"] = step["notation"]
                else:
                    request["move"] = step["move"]
            response = call("RecordMove", request)
            if expect.get("same_as_original"):
                original = self.responses[step["retry_of"]]
                check(
                    "version of the retry", response["game"]["version"], original["game"]["version"]
                )
                check("events of the retry", response["events"], original["events"])
            self.requests[step["id"]], self.responses[step["id"]] = request, response
            self.version = int(response["game"]["version"])
            self.expect_game(response["game"], expect)
            if "notation" in expect:
                notation = response["events"][0]["move_recorded"]["notation"]
                check("notation", notation, expect["notation"])
        elif op in ("undo", "redo"):
            request = {
                "game_id": self.game_id,
                "expected_version": str(self.expected_version(step)),
                "request_id": step.get("request_id") or str(uuid.uuid4()),
            }
            if op == "undo":
                request["reason"] = step.get("reason", "")
            response = call("UndoMove" if op == "undo" else "RedoMove", request)
            self.version = int(response["game"]["version"])
            self.expect_game(response["game"], expect)
        elif op == "amend":
            change = step.get("change", "replace")
            if change not in AMEND_CHANGES:
                raise CheckFailure(f"unknown amend change {change!r}")
            new: Json = {}
            if change != "delete":
                new = (
                    {"notation": step["notation"]} if "notation" in step else {"move": step["move"]}
                )
            request = {
                "game_id": self.game_id,
                "revision": str(step["revision"]),
                "expected_version": str(self.expected_version(step)),
                "request_id": step.get("request_id") or str(uuid.uuid4()),
                "reason": step.get("reason", ""),
                AMEND_CHANGES[change]: new,
            }
            response = call("AmendMove", request)
            self.version = int(response["game"]["version"])
            self.expect_game(response["game"], expect)
        elif op == "annotate":
            request = {
                "game_id": self.game_id,
                "revision": str(step["revision"]),
                "comment": step.get("comment", ""),
                "glyph": step.get("glyph", ""),
                "request_id": step.get("request_id") or str(uuid.uuid4()),
            }
            annotation = call("AddAnnotation", request)["annotation"]
            for key in ("comment", "glyph"):
                if key in expect:
                    check(key, annotation.get(key, ""), expect[key])
            if "revision" in expect:
                check("revision", int(annotation.get("revision", 0)), expect["revision"])
        elif op == "whoami":
            member = call("WhoAmI", {}, service=CLUBS).get("member", {})
            if "role" in expect:
                check("role", member.get("role"), expect["role"])
            if not member.get("member_id"):
                raise CheckFailure(f"the {identity} token names no member")
        elif op == "standings":
            request = {"game": step["game"], "season": step.get("season", "")}
            table = call("GetStandings", request, service=STANDINGS)
            check("standings game", table.get("game"), expect["game"])
            if "lag" not in table:
                raise CheckFailure("the standings say nothing of the projections' lag")
        elif op == "game":
            self.expect_game(call("GetGame", {"game_id": self.game_id})["game"], expect)
        elif op == "state":
            request = {
                "game_id": self.game_id,
                "revision": str(step.get("revision", 0)),
                "viewer": viewer(step.get("viewer")),
            }
            state = call("GetState", request)["state"]
            if "revision" in expect:
                check("revision", int(state.get("revision", 0)), expect["revision"])
            if "to_move" in expect:
                check("to_move", describe_to_move(state.get("to_move", {})), expect["to_move"])
            if "moves" in expect:
                check("moves", state.get("moves", []), expect["moves"])
            if "moves_count" in expect:
                check("moves_count", len(state.get("moves", [])), expect["moves_count"])
            for text in expect.get("text_contains", []):
                if text not in state.get("text", ""):
                    raise CheckFailure(f"state text lacks {text!r}")
        elif op == "legal_moves":
            notations: list[str] = []
            token = ""
            while True:
                request = {"game_id": self.game_id, "page_token": token}
                response = call("ListLegalMoves", request)
                notations.extend(move["notation"] for move in response.get("moves", []))
                token = response.get("next_page_token", "")
                if not token:
                    break
            for text in expect.get("contains", []):
                if text not in notations:
                    raise CheckFailure(f"legal moves lack {text!r}")
        elif op == "verify":
            response = call("VerifyGame", {"game_id": self.game_id})
            check("verify ok", response.get("ok", False), expect.get("ok", True))
            if "events_checked" in expect:
                checked = int(response.get("events_checked", 0))
                check("events checked", checked, expect["events_checked"])
        else:
            raise CheckFailure(f"the reflection check does not run {op!r} steps")


def run(address: str, scenario: Json, log: Callable[[str], None] = print) -> tuple[int, int]:
    """Runs the scenario's steps up to `reflection.until`, then its verify."""
    if any(name.startswith("tablelog.") for name in sys.modules):
        raise RuntimeError("the reflection check must not import code generated from proto/")
    part = scenario["reflection"]
    steps: list[Json] = []
    for step in scenario["steps"]:
        steps.append(step)
        if step["id"] == part["until"]:
            break
    if not steps or steps[-1]["id"] != part["until"]:  # a shorter run would show nothing
        log(f"FAIL the scenario has no step {part['until']!r} to run up to")
        log("reflection: 0 passed, 1 failed")
        return 0, 1
    steps.append({"id": "reflection-verify", "op": "verify", "expect": part["verify"]})
    passed = failed = 0
    with grpc.insecure_channel(address) as channel:
        service = ReflectedService(channel)
        listed = service.services()
        if SERVICE not in listed:
            log(f"FAIL reflection lists no {SERVICE}: {listed}")
            failed = 1
        else:
            runner = ReflectionRunner(service, scenario, log)
            for step in steps:
                try:
                    runner.step(step)
                except (CheckFailure, grpc.RpcError) as error:
                    log(f"FAIL {step['id']} ({step['op']}): {error}")
                    failed = 1
                    break
                passed += 1
                log(f"ok   {step['id']} ({step['op']}, by reflection)")
    log(f"reflection: {passed} passed, {failed} failed")
    return passed, failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--scenario", type=Path, default=SCENARIO)
    args = parser.parse_args(argv)
    scenario = json.loads(args.scenario.read_text(encoding="utf-8"))
    _passed, failed = run(args.address, scenario)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
