"""The command-line tools some tests need (node, npm, go): found on PATH, or the test is
skipped, unless CI is set: there a missing tool is a failure (.ci/run installs them)."""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def unavailable(problem: str) -> NoReturn:
    """A test that cannot run here: skipped with `problem` as its reason, or failed under CI
    (where .ci/run installs every tool, so a missing one is a broken set-up)."""
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {problem}")
    pytest.skip(problem)


def required_tools(*names: str) -> dict[str, str]:
    """The paths of the named tools; skip the test (fail it under CI) when one is missing."""
    found = {name: shutil.which(name) for name in names}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        unavailable(f"{', '.join(missing)} not installed (see clients/ci-setup.sh)")
    return {name: path for name, path in found.items() if path is not None}
