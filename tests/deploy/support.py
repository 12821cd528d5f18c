"""Running the deploy files without Docker or Kubernetes: their commands, with the paths a
container would see mapped onto this machine, against real Redis and real `tablelog serve`
processes; and the offline tools that read them (a Dockerfile parser, kustomize, the
Kubernetes schemas)."""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import redis
import yaml

from tablelog.service.api.cli import serve_command
from tablelog.service.api.http_port import served_names
from tests.service.conftest import standalone_redis_binary
from tests.service.support import OUT_OF_REACH_LIMITS, tablelog_command
from tests.support.processes import stop_process
from tests.support.tools import unavailable

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
KUBERNETES = DEPLOY / "kubernetes"


def missing_tool(what: str, install: str) -> None:
    """A tool the deploy tests need is not here: a failure under CI (which installs it), a
    skip on a developer's machine."""
    unavailable(f"{what} is missing ({install})")


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as file:
        return yaml.safe_load(file)


def load_all_yaml(text: str) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(text) if document]


def tracked_files() -> list[str]:
    """The files a clean clone of this checkout has (its tracked files)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
        )
    except (OSError, subprocess.CalledProcessError):
        missing_tool("a git checkout", "run the tests in a clone of the repository")
    return [name for name in listed.stdout.decode().split("\0") if name]


def make_secrets(directory: Path, *names: str) -> Path:
    """deploy/make-secrets.sh run as its comment says, into `directory`: the files it made."""
    if shutil.which("openssl") is None:
        missing_tool("openssl", "apt-get install openssl")
    made = subprocess.run(
        ["sh", str(DEPLOY / "make-secrets.sh"), *names],
        env={**os.environ, "SECRETS_DIR": str(directory)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return directory


# ------------------------------------------------------------------ containers, emulated


@dataclass(frozen=True)
class Mounts:
    """What a container sees at some of its paths (volumes, secrets, its /tmp), as paths on
    this machine: applied to a command or a setting, it runs here as it would there."""

    paths: Mapping[str, Path]

    def apply(self, text: str) -> str:
        """`text` with each container path replaced, in one pass (a host path put in is
        never mapped again), the longest first: /run/secrets/tls-cert before /run."""
        inside = sorted(self.paths, key=len, reverse=True)
        pattern = "|".join(re.escape(path) for path in inside)
        return re.sub(
            f"({pattern})(?![\\w.-])",
            lambda match: str(self.paths[match.group(1)]),
            text,
            flags=re.MULTILINE,
        )


def compose_shell(text: str) -> str:
    """A command as Compose hands it to the container: `$$` is a literal `$`."""
    return text.replace("$$", "$")


COMPOSE_VARIABLE = re.compile(r"\$\$|\$\{(\w+)(?:(:?-)([^}]*))?\}|\$(\w+)")


def compose_interpolate(text: str, environment: Mapping[str, str]) -> str:
    """A value of a Compose file as Compose reads it from `environment` (the shell's of
    `docker compose up`, and deploy/.env): `${NAME}` and `$NAME`, `${NAME:-default}` (the
    default also for an empty value), `${NAME-default}` (only for an unset one), `$$` a `$`."""

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        found = environment.get(name)
        if match.group(2) == ":-" and not found:
            return match.group(3)
        if match.group(2) == "-" and found is None:
            return match.group(3)
        return found or ""

    return COMPOSE_VARIABLE.sub(value, text)


def served_names_under(environment: Mapping[str, str]) -> frozenset[str] | None:
    """The host names the HTTP port of `tablelog serve` answers the web app and the API to
    (None: any name) when it is started with `environment` and no arguments, as the image
    starts it: read by the server's own option parsing."""
    with mock.patch.dict(os.environ, environment, clear=True):
        parser = argparse.ArgumentParser()
        serve_command(parser.add_subparsers())
        args = parser.parse_args(["serve"])
    return served_names(args.http_address, args.http_host)


def status_by_name(base_url: str, path: str, host: str, ca: str | None = None) -> int:
    """The status of GET `path` at `base_url` (`https://localhost:PORT`, or http) sent with
    `host` as its Host header: what a browser sends for a page of that name whose DNS
    points at this address (a DNS rebinding), or a load balancer reaching a pod by address."""
    scheme, _, authority = base_url.partition("://")
    name, _, port = authority.rstrip("/").rpartition(":")
    connection: http.client.HTTPConnection
    if scheme == "https":
        context = ssl.create_default_context(cafile=ca)
        connection = http.client.HTTPSConnection(name, int(port), context=context, timeout=10)
    else:
        connection = http.client.HTTPConnection(name, int(port), timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", f"{host}:{port}")
        connection.endheaders()
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def image_program(argv: Sequence[str]) -> list[str]:
    """An exec-form command of the image, run with this checkout's install: its `tablelog`
    console script and its Python (the image's `python` has the project installed)."""
    programs = {"tablelog": tablelog_command(), "python": [sys.executable]}
    return [*programs.get(argv[0], [argv[0]]), *argv[1:]]


def clean_environment(**settings: str) -> dict[str, str]:
    """This machine's environment without any tablelog setting of the developer's, with
    `settings` (a container has only what its image and its manifest set)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("TABLELOG_")}
    return {**kept, **OUT_OF_REACH_LIMITS, **settings}


@contextmanager
def serving(argv: Sequence[str], env: Mapping[str, str], timeout: float = 60) -> Iterator[None]:
    """`argv` (a `tablelog serve`) running until the block ends, once it says it listens."""
    process = subprocess.Popen(
        list(argv),
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    try:
        deadline = time.monotonic() + timeout
        while True:
            line = process.stdout.readline()
            if "listening on" in line:
                break
            if not line or time.monotonic() > deadline:
                process.kill()
                _out, errors = process.communicate(timeout=30)
                raise AssertionError(f"{argv} did not start: {errors[-3000:]}")
        yield
    finally:
        stop_process(process)
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()


@contextmanager
def redis_command(
    argv: Sequence[str], port: int, password: str | None, env: Mapping[str, str] | None = None
) -> Iterator[redis.Redis]:
    """A redis-server started by `argv` (a container's command, mapped), until the block
    ends: a client of it with `password`, once it answers."""
    process = subprocess.Popen(
        list(argv),
        env=dict(env or os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # `sh -c ... exec redis-server`: stop it whatever it is
    )
    client = redis.Redis(port=port, password=password, socket_timeout=5)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    errors = process.stderr.read().decode() if process.stderr else ""
                    raise AssertionError(f"{argv} did not start: {errors[-2000:]}") from None
                time.sleep(0.05)
        yield client
    finally:
        client.close()
        if process.poll() is None:
            # A cluster master waits up to shutdown-timeout for its replicas on SIGTERM and
            # writes its append-only file: on a loaded machine that can last; the test has
            # what it came for by then, so a node still running after the grace is killed.
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


def redis_server() -> str:
    """Debian's redis-server (the deploy files run Redis 7, as it is)."""
    return standalone_redis_binary()
