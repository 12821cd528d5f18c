"""The Python client's modules import each other without a circle (cli.py once imported
club_cli.py and shell.py, which imported private helpers back from cli.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import tablelog_client

PACKAGE = Path(tablelog_client.__file__).parent


def _imports(path: Path) -> set[str]:
    """The tablelog_client modules `path` imports, anywhere in it (a deferred import inside
    a function still makes a circle)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(n.split(".")[1] for n in names if n.startswith("tablelog_client."))
    return found


def _graph() -> dict[str, set[str]]:
    return {path.stem: _imports(path) for path in PACKAGE.glob("*.py")}


def test_the_client_modules_import_without_a_circle() -> None:
    graph = _graph()
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            assert state.get(imported) != "open", f"import circle: {' -> '.join([*path, imported])}"
            if imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_command_modules_share_helpers_through_common() -> None:
    graph = _graph()
    for module in ("club_cli", "shell", "common"):
        assert "cli" not in graph[module], f"{module}.py imports cli.py back"
    assert {"club_cli", "shell", "common"} <= graph["cli"]
