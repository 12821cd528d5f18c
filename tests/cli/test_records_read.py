"""Records that read (issue 26, item 4): a move that names a card only by its place (a
Splendor `buy 1.3`) is described with the card it took, `buy 1.3 (1k0:g3)`, wherever a
person reads it (history, watch, replay, the audit, the text record as a line-note), while
the notation a recorder types and the record's moves stay canonical."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import new_game, tablelog

pytestmark = pytest.mark.slow

BOUGHT = re.compile(r"buy ([123])\.([1-4]) \(([123][wugrk]\d:(?:[wugrk]\d)+)\)")


def _play_to_a_market_buy(client: Client, game_id: str) -> tuple[str, int]:
    """Gems taken turn by turn until a market card can be bought: the buy's notation and
    the revision it will have."""
    for turn in range(40):
        _, legal = client.legal_moves(game_id, viewer=client.viewer(full=True))
        texts = [move.notation for move in legal]
        buys = [text for text in texts if re.fullmatch(r"buy [123]\.[1-4]", text)]
        if buys:
            return buys[0], client.get_game(game_id).version + 1
        takes = [text for text in texts if text.startswith("take ") and len(text) == 10]
        move = takes[turn % len(takes)] if takes else texts[0]
        client.record(game_id, move)
    raise AssertionError("no market card became affordable in 40 turns")


def test_a_buy_names_its_card_in_history_watch_audit_and_the_record(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    notation, revision = _play_to_a_market_buy(client, game_id)
    before = client.state(game_id, revision - 1, full=True)
    tablelog(server, "show", game_id)  # this terminal sees the game as it is now
    _, legal = client.legal_moves(game_id, viewer=client.viewer(full=True))
    offered = next(move for move in legal if move.notation == notation)
    listed = tablelog(server, "legal", game_id).stdout
    assert f"  {notation}  ({offered.detail})\n" in listed
    said = tablelog(server, "move", game_id, notation).stdout  # as the recorder types it

    history = tablelog(server, "history", game_id).stdout
    line = next(line for line in history.splitlines() if f"(revision {revision})" in line)
    found = BOUGHT.search(line)
    assert found is not None, line
    assert line.split(": ", 1)[1].startswith(f"{notation} ({found[3]})")
    card = found[3]
    assert offered.detail == card  # offered with its card before it was bought
    assert said.startswith(f"Ann: {notation} ({card})  (revision {revision})") or said.startswith(
        f"Bob: {notation} ({card})  (revision {revision})"
    ), said
    # The card is the one that lay at that place just before (the full view names it).
    level, slot = int(found[1]), int(found[2])
    market = before.view.splendor.market
    assert next(row for row in market if row.level == level).slots[slot - 1].text == card

    watched = tablelog(server, "watch", game_id, "--from", str(revision), "--timeout", "1")
    assert f"revision {revision}: " in watched.stdout
    assert f"{notation} ({card})" in watched.stdout
    summaries = [entry.summary for entry in client.audit(game_id)]
    assert any(f": {notation} ({card}) (recorded by" in summary for summary in summaries)
    frames = list(client.replay(game_id, revision, revision))
    assert frames[0].detail == card
    assert frames[0].event.move_recorded.notation == notation  # the notation is untouched

    record = client.export_record([game_id])
    line = next(line for line in record.splitlines() if f": {notation}" in line)
    assert line.endswith(f": {notation} ; {card}")
    # The line-note is a note to the reader: the record imports with the same moves.
    state = client.state(game_id)
    assert list(state.moves).count(notation) >= 1


def test_a_blind_reserve_names_no_card_to_a_spectator(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    client.record(game_id, "reserve 1.deck")
    spectator = client.viewer()
    frames = list(client.replay(game_id, seat=None))
    assert all(frame.detail == "" for frame in frames)
    entries = client.audit(game_id, viewer=spectator)
    assert any("reserve 1.deck (recorded by" in entry.summary for entry in entries)
    assert all(entry.detail == "" for entry in entries)
    # A face-up reserve names the card it took: every viewer saw it on the table.
    take = client.record(game_id, "reserve 1.2")
    replayed = list(client.replay(game_id, take.events[0].revision, take.events[0].revision))
    assert re.fullmatch(r"1[wugrk]\d:(?:[wugrk]\d)+", replayed[0].detail)


def test_watch_folds_the_setup_and_numbers_the_moves_as_the_record_does(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server, "--mode", "dealt")
    client.record(game_id, "take w u g")
    client.record(game_id, "take r r")
    watched = tablelog(server, "watch", game_id, "--from", "1", "--timeout", "1").stdout
    assert watched.splitlines()[1:] == [
        "revision 1: game created for Ann, Bob",
        "revisions 2 to 16: setup: 15 table events",
        "revision 17: 1. Ann: take w u g",
        "revision 18: 2. Bob: take r r",
        "stopped watching: --timeout 1s reached",
    ]
    audit = [entry.summary for entry in client.audit(game_id)]
    assert audit[16].startswith("1. Ann: take w u g (recorded by ")
    assert audit[17].startswith("2. Bob: take r r (recorded by ")
    frames = list(client.replay(game_id))
    assert [frame.move_number for frame in frames][15:] == [0, 1, 2]


def test_a_dealt_games_text_record_imports_as_a_table_game(
    server: BackgroundServer, client: Client, tmp_path: Path
) -> None:
    """Issue 26, item 6: the text holds every card that was dealt; imported, the game is a
    table game whose reveals are those cards (the blind reserve's deal left out)."""
    game_id = new_game(server, "--mode", "dealt")
    client.record(game_id, "reserve 1.deck")
    client.record(game_id, "take w u g")
    path = tmp_path / "dealt.txt"
    tablelog(server, "export", game_id, "--format", "text", "-o", str(path))
    assert '[Mode "dealt"]' in path.read_text()
    said = tablelog(server, "import", str(path)).stdout
    assert said.startswith("imported as ")
    assert "  [table]  in progress  " in said
    imported = said.split()[2]
    record = client.export_record([imported])
    assert '[DealtGame "dealt by a server; imported as a table game"]' in record
    assert "1. Ann: reserve 1.deck\n2. Bob: take w u g\n" in record
    # The table, not the server, reveals from here on.
    to_move, _legal = client.legal_moves(imported)
    assert to_move.WhichOneof("who") == "seat"
