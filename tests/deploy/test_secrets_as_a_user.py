"""deploy/make-secrets.sh run by a user who is not root (issue 23: it left the secrets 0644
then): for Compose each secret still ends 0600 and owned by its container's user, given
away through a one-off Docker container; with SECRETS_OWNER=me (Kubernetes) 0600 and owned
by that user. The script really runs as another user (setpriv, from a root test). Docker
is emulated as its client and daemon are split: the `docker` the script runs is a client
that hands its arguments over a unix socket to the test, which plays the daemon (root) and
runs the container's command in the mounted directory; the test checks that the container
asked for is the redis image as root with only that directory mounted and no network."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.support import DEPLOY, missing_tool
from tests.support.tools import unavailable

USER = 65534
"""Who runs the script: nobody."""
SECRETS = ("chain.key", "redis-password", "redis-server-password", "tls.key")

CLIENT = """#!{python}
import json, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect({socket_path!r})
connection.sendall(json.dumps(sys.argv[1:]).encode() + b"\\n")
sys.exit(int(connection.makefile().readline() or 1))
"""


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A directory the other user may write to (the test's tmp_path is root's, 0700)."""
    if os.geteuid() != 0:  # (CI runs as root: there the test must run)
        # It runs the script as another user and plays Docker's daemon.
        unavailable("the test is not run as root")
    if shutil.which("openssl") is None or shutil.which("setpriv") is None:
        missing_tool("openssl and setpriv", "apt-get install openssl util-linux")
    made = Path(tempfile.mkdtemp(prefix="tablelog-secrets-"))
    os.chown(made, USER, USER)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def run_as_user(workspace: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
         "sh", str(DEPLOY / "make-secrets.sh")],
        env={
            "PATH": f"{workspace / 'bin'}:/usr/bin:/bin",
            "HOME": str(workspace),
            "SECRETS_DIR": str(workspace / "secrets"),
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip


def owners_and_modes(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_uid, stat.S_IMODE(p.stat().st_mode)) for p in directory.iterdir()}


class Daemon:
    """Docker's daemon, as far as the script uses it: `docker run` of one container."""

    def __init__(self, path: Path) -> None:
        self.asked: list[list[str]] = []
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        os.chmod(path, 0o777)
        self.server.listen()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        import json

        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                argv: list[str] = json.loads(connection.makefile().readline())
                self.asked.append(argv)
                connection.sendall(b"%d\n" % self.run(argv))

    @staticmethod
    def run(argv: list[str]) -> int:
        # run --rm --user 0:0 --network none -v HOST:/secrets -w /secrets
        #     --entrypoint sh IMAGE -c CMD
        if argv[:6] != ["run", "--rm", "--user", "0:0", "--network", "none"]:
            return 125
        if argv[6] != "-v" or argv[8:14] != [
            "-w",
            "/secrets",
            "--entrypoint",
            "sh",
            "redis:7.2",
            "-c",
        ]:
            return 125
        host, _, inside = argv[7].rpartition(":")
        if inside != "/secrets":
            return 125
        # The container sees the host directory at /secrets, its working directory.
        return subprocess.run(["sh", "-c", argv[14]], cwd=host, check=False).returncode

    def close(self) -> None:
        self.server.close()


def test_as_a_user_with_docker_each_secret_is_0600_for_its_containers_user(
    workspace: Path,
) -> None:
    bin_dir = workspace / "bin"
    bin_dir.mkdir()
    client = bin_dir / "docker"
    # The system's python (this one may be in a home the other user cannot enter).
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        missing_tool("the system's python3", "apt-get install python3")
    client.write_text(CLIENT.format(python=python, socket_path=str(workspace / "d.sock")))
    client.chmod(0o755)
    daemon = Daemon(workspace / "d.sock")
    try:
        made = run_as_user(workspace)
    finally:
        daemon.close()
    assert made.returncode == 0, made.stderr
    assert len(daemon.asked) == 1
    assert daemon.asked[0][7] == f"{workspace / 'secrets'}:/secrets"
    found = owners_and_modes(workspace / "secrets")
    for name in ("chain.key", "redis-password", "tls.key"):
        assert found[name] == (10001, 0o600), (name, found[name])
    assert found["redis-server-password"] == (999, 0o600)
    assert found["tls.crt"] == (10001, 0o644)
    assert stat.S_IMODE((workspace / "secrets").stat().st_mode) == 0o700


def test_as_a_user_for_kubernetes_each_secret_is_0600_and_the_users(workspace: Path) -> None:
    made = run_as_user(workspace, SECRETS_OWNER="me")
    assert made.returncode == 0, made.stderr
    found = owners_and_modes(workspace / "secrets")
    for name in SECRETS:
        assert found[name] == (USER, 0o600), (name, found[name])
    assert found["tls.crt"] == (USER, 0o644)


def test_as_a_user_without_docker_the_script_says_what_it_could_not_do(workspace: Path) -> None:
    made = run_as_user(workspace, DOCKER="no-such-docker")
    assert made.returncode == 0, made.stderr
    assert "0644" in made.stderr
    assert "sudo" in made.stderr
    assert {mode for _uid, mode in owners_and_modes(workspace / "secrets").values()} == {0o644}
