"""`tablelog new --component NAME=FILE` (replacement component files) and `--option`
values, and commands whose reader closes the pipe early (`tablelog legal G | head -1`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tablelog.replay.registry import find_game
from tablelog.service.api.server import BackgroundServer
from tablelog.v1 import game_pb2, medici_pb2, mercado_de_lisboa_pb2
from tablelog_client import Client
from tablelog_client.cli import BROKEN_PIPE, _options, media_type
from tests.cli.test_cli import new_game, tablelog
from tests.games.castello_methoni.boards import board_data, grid_data
from tests.service.helpers import OWNER_TOKEN, splendor_line
from tests.service.support import tablelog_command

pytestmark = pytest.mark.slow

PLAYERS = ("Ann", "Bob", "Cid")


def write_board(tmp_path: Path, data: dict[str, object], name: str = "board.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def created_components(client: Client, game_id: str) -> list[game_pb2.ComponentFile]:
    first = client.export(game_id)[0]
    assert first.WhichOneof("body") == "game_created"
    return list(first.game_created.components)


def test_media_types_are_guessed_from_the_extension() -> None:
    assert media_type("board.json") == "application/json"
    assert media_type("deck.CSV") == "text/csv"
    assert media_type("notes.txt") == "text/plain"
    assert media_type("board") == "application/octet-stream"


def test_options_read_json_values_and_enum_values_by_the_end_of_their_name() -> None:
    options = _options("mercado-de-lisboa", ["money=open", "first_player=1"])
    assert options == game_pb2.GameOptions(
        mercado_de_lisboa=mercado_de_lisboa_pb2.MercadoDeLisboaOptions(
            money=mercado_de_lisboa_pb2.MERCADO_DE_LISBOA_MONEY_OPEN, first_player=1
        )
    )
    for text in ("2016", "MEDICI_EDITION_2016"):
        assert _options("medici", [f"edition={text}"]) == game_pb2.GameOptions(
            medici=medici_pb2.MediciOptions(edition=medici_pb2.MEDICI_EDITION_2016)
        )
    assert _options("medici", ["lot_limit_others_with_money=true"]) == game_pb2.GameOptions(
        medici=medici_pb2.MediciOptions(lot_limit_others_with_money=True)
    )
    assert _options("splendor", []) is None


def test_bad_options_exit_2(server: BackgroundServer) -> None:
    for option in ("money=purple", "money", "colour=red"):
        done = tablelog(server, "new", "mercado-de-lisboa", "Ann", "--option", option, ok=False)
        assert done.returncode == 2
        assert "bad --option" in done.stderr


def test_new_with_a_custom_board_replaces_the_approximate_one(
    server: BackgroundServer, client: Client, tmp_path: Path
) -> None:
    board = write_board(tmp_path, grid_data(3, 3))
    made = tablelog(
        server, "new", "castello-methoni", *PLAYERS, "--component", f"board={board}"
    ).stdout
    assert "approximate" not in made.lower()
    game_id = made.split()[0]
    assert created_components(client, game_id) == [
        game_pb2.ComponentFile(
            name="board", media_type="application/json", content=board.read_bytes()
        )
    ]
    summary = client.get_game(game_id)
    assert not summary.approximate_components
    shown = tablelog(server, "show", game_id).stdout
    assert "approximate" not in shown.lower()
    assert "r2c2" in shown  # the custom board's cells are the ones in play
    tablelog(server, "move", game_id, "first p2")
    assert "Bob" in tablelog(server, "show", game_id).stdout

    # The default game says that its board is approximate, in `new`, `info` and `show`.
    default = tablelog(server, "new", "castello-methoni", *PLAYERS).stdout
    assert "approximate data: Approximate board" in default
    default_id = default.split()[0]
    assert "approximate data:" in tablelog(server, "info", default_id).stdout
    assert "APPROXIMATE BOARD" in tablelog(server, "show", default_id).stdout


def test_approximate_marks_the_given_files(
    server: BackgroundServer, client: Client, tmp_path: Path
) -> None:
    board = write_board(tmp_path, grid_data(2, 4), "club_board.json")
    made = tablelog(
        server, "new", "castello-methoni", *PLAYERS, "--json",
        "--component", f"board={board}", "--approximate-note", "transcribed from a photo",
    ).stdout  # fmt: skip
    game_id = json.loads(made)["gameId"]
    assert json.loads(made)["approximateNotes"] == ["transcribed from a photo"]
    (component,) = created_components(client, game_id)
    assert (component.approximate, component.approximate_note) == (
        True,
        "transcribed from a photo",
    )
    assert "transcribed from a photo" in tablelog(server, "show", game_id).stdout
    plain = tablelog(
        server, "new", "castello-methoni", *PLAYERS,
        "--component", f"board={board}", "--approximate",
    ).stdout  # fmt: skip
    assert "approximate data: board" in plain
    assert created_components(client, plain.split()[0])[0].approximate


def test_a_mercado_de_lisboa_board_file_is_sent_under_its_name(
    server: BackgroundServer, client: Client, tmp_path: Path
) -> None:
    (shipped,) = find_game("mercado-de-lisboa").default_components()
    path = tmp_path / "lisboa.json"
    path.write_bytes(shipped.content)
    made = tablelog(
        server, "new", "mercado-de-lisboa", "Ann", "Bob",
        "--component", f"{shipped.name}={path}", "--approximate-note", "checked against ours",
    ).stdout  # fmt: skip
    (component,) = created_components(client, made.split()[0])
    assert (component.name, component.media_type, component.content) == (
        shipped.name,
        "application/json",
        shipped.content,
    )
    assert "checked against ours" in tablelog(server, "show", made.split()[0]).stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--component", "board"), "write NAME=FILE"),
        (("--component", "board=/nonexistent/board.json"), "No such file"),
        (("--approximate",), "--approximate applies to --component files"),
    ],
)
def test_bad_component_arguments_exit_2(
    server: BackgroundServer, arguments: tuple[str, ...], message: str
) -> None:
    done = tablelog(server, "new", "castello-methoni", *PLAYERS, *arguments, ok=False)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_server_refuses_an_invalid_board_with_its_rule(
    server: BackgroundServer, tmp_path: Path
) -> None:
    board = write_board(tmp_path, board_data({"a": "hill", "b": "hill"}, [("a", "b")]))
    done = tablelog(
        server, "new", "castello-methoni", *PLAYERS, "--component", f"board={board}", ok=False
    )
    assert done.returncode == 1
    assert "INVALID_SETUP" in done.stderr
    assert "rule=BOARD_LANDLOCKED" in done.stderr


def run_into_closed_pipe(server: BackgroundServer, *args: str) -> tuple[int, str]:
    """Run a command whose stdout reader is gone before it writes (as `| head -1` leaves it)."""
    env = dict(os.environ, TABLELOG_ADDRESS=server.target, TABLELOG_TOKEN=OWNER_TOKEN)
    process = subprocess.Popen(
        [*tablelog_command(), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()  # the reader goes away before the command prints anything
    stderr = process.stderr.read()
    process.stderr.close()
    return process.wait(60), stderr


@pytest.fixture(scope="module")
def played(server: BackgroundServer) -> str:
    game_id = new_game(server)
    with Client(server.target, token=OWNER_TOKEN) as client:
        version = client.get_game(game_id).version
        for notation in splendor_line(seed=41)[:40]:
            version = client.record(game_id, notation, expected_version=version).game.version
    return game_id


@pytest.mark.parametrize(
    "command",
    [
        ("legal",),
        ("show",),
        ("replay", "--all"),
        ("export",),
        ("audit",),
        ("info",),
        ("legal", "--json"),
        ("games",),
        ("list",),
    ],
    ids=" ".join,
)
def test_a_closed_pipe_ends_any_command_quietly(
    server: BackgroundServer, played: str, command: tuple[str, ...]
) -> None:
    name, *options = command
    arguments = [name] if name in ("games", "list") else [name, played]
    code, stderr = run_into_closed_pipe(server, *arguments, *options)
    assert "Traceback" not in stderr
    assert "BrokenPipeError" not in stderr
    assert stderr == ""
    assert code == BROKEN_PIPE


def test_legal_into_head_prints_one_line_and_no_traceback(
    server: BackgroundServer, played: str
) -> None:
    env = dict(os.environ, TABLELOG_ADDRESS=server.target, TABLELOG_TOKEN=OWNER_TOKEN)
    command = " ".join(tablelog_command())
    for pipeline in (
        f"{command} legal {played} | head -1",
        f"{command} replay {played} --all | head -1",
    ):
        done = subprocess.run(
            ["bash", "-c", pipeline], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0
        assert len(done.stdout.splitlines()) == 1
        assert done.stderr == ""
