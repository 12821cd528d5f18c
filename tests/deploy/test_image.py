"""deploy/Dockerfile without a Docker engine: read with a Dockerfile parser against a clean
checkout and .dockerignore (what a build from a fresh clone would be given), and its
ENTRYPOINT and HEALTHCHECK run as the image runs them, with its ENV."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tablelog.service.store.embedded import free_port
from tablelog_client import Client
from tests.deploy.support import (
    DEPLOY,
    REPO,
    clean_environment,
    image_program,
    make_secrets,
    missing_tool,
    served_names_under,
    serving,
    status_by_name,
    tracked_files,
)

try:
    # No type information ships with it (a parser of the Dockerfile's text, nothing more).
    from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]
except ImportError:
    DockerfileParser = None


@dataclass(frozen=True)
class Instruction:
    name: str
    value: str


def instructions() -> list[Instruction]:
    if DockerfileParser is None:
        missing_tool("dockerfile-parse", "pip install -e '.[dev]'")
    parsed = DockerfileParser(path=str(DEPLOY / "Dockerfile"))
    return [
        Instruction(step["instruction"], step["value"])
        for step in parsed.structure
        if step["instruction"] != "COMMENT"
    ]


def final_stage() -> list[Instruction]:
    steps = instructions()
    last_from = max(i for i, step in enumerate(steps) if step.name == "FROM")
    return steps[last_from:]


def only(stage: list[Instruction], name: str) -> Instruction:
    found = [step for step in stage if step.name == name]
    assert len(found) == 1, f"expected one {name} in the image's stage, found {len(found)}"
    return found[0]


def exec_form(value: str) -> list[str]:
    """The JSON array of an exec-form ENTRYPOINT or CMD (a shell form would start a shell
    that does not pass signals on: refused here)."""
    command = json.loads(value)
    assert isinstance(command, list), f"not an exec form: {value}"
    return [str(word) for word in command]


def image_environment(stage: list[Instruction]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for step in stage:
        if step.name == "ENV":
            for pair in shlex.split(step.value):
                name, _, value = pair.partition("=")
                settings[name] = value
    return settings


def healthcheck_command(stage: list[Instruction]) -> list[str]:
    check = only(stage, "HEALTHCHECK").value
    _options, _, command = check.partition("CMD")
    return exec_form(command.strip())


# --------------------------------------------------------------------- .dockerignore


@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern[str]
    keeps: bool  # a `!` exception


class DockerIgnore:
    """.dockerignore as Docker reads it (moby/patternmatcher): patterns in order, the last
    that matches a path or one of its parent directories decides; `*` and `?` stay inside
    a path segment, `**` crosses segments, `!` takes a path back in."""

    def __init__(self, text: str) -> None:
        self.patterns: list[IgnorePattern] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            keeps = line.startswith("!")
            pattern = line.removeprefix("!").strip().strip("/")
            self.patterns.append(IgnorePattern(self._compile(pattern), keeps))

    @staticmethod
    def _compile(pattern: str) -> re.Pattern[str]:
        regex, index = "", 0
        while index < len(pattern):
            char = pattern[index]
            if pattern.startswith("**/", index):
                regex, index = regex + "(.*/)?", index + 3
            elif pattern.startswith("**", index):
                regex, index = regex + ".*", index + 2
            elif char == "*":
                regex, index = regex + "[^/]*", index + 1
            elif char == "?":
                regex, index = regex + "[^/]", index + 1
            else:
                regex, index = regex + re.escape(char), index + 1
        return re.compile(f"^{regex}$")

    def excludes(self, path: str) -> bool:
        parts = path.split("/")
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for pattern in self.patterns:
            if any(pattern.regex.match(candidate) for candidate in candidates):
                excluded = not pattern.keeps
        return excluded


def dockerignore() -> DockerIgnore:
    return DockerIgnore((REPO / ".dockerignore").read_text(encoding="utf-8"))


def copy_sources() -> list[str]:
    """The build-context paths the Dockerfile copies (COPY/ADD without --from)."""
    sources: list[str] = []
    for step in instructions():
        if step.name not in ("COPY", "ADD"):
            continue
        words = [w for w in shlex.split(step.value) if not w.startswith("--")]
        if any(w.startswith("--from") for w in shlex.split(step.value)):
            continue
        sources += [w.rstrip("/") for w in words[:-1]]
    return sources


def test_every_copied_path_is_in_a_clean_checkout_and_in_the_build_context() -> None:
    tracked = tracked_files()
    ignore = dockerignore()
    sources = copy_sources()
    assert sources, "the Dockerfile copies nothing from the context"
    for source in sources:
        inside = [f for f in tracked if f == source or f.startswith(source + "/")]
        assert inside, f"COPY {source}: not in a clean checkout"
        left_out = [f for f in inside if ignore.excludes(f)]
        assert not left_out, f"COPY {source}: .dockerignore leaves out {left_out[:5]}"


def test_the_build_context_holds_only_what_the_image_copies() -> None:
    ignore = dockerignore()
    sources = copy_sources()
    for path in tracked_files():
        copied = any(path == s or path.startswith(s + "/") for s in sources)
        assert ignore.excludes(path) != copied, f"{path}: in the context {not copied}"
    # What a working tree has beside the clean checkout never reaches the build.
    for local in (
        ".venv/bin/python",
        ".git/config",
        "clients/typescript/node_modules/grpc/index.js",
        "clients/python/node_modules/x.js",
        "service/__pycache__/cli.cpython-311.pyc",
        "replay/games/splendor/__pycache__/rules.cpython-311.pyc",
        "tablelog.egg-info/PKG-INFO",
        "deploy/secrets/chain.key",
        "deploy/kubernetes/base/secrets/tls.key",
        "tests/service/tmp/appendonlydir/tablelog.aof.1.incr.aof",
        "service/appendonlydir/x.aof",
        "dump.rdb",
        ".mypy_cache/3.11/cache.db",
    ):
        assert ignore.excludes(local), f"{local} would be sent to the build"


def test_the_image_copies_everything_the_package_build_reads() -> None:
    """What `pip install .` in the build stage needs: the files pyproject.toml names and
    every package its discovery would find in a clean checkout."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    sources = copy_sources()

    def copied(path: str) -> bool:
        path = path.strip("/") or "."
        return any(path == s or path.startswith(s + "/") for s in sources)

    assert copied("pyproject.toml")
    assert copied(project["project"]["readme"])
    setuptools = project["tool"]["setuptools"]
    for directory in setuptools["package-dir"].values():
        assert directory in ("", ".") or copied(directory), directory
    found = setuptools["packages"]["find"]
    tracked = tracked_files()
    for where in found["where"]:
        prefix = "" if where == "." else where.strip("/") + "/"
        packages = {
            f[len(prefix) :].split("/")[0]
            for f in tracked
            if f.startswith(prefix)
            and f[len(prefix) :].count("/") == 1
            and f.endswith("/__init__.py")
        }
        for package in packages:
            if any(fnmatch.fnmatch(package, pattern) for pattern in found["include"]):
                assert copied(prefix + package), f"package {prefix}{package} is not copied"
    # proto/tablelog's links (tablelog.replay, tablelog.service) need their folders too.
    links = [f for f in tracked if (REPO / f).is_symlink()]
    assert links, "proto/tablelog's links to replay/ and service/ are not tracked"
    for link in links:
        target = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(REPO / link)))
        assert copied(link), f"{link} is not copied"
        assert copied(target), f"{target}, where {link} points, is not copied"


