"""`buf breaking` guards the API: scripts/check_api_compat.sh passes on this tree and fails on
a clone whose last commit (or any commit since the last release tag) deletes a field, all
offline from local git history. A shallow clone fetches its baseline from origin; with no
baseline at all the check fails under CI instead of passing without comparing anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_api_compat.sh"
BUF = shutil.which("buf", path=str(Path(sys.executable).parent)) or shutil.which("buf") or "buf"
"""buf from this interpreter's environment (pip installs it beside it), else from PATH."""


def _git() -> str:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        if os.environ.get("CI"):
            pytest.fail("CI is set but git or the repository's history is missing")
        pytest.skip("not a git checkout")
    return git


def _run(command: list[str], cwd: Path, ci: bool | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command`; `ci` sets (True) or clears (False) CI, None leaves it as it is."""
    env = {**os.environ, "BUF": BUF}
    if ci is not None:
        env.pop("CI", None)
        env |= {"CI": "true"} if ci else {}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _clone(tmp_path: Path, *options: str) -> Path:
    """A clone of this repository's main, as CI makes, with this tree's copy of the script
    (it checks the tree it sits in)."""
    clone = tmp_path / "clone"
    command = [_git(), "clone", "--quiet", "--branch", "main", *options, ROOT.as_uri()]
    done = _run([*command, str(clone)], tmp_path)
    assert done.returncode == 0, done.stderr
    (clone / "scripts").mkdir(exist_ok=True)
    shutil.copy(SCRIPT, clone / "scripts" / SCRIPT.name)
    return clone


def _commit(clone: Path, message: str) -> None:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    command = [_git(), *identity, "commit", "--quiet", "--all", "--message", message]
    assert _run(command, clone).returncode == 0


def _delete_a_field(clone: Path) -> None:
    service = clone / "proto" / "tablelog" / "v1" / "service.proto"
    text = service.read_text()
    assert "  uint64 version = 7;\n" in text
    service.write_text(text.replace("  uint64 version = 7;\n", "  reserved 7;\n"))


def test_the_api_has_no_breaking_change() -> None:
    _git()
    done = _run(["bash", str(SCRIPT)], ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "api compat:" in done.stdout


def test_a_deleted_field_is_caught(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    _delete_a_field(clone)
    _commit(clone, "break the API")
    done = _run(["bash", str(clone / "scripts" / SCRIPT.name)], clone)
    assert done.returncode != 0, done.stdout + done.stderr
    assert 'field "7" with name "version"' in done.stdout + done.stderr


def test_a_break_since_the_last_release_is_caught_after_later_commits(tmp_path: Path) -> None:
    """With a release tag the baseline is the release, not just the last commit."""
    clone = _clone(tmp_path)
    assert _run([_git(), "tag", "v0.0.1"], clone).returncode == 0
    _delete_a_field(clone)
    _commit(clone, "break the API")
    (clone / "README.md").write_text("a later commit that does not touch proto/\n")
    _commit(clone, "later")
    done = _run(["bash", str(clone / "scripts" / SCRIPT.name)], clone)
    assert done.returncode != 0, done.stdout + done.stderr
    assert 'field "7" with name "version"' in done.stdout + done.stderr


def test_a_shallow_clone_fetches_its_baseline(tmp_path: Path) -> None:
    clone = _clone(tmp_path, "--depth", "1")
    done = _run(["bash", str(clone / "scripts" / SCRIPT.name)], clone, ci=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "has no breaking change against" in done.stdout


def test_no_baseline_fails_under_ci_and_is_reported_otherwise(tmp_path: Path) -> None:
    """A shallow clone that cannot fetch (no origin) has nothing to compare with."""
    clone = _clone(tmp_path, "--depth", "1")
    assert _run([_git(), "remote", "remove", "origin"], clone).returncode == 0
    script = ["bash", str(clone / "scripts" / SCRIPT.name)]
    under_ci = _run(script, clone, ci=True)
    assert under_ci.returncode != 0, under_ci.stdout + under_ci.stderr
    assert "CI is set, so this fails" in under_ci.stderr
    locally = _run(script, clone, ci=False)
    assert locally.returncode == 0, locally.stdout + locally.stderr
    assert "nothing to compare with" in locally.stdout
