"""benchmarks/record_layers.py runs to its table (a short run, in the `long` step): it
drives the RecordMove handler through a servicer context of its own, which must keep up
with what the interceptors ask of a context (it once stopped at `set_trailing_metadata`
and printed nothing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.long


def test_the_layers_benchmark_prints_its_table() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "record_layers.py"),
         "--moves", "10", "--repeat", "1", "--calls", "20"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ("stack:", "recorder:", "bound:", "stack / bound:", "log line"):
        assert row in done.stdout
