"""Build the web app (clients/web) into service/webapp/, or check that the committed build is
fresh.

    python scripts/build_webapp.py          # type-check, bundle, replace service/webapp/
    python scripts/build_webapp.py --check  # exit 1 if building would change anything

Needs Node >= 20 and clients/web/node_modules (`npm ci` in clients/web, which
clients/ci-setup.sh runs): esbuild and TypeScript come from there at the versions
package-lock.json pins, so the same sources always build the same bytes. The assets are
named by their content hash (`assets/main-<hash>.js`) and index.html names them, so a
browser may keep an asset forever and never runs an old one with a new page.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "clients" / "web"
OUTPUT = ROOT / "service" / "webapp"


def _files(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def build(out_dir: Path) -> None:
    """Type-check clients/web and bundle it into `out_dir` (index.html and assets/)."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node not found: the web app is built with Node >= 20")
    tsc = WEB / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.exists():
        raise SystemExit("clients/web/node_modules is missing: run (cd clients/web && npm ci)")
    for command in (
        [node, str(tsc), "-p", str(WEB / "tsconfig.json")],
        [node, str(WEB / "build.mjs"), "--outdir", str(out_dir)],
    ):
        done = subprocess.run(command, cwd=WEB, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}")


def stale_files(fresh: Path, committed: Path) -> list[str]:
    """The files that differ between two builds, or are in only one of them."""
    names = sorted(_files(fresh) | _files(committed))
    return [
        name
        for name in names
        if not (fresh / name).is_file()
        or not (committed / name).is_file()
        or not filecmp.cmp(fresh / name, committed / name, shallow=False)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the build is stale")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        fresh = Path(work) / "webapp"
        build(fresh)
        stale = stale_files(fresh, OUTPUT)
        if args.check:
            if stale:
                print(f"the web app's build in service/webapp is stale: {' '.join(stale)}")
                print("run: python scripts/build_webapp.py")
                return 1
            print(f"the web app's build is fresh ({len(_files(fresh))} files)")
            return 0
        if OUTPUT.exists():
            shutil.rmtree(OUTPUT)
        shutil.copytree(fresh, OUTPUT)
        changed = " ".join(stale) or "none"
        print(f"wrote {len(_files(fresh))} files to service/webapp; changed: {changed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
