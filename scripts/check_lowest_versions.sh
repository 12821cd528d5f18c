#!/usr/bin/env bash
# Install tablelog with every runtime dependency at the lowest version pyproject.toml allows
# (its `>=` floors, pinned through a pip constraints file), then run the service and CLI smoke
# tests against that environment. A floor that is too low (generated code newer than the
# runtime, an internal the code subclasses that an old release lacks) fails here, not in a
# user's install. Run by .ci/run: about two minutes with a warm pip cache on an idle
# machine (5 minutes measured on a shared, loaded one).
#
#   scripts/check_lowest_versions.sh [VENV_DIR]     # default: .venv-lowest
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv-lowest}"
PYTHON="${PYTHON:-python3}"

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
CONSTRAINTS="$VENV/lowest-constraints.txt"
"$VENV/bin/pip" install -q packaging  # (to read the requirements as pip does)
"$VENV/bin/python" scripts/lowest_constraints.py pyproject.toml >"$CONSTRAINTS"
echo "== the floors, pinned"
cat "$CONSTRAINTS"

# The package itself (not editable: the installed files, as a user gets them) at its floors;
# the test tools at whatever is current (they are not what is being checked).
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q -c "$CONSTRAINTS" . pytest hypothesis

echo "== installed"
"$VENV/bin/python" - "$CONSTRAINTS" <<'PY'
import sys
from importlib.metadata import version

from packaging.version import Version

wrong = []
for line in open(sys.argv[1], encoding="utf-8"):
    requirement = line.split(";")[0].strip()
    if not requirement:
        continue
    name, pinned = requirement.split("==")
    try:
        found = version(name)
    except Exception:  # a dependency whose marker leaves it out on this platform
        print(f"{name}: not installed here (its marker)")
        continue
    print(f"{name}=={found}")
    if Version(found) != Version(pinned):
        wrong.append(f"{name} {found} (floor {pinned})")
if wrong:
    sys.exit("not at the floor: " + ", ".join(wrong))
PY

echo "== the installed CLI and server start"
# From outside the repository, so only the installed files are imported.
(cd "$VENV" && bin/tablelog --help >/dev/null && bin/tablelog serve --help >/dev/null)
(cd "$VENV" && bin/python -c "import tablelog.v1.service_pb2_grpc, tablelog.v1.clubs_pb2_grpc")

echo "== service and CLI smoke tests at the floors"
# The repository's pytest settings (its import paths, warnings as errors) with the floors'
# libraries: one recorded game end to end over gRPC, the HTTP port (Connect, gRPC-Web, the
# web app's files, health, metrics), `tablelog serve` itself (its demo, its JSON log lines),
# and the CLI.
"$VENV/bin/python" -m pytest -q -p no:randomly -x \
  tests/service/test_end_to_end.py \
  tests/service/test_http_port.py \
  tests/service/test_health_endpoints.py \
  tests/service/test_observability.py \
  "tests/service/test_serve.py::test_demo_records_a_game_and_says_how_to_record" \
  "tests/service/test_serve.py::test_one_json_log_line_per_rpc" \
  tests/cli/test_cli.py
