"""Every client holds to the one conformance scenario against a live server.

A `tablelog serve` is started on a free port with its embedded Redis; with the owner token
it writes, a recorder and a spectator are added to its club. The Python runner (generated
stubs only), the reflection check (no .proto files), the TypeScript client and the Go client
each run clients/conformance/scenario.json against it as the recorder ($TABLELOG_TOKEN), the
spectator's steps with the spectator's token ($TABLELOG_SPECTATOR_TOKEN). The TypeScript and Go
clients are built here and their unit tests run too. Without node/npm or go the matching
tests are skipped, unless CI is set: there a missing toolchain is a failure.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from tablelog_client.sdk import Client
from tests.clients import conformance
from tests.support.processes import environment_set, stop_process
from tests.support.tools import required_tools

ROOT = Path(__file__).resolve().parents[2]
TYPESCRIPT = ROOT / "clients" / "typescript"
GO = ROOT / "clients" / "go"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _python_env() -> dict[str, str]:
    path = os.pathsep.join(str(ROOT / p) for p in (".", "proto", "clients/python"))
    return {**os.environ, "PYTHONPATH": path}


def _server_command(address: str, data_dir: Path) -> list[str]:
    script = shutil.which("tablelog", path=str(BIN))
    start = (
        [script]
        if script
        else [
            sys.executable,
            "-c",
            "import sys; from tablelog_client.cli import main; sys.exit(main())",
        ]
    )
    return [*start, "serve", "--address", address, "--data-dir", str(data_dir)]


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A live `tablelog serve` (embedded Redis) on a free port, stopped at the end."""
    address = f"127.0.0.1:{_free_port()}"
    with serving_for_conformance(address, tmp_path_factory.mktemp("tablelog-data")):
        yield address


SCENARIO_RATES = ("--changes-per-second", "1000", "--change-burst", "5000")
"""The runners of a module all call one server as the same recorder, each playing the
scenario's games at full speed (a Mercado de Lisboa game of 81 moves among them): on a quick
machine they passed the default change rate (50 a second, bursts of 200, per caller), which
is not what the scenario tests (tests/service/test_caller_limits.py does)."""


@contextlib.contextmanager
def serving_for_conformance(address: str, data_dir: Path, *options: str) -> Iterator[None]:
    """`tablelog serve` (with `options`) on `address` until the block ends, its data and its
    log (serve.log) in `data_dir`; meanwhile the conformance runner's member tokens in the
    environment (conformance.TOKEN_ENV)."""
    log_path = data_dir / "serve.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*_server_command(address, data_dir), *SCENARIO_RATES, *options],
            cwd=ROOT,
            env=_python_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_until_serving(address, server, log_path)
            owner = (data_dir / "owner.token").read_text().strip()
            # Every runner (and the processes it starts) calls as the recorder, and as the
            # spectator where a step says so: not as the owner, who may do and see everything.
            with environment_set(_member_tokens(address, owner)):
                yield
        finally:
            stop_process(server, signal.SIGINT)


def _member_tokens(address: str, owner_token: str) -> dict[str, str]:
    """Adds a recorder and a spectator to the local club (as its owner); the environment
    variable that carries each one's new token, as conformance.TOKEN_ENV names them."""
    tokens: dict[str, str] = {}
    with Client(address, token=owner_token) as owner:
        for role, variable in conformance.TOKEN_ENV.items():
            member = owner.add_member(f"conformance {role}", role)
            tokens[variable] = owner.create_token(member.member_id, 3600).token
    return tokens


def _wait_until_serving(address: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"tablelog serve exited with {server.returncode}:\n{log.read_text()}")
        with grpc.insecure_channel(address) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=1)
                return
            except grpc.FutureTimeoutError:
                continue
    pytest.fail(f"tablelog serve did not listen on {address} within 60 s:\n{log.read_text()}")


