"""The answers to changes count as the text record counts (issue 26, item 3: "move numbers
as the text record counts them ... everywhere a person reads them, with the revision beside
them where a command takes one"): `tablelog move`, the shell's line after each move, undo,
redo, amend, insert and delete name a player's move by its number and its revision
(`2. Bob: take w g r  (revision 19)`, `undid 2. Bob's take w g r (revision 19)`), as
`history`, `watch` and `replay` number it; the table's events keep no number. An amendment
that puts a buy in names the card it takes, as a recorded buy does."""

from __future__ import annotations

import re

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow


def first_line(server: BackgroundServer, *args: str) -> str:
    return tablelog(server, *args).stdout.splitlines()[0]


def test_the_answers_to_changes_number_the_move_beside_its_revision(
    server: BackgroundServer,
) -> None:
    game_id = new_game(server, "--mode", "dealt")  # Ann and Bob; the setup is revisions 2-16
    assert first_line(server, "move", game_id, "take w u g") == "1. Ann: take w u g  (revision 17)"
    assert first_line(server, "move", game_id, "Bob: take r r") == "2. Bob: take r r  (revision 18)"
    assert first_line(server, "undo", game_id) == "undid 2. Bob's take r r (revision 18)"
    assert first_line(server, "redo", game_id) == "redid 2. Bob's take r r (revision 18)"
    assert first_line(server, "amend", game_id, "2.", "take k k", "--reason", "misread") == (
        "amended 2. Bob's take r r (revision 18) → take k k (misread)  (revision 21)"
    )
    assert first_line(server, "insert", game_id, "2.", "take r r", "--drop-tail") == (
        "inserted Bob's take r r before 2. Bob's take k k (revision 21)  (revision 22)"
    )
    assert first_line(server, "delete", game_id, "1.", "--drop-tail") == (
        "deleted 1. Ann's take w u g (revision 17)"
    )

    # The shell says each change as `tablelog move` does, numbered the same way.
    other = new_game(server, "--mode", "dealt")
    shell = tablelog(server, "record", other, stdin="take w u g\ntake r r\nundo\nredo\n")
    said = shell.stdout.splitlines()
    assert said[said.index("Ann> take w u g") + 1] == "1. Ann: take w u g  (revision 17)"
    assert said[said.index("Bob> take r r") + 1] == "2. Bob: take r r  (revision 18)"
    assert said[said.index("Ann> undo") + 1] == "undid 2. Bob's take r r (revision 18)"
    assert said[said.index("Bob> redo") + 1] == "redid 2. Bob's take r r (revision 18)"
    script = "amend 1. take w u k\namend 2. take g g\nundo\nredo\nhistory\n"
    said = tablelog(server, "record", other, stdin=script).stdout.splitlines()
    assert "amended 1. Ann's take w u g (revision 17) → take w u k  (revision 21)" in said
    assert "amended 2. Bob's take r r (revision 18) → take g g  (revision 22)" in said
    assert "undid 2. Bob's take g g (revision 22)" in said
    assert "redid 2. Bob's take g g (revision 22)" in said
    # `history` lists an amendment's move as any other, and one put back by a redo too.
    assert said[-2:] == [
        "   1. Ann: take w u k  (revision 21)",
        "   2. Bob: take g g  (revision 22)",
    ]


def test_the_tables_events_keep_no_number(server: BackgroundServer) -> None:
    game_id = new_game(server)  # table mode: the recorder types the reveals
    said = first_line(server, "move", game_id, "reveal 1.1 1w0:u1g2r1k1")
    assert said == "table: reveal 1.1 1w0:u1g2r1k1  (revision 2)"
    assert first_line(server, "undo", game_id) == (
        "undid the table's reveal 1.1 1w0:u1g2r1k1 (revision 2)"
    )


def _affordable_buy(client: Client, game_id: str) -> tuple[str, str, str]:
    """Gems taken turn by turn until a market card can be bought: the buy (not recorded),
    the card it takes, and another move of that turn."""
    for turn in range(40):
        _, legal = client.legal_moves(game_id, viewer=client.viewer(full=True))
        texts = [move.notation for move in legal]
        buys = [move for move in legal if re.fullmatch(r"buy [123]\.[1-4]", move.notation)]
        if buys:
            other = next(text for text in texts if not text.startswith("buy "))
            return buys[0].notation, buys[0].detail, other
        takes = [text for text in texts if text.startswith("take ") and len(text) == 10]
        client.record(game_id, takes[turn % len(takes)] if takes else texts[0])
    raise AssertionError("no market card became affordable in 40 turns")


def test_an_amendment_that_puts_a_buy_in_names_its_card(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    buy, card, other = _affordable_buy(client, game_id)
    tablelog(server, "show", game_id)  # this terminal sees the game as it is now
    tablelog(server, "move", game_id, other)
    number = client.get_game(game_id).player_move_count
    amended = tablelog(server, "amend", game_id, f"{number}.", buy).stdout.splitlines()
    assert re.fullmatch(
        rf"amended {number}\. (Ann|Bob)'s {re.escape(other)} \(revision \d+\) → {buy} \({card}\)  "
        r"\(revision \d+\)",
        amended[0],
    ), amended
    # The server deals the emptied slot again: the table's event, unnumbered.
    assert amended[1].startswith(f"the server dealt reveal {buy.split()[1]} ")
    # Taking it back takes the deal back with it; the buy keeps its number and its card.
    undone = tablelog(server, "undo", game_id).stdout.splitlines()
    assert undone[0].startswith(f"undid the deal reveal {buy.split()[1]} ")
    assert re.fullmatch(
        rf"undid {number}\. (Ann|Bob)'s {buy} \({card}\) \(revision \d+\)", undone[1]
    ), undone
