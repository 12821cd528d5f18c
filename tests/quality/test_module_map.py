"""The service's plan as written follows the tree (issue 22): every `service/...` path and
`tablelog.service...` name in docs/ and README.md exists, docs/service.md's module map has a
row for every module, and each room's docstring names every module it holds. Rooms and
modules were moved and added after the docs were written (`service/charts.py` stayed in two
comments after it moved to `service/memory/`; five modules were missing from the map)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
ROOMS = ("access", "api", "memory", "recording", "store")

SERVICE_PATH = re.compile(r"(?<![\w./-])service/[\w/.*-]*")
"""A path under service/ as the docs write it (`service/store/`, `service/*.py`); not the tail
of a longer path (`proto/tablelog/service/...`, `tests/service/...`)."""
SERVICE_NAME = re.compile(r"(?<![\w./-])tablelog\.service(?:\.\w+)+")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _top_level_names(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def missing_path(written: str, root: Path = ROOT) -> str | None:
    """Why the path `written` (relative to `root`) names nothing, or None when it does."""
    path = written.rstrip(".")
    if "*" in path:
        return None if any(root.glob(path)) else "matches no file"
    return None if (root / path).exists() else "no such file or folder"


def missing_name(written: str, service: Path = SERVICE) -> str | None:
    """Why the dotted name `written` (`tablelog.service.<module>[.<attribute>...]`) names
    nothing, or None when it does: its module exists, and the name after the module is
    defined at that module's top level."""
    parts = written.split(".")[2:]
    where = service
    for index, part in enumerate(parts):
        if (where / part / "__init__.py").exists():
            where = where / part
            continue
        module = where / f"{part}.py"
        if not module.exists():
            module = where / "__init__.py"
            if index == 0 or part not in _top_level_names(module):
                return f"no module {part} in {where.relative_to(service.parent)}"
            return None
        if index + 1 < len(parts) and parts[index + 1] not in _top_level_names(module):
            return f"{parts[index + 1]} is not defined in {module.relative_to(service.parent)}"
        return None
    return None


def test_every_service_path_and_name_in_the_docs_exists() -> None:
    broken: list[str] = []
    for document in _documents():
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{document.relative_to(ROOT)}:{number}"
            for found in SERVICE_PATH.findall(line):
                why = missing_path(found)
                if why:
                    broken.append(f"{where}: {found} ({why})")
            for found in SERVICE_NAME.findall(line):
                why = missing_name(found)
                if why:
                    broken.append(f"{where}: {found} ({why})")
    assert not broken, "the docs name what is not there:\n" + "\n".join(broken)


def _modules() -> list[str]:
    """Every module of the service as a path from the repository's root (the built web app
    aside: it is no module)."""
    found = [
        path
        for path in [*SERVICE.rglob("*.py"), *SERVICE.rglob("*.lua")]
        if path.name != "__init__.py" and "webapp" not in path.relative_to(SERVICE).parts
    ]
    return sorted(str(path.relative_to(ROOT)) for path in found)


def test_the_module_map_has_a_row_for_every_module() -> None:
    rows = set(re.findall(r"^\| `(service/[\w/.]+)` \|", _read("docs/service.md"), re.MULTILINE))
    assert rows >= {"service/api/server.py", "service/errors.py"}  # (the rows are read)
    unmapped = sorted(set(_modules()) - rows)
    assert not unmapped, "docs/service.md's module map misses:\n" + "\n".join(unmapped)
    gone = sorted(rows - set(_modules()))
    assert not gone, "docs/service.md maps modules that are not there:\n" + "\n".join(gone)


def test_each_room_names_its_modules_in_its_docstring() -> None:
    unnamed: list[str] = []
    for room in ROOMS:
        docstring = ast.get_docstring(ast.parse(_read(f"service/{room}/__init__.py"))) or ""
        for module in sorted((SERVICE / room).glob("*.py")):
            if module.name == "__init__.py":
                continue
            if f"`{module.stem}`" not in docstring and f"{module.name} " not in docstring:
                unnamed.append(f"service/{room}/{module.name}")
    assert not unnamed, "each room's docstring says what it owns; these are not named:\n" + (
        "\n".join(unnamed)
    )


def _read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def test_the_checks_catch_what_issue_22_left_behind(tmp_path: Path) -> None:
    """The checks themselves, on a tree made here: a module that moved into a room is
    caught by its old path and its old dotted name; its new ones, a folder, a glob and a
    name defined in a module are not."""
    service = tmp_path / "service"
    (service / "memory").mkdir(parents=True)
    (service / "__init__.py").write_text('"""The service."""\n')
    (service / "memory" / "__init__.py").write_text('"""Club memory."""\n')
    (service / "memory" / "charts.py").write_text("def rating_chart() -> str:\n    return ''\n")
    assert missing_path("service/charts.py", tmp_path) == "no such file or folder"
    assert missing_path("service/memory/charts.py", tmp_path) is None
    assert missing_path("service/memory/", tmp_path) is None
    assert missing_path("service/memory/*.py", tmp_path) is None
    assert missing_path("service/webapp/*.js", tmp_path) == "matches no file"
    assert missing_name("tablelog.service.charts", service) == "no module charts in service"
    assert missing_name("tablelog.service.memory.charts.rating_chart", service) is None
    assert missing_name("tablelog.service.memory.charts.score_chart", service) == (
        "score_chart is not defined in service/memory/charts.py"
    )
    found = SERVICE_PATH.findall("`service/charts.py`, `tests/service/test_charts.py`")
    assert found == ["service/charts.py"]
