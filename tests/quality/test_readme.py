"""The README's Quick start is what a newcomer runs and what CI runs: keep them one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\n(.*?)^## ", readme, re.S | re.M)
    assert section, "README.md has no '## Quick start' section"
    block = re.search(r"^```[a-z]*\n(.*?)^```", section.group(1), re.S | re.M)
    assert block, "the Quick start has no fenced block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_quick_start_holds_exactly_two_commands() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "serve --demo" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _quick_start_commands()[1] in ci
