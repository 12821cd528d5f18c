"""README snippets are tests (issue 27: neither client README's example compiled). Every
fenced block whose info string says `program` (```ts program, ```go program, ```python
program, ```console program) in README.md and the clients' READMEs is extracted and checked
as a whole program: TypeScript with `tsc --noEmit` against the package as a user imports it
(`@tablelog/client`, its built .d.ts), Go with `go vet` inside the module, Python run against
a live server, and a shell session (`console`) run command by command against a live server
by the CLI's `main`, its output compared (`run_session`)."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
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


TS_PACKAGE = ROOT / "clients" / "typescript"
USER_TSCONFIG = {
    "compilerOptions": {
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "strict": True,
        "noEmit": True,
        # The package's own .d.ts checked too: a name they use that nothing declares (Node's
        # `Buffer` without @types/node) is an error, not an `any`.
        "skipLibCheck": False,
    },
    "include": ["program.ts"],
}


def _copy_package(name: str, into: Path) -> None:
    """`name` from the package's node_modules into `into`'s, with what npm would install
    with it: its dependencies and its peer dependencies that are not optional."""
    target = into / "node_modules" / name
    if target.exists():
        return
    source = TS_PACKAGE / "node_modules" / name
    shutil.copytree(source, target, symlinks=False)
    manifest = json.loads((source / "package.json").read_text(encoding="utf-8"))
    optional = manifest.get("peerDependenciesMeta", {})
    for needed in (
        *manifest.get("dependencies", {}),
        *(
            p
            for p in manifest.get("peerDependencies", {})
            if not optional.get(p, {}).get("optional")
        ),
    ):
        _copy_package(needed, into)


def user_project(where: Path, npm: str, optional_peers: bool) -> Path:
    """A project of a user who installed @tablelog/client: the package as `npm pack` makes
    it, and what npm installs with it (its dependencies and required peers, copied from
    the package's node_modules, so no registry is asked), plus, with `optional_peers`, the
    optional peers the package declares (its README tells TypeScript users of the Node
    entry to add @types/node). Nothing else: no @types/node unless the package declares it,
    unlike the package's own directory, where its devDependencies are."""
    packed = where / "packed"
    packed.mkdir()
    _run(
        [npm, "pack", "--ignore-scripts", "--silent", "--pack-destination", str(packed)], TS_PACKAGE
    )
    project = where / "project"
    (project / "node_modules" / "@tablelog").mkdir(parents=True)
    with tarfile.open(next(packed.glob("*.tgz"))) as archive:
        archive.extractall(project / "node_modules" / "@tablelog", filter="data")
    client = project / "node_modules" / "@tablelog" / "client"
    (project / "node_modules" / "@tablelog" / "package").rename(client)
    manifest = json.loads((client / "package.json").read_text(encoding="utf-8"))
    optional = manifest.get("peerDependenciesMeta", {})
    for name in manifest.get("dependencies", {}):
        _copy_package(name, project)
    for name in manifest.get("peerDependencies", {}):
        if optional_peers or not optional.get(name, {}).get("optional"):
            _copy_package(name, project)
    (project / "package.json").write_text('{"name": "user", "private": true, "type": "module"}')
    return project


def _compile(project: Path, source: str, libraries: list[str]) -> None:
    (project / "program.ts").write_text(source, encoding="utf-8")
    config = json.loads(json.dumps(USER_TSCONFIG))
    config["compilerOptions"]["lib"] = libraries
    (project / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    _run([str(TS_PACKAGE / "node_modules" / ".bin" / "tsc"), "-p", str(project)], project)


def _built_package() -> str:
    tools = required_tools("node", "npm")
    if not (TS_PACKAGE / "node_modules" / "typescript").exists():
        _run([tools["npm"], "ci", "--no-audit", "--no-fund"], TS_PACKAGE, 600)
    _run([tools["npm"], "run", "build"], TS_PACKAGE)  # the .d.ts a user's import resolves to
    return tools["npm"]


@pytest.mark.parametrize(("name", "source"), programs("ts"))
def test_typescript_programs_compile(name: str, source: str, tmp_path: Path) -> None:
    """In a user's project (`user_project`): the Node entry's types use Node's (`Buffer`),
    so the package declares @types/node (an optional peer, for TypeScript users); a
    package that did not, or a README that did not say to add it, fails here."""
    npm = _built_package()
    # DOM too: @connectrpc/connect's own .d.ts name the fetch API's HeadersInit, which
    # @types/node 20 does not declare (with skipLibCheck off, a Node project needs it).
    _compile(user_project(tmp_path, npm, optional_peers=True), source, ["ES2022", "DOM"])


BROWSER_PROGRAM = """
import { create } from "@bufbuild/protobuf";
import { GetGameRequestSchema, TablelogError, TablelogService } from "@tablelog/client/browser";

const request = create(GetGameRequestSchema, { gameId: "k67zo2vpxrit" });
const method: string = TablelogService.method.getGame.name;
const refused: unknown = new Error("refused");
document.title = `${method} ${request.gameId} ${refused instanceof TablelogError}`;
"""


def test_the_browser_entry_compiles_without_nodes_types(tmp_path: Path) -> None:
    """The browser entry (issue 27): its .d.ts need nothing of Node's, so a browser project
    (lib DOM, no @types/node: the optional peer left out) compiles against it."""
    npm = _built_package()
    project = user_project(tmp_path, npm, optional_peers=False)
    assert not (project / "node_modules" / "@types" / "node").exists()
    _compile(project, BROWSER_PROGRAM, ["ES2022", "DOM"])


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
