"""README snippets are tests (issue 27: neither client README's example compiled). Every
fenced block whose info string says `program` (```ts program, ```go program, ```python
program, ```console program) in README.md and the clients' READMEs is extracted and checked
as a whole program: TypeScript with `tsc --noEmit` against the package as a user imports it
(`@tablelog/client`, its built .d.ts), Go with `go vet` inside the module, Python run against
a live server, and a shell session (`console`) run command by command against a live server
by the CLI's `main`, its output compared (`run_session`)."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from tablelog.service.api.server import BackgroundServer
from tablelog_client import cli
from tests.service.conftest import own_embedded_redis
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.support.tools import required_tools

ROOT = Path(__file__).resolve().parents[2]
READMES = [
    ROOT / "README.md",
    ROOT / "clients" / "typescript" / "README.md",
    ROOT / "clients" / "go" / "README.md",
    ROOT / "clients" / "python" / "README.md",
]
BLOCK = re.compile(r"^```(\w+) program\n(.*?)^```", re.S | re.M)


def programs(language: str) -> list[tuple[str, str]]:
    found = []
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for number, block in enumerate(BLOCK.finditer(text), 1):
            if block.group(1) == language:
                found.append((f"{readme.relative_to(ROOT)}#{number}", block.group(2)))
    return found


def test_each_client_readme_has_a_program() -> None:
    """The list this file checks (a README losing its marked example fails here)."""
    languages = ("ts", "go", "python", "console")
    listed = {lang: [name for name, _ in programs(lang)] for lang in languages}
    assert listed == {
        "ts": ["clients/typescript/README.md#1"],
        "go": ["clients/go/README.md#1"],
        "python": ["clients/python/README.md#1"],
        "console": ["README.md#1"],
    }


def _run(command: list[str], cwd: Path, timeout: float = 300) -> None:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize(("name", "source"), programs("ts"))
def test_typescript_programs_compile(name: str, source: str) -> None:
    tools = required_tools("node", "npm")
    package = ROOT / "clients" / "typescript"
    if not (package / "node_modules" / "typescript").exists():
        _run([tools["npm"], "ci", "--no-audit", "--no-fund"], package, 600)
    _run([tools["npm"], "run", "build"], package)  # the .d.ts a user's import resolves to
    # Inside the package, so `@tablelog/client` resolves to itself through its "exports".
    check = package / f"_readme_check_{os.getpid()}"
    check.mkdir()
    try:
        (check / "program.ts").write_text(source, encoding="utf-8")
        (check / "tsconfig.json").write_text(
            '{"extends": "../tsconfig.json", "compilerOptions": {"noEmit": true, '
            '"rootDir": "."}, "include": ["program.ts"]}',
            encoding="utf-8",
        )
        _run([str(package / "node_modules" / ".bin" / "tsc"), "-p", str(check)], check)
    finally:
        shutil.rmtree(check)


@pytest.mark.parametrize(("name", "source"), programs("go"))
def test_go_programs_vet(name: str, source: str) -> None:
    go = required_tools("go")["go"]
    module = ROOT / "clients" / "go"
    check = module / f"_readme_check_{os.getpid()}"  # ("_": out of ./... patterns)
    check.mkdir()
    try:
        (check / "main.go").write_text(source, encoding="utf-8")
        _run([go, "vet", f"./{check.name}"], module)
    finally:
        shutil.rmtree(check)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with own_embedded_redis(tmp_path_factory.mktemp("snippet-redis")) as redis:
        server = BackgroundServer(redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
        try:
            yield server
        finally:
            server.stop()


@pytest.mark.parametrize(("name", "source"), programs("python"))
def test_python_programs_run_against_a_live_server(
    name: str, source: str, live: BackgroundServer, tmp_path: Path
) -> None:
    program = tmp_path / "program.py"
    program.write_text(source, encoding="utf-8")
    path = os.pathsep.join(str(ROOT / p) for p in (".", "proto", "clients/python"))
    env = dict(
        os.environ, PYTHONPATH=path, TABLELOG_ADDRESS=live.target, TABLELOG_TOKEN=OWNER_TOKEN
    )
    done = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), "the program printed nothing"


README_GAME_ID = "k67zo2vpxrit"
"""The game id the READMEs show: in a session, whatever id `new` printed where it stands."""


def session_steps(source: str) -> list[tuple[str, list[str]]]:
    """A console session's commands (the lines after `$ `) with the output shown under each."""
    steps: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line.rstrip())
        else:
            raise AssertionError(f"output before the first command: {line!r}")
    return steps


