"""Records that read (issue 26, item 4): a move that names a card only by its place (a
Splendor `buy 1.3`) is described with the card it took, `buy 1.3 (1k0:g3)`, wherever a
person reads it (history, watch, replay, the audit, the text record as a line-note), while
the notation a recorder types and the record's moves stay canonical."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from google.protobuf.message import Message

from tablelog.replay.record import read as read_record
from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client, TablelogError
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
    # The legal list says the move in words, the card named (issue 25).
    lines = listed.splitlines()
    offered_line = next(line for line in lines if line.split()[:2] == notation.split())
    assert offered_line.endswith(f"buys {offered.detail} from slot {notation.split()[1]}."), (
        offered_line
    )
    said = tablelog(server, "move", game_id, notation).stdout  # as the recorder types it

    history = tablelog(server, "history", game_id).stdout
    line = next(line for line in history.splitlines() if f"(revision {revision})" in line)
    found = BOUGHT.search(line)
    assert found is not None, line
    assert line.split(": ", 1)[1].startswith(f"{notation} ({found[3]})")
    card = found[3]
    assert offered.detail == card  # offered with its card before it was bought
    answered = re.escape(f"{notation} ({card})  (revision {revision})")
    assert re.match(rf"\d+\. (Ann|Bob): {answered}", said), said
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
    (read,) = read_record(record)
    assert [move.notation for move in read.moves] == list(state.moves)
    assert not any(move.notes for move in read.moves)  # `; card` is no comment either
    (imported,) = client.import_record(record)
    assert list(client.state(imported.game_id).moves) == list(state.moves)


def _names(card: str, *messages: object) -> bool:
    """Whether any of `messages` names `card` by its text (`1k0:g1` is not in `1k0:g1r3k1`)."""
    pattern = re.compile(rf"(?<![\w:]){re.escape(card)}(?!\w)")
    return any(pattern.search(str(message)) for message in messages)


def _watched(client: Client, game_id: str, revision: int, seat: int | None) -> list[Message]:
    """The watch stream from `revision` as `seat` (None: a spectator) reads it, up to the
    first heartbeat (the stream has caught up)."""
    watched: list[Message] = []
    for item in client.watch(game_id, revision, seat=seat, heartbeat_seconds=1, timeout=30):
        if item.WhichOneof("item") == "heartbeat":
            return watched
        watched.append(item)
    raise AssertionError("no heartbeat in 30 s")


def _seen_by(client: Client, game_id: str, seat: int | None) -> list[object]:
    """Everything a spectator (None) or a seat reads of the game: the replay, the watch
    stream, the audit, its state and the legal moves (or their refusal)."""
    seen: list[object] = [*client.replay(game_id, seat=seat), client.state(game_id, seat=seat)]
    seen += _watched(client, game_id, 1, seat)
    seen += client.audit(game_id, viewer=client.viewer(seat))
    try:
        seen += client.legal_moves(game_id, viewer=client.viewer(seat))[1]
    except TablelogError as refused:  # what the seat to move may do would tell its reserve
        seen.append(refused)
    return seen


def test_a_blind_reserve_names_its_card_only_to_its_holder_until_it_is_bought(
    server: BackgroundServer, client: Client
) -> None:
    """Splendor RULES.md §4C-§4D: a card reserved blind is its holder's secret until it is
    bought face up; `buy h1` then names it (`buy h1 (1g0:w1u1r1k2)`) to every viewer."""
    game_id = new_game(server, "--mode", "dealt")
    client.record(game_id, "reserve 1.deck")  # Ann's; the server deals the card face down
    spectator = client.viewer()
    frames = list(client.replay(game_id, seat=None))
    assert all(frame.detail == "" for frame in frames)
    entries = client.audit(game_id, viewer=spectator)
    assert any("reserve 1.deck (recorded by" in entry.summary for entry in entries)
    assert all(entry.detail == "" for entry in entries)
    held = client.state(game_id, full=True).view.splendor.players[0].reserved[0]
    card = held.card.text
    assert re.fullmatch(r"1[wugrk]\d:(?:[wugrk]\d)+", card)
    # Gems taken until Ann can buy it: Ann takes the colours of its cost, Bob the others
    # (whatever the deal, she can within a few turns).
    needed = set(card.split(":")[1][::2])
    for _turn in range(40):
        to_move, legal = client.legal_moves(game_id, viewer=client.viewer(full=True))
        texts = [move.notation for move in legal]
        if to_move.seat == 0 and "buy h1" in texts:
            break
        takes = [text for text in texts if text.startswith("take ") and len(text) == 10]
        if not takes:
            client.record(game_id, texts[0])  # (a return of tokens, say)
            continue
        sign = 1 if to_move.seat == 0 else -1
        client.record(game_id, max(takes, key=lambda t: sign * len(needed & set(t.split()[1:]))))
    else:
        raise AssertionError("Ann could not buy her blind reserve in 40 turns")
    for seat in (None, 1):
        assert not _names(card, *_seen_by(client, game_id, seat)), seat
    _, own = client.legal_moves(game_id, viewer=client.viewer(0))
    offered = next(move for move in own if move.notation == "buy h1")
    assert offered.detail == card  # the holder sees what she buys
    assert _names(card, client.state(game_id, seat=0))

    revision = client.record(game_id, "buy h1").events[0].revision
    for seat in (None, 1):
        (frame,) = client.replay(game_id, revision, revision, seat=seat)
        assert frame.detail == card
        assert frame.event.move_recorded.notation == "buy h1"
        audit = client.audit(game_id, viewer=client.viewer(seat))
        assert any(entry.detail == card for entry in audit)
        assert _names(card, *_watched(client, game_id, revision, seat))
    history = tablelog(server, "history", game_id).stdout
    assert f"buy h1 ({card})" in history
    # A face-up reserve names the card it took: every viewer saw it on the table.
    _, legal = client.legal_moves(game_id, viewer=client.viewer(full=True))
    face_up = next(m.notation for m in legal if re.fullmatch(r"reserve 1\.[1-4]", m.notation))
    take = client.record(game_id, face_up)
    replayed = list(
        client.replay(game_id, take.events[0].revision, take.events[0].revision, seat=None)
    )
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
