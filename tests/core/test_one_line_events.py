"""One line for one table event (issue 16, item 5): the golden playthroughs, retyped with
each game's shorthands (Medici's `draw cloth3`, Medici: The Card Game's `flip fur3`,
Mercado de Lisboa's refresh, swap and draws in one line), record the very same moves.

Each shorthand line is split by the game (`Game.split`) and every part is read in the
state the parts before it lead to, as the service records a line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf import text_format
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import IllegalMove, NotationError
from tablelog.replay.registry import find_game
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import directives, new_position, play_all

ROOT = Path(__file__).resolve().parents[2]
Collapse = Callable[[list[str]], list[str]]


def medici_collapse(lines: list[str]) -> list[str]:
    """`draw` (the drawer) then `draw cloth3` (the table): `draw cloth3`."""
    out: list[str] = []
    for line in lines:
        if out and out[-1] == "draw" and line.startswith("draw "):
            out[-1] = line
        else:
            out.append(line)
    return out


def card_game_collapse(lines: list[str]) -> list[str]:
    """`flip` (the player) then `reveal fur3` (the table): `flip fur3`."""
    out: list[str] = []
    for line in lines:
        if out and out[-1] == "flip" and line.startswith("reveal "):
            out[-1] = "flip " + line.removeprefix("reveal ")
        else:
            out.append(line)
    return out


def mercado_collapse(lines: list[str]) -> list[str]:
    """A refresh or a swap with the draws that follow it (and, after a refresh, the tile
    then taken) as one line; other runs of draws as one `draw` line."""
    out: list[str] = []
    for line in lines:
        last = out[-1] if out else ""
        drawing = line.startswith("draw ")
        refreshing = " refresh" in last and " take " not in last
        if drawing and (refreshing or last.startswith(("swap", "draw "))):
            out[-1] = last + " " + line.removeprefix("draw ")
        elif line.startswith("take ") and " refresh " in last and " take " not in last:
            out[-1] = last + " " + line
        else:
            out.append(line)
    return out


CASES = [
    ("medici", "two_players_2016.txt", medici_collapse),
    ("medici", "four_players.txt", medici_collapse),
    ("medici-card-game", "two_players.txt", card_game_collapse),
    ("medici-card-game", "three_players.txt", card_game_collapse),
    ("mercado-de-lisboa", "two_players.txt", mercado_collapse),
    ("mercado-de-lisboa", "four_players.txt", mercado_collapse),
    ("mercado-de-lisboa", "solo_stage6.txt", mercado_collapse),
]


def players_and_options(game: str, lines: list[str]) -> tuple[list[str], Message]:
    """A playthrough's players and options: `#!` directives (options in protobuf text),
    or Mercado de Lisboa's `# players:` and `# options: money=open stage=6` header."""
    options = find_game(game).options_type()
    meta = directives(lines)
    if "players" in meta:
        text_format.Parse(meta.get("options", ""), options)
        return meta["players"].split(), options
    header = dict(
        line[2:].split(": ", 1) for line in lines if line.startswith("# ") and ": " in line
    )
    for pair in header.get("options", "").split():
        key, value = pair.split("=")
        money = f"MERCADO_DE_LISBOA_MONEY_{value.upper()}"
        number = pb.MercadoDeLisboaMoney.Value(money) if key == "money" else int(value)
        setattr(options, key, number)
    return header["players"].split(), options


def record_line(position: folding.Position, line: str) -> folding.Position:
    """Record one typed line as the service does: each move it stands for, in order."""
    game = position.game
    for part in game.split(line, position.state):
        move = game.parse(part, position.state)
        notation = game.format(move, position.state)
        position = folding.record(position, position.table.wrap(move), notation)
    return position


@pytest.mark.parametrize(("game", "file", "collapse"), CASES)
def test_a_playthrough_typed_with_one_line_per_table_event_records_the_same_moves(
    game: str, file: str, collapse: Collapse
) -> None:
    package = find_game(game).name.replace("-", "_")
    text = (ROOT / "tests" / "games" / package / "playthroughs" / file).read_text("utf-8")
    raw = text.splitlines()
    start = new_position(game, *players_and_options(game, raw))
    long_form = [line.split("#", 1)[0].strip() for line in raw]
    long_form = [line for line in long_form if line]
    short_form = collapse(long_form)
    assert len(short_form) < len(long_form)  # the playthrough has such events
    expected = play_all(start, long_form)
    position = start
    for line in short_form:
        position = record_line(position, line)
    assert [a.notation for a in position.moves()] == [a.notation for a in expected.moves()]
    assert position.state == expected.state


def test_the_long_forms_stay_one_move_each() -> None:
    medici = new_position("medici", ["Ann", "Bob"])
    assert medici.game.split("draw spice1", medici.state) == ("draw spice1",)  # the table's
    card = new_position("medici-card-game", ["Ann", "Bob"])
    card = record_line(card, "reveal cloth4")
    assert card.game.split("flip", card.state) == ("flip",)
    assert card.game.split("take 1", card.state) == ("take 1",)
    mercado = new_position("mercado-de-lisboa", ["Ann", "Bob"])
    assert mercado.game.split("draw fish", mercado.state) == ("draw fish",)
    assert mercado.game.split("stand fish b3 refresh", mercado.state) == ("stand fish b3 refresh",)
    for game in ("splendor", "castello-methoni"):
        position = new_position(game, ["Ann", "Bob", "Cy"])
        assert position.game.split("take w u g", position.state) == ("take w u g",)


def test_a_shorthand_whose_second_move_breaks_a_rule_is_refused_by_that_rule() -> None:
    card = record_line(new_position("medici-card-game", ["Ann", "Bob"]), "reveal cloth4")
    with pytest.raises(NotationError, match="Not a move or a card"):
        record_line(card, "flip cloth99")
    medici = record_line(new_position("medici", ["Ann", "Bob"]), "draw spice1")
    with pytest.raises(IllegalMove):  # a tile the bag no longer holds, by its own rule
        record_line(medici, "draw spice1")
