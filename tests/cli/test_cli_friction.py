"""What a new user met on a first evening with the CLI (issue 16, part 4), each with the
answer the CLI gives now."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from importlib.metadata import version
from pathlib import Path

import grpc
import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import free_port
from tablelog.v1 import service_pb2
from tablelog_client import Client, TablelogError
from tablelog_client.cli import build_parser
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import OWNER_TOKEN, splendor_line
from tests.service.support import tablelog_command

pytestmark = pytest.mark.slow


def run(*args: str, address: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TABLELOG_ADDRESS=address, TABLELOG_TOKEN=OWNER_TOKEN)
    return subprocess.run(
        [*tablelog_command(), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_a_server_that_is_not_running_is_named_with_how_to_start_one() -> None:
    address = f"127.0.0.1:{free_port()}"
    done = run("info", "nosuchgame", address=address)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"error: no tablelog server at {address}: start one with `tablelog serve`"
    )
    as_json = run("list", "--json", address=address)
    assert as_json.returncode == 1
    assert json.loads(as_json.stderr) == {
        "error": {
            "code": "UNAVAILABLE",
            "message": f"no tablelog server at {address}: start one with `tablelog serve`",
        }
    }


def test_version() -> None:
    done = subprocess.run(
        [*tablelog_command(), "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"tablelog {version('tablelog')}"


def test_errors_are_json_with_json(server: BackgroundServer) -> None:
    game_id = new_game(server)
    refused = tablelog(server, "move", game_id, "take u u", "--json", ok=False)
    assert refused.returncode == 1
    assert refused.stdout == ""
    error = json.loads(refused.stderr)["error"]
    assert (error["code"], error["reason"]) == ("FAILED_PRECONDITION", "ILLEGAL_MOVE")
    assert error["metadata"]["rule"]
    assert error["message"]
    usage = tablelog(server, "new", "splendor", "--json", ok=False)
    assert usage.returncode == 2
    assert json.loads(usage.stderr)["error"]["code"] == "USAGE"


@pytest.mark.parametrize(
    ("game", "option", "said"),
    [
        (
            "splendor",
            "first-player=2x",
            "option first_player: '2x' is not a whole number or a player's name",
        ),
        (
            "splendor",
            "allow_take_fewer_anytime=yes",
            "option allow_take_fewer_anytime: 'yes' is not true or false",
        ),
        ("mercado-de-lisboa", "money=gold", "option money: 'gold' is not one of: hidden, open"),
        ("medici", "edition=1999", "option edition: '1999' is not one of: classic, 2016"),
        (
            "splendor",
            "bonus=3",
            "splendor has no option 'bonus'; its options: allow_take_fewer_anytime, first_player",
        ),
    ],
)
def test_option_errors_name_the_option_and_what_it_accepts(
    server: BackgroundServer, game: str, option: str, said: str
) -> None:
    refused = tablelog(server, "new", game, "Ann", "Bob", "--option", option, ok=False)
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: bad --option: {said}"


def test_first_player_is_given_by_name(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--option", "first_player=bob", "--mode", "dealt")
    game = client.get_game(game_id)
    assert game.options.splendor.first_player == 1
    assert game.to_move.seat == 1


def test_games_lists_each_games_options(server: BackgroundServer) -> None:
    listed = tablelog(server, "games").stdout
    assert "    --option first_player=..." in listed
    assert "    --option money=..." in listed


def test_two_players_of_one_name_are_refused(server: BackgroundServer, client: Client) -> None:
    before = len(list(client.list_games("medici")))
    with pytest.raises(TablelogError) as refused:
        client.create_game("medici", ["Ann", "Bob", " ann "])
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.violations[0][0] == "players.name"
    assert "Two players are called 'ann'" in refused.value.message
    assert len(list(client.list_games("medici"))) == before  # nothing was created
    said = tablelog(server, "new", "splendor", "Cy", "Cy", ok=False)
    assert said.returncode == 1
    assert "Two players are called 'Cy'" in said.stderr


def test_watch_on_a_finished_game_says_so_and_ends(server: BackgroundServer) -> None:
    game_id = new_game(server)
    abandoned = tablelog(server, "abandon", game_id, "--reason", "rain").stdout
    assert abandoned.startswith("game abandoned (rain)\n")
    watched = tablelog(server, "watch", game_id)
    assert watched.stdout.splitlines()[-1] == (
        "this game has ended: nothing more to watch (replay it with `tablelog replay`)"
    )


def test_watch_timeout_ends_quietly_with_a_clear_line(server: BackgroundServer) -> None:
    game_id = new_game(server)
    watched = tablelog(server, "watch", game_id, "--timeout", "0.5")
    assert watched.returncode == 0
    assert watched.stdout.splitlines()[-1] == "stopped watching: --timeout 0.5s reached"
    assert watched.stderr == ""


def test_annotations_are_removed_from_the_cli(server: BackgroundServer) -> None:
    game_id = new_game(server)
    made = json.loads(tablelog(server, "annotate", game_id, "a", "slip", "--json").stdout)
    note_id = made["annotationId"]
    said = tablelog(server, "remove-annotation", game_id, note_id).stdout
    assert said.strip() == f"annotation {note_id} removed"
    assert json.loads(tablelog(server, "annotations", game_id, "--json").stdout) == {}


# Every RPC and the command that makes it: a new RPC fails this test until the CLI has it.
COMMAND_OF_RPC = {
    "ListGameTypes": "games",
    "CreateGame": "new",
    "GetGame": "info",
    "ListGames": "list",
    "RecordMove": "move",
    "UndoMove": "undo",
    "RedoMove": "redo",
    "AmendMove": "amend",
    "AbandonGame": "abandon",
    "DeleteGame": "delete-game",
    "GetState": "show",
    "ListLegalMoves": "legal",
    "ReplayGame": "replay",
    "WatchGame": "watch",
    "AddAnnotation": "annotate",
    "RemoveAnnotation": "remove-annotation",
    "ListAnnotations": "annotations",
    "GetAuditLog": "audit",
    "VerifyGame": "verify",
    "ImportGame": "import",
    "ExportRecord": "export",
    "ImportRecord": "import",
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    found: dict[str, argparse.ArgumentParser] = next(
        action.choices
        for action in parser._actions  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction)
    )
    return found


def test_every_flag_and_argument_has_help() -> None:
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, command in subcommands().items()
        for action in command._actions
        if action.help is None
    ]
    assert missing == []


def test_seats_are_given_by_name(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    said = tablelog(server, "move", game_id, "take w u g", "--seat", "ann").stdout
    assert said.startswith("1. Ann: take w u g")
    refused = tablelog(server, "move", game_id, "take r k w", "--seat", "Ann", ok=False)
    assert "NOT_YOUR_TURN" in refused.stderr
    assert tablelog(server, "show", game_id, "--seat", "Bob").stdout.startswith("revision ")
    unknown = tablelog(server, "show", game_id, "--seat", "Cleo", ok=False)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "error: --seat Cleo: no player of that name (the players: Ann, Bob)"
    )


def test_show_refreshes_what_the_terminal_remembers(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=41)
    tablelog(server, "move", game_id, line[0])
    client.record(game_id, line[1])  # another recorder
    stale = tablelog(server, "move", game_id, line[2], ok=False)
    assert "STALE_VERSION" in stale.stderr
    client.record(game_id, line[2])  # and again, before this terminal looks
    tablelog(server, "show", game_id)
    assert tablelog(server, "move", game_id, line[3]).stdout.startswith("table: ")


def test_an_unknown_replay_key_lists_the_keys(server: BackgroundServer) -> None:
    game_id = new_game(server)
    stepped = tablelog(server, "replay", game_id, "--step", stdin="x\n99\nq\n").stdout
    assert "unknown key 'x'; the keys are: [enter/n/→] next" in stepped
    assert "no revision 99 here (revisions 1-1)" in stepped


def test_the_cli_covers_every_rpc() -> None:
    service = service_pb2.DESCRIPTOR.services_by_name["TablelogService"]
    assert set(COMMAND_OF_RPC) == {method.name for method in service.methods}
    assert set(COMMAND_OF_RPC.values()) <= set(subcommands())


def test_the_terminal_memory_stays_in_the_tests_own_home(
    server: BackgroundServer, isolated_home: Path
) -> None:
    game_id = new_game(server)
    remembered = list((isolated_home / ".local" / "state" / "tablelog").rglob("*.version"))
    assert [path.name for path in remembered] == [f"{game_id}.version"]
