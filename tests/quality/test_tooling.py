"""The standing promises on the code itself: typed, linted, layered, protos fresh and clean.

These run the real tools, so `pytest` alone tells a contributor everything CI will."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def _run(*command: str, cwd: Path = ROOT) -> None:
    # The same import roots as pytest's `pythonpath`, for tools that import the packages.
    path = os.pathsep.join(str(ROOT / p) for p in (".", "proto", "clients/python"))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"


def test_generated_protobuf_code_is_fresh() -> None:
    _run(sys.executable, "scripts/generate_protos.py", "--check")


def test_buf_lint_is_clean() -> None:
    _run(_tool("buf"), "lint", cwd=ROOT / "proto")


def test_ruff_lint_is_clean() -> None:
    _run(_tool("ruff"), "check", ".")


def test_ruff_format_is_clean() -> None:
    _run(_tool("ruff"), "format", "--check", ".")


def test_mypy_strict_is_clean() -> None:
    _run(_tool("mypy"))


def test_import_layers_hold() -> None:
    _run(_tool("lint-imports"))
