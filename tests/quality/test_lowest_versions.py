"""Installs that start (issue 27): the floors in pyproject.toml are what the committed
generated code needs (a grpcio older than the grpcio-tools that wrote the _pb2_grpc files
raises RuntimeError on import; a protobuf older than the _pb2 files' gencode raises
VersionError), and CI installs every floor and runs the smoke tests on them
(scripts/check_lowest_versions.sh)."""

from __future__ import annotations

import re
from pathlib import Path

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
