"""The README's test command passes on a fresh machine with only Python and pip (issue 27):
no test or benchmark a test runs names a tool by an absolute path (`/usr/bin/redis-server`
made 13 errors where Debian's package was missing). Tools are found with `shutil.which` (a
search path naming system directories is fine) or `tests.support.tools.required_tools`, and
a missing one skips the test with a reason, or fails it under CI."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("tests", "benchmarks", "scripts", "clients/ci-setup.sh")
TOOL_PATH = re.compile(r"(?<![\w.:#!/-])/(?:usr/(?:local/)?|opt/[\w.-]+/)?s?bin/[\w.+-]+(?!:)")
"""An absolute path into a bin directory: not a relative `.venv/bin/python`, not one
directory of a search path (`/usr/bin:/bin`), not a script's own `#!/bin/sh` line."""


STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
"""Python 3.12 splits an f-string into pieces; 3.11 has it as one STRING token."""


def _string_literals(source: str) -> list[tuple[int, str]]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(token.start[0], token.string) for token in tokens if token.type in STRING_TOKENS]


def hard_coded_tool_paths(path: Path) -> list[str]:
    """`line: path` for each absolute tool path in `path`'s string literals (Python) or
    commands (shell)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        pieces = _string_literals(text)
    else:  # a shell script: every line but its own #! line and comments
        pieces = [
            (number, line)
            for number, line in enumerate(text.splitlines(), 1)
            if not line.lstrip().startswith("#")
        ]
    return [f"{number}: {found}" for number, piece in pieces for found in TOOL_PATH.findall(piece)]


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        root = ROOT / name
        if root.is_file():
            files.append(root)
            continue
        files += [p for p in sorted(root.rglob("*")) if p.suffix in (".py", ".sh")]
    own = Path(__file__).resolve()  # (it quotes the paths it looks for)
    return [
        p
        for p in files
        if "node_modules" not in p.parts and ".venv" not in p.parts and p.resolve() != own
    ]


def test_no_test_or_benchmark_names_a_tool_by_its_absolute_path() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{hit}"
        for path in _scanned_files()
        for hit in hard_coded_tool_paths(path)
    ]
    assert not found, "find tools with shutil.which, skip when missing:\n" + "\n".join(found)


def test_the_scan_finds_what_issue_27_found(tmp_path: Path) -> None:
    """The check itself: the line that made 13 errors is caught; search paths, relative
    virtualenv paths and shebangs are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'STANDALONE_REDIS = "/usr/bin/redis-server"\n'
        'chromium = f"/usr/local/bin/chromium --headless"\n'
        'search = "/usr/local/bin:/usr/bin:/bin"\n'
        'venv = ".venv/bin/python"\n'
        'script = "#!/bin/sh\\n"\n',
        encoding="utf-8",
    )
    assert hard_coded_tool_paths(sample) == [
        "1: /usr/bin/redis-server",
        "2: /usr/local/bin/chromium",
    ]
