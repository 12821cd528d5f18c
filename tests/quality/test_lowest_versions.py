"""Installs that start (issue 27): the floors in pyproject.toml are what the committed
generated code needs (a grpcio older than the grpcio-tools that wrote the _pb2_grpc files
raises RuntimeError on import; a protobuf older than the _pb2 files' gencode raises
VersionError), and CI installs every floor and runs the smoke tests on them
(scripts/check_lowest_versions.sh); the ceilings admit no major that neither those smoke
tests nor the suite run."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from scripts.lowest_constraints import floors

ROOT = Path(__file__).resolve().parents[2]

GENERATED = ROOT / "proto" / "tablelog" / "v1"


def floor_of(name: str) -> Version:
    pins = dict(line.split(";")[0].split("==") for line in floors(ROOT / "pyproject.toml"))
    return Version(pins[name])


def test_grpcio_floor_is_what_the_generated_stubs_check() -> None:
    needed = {
        Version(re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", path.read_text()).group(1))  # type: ignore[union-attr]
        for path in GENERATED.glob("*_pb2_grpc.py")
    }
    assert needed
    for name in ("grpcio", "grpcio-health-checking", "grpcio-reflection", "grpcio-status"):
        assert floor_of(name) >= max(needed), name


def test_protobuf_floor_is_the_generated_messages_gencode() -> None:
    pattern = re.compile(r"Domain\.PUBLIC,\s*(\d+),\s*(\d+),\s*(\d+),")
    needed = set()
    for path in GENERATED.glob("*_pb2.py"):
        found = pattern.search(path.read_text())
        assert found, path.name
        needed.add(Version(".".join(found.groups())))
    assert floor_of("protobuf") >= max(needed)
    assert floor_of("protobuf").major == max(needed).major  # (the runtime's major must match)


def test_every_runtime_dependency_has_a_floor_and_ci_installs_them() -> None:
    assert len(floors(ROOT / "pyproject.toml")) >= 10
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/check_lowest_versions.sh" in ci


CALENDAR_VERSIONED = frozenset({"structlog"})
"""Versioned by year (structlog: YY.N, with deprecations before any removal), so a year
between the floor's and the suite's says nothing of breaking changes: only the ceiling
(next year's) holds for them."""
PYPROJECTS = [ROOT / "pyproject.toml", ROOT / "clients" / "python" / "pyproject.toml"]


def runtime_requirements() -> list[tuple[str, Requirement]]:
    found = []
    for path in PYPROJECTS:
        project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        for line in project["dependencies"]:
            found.append((f"{path.relative_to(ROOT)}: {line}", Requirement(line)))
    return found


@pytest.mark.parametrize(
    "requirement",
    [r for _, r in runtime_requirements()],
    ids=[n for n, _ in runtime_requirements()],
)
def test_each_ceiling_is_the_next_major_after_what_the_suite_runs(requirement: Requirement) -> None:
    """Issue 27's audit: hiredis, structlog, orjson and platformdirs had no ceiling, and
    redis>=5.3,<9 admitted 6.x and 7.x, which neither the lowest-versions check (5.3) nor the
    suite (8.x) ran. Each runtime dependency has a floor and a ceiling; the release this
    suite runs on is inside them; the ceiling is at most its next major; and every major the
    range admits is the floor's (run by scripts/check_lowest_versions.sh) or this one's."""
    ceilings = [Version(s.version) for s in requirement.specifier if s.operator == "<"]
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    assert len(ceilings) == 1, f"{requirement}: no single `<` ceiling"
    assert len(floors) == 1, f"{requirement}: no single `>=` floor"
    try:
        installed = Version(version(requirement.name))
    except PackageNotFoundError:  # left out on this platform by its marker
        pytest.skip(f"{requirement.name} is not installed here")
    assert installed in requirement.specifier, f"{requirement}: the suite runs {installed}"
    assert ceilings[0] <= Version(f"{installed.major + 1}"), requirement
    if requirement.name not in CALENDAR_VERSIONED:
        assert installed.major - floors[0].major <= 1, f"{requirement}: a major run by none"