def output_matches(shown: list[str], printed: list[str], ids: dict[str, str]) -> bool:
    """Whether `printed` is what `shown` shows: line for line, `...` standing for any lines
    (none included), the README's game id for an id bound in `ids` or, the first time, any
    12-character id (bound then)."""
    if not shown:
        return not printed
    first, rest = shown[0], shown[1:]
    if first == "...":
        return any(output_matches(rest, printed[start:], ids) for start in range(len(printed) + 1))
    if not printed:
        return False
    if README_GAME_ID in ids:
        pattern = re.escape(first.replace(README_GAME_ID, ids[README_GAME_ID]))
    else:
        pattern = re.escape(first).replace(README_GAME_ID, "(?P<game>[a-z0-9]{12})", 1)
        pattern = pattern.replace(README_GAME_ID, "(?P=game)")
    found = re.fullmatch(pattern, printed[0].rstrip())
    if found is None:
        return False
    bound = dict(ids)
    if "game" in found.groupdict():
        bound[README_GAME_ID] = found["game"]
    if output_matches(rest, printed[1:], bound):
        ids.update(bound)
        return True
    return False


def shell_words(command: str) -> list[list[str]]:
    """The commands of a `$` line as the shell splits them: words (quotes removed), `;`
    between commands, a `#` comment dropped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for word in lexer:
        if word == ";":
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def run_session(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs each `$` line's commands with the CLI's `main` (in this process: a fresh
    interpreter a command would cost a second or more) and checks their output (stdout then
    stderr) and status: a failure exactly where the session shows an `error:`."""
    ids: dict[str, str] = {}
    for line, shown in session_steps(source):
        if README_GAME_ID in ids:
            line = line.replace(README_GAME_ID, ids[README_GAME_ID])
        codes = []
        for words in shell_words(line):
            assert words[0] == "tablelog", f"$ {line}: only tablelog commands are run"
            codes.append(cli.main(words[1:]))
        out, err = capsys.readouterr()
        printed = (out + err).splitlines()
        refused = any(text.startswith("error:") for text in shown)
        assert any(codes) == refused, f"$ {line}: status {codes}\n{out}{err}"
        assert output_matches(shown, printed, ids), (
            f"$ {line}\nshown:\n" + "\n".join(shown) + "\nprinted:\n" + "\n".join(printed)
        )


@pytest.mark.parametrize(
    ("shown", "printed", "matches"),
    [
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a", "..."], ["a"], True),
        (["a", "d"], ["a", "b", "d"], False),
        (["a"], ["a", "b"], False),
        ([f"{README_GAME_ID}  x"], ["abcdefgh1234  x"], True),
        ([f"{README_GAME_ID}  x"], ["ABC  x"], False),
    ],
)
def test_a_sessions_output_is_compared_line_by_line(
    shown: list[str], printed: list[str], matches: bool
) -> None:
    assert output_matches(shown, printed, {}) is matches


@pytest.mark.parametrize(("name", "source"), programs("console"))
def test_console_sessions_run_as_written(
    name: str,
    source: str,
    live: BackgroundServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TABLELOG_ADDRESS", live.target)
    monkeypatch.setenv("TABLELOG_TOKEN", OWNER_TOKEN)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials file of the machine's user
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    # The server runs in this process: its call lines are not the session's output.
    monkeypatch.setattr(
        "tablelog.service.api.interceptors.log",
        structlog.wrap_logger(structlog.PrintLogger(io.StringIO())),
    )
    run_session(source, capsys)