@pytest.mark.slow
def test_the_build_stage_builds_the_package_from_the_copied_files_alone(tmp_path: Path) -> None:
    """The build stage's `pip install .` as a wheel (no dependencies: they come from the
    registry either way), from only what its COPY lines give it: every module and data
    file of the packages is in it, and the `tablelog` command with its `serve`."""
    ignore = dockerignore()
    sources = copy_sources()
    context = tmp_path / "src"
    copied = [
        path
        for path in tracked_files()
        if any(path == s or path.startswith(s + "/") for s in sources) and not ignore.excludes(path)
    ]
    for path in copied:
        (context / path).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / path).is_symlink():  # as Docker's COPY keeps it: the link itself
            os.symlink(os.readlink(REPO / path), context / path)
        else:
            shutil.copy2(REPO / path, context / path)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "wheel"), str(context)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("tablelog-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        commands = archive.read(entry_points).decode()
    installed_as = {
        "proto/": "",
        "clients/python/": "",
        "replay/": "tablelog/replay/",
        "service/": "tablelog/service/",
    }
    for path in copied:
        if path.endswith((".py", ".lua", ".json", ".csv")) and not path.startswith("tests/"):
            prefix = next((p for p in installed_as if path.startswith(p)), "")
            installed = installed_as.get(prefix, "") + path[len(prefix) :]
            if "/" in installed:  # in a package, not a top-level file
                assert installed in names, f"{path} is not installed (as {installed})"
    # One installed namespace: nothing generic (`service`, `replay`) lands in site-packages.
    top_level = {name.split("/")[0] for name in names}
    assert {n for n in top_level if not n.endswith(".dist-info")} == {"tablelog", "tablelog_client"}
    assert "tablelog = tablelog_client.cli:main" in commands
    assert "serve = tablelog.service.api.cli:serve_command" in commands


def test_the_ignore_rules_read_as_docker_reads_them() -> None:
    rules = DockerIgnore("*\n!keep/\n**/*.pyc\nkeep/private\n!keep/private/open.txt\n")
    assert rules.excludes("other.txt")
    assert rules.excludes("other/deep/file")
    assert not rules.excludes("keep/a/b.py")
    assert rules.excludes("keep/a/b.pyc")
    assert rules.excludes("keep/private/secret")
    assert not rules.excludes("keep/private/open.txt")


def test_the_image_runs_as_a_user_that_is_not_root() -> None:
    stage = final_stage()
    user = only(stage, "USER").value
    uid, _, gid = user.partition(":")
    # Numeric, so that Kubernetes' runAsNonRoot can check it without the image's passwd.
    assert uid.isdigit(), f"USER {user}: not a numeric uid"
    assert int(uid) != 0
    assert not gid or (gid.isdigit() and int(gid) != 0)
    names = [step.name for step in stage]
    assert names.index("USER") < names.index("ENTRYPOINT")
    created = " ".join(step.value for step in stage if step.name == "RUN")
    assert f"--uid {uid}" in created, "the user is not created in the image"


def test_the_bases_are_named_versions() -> None:
    for step in instructions():
        if step.name == "FROM":
            image = step.value.split()[0]
            assert ":" in image, f"FROM {image}: no tag"
            assert not image.endswith(":latest"), f"FROM {image}"


def test_the_health_check_names_no_address() -> None:
    stage = final_stage()
    check = healthcheck_command(stage)
    assert check == ["python", "-m", "tablelog.service.api.healthcheck"]
    settings = image_environment(stage)
    ports = [
        settings[name].rsplit(":", 1)[1] for name in ("TABLELOG_ADDRESS", "TABLELOG_HTTP_ADDRESS")
    ]
    # The server's ports are declared where the server reads them, and nowhere in the check.
    assert only(stage, "EXPOSE").value.split() == ports
    assert not re.search(r"\d+\.\d+\.\d+\.\d+|localhost|:\d+", only(stage, "HEALTHCHECK").value)


def test_the_server_is_configured_by_the_environment_the_check_reads() -> None:
    stage = final_stage()
    assert exec_form(only(stage, "ENTRYPOINT").value) == ["tablelog", "serve"]
    # Arguments to `serve` would not be seen by the health check: none are set.
    assert not [step for step in stage if step.name == "CMD"]


def test_the_image_names_the_hosts_its_http_port_serves() -> None:
    """On every interface with no names, the port's Host check let any name through (a
    DNS-rebinding page); the image names loopback only until TABLELOG_HTTP_HOSTS says more."""
    settings = image_environment(final_stage())
    assert settings["TABLELOG_HTTP_ADDRESS"].startswith("0.0.0.0:")
    served = served_names_under(settings)
    assert served is not None, "every name is answered"
    assert "localhost" in served
    assert "rebound.example" not in served
    more = served_names_under({**settings, "TABLELOG_HTTP_HOSTS": "tablelog.club.example"})
    assert more is not None
    assert "tablelog.club.example" in more


def healthy(env: dict[str, str]) -> bool:
    check = subprocess.run(
        image_program(healthcheck_command(final_stage())),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return check.returncode == 0


def on_port(address: str, port: int) -> str:
    """The image's address (its host) on a port of this test's."""
    return address.rsplit(":", 1)[0] + f":{port}"


@pytest.mark.slow
@pytest.mark.parametrize("listening", ["every interface, TLS", "loopback, plaintext"])
def test_the_image_serves_and_its_health_check_finds_the_server(
    tmp_path: Path, listening: str
) -> None:
    """The ENTRYPOINT with the image's ENV and a data volume (its embedded Redis), as
    `docker run` starts it, then the HEALTHCHECK with the same environment."""
    stage = final_stage()
    port = free_port()
    secrets = make_secrets(tmp_path / "secrets")
    settings = image_environment(stage)
    settings["TABLELOG_DATA_DIR"] = str(tmp_path / "volume")  # the volume's mount
    if listening == "every interface, TLS":
        # The image's own address (every interface) on a port of this test's.
        settings["TABLELOG_ADDRESS"] = settings["TABLELOG_ADDRESS"].rsplit(":", 1)[0] + f":{port}"
        settings["TABLELOG_HTTP_ADDRESS"] = on_port(settings["TABLELOG_HTTP_ADDRESS"], free_port())
        settings["TABLELOG_TLS_CERT"] = str(secrets / "tls.crt")
        settings["TABLELOG_TLS_KEY"] = str(secrets / "tls.key")
        ca: str | None = str(secrets / "tls.crt")
    else:
        settings["TABLELOG_ADDRESS"] = f"127.0.0.1:{port}"
        settings["TABLELOG_HTTP_ADDRESS"] = f"127.0.0.1:{free_port()}"
        ca = None
    env = clean_environment(**settings)
    assert not healthy(env), "healthy before the server started"
    with serving(image_program(exec_form(only(stage, "ENTRYPOINT").value)), env):
        assert healthy(env)
        web = ("https://localhost:" if ca else "http://localhost:") + settings[
            "TABLELOG_HTTP_ADDRESS"
        ].rsplit(":", 1)[1]
        assert status_by_name(web, "/", "localhost", ca) == 200
        assert status_by_name(web, "/", "rebound.example", ca) == 421
        assert status_by_name(web, "/readyz", "10.1.2.3", ca) == 200
        token = (tmp_path / "volume" / "owner.token").read_text(encoding="utf-8").strip()
        with Client(f"localhost:{port}", token=token, ca=ca) as client:
            game = client.create_game("splendor", ["Ana", "Ben"]).game_id
            assert client.verify(game).ok
    assert not healthy(env), "healthy after the server stopped"
