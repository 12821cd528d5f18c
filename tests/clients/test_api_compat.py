"""`buf breaking` guards the API: scripts/check_api_compat.sh passes on this tree and fails on
a clone whose last commit deletes a field (both offline, from the local git history)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_api_compat.sh"
BUF = Path(sys.executable).parent / "buf"


def _git() -> str:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        if os.environ.get("CI"):
            pytest.fail("CI is set but git or the repository's history is missing")
        pytest.skip("not a git checkout")
    return git


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BUF": str(BUF)}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_api_has_no_breaking_change() -> None:
    _git()
    done = _run(["bash", str(SCRIPT)], ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "api compat:" in done.stdout


def test_a_deleted_field_is_caught(tmp_path: Path) -> None:
    git = _git()
    clone = tmp_path / "clone"
    assert _run([git, "clone", "--quiet", str(ROOT), str(clone)], tmp_path).returncode == 0
    if not (clone / "proto" / "buf.yaml").exists():
        pytest.skip("the last commit has no proto/buf.yaml yet")
    service = clone / "proto" / "tablelog" / "v1" / "service.proto"
    text = service.read_text()
    assert "  uint64 version = 7;\n" in text
    service.write_text(text.replace("  uint64 version = 7;\n", "  reserved 7;\n"))
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    commit = [git, *identity, "commit", "--quiet", "--all", "--message", "break the API"]
    assert _run(commit, clone).returncode == 0
    # This tree's copy of the script (it checks the tree it sits in), on the clone's main.
    (clone / "scripts").mkdir(exist_ok=True)
    shutil.copy(SCRIPT, clone / "scripts" / SCRIPT.name)
    done = _run(["bash", str(clone / "scripts" / SCRIPT.name)], clone)
    assert done.returncode != 0, done.stdout + done.stderr
    assert 'field "7" with name "version"' in done.stdout + done.stderr