def _run(
    command: Sequence[str], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = f"$ {' '.join(command)}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, output
    return output


def _scenario_steps() -> int:
    """The number of steps in clients/conformance/scenario.json: what every runner must run."""
    steps = len(conformance.load_scenario()["steps"])
    assert steps > 0
    return steps


def _reflection_steps() -> int:
    """The steps the reflection check runs: up to `reflection.until`, then one verify."""
    scenario = conformance.load_scenario()
    ids = [step["id"] for step in scenario["steps"]]
    return ids.index(scenario["reflection"]["until"]) + 2


def _assert_all_passed(output: str, steps: int, closing: str = "conformance:") -> None:
    """The runner's closing line says every step ran and passed (a run that stopped early
    or read no steps does not pass on "0 failed")."""
    lines = [line for line in output.splitlines() if line.startswith(closing)]
    assert lines, output
    assert lines[-1] == f"{closing} {steps} passed, 0 failed", output


def test_python_client_passes_the_scenario(address: str) -> None:
    lines: list[str] = []
    passed, failed = conformance.run(address, conformance.load_scenario(), lines.append)
    assert failed == 0, "\n".join(lines)
    assert passed == _scenario_steps()
    _assert_all_passed("\n".join(lines), _scenario_steps())


def test_a_run_of_fewer_steps_than_the_scenario_fails(address: str) -> None:
    """Every runner judges its run against the scenario's step count: a scenario whose steps
    are missing fails instead of passing on "0 passed, 0 failed"."""
    scenario = {**conformance.load_scenario(), "steps": []}
    lines: list[str] = []
    assert conformance.run(address, scenario, lines.append) == (0, 1), lines


def test_the_audit_check_tells_the_recorder_from_another_member(address: str) -> None:
    """The audit's actors are checked against the member the recorder's token names: the
    same run expecting the spectator as actor fails at that step."""
    scenario = conformance.load_scenario()
    steps = [dict(step) for step in scenario["steps"]]
    last_audit = max(i for i, step in enumerate(steps) if step["op"] == "audit")
    steps[last_audit]["expect"] = {**steps[last_audit]["expect"], "actor": "spectator"}
    lines: list[str] = []
    passed, failed = conformance.run(address, {**scenario, "steps": steps}, lines.append)
    assert (passed, failed) == (last_audit, 1), lines
    assert "actor of event 1" in lines[-2], lines


def test_the_club_memory_steps_compare_the_figures(address: str) -> None:
    """The scenario's game played to its end is read back from club memory and compared,
    figure by figure: the same run expecting one point more for the winner, one more game
    of the game type, or another head-to-head fails at that step (each run's players are
    its own, so the rows are its alone)."""
    scenario = conformance.load_scenario()
    ids = [step["id"] for step in scenario["steps"]]

    def failing(step_id: str, change: Callable[[dict[str, Any]], None]) -> list[str]:
        steps = [copy.deepcopy(step) for step in scenario["steps"]]
        at = ids.index(step_id)
        steps[at]["within_seconds"] = 1  # (it never passes: no need to wait long)
        change(steps[at]["expect"])
        lines: list[str] = []
        passed, failed = conformance.run(address, {**scenario, "steps": steps}, lines.append)
        assert (passed, failed) == (at, 1), lines
        return lines

    lines = failing("memory-standings", lambda e: e["rows"][0].update(points=16))
    assert "points: expected 16, got 15" in lines[-2], lines
    lines = failing("memory-stats-after", lambda e: e["added"].update(games=2))
    assert "games added: expected 2, got 1" in lines[-2], lines
    head_to_head = "memory-player-record"
    lines = failing(head_to_head, lambda e: e["games"][0]["head_to_head"][0].update(ahead=0))
    assert "head to head" in lines[-2], lines


def _reflection_check(address: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    # A process that cannot import the generated modules: no PYTHONPATH, run from /.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = ROOT / "tests" / "clients" / "reflection_check.py"
    return subprocess.run(
        [sys.executable, "-P", str(script), "--address", address, *arguments],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_reflection_check_needs_no_proto_files(address: str) -> None:
    done = _reflection_check(address)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    _assert_all_passed(output, _reflection_steps(), "reflection:")


def test_reflection_check_amends(address: str, tmp_path: Path) -> None:
    """The scenario's amendments, by reflection: its moves up to bo's first turn, then its
    refused and its accepted amendment (which there come right after that turn)."""
    scenario = conformance.load_scenario()
    ids = [step["id"] for step in scenario["steps"]]
    steps = [
        step
        for step in scenario["steps"][: ids.index("bo-takes-three") + 1]
        if step["op"] in ("create", "record") and "retry_of" not in step
    ]
    refused = dict(scenario["steps"][ids.index("amend-breaking-the-buy-refused")])
    # Without the later buy, replacing ada's first take breaks nothing: a move that does not
    # apply where it goes in is refused instead.
    refused["notation"] = "buy 1.1"
    refused["expect"] = {"error": {"code": "FAILED_PRECONDITION", "reason": "ILLEGAL_MOVE"}}
    kept = dict(scenario["steps"][ids.index("amend-keeps-the-tail")])
    kept["expect"] = {"version": 19, "move_count": 17, "to_move": "seat:0"}
    steps += [refused, kept]
    part = {"until": kept["id"], "verify": {"ok": True, "events_checked": 19}}
    path = tmp_path / "amend.json"
    path.write_text(json.dumps({**scenario, "steps": steps, "reflection": part}), "utf-8")
    done = _reflection_check(address, "--scenario", str(path))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    _assert_all_passed(output, len(steps) + 1, "reflection:")


@contextlib.contextmanager
def _build_lock(name: str) -> Iterator[None]:
    """One build at a time across pytest-xdist workers (they share the work tree)."""
    path = Path(tempfile.gettempdir()) / f"tablelog-{name}.lock"
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _typescript_fingerprint() -> str:
    digest = hashlib.sha256()
    sources = [TYPESCRIPT / "package-lock.json", TYPESCRIPT / "tsconfig.json"]
    for folder in ("src", "test"):
        sources.extend(sorted((TYPESCRIPT / folder).rglob("*.ts")))
    for source in sources:
        digest.update(str(source.relative_to(TYPESCRIPT)).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _typescript_built() -> None:
    """`npm ci` when node_modules is missing, then `tsc` unless dist/ is already current."""
    tools = required_tools("node", "npm")
    with _build_lock("typescript-build"):
        if not (TYPESCRIPT / "node_modules" / ".bin" / "tsc").exists():
            _run([tools["npm"], "ci", "--no-audit", "--no-fund"], TYPESCRIPT)
        stamp = TYPESCRIPT / "dist" / ".fingerprint"
        fingerprint = _typescript_fingerprint()
        if stamp.exists() and stamp.read_text() == fingerprint:
            return
        _run([tools["npm"], "run", "build"], TYPESCRIPT)
        stamp.write_text(fingerprint)


def test_typescript_client_unit_tests() -> None:
    _typescript_built()
    tests = sorted(str(p.relative_to(TYPESCRIPT)) for p in TYPESCRIPT.glob("dist/test/*.test.js"))
    assert tests, "no compiled TypeScript tests"
    output = _run([required_tools("node")["node"], "--test", *tests], TYPESCRIPT)
    assert "# fail 0" in output, output


def _stepless_scenario(folder: Path) -> Path:
    """The scenario with its steps gone: a runner must fail it, not pass on "0 failed"."""
    path = folder / "stepless.json"
    path.write_text(json.dumps({**conformance.load_scenario(), "steps": []}), encoding="utf-8")
    return path


def _assert_fails(command: Sequence[str], cwd: Path) -> None:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode != 0, f"{done.stdout}\n{done.stderr}"


def test_typescript_client_passes_the_scenario(address: str, tmp_path: Path) -> None:
    _typescript_built()
    node = required_tools("node")["node"]
    output = _run([node, "dist/src/conformance.js", "--address", address], TYPESCRIPT, 180)
    _assert_all_passed(output, _scenario_steps())
    stepless = ["--scenario", str(_stepless_scenario(tmp_path))]
    _assert_fails([node, "dist/src/conformance.js", "--address", address, *stepless], TYPESCRIPT)


def test_go_client_builds_vets_and_passes_its_unit_tests() -> None:
    go = required_tools("go")["go"]
    _run([go, "build", "./..."], GO)
    _run([go, "vet", "./..."], GO)
    _run([go, "test", "./..."], GO)
    gofmt = str(Path(go).resolve().parent / "gofmt")
    unformatted = _run([gofmt, "-l", "."], GO).split("\n", 1)[1].strip()
    assert unformatted == "", f"gofmt would change: {unformatted}"


def test_go_client_passes_the_scenario(address: str, tmp_path: Path) -> None:
    go = required_tools("go")["go"]
    binary = tmp_path / "tablelog-conformance"
    _run([go, "build", "-o", str(binary), "./cmd/tablelog-conformance"], GO)
    output = _run([str(binary), "--address", address], GO, 180)
    _assert_all_passed(output, _scenario_steps())
    stepless = ["--scenario", str(_stepless_scenario(tmp_path))]
    _assert_fails([str(binary), "--address", address, *stepless], GO)


def test_generated_client_code_is_fresh() -> None:
    required_tools("node", "npm", "go")
    _typescript_built()
    # protoc runs from this interpreter's grpcio-tools, wherever its environment lives.
    env = {**os.environ, "PYTHON": sys.executable}
    _run(["bash", "scripts/generate_clients.sh", "--check"], ROOT, env=env)
