"""Every registered game through the real `tablelog` command, from a golden playthrough.

For each game: `new`, the first moves of a golden playthrough typed with `move`, `show`
(compared with the local fold), `replay --all`, `undo`, `redo`; the rest of the game is
recorded through the SDK (the CLI costs a process per move), then `verify`, `export`,
`import`, and the imported game verifies and ends with the same result."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import json_format

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, TERMINAL
from tablelog.replay.registry import all_games
from tablelog.service.api.server import BackgroundServer
from tablelog.v1 import service_pb2
from tablelog_client import Client
from tests.cli.test_cli import tablelog
from tests.service.test_every_game import expected_snapshot
from tests.support.play import new_position, play

pytestmark = pytest.mark.slow

GAMES_DIR = Path(__file__).resolve().parents[1] / "games"
CLI_MOVES = 6
"""Moves typed through `tablelog move` per game; the rest go through the SDK."""


@dataclass(frozen=True)
class Golden:
    """A golden playthrough recorded through the CLI: its file and how to create its game."""

    path: str
    players: tuple[str, ...]
    options: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        text = (GAMES_DIR / self.path).read_text(encoding="utf-8")
        moves = (line.split("#", 1)[0].strip() for line in text.splitlines())
        return [move for move in moves if move]


GOLDEN = {
    "castello-methoni": Golden(
        "castello_methoni/playthroughs/table_3p_merges.txt", ("p1", "p2", "p3")
    ),
    "medici": Golden(
        "medici/playthroughs/four_players.txt", ("Adam", "Barbara", "Charles", "Diana")
    ),
    "medici-card-game": Golden(
        "medici_card_game/playthroughs/three_players.txt", ("Juhee", "Minji", "Jeho")
    ),
    "mercado-de-lisboa": Golden(
        "mercado_de_lisboa/playthroughs/two_players.txt",
        ("ana", "ben"),
        ("money=open",),
    ),
    "splendor": Golden("splendor/playthroughs/2p-table-noble-choice.txt", ("p1", "p2")),
}


def test_every_registered_game_has_a_golden_playthrough_here() -> None:
    """A new game must name its playthrough in GOLDEN to be covered by the CLI test."""
    assert sorted(GOLDEN) == sorted(all_games())
    for golden in GOLDEN.values():
        assert len(golden.lines()) > CLI_MOVES


def server_state(server: BackgroundServer, game_id: str) -> service_pb2.StateSnapshot:
    shown = tablelog(server, "show", game_id, "--full", "--json").stdout
    return json_format.Parse(shown, service_pb2.StateSnapshot())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_a_golden_playthrough_through_the_cli(
    server: BackgroundServer, client: Client, tmp_path: Path, name: str
) -> None:
    golden = GOLDEN[name]
    lines = golden.lines()
    options = [arg for pair in golden.options for arg in ("--option", pair)]
    created = tablelog(server, "new", name, *golden.players, *options, "--json").stdout
    game_id: str = json.loads(created)["gameId"]
    game = all_games()[name]
    options_sent = getattr(client.get_game(game_id).options, game.oneof_field)
    local = new_position(name, list(golden.players), options_sent)

    # A few dozen moves typed as a recorder would, each answered with its canonical text.
    for text in lines[:CLI_MOVES]:
        before = local
        local = play(local, text)
        recorded = tablelog(server, "move", game_id, text).stdout
        seat = before.to_move()
        who = f"{before.table.seat_name(seat)}:" if seat >= 0 else "table:"
        last = local.moves()[-1]
        # A move naming a card by its place says which (issue 26: `take 1 (dye3)`).
        detail = game.detail(local.table.unwrap(last.move), last.before)
        words = f"{last.notation} ({detail})" if detail else last.notation
        assert f"{who} {words}  (revision {local.revision})" in recorded
    assert server_state(server, game_id) == expected_snapshot(local)
    shown = tablelog(server, "show", game_id).stdout  # the owner's: everything
    assert shown.startswith(f"revision {local.revision} · to move: ")
    assert game.render(game.view(local.state, FULL)).strip() in shown
    public = tablelog(server, "show", game_id, "--spectator").stdout
    assert game.render(game.view(local.state, SPECTATOR)).strip() in public

    # replay, non-interactive: every revision, in order (the setup's table events as one
    # step, shown at its last revision).
    replayed = tablelog(server, "replay", game_id, "--all").stdout
    steps = re.findall(r"^== revisions? (\d+)(?: to (\d+))?: ", replayed, re.MULTILINE)
    covered = [r for first, last in steps for r in range(int(first), int(last or first) + 1)]
    assert covered == list(range(1, local.revision + 1))
    headers = [line for line in replayed.splitlines() if line.startswith("revision ")]
    assert [int(h.split()[1]) for h in headers] == [int(last or first) for first, last in steps]

    # undo and redo: the states are the fold's.
    assert "undid " in tablelog(server, "undo", game_id, "--reason", "typo").stdout
    assert server_state(server, game_id) == expected_snapshot(folding.undo(local))
    assert "redid " in tablelog(server, "redo", game_id).stdout
    local = folding.redo(folding.undo(local))
    assert server_state(server, game_id) == expected_snapshot(local)

    # The rest of the game through the SDK, to the end.
    version = client.get_game(game_id).version
    for text in lines[CLI_MOVES:]:
        local = play(local, text)
        version = client.record(game_id, text, expected_version=version).game.version
    assert game.to_move(local.state) == TERMINAL
    result = game.result(local.state)
    info = json.loads(tablelog(server, "info", game_id, "--json").stdout)
    assert info["status"] == "GAME_STATUS_ENDED"
    assert json_format.ParseDict(info["result"], type(result)()) == result

    # The end, by name with the scores: in `info`, the audit, a replay and a late watch.
    names, totals = golden.players, {score.seat: score.total for score in result.scores}
    said = [
        tablelog(server, "info", game_id).stdout,
        client.audit(game_id)[-1].summary,
        tablelog(server, "replay", game_id, "--all", "--from", str(version)).stdout,
    ]
    assert said[1].startswith("the game ended: ")
    assert "game over: " in said[2]
    for words in said:
        for seat in result.winners:
            if len(result.winners) == 1:
                assert f"{names[seat]} wins" + (f" with {totals[seat]}" if totals else "") in words
            else:
                assert f"{names[seat]} ({totals[seat]})" in words, words
        for seat, total in totals.items():
            if seat not in result.winners:
                assert f"{names[seat]} {total}" in words, words
    late = tablelog(server, "watch", game_id, "--timeout", "30")
    assert "this game has ended: nothing more to watch" in late.stdout

    verified = tablelog(server, "verify", game_id).stdout
    assert verified.startswith(f"ok: {version} events")  # one event per revision here

    # export, import, and the imported game verifies and ended the same way.
    exported = tmp_path / f"{name}.jsonl"
    tablelog(server, "export", game_id, "-o", str(exported))
    assert len(exported.read_text(encoding="utf-8").splitlines()) == version
    imported = json.loads(tablelog(server, "import", str(exported), "--json").stdout)
    new_id: str = imported["gameId"]
    assert new_id != game_id
    assert imported["status"] == "GAME_STATUS_ENDED"
    assert int(imported["version"]) == version
    assert tablelog(server, "verify", new_id).stdout.startswith("ok: ")
    assert client.get_game(new_id).result == result
    assert [e.move_recorded.notation for e in client.export(new_id)] == [
        e.move_recorded.notation for e in client.export(game_id)
    ]
