"""The TypeScript package's browser entry (issue 27): @tablelog/client's package.json
`exports` gives browsers an entry with no Node-only import (condition "browser":
src/browser.ts, built to dist/src/browser.js), and the web app imports the client through
the package (a file: dependency, resolved by those exports), never by a relative path into
clients/typescript. Bundled here for the browser platform with esbuild (clients/web's), as
a browser integrator's bundler would; needs Node (skipped without it, failed under CI)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.tools import required_tools, unavailable
from tests.web.test_webapp_build import _installed

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"
PACKAGE = ROOT / "clients" / "typescript"

BUNDLE = """
import * as esbuild from "esbuild";
const conditions = process.env.BUNDLE_CONDITIONS;
const result = await esbuild.build({
  absWorkingDir: process.cwd(),
  stdin: { contents: 'export * from "@tablelog/client";', resolveDir: process.cwd(), loader: "ts" },
  bundle: true,
  write: false,
  platform: "browser",
  format: "esm",
  conditions: JSON.parse(conditions),
  metafile: true,
  logLevel: "silent",
}).catch((failure) => ({ failure }));
if (result.failure) {
  console.log(JSON.stringify({ errors: result.failure.errors.map((e) => e.text) }));
} else {
  const inputs = Object.keys(result.metafile.inputs);
  const imports = Object.values(result.metafile.inputs)
    .flatMap((input) => input.imports.map((found) => found.path));
  console.log(JSON.stringify({ inputs, imports }));
}
"""


def _bundle(conditions: list[str]) -> dict[str, list[str]]:
    node = required_tools("node", "npm")
    _installed(node["npm"])
    done = subprocess.run(
        [node["node"], "--input-type=module", "-e", BUNDLE],
        cwd=WEB,
        env={**os.environ, "BUNDLE_CONDITIONS": json.dumps(conditions)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, list[str]] = json.loads(done.stdout)
    return answer


def _browser_safe(bundled: dict[str, list[str]], entry: str) -> None:
    assert "errors" not in bundled, bundled.get("errors")
    assert any(path.endswith(entry) for path in bundled["inputs"]), bundled["inputs"]
    node_only = [
        path
        for path in bundled["inputs"] + bundled["imports"]
        if path.startswith("node:") or "connect-node" in path or "/credentials." in path
    ]
    assert node_only == []


def test_the_package_declares_a_browser_entry_and_where_it_comes_from() -> None:
    manifest = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    root = manifest["exports"]["."]
    assert next(iter(root)) == "browser"  # conditions match in order: before Node's default
    assert root["browser"]["default"] == "./dist/src/browser.js"
    assert root["browser"]["types"] == "./dist/src/browser.d.ts"
    assert manifest["exports"]["./browser"] == root["browser"]
    assert manifest["license"] == "MIT"
    assert manifest["repository"]["directory"] == "clients/typescript"
    assert "dist/src" in manifest["files"]


def test_the_web_app_imports_the_client_through_the_package() -> None:
    reaching = [
        f"{source.name}: {line.strip()}"
        for source in sorted((WEB / "src").glob("*.ts"))
        for line in source.read_text(encoding="utf-8").splitlines()
        if re.search(r"""from\s+["'][./]*/typescript/""", line)
    ]
    assert reaching == []
    manifest = json.loads((WEB / "package.json").read_text(encoding="utf-8"))
    assert manifest["dependencies"]["@tablelog/client"] == "file:../typescript"
    assert any('from "@tablelog/client"' in s.read_text() for s in (WEB / "src").glob("*.ts"))


def test_the_browser_entry_as_source_bundles_with_nothing_of_node() -> None:
    """What the web app's build reads (conditions browser and "@tablelog/source")."""
    _browser_safe(_bundle(["@tablelog/source"]), "typescript/src/browser.ts")


def test_the_published_browser_entry_bundles_with_nothing_of_node() -> None:
    """What a browser integrator's bundler reads from the packed package (dist/, made by
    `npm run build`, which `prepack` runs and clients/ci-setup.sh runs)."""
    if not (PACKAGE / "dist" / "src" / "browser.js").is_file():
        unavailable("clients/typescript/dist is not built (npm run build; clients/ci-setup.sh)")
    _browser_safe(_bundle([]), "typescript/dist/src/browser.js")


@pytest.mark.parametrize("entry", ["index"])
def test_the_node_entry_is_not_what_a_browser_gets(entry: str) -> None:
    """The check can fail: the Node entry, bundled for a browser, reaches Node's modules."""
    if not (PACKAGE / "dist" / "src" / f"{entry}.js").is_file():
        unavailable("clients/typescript/dist is not built (npm run build; clients/ci-setup.sh)")
    node = required_tools("node")["node"]
    script = BUNDLE.replace('"@tablelog/client"', f'"@tablelog/client/dist/src/{entry}.js"')
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=WEB,
        env={**os.environ, "BUNDLE_CONDITIONS": "[]"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    bundled = json.loads(done.stdout)
    assert "errors" in bundled or any(p.startswith("node:") for p in bundled["imports"])
