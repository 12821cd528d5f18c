"""Print a pip constraints file pinning each runtime dependency of a pyproject.toml to its
floor (`name>=1.2` -> `name==1.2`, markers kept): the lowest install the file allows, for
scripts/check_lowest_versions.sh. A dependency without a floor is an error: "any version"
is a promise nobody tests."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement


def floors(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    pinned = []
    for line in project["dependencies"]:
        requirement = Requirement(line)
        lows = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if len(lows) != 1:
            raise SystemExit(f"{line!r} has no single >= floor")
        marker = f"; {requirement.marker}" if requirement.marker else ""
        pinned.append(f"{requirement.name}=={lows[0]}{marker}")
    return pinned


def main() -> None:
    for line in floors(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")):
        print(line)


if __name__ == "__main__":
    main()
