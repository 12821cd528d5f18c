"""The Go client is a module a fetch can serve (issue 27): `go get` of its path at a version
resolves it from the repository's tag `clients/go/vX.Y.Z` (Go's rule for a module in a
subdirectory: the tag carries the directory as prefix) with no `replace` line, as a user's
module would once the repository is served at the address the path names.

Nothing here reaches that address: git's `url.<local repository>.insteadOf` (in a git config
of the test's own, GIT_CONFIG_GLOBAL) sends the clone that `go` runs for
`https://github.com/tablelog/tablelog` to a repository made here from the working tree's
clients/go at the same subdirectory, so what is checked is Go's own resolution: the path
to the repository and the subdirectory, the tag to the version, go.mod's module line to the
path. The dependencies come from the module cache (clients/ci-setup.sh fills it), then the
configured proxy. Needs go and git (skipped without, failed under CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.tools import required_tools

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "clients" / "go"
MODULE_PATH = "github.com/tablelog/tablelog/clients/go"
REPOSITORY_URL = "https://github.com/tablelog/tablelog"

CONSUMER = """package main

import (
	"errors"
	"fmt"

	"github.com/tablelog/tablelog/clients/go/tablelog"
)

func main() { fmt.Println(errors.Is(tablelog.ErrStaleVersion, tablelog.ErrStaleVersion)) }
"""


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"$ {' '.join(command)}\n{done.stdout}{done.stderr}"
    return done.stdout


def test_go_get_resolves_the_module_from_its_subdirectory_tag(tmp_path: Path) -> None:
    tools = required_tools("go", "git")
    go, git = tools["go"], tools["git"]
    line = next(
        text
        for text in (MODULE / "go.mod").read_text(encoding="utf-8").splitlines()
        if text.startswith("module ")
    )
    assert line == f"module {MODULE_PATH}"
    assert "replace" not in (MODULE / "go.mod").read_text(encoding="utf-8")

    # The repository as it would be served: clients/go at its place, tagged as a release.
    repository = tmp_path / "repository"
    shutil.copytree(MODULE, repository / "clients" / "go")
    shutil.copy(ROOT / "LICENSE", repository / "LICENSE")
    # A version of this run alone: the shared module cache keeps what it fetched by version.
    version = f"v0.1.0-fetch.{time.time_ns()}"
    git_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@localhost",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@localhost",
    }
    for command in (
        [git, "init", "-q"],
        [git, "add", "-A"],
        [git, "commit", "-q", "-m", "release"],
        [git, "tag", f"clients/go/{version}"],
        [git, "tag", "v9.9.9"],  # a tag of the root: never a version of the subdirectory's
    ):
        _run(command, repository, git_env)
    config = tmp_path / "gitconfig"
    config.write_text(
        f'[url "file://{repository}"]\n\tinsteadOf = {REPOSITORY_URL}\n'
        '[protocol "file"]\n\tallow = always\n',
        encoding="utf-8",
    )
    cache = _run([go, "env", "GOMODCACHE"], ROOT, dict(os.environ)).strip()
    proxy = _run([go, "env", "GOPROXY"], ROOT, dict(os.environ)).strip()
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
        # This module straight from its repository (by git); no checksum database is
        # reachable from here, so none is asked for the rest.
        "GOPRIVATE": "github.com/tablelog/*",
        "GOSUMDB": "off",
        "GOPROXY": f"file://{cache}/cache/download,{proxy}",
        "GOFLAGS": "-modcacherw",
    }
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "go.mod").write_text("module example.com/consumer\n\ngo 1.26.0\n")
    (consumer / "main.go").write_text(CONSUMER, encoding="utf-8")
    try:
        versions = _run([go, "list", "-m", "-versions", MODULE_PATH], consumer, env)
        assert versions.split() == [MODULE_PATH, version]
        _run([go, "get", f"{MODULE_PATH}/tablelog@{version}"], consumer, env)
        mod = (consumer / "go.mod").read_text(encoding="utf-8")
        assert f"{MODULE_PATH} {version}" in mod
        assert "replace" not in mod
        listed = _run(
            [go, "list", "-deps", "-f", "{{.ImportPath}} {{.Module}} {{.Error}}", "."],
            consumer,
            env,
        )
        ours = [row for row in listed.splitlines() if row.startswith(MODULE_PATH)]
        assert f"{MODULE_PATH}/tablelog {MODULE_PATH} {version} <nil>" in ours, listed
        assert all(row.endswith("<nil>") for row in listed.splitlines()), listed
    finally:
        for stored in (
            Path(cache) / f"{MODULE_PATH}@{version}",
            *(Path(cache) / "cache" / "download" / MODULE_PATH / "@v").glob(f"{version}.*"),
        ):
            if stored.is_dir():
                shutil.rmtree(stored, ignore_errors=True)
            else:
                stored.unlink(missing_ok=True)


@pytest.mark.parametrize("readme", ["clients/go/README.md"])
def test_the_readme_says_how_to_get_and_tag_the_module(readme: str) -> None:
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert f"go get {MODULE_PATH}@v" in text
    assert "clients/go/v" in text
