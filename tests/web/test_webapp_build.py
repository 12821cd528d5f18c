"""The committed build of the web app (service/webapp, what the package ships and the HTTP
port serves) is what scripts/build_webapp.py makes from clients/web: checked like the
generated code. Needs Node and npm (clients/web's node_modules is installed with `npm ci`
when missing); without them the check is skipped, unless CI is set: there it fails."""

from __future__ import annotations

import fcntl
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.tools import required_tools

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"
WEBAPP = ROOT / "service" / "webapp"


def _installed(npm: str) -> None:
    """`npm ci` in clients/web when its modules are missing, one worker at a time."""
    lock_path = Path(tempfile.gettempdir()) / "tablelog-web-npm.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # (the client package is a link `npm ci` makes too: an older install lacks it)
        if not all(
            (WEB / "node_modules" / name).exists() for name in ("esbuild", "@tablelog/client")
        ):
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=WEB,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr


def test_the_committed_build_is_fresh() -> None:
    _installed(required_tools("node", "npm")["npm"])
    done = subprocess.run(
        [sys.executable, "scripts/build_webapp.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_page_names_only_assets_that_are_there_and_hashed() -> None:
    """index.html loads the bundle by the name the build gave it: each named asset exists
    and carries its content hash (so a cached asset is never stale)."""
    page = (WEBAPP / "index.html").read_text(encoding="utf-8")
    named = re.findall(r'(?:src|href)="/(assets/[^"]+)"', page)
    assert sorted(Path(name).suffix for name in named) == [".css", ".js"]
    for name in named:
        assert re.search(r"-[0-9a-f]{12}\.(js|css)$", name), name
        assert (WEBAPP / name).is_file(), name
    assert sorted(str(p.relative_to(WEBAPP)) for p in (WEBAPP / "assets").iterdir()) == sorted(
        named
    )
