"""The example pictures in docs/pictures are what scripts/render_pictures.py renders now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_example_pictures_are_fresh() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/render_pictures.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "fresh" in done.stdout
