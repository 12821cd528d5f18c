"""README snippets are tests (issue 27: neither client README's example compiled). Every
fenced block whose info string says `program` (```ts program, ```go program, ```python
program) in README.md and the clients' READMEs is extracted and checked as a whole program:
TypeScript with `tsc --noEmit` against the package as a user imports it (`@tablelog/client`,
its built .d.ts), Go with `go vet` inside the module, Python run against a live server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.service.conftest import own_embedded_redis
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.support.tools import required_tools

ROOT = Path(__file__).resolve().parents[2]
READMES = [
    ROOT / "README.md",
    ROOT / "clients" / "typescript" / "README.md",
    ROOT / "clients" / "go" / "README.md",
    ROOT / "clients" / "python" / "README.md",
]
BLOCK = re.compile(r"^```(\w+) program\n(.*?)^```", re.S | re.M)


def programs(language: str) -> list[tuple[str, str]]:
    found = []
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for number, block in enumerate(BLOCK.finditer(text), 1):
            if block.group(1) == language:
                found.append((f"{readme.relative_to(ROOT)}#{number}", block.group(2)))
    return found


def test_each_client_readme_has_a_program() -> None:
    """The list this file checks (a README losing its marked example fails here)."""
    listed = {lang: [name for name, _ in programs(lang)] for lang in ("ts", "go", "python")}
    assert listed == {
        "ts": ["clients/typescript/README.md#1"],
        "go": ["clients/go/README.md#1"],
        "python": ["clients/python/README.md#1"],
    }


def _run(command: list[str], cwd: Path, timeout: float = 300) -> None:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize(("name", "source"), programs("ts"))
def test_typescript_programs_compile(name: str, source: str) -> None:
    tools = required_tools("node", "npm")
    package = ROOT / "clients" / "typescript"
    if not (package / "node_modules" / "typescript").exists():
        _run([tools["npm"], "ci", "--no-audit", "--no-fund"], package, 600)
    _run([tools["npm"], "run", "build"], package)  # the .d.ts a user's import resolves to
    # Inside the package, so `@tablelog/client` resolves to itself through its "exports".
    check = package / f"_readme_check_{os.getpid()}"
    check.mkdir()
    try:
        (check / "program.ts").write_text(source, encoding="utf-8")
        (check / "tsconfig.json").write_text(
            '{"extends": "../tsconfig.json", "compilerOptions": {"noEmit": true, '
            '"rootDir": "."}, "include": ["program.ts"]}',
            encoding="utf-8",
        )
        _run([str(package / "node_modules" / ".bin" / "tsc"), "-p", str(check)], check)
    finally:
        shutil.rmtree(check)


@pytest.mark.parametrize(("name", "source"), programs("go"))
def test_go_programs_vet(name: str, source: str) -> None:
    go = required_tools("go")["go"]
    module = ROOT / "clients" / "go"
    check = module / f"_readme_check_{os.getpid()}"  # ("_": out of ./... patterns)
    check.mkdir()
    try:
        (check / "main.go").write_text(source, encoding="utf-8")
        _run([go, "vet", f"./{check.name}"], module)
    finally:
        shutil.rmtree(check)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with own_embedded_redis(tmp_path_factory.mktemp("snippet-redis")) as redis:
        server = BackgroundServer(redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
        try:
            yield server
        finally:
            server.stop()


@pytest.mark.parametrize(("name", "source"), programs("python"))
def test_python_programs_run_against_a_live_server(
    name: str, source: str, live: BackgroundServer, tmp_path: Path
) -> None:
    program = tmp_path / "program.py"
    program.write_text(source, encoding="utf-8")
    path = os.pathsep.join(str(ROOT / p) for p in (".", "proto", "clients/python"))
    env = dict(
        os.environ, PYTHONPATH=path, TABLELOG_ADDRESS=live.target, TABLELOG_TOKEN=OWNER_TOKEN
    )
    done = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), "the program printed nothing"
