"""ExportRecord and ImportRecord through the live gRPC API (docs/record-format.md): every
game recorded at the table, exported as text and imported, is the same game at every
revision with the same annotations; a record with variations imports and exports again
unchanged; malformed records are refused at their line and column and store nothing; an
export never shows a move its caller may not see."""

from __future__ import annotations

import random
import re
from typing import Any

import grpc
import pytest

from tablelog.replay import fold as folding
from tablelog.replay import record
from tablelog.replay.core import DEALT
from tablelog.replay.registry import all_games
from tablelog.service.limits import MAX_RECORD_TAGS, MAX_VARIATION_DEPTH
from tablelog.v1 import game_pb2, service_pb2
from tablelog_client import Client, TablelogError
from tests.support.play import created, random_game
from tests.support.records import PLAYERS, annotated_game, random_line

pytestmark = pytest.mark.slow

GAMES = sorted(all_games())


def _by_revision(client: Client, game_id: str) -> dict[int, tuple[bytes, ...]]:
    """The full state after each revision (the last event of each), as ReplayGame gives it."""
    states: dict[int, tuple[bytes, ...]] = {}
    for item in client.replay(game_id, full=True):
        state = item.state
        states[state.revision] = (
            state.view.SerializeToString(deterministic=True),
            state.to_move.SerializeToString(deterministic=True),
            state.result.SerializeToString(deterministic=True),
            "\n".join(state.moves).encode(),
        )
    return states


def _notes(client: Client, game_id: str) -> list[tuple[int, str, str, bytes]]:
    return sorted(
        (n.revision, n.comment, n.glyph, n.variation.SerializeToString(deterministic=True))
        for n in client.annotations(game_id)
    )


def _game_ids(client: Client) -> set[str]:
    return {game.game_id for game in client.list_games()}


def _try_variation(client: Client, game_id: str, revision: int, line: Any) -> None:
    """Add an annotation carrying a variation, if this server takes variations by
    AddAnnotation (the variations change); the round trip then has to carry it."""
    request = service_pb2.AddAnnotationRequest(
        game_id=game_id,
        revision=revision,
        comment="what if",
        glyph="?!",
        variation=line,
        request_id=client.request_id(),
    )
    try:
        client.stub.AddAnnotation(request, metadata=client.metadata)
    except Exception:
        return


@pytest.mark.parametrize("name", GAMES)
def test_every_game_recorded_exported_as_text_and_imported_is_the_same_game(
    client: Client, name: str
) -> None:
    rules = all_games()[name]
    players = PLAYERS[: max(rules.min_players, 2)]
    played = random_game(name, len(players), seed=21)
    game_id = client.create_game(name, players).game_id
    position = folding.start(created(name, players))
    for index, notation in enumerate(played.notations):
        before = position
        position = folding.record(position, played.moves[index], notation)
        client.record(game_id, notation)
        if index % 9 == 4:
            client.annotate(game_id, f"move {index}: {{why}}", glyph="!?")
            client.annotate(game_id, "and a second thought")
        if index == 7:
            _try_variation(
                client,
                game_id,
                position.revision,
                random_line(before.table, before.state, random.Random(5), 3),
            )
    assert client.get_game(game_id).status == service_pb2.GAME_STATUS_ENDED
    text = client.export_record([game_id])
    (imported,) = client.import_record(text, source="club.txt")
    assert _by_revision(client, imported.game_id) == _by_revision(client, game_id)
    assert _notes(client, imported.game_id) == _notes(client, game_id)
    assert client.export_record([imported.game_id]) == text
    events = client.export(imported.game_id)
    assert all(e.imported.source == "club.txt" and not e.imported.verified for e in events)
    assert client.verify(imported.game_id).ok


@pytest.mark.parametrize("name", GAMES)
def test_a_record_with_variations_imports_and_exports_unchanged(client: Client, name: str) -> None:
    position, notes = annotated_game(name, seed=9)
    text = record.write([record.record_of(position, notes, {"Event": "Club night"})])
    (imported,) = client.import_record(text)
    exported = client.export_record([imported.game_id])
    # Everything comes back as written, the descriptive tags included.
    assert exported == text
    listed = client.annotations(imported.game_id)
    assert sum(len(n.variation.moves) > 0 for n in listed) == sum(
        len(n.variation.moves) > 0 for n in notes
    )


def _splendor_lines() -> str:
    played = random_game("splendor", 2, 5)
    position = folding.start(created("splendor", ["Ann", "Bob"]))
    lines = []
    for move, notation in zip(played.moves, played.notations, strict=True):
        if position.to_move() >= 0:
            break
        lines.append(f"* {notation}")
        position = folding.record(position, move, notation)
    return "\n".join([*lines, "1. Ann: take w u g", "2. Bob: take k r u"]) + "\n"


def test_a_malformed_record_is_refused_at_its_line_and_column_and_stores_nothing(
    client: Client,
) -> None:
    moves = _splendor_lines()
    good = '[Game "splendor"]\n[Players "Ann; Bob"]\n\n' + moves
    last = moves.splitlines()[-1]
    bad_variation = good.replace(last, f"{last} (2. Bob: take k k (2. Bob: take g g))")
    second_line = good.count("\n") + 1 + bad_variation.count("\n")  # after a blank line
    cases = [
        (good + "\n" + bad_variation, "TAKE_TWO_NEEDS_FOUR", second_line),
        (good + "3. Ann: buy 3.1\n", "BUY_UNAFFORDABLE", good.count("\n") + 1),
        (good + "{no end\n", "UNBALANCED_BRACE", good.count("\n") + 1),
        (good + "(2. Bob: take w u g\n", "UNBALANCED_PAREN", good.count("\n") + 1),
        ('[Game "splendor"\n', "BAD_TAG", 1),
        (
            "".join(f'[Tag{n} "x"]\n' for n in range(MAX_RECORD_TAGS + 1)) + good,
            "TOO_MANY_TAGS",
            MAX_RECORD_TAGS + 1,
        ),
    ]
    before = _game_ids(client)
    for text, rule, line in cases:
        with pytest.raises(TablelogError) as refused:
            client.import_record(text)
        error = refused.value
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert error.reason == "INVALID_RECORD"
        assert error.metadata["rule"] == rule, error.message
        assert error.metadata["line"] == str(line), error.message
        assert error.message.startswith(f"Line {line}, column {error.metadata['column']}: ")
    assert _game_ids(client) == before


def test_an_export_shows_no_move_its_caller_may_not_see(client: Client) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    response = client.record(game.game_id, "reserve 1.deck", expected_version=game.version)
    secret = next(e for e in response.events if e.move_recorded.dealt).move_recorded.notation
    as_spectator = client.export_record([game.game_id], viewer=service_pb2.Viewer(spectator=True))
    assert secret not in as_spectator
    assert f"* {record.HIDDEN}\n" in as_spectator
    assert "1. Ann: reserve 1.deck\n" in as_spectator
    as_ann = client.export_record([game.game_id], viewer=service_pb2.Viewer(seat=0))
    assert f"* {secret}\n" in as_ann
    with pytest.raises(TablelogError) as refused:
        client.import_record(as_spectator)
    assert refused.value.metadata["rule"] == "HIDDEN_MOVE"


def test_an_export_by_filter_holds_the_clubs_games_of_that_type(client: Client) -> None:
    position, notes = annotated_game("medici-card-game", seed=4)
    text = record.write([record.record_of(position, notes)])
    client.import_record(text)
    client.create_game("splendor", ["Ann", "Bob"])
    selected = client.export_record(game="medici-card-game", status="ended")
    games = record.read(selected)
    assert {g.created.game for g in games} == {"medici-card-game"}
    assert text in selected


def test_an_export_of_an_unknown_game_is_not_found(client: Client) -> None:
    with pytest.raises(TablelogError) as refused:
        client.export_record(["no-such-game"])
    assert refused.value.code == grpc.StatusCode.NOT_FOUND


def test_a_dealt_games_record_imports_as_a_table_game(client: Client) -> None:
    """Dealt mode's chance moves follow its seed, which the text does not hold: the record
    imports as a table game, what was dealt becoming the table's reveals (a blind reserve's
    card named when it is bought), and says where it came from (issue 26)."""
    played = random_game("splendor", 2, 5, mode=DEALT)  # seed 5 buys a blind reserve
    text = record.write([record.record_of(played.position)])
    assert '[Mode "dealt"]' in text
    imported = client.import_record(text)
    game = client.get_game(imported[0].game_id)
    assert game.mode == game_pb2.MODE_TABLE
    assert game.status == service_pb2.GAME_STATUS_ENDED
    result = played.position.game.result(played.position.state)
    assert list(game.result.winners) == list(result.winners)
    assert [s.total for s in game.result.scores] == [s.total for s in result.scores]
    written = client.export_record([game.game_id])
    assert '[Mode "table"]' in written
    assert '[DealtGame "dealt by a server; imported as a table game"]' in written
    # The blind reserves' deals are not a table's moves; every other move is kept.
    assert game.player_move_count == sum(
        1 for line in text.splitlines() if re.match(r"\d+\. ", line)
    )
    # The blind reserve bought names its card, as the table names it when it comes to light
    # (Splendor RULES.md §4D): the dealt record's `buy h1` is the table's `buy h1 1g0:…`.
    (exported,) = record.read(written)
    dealt_buys = [n for n in played.notations if re.match(r"buy h\d", n)]
    table_buys = [m.notation for m in exported.moves if re.match(r"buy h\d", m.notation)]
    named = [n for n in table_buys if re.match(r"buy h\d [123][wugrk]\d+:", n)]
    assert named
    assert not any(re.match(r"buy h\d [123][wugrk]\d+:", n) for n in dealt_buys)
    assert [re.sub(r" [123][wugrk]\d+:\S+", "", n) for n in table_buys] == dealt_buys


def test_a_dealt_castello_record_imports_as_a_table_game(client: Client) -> None:
    """Castello Methoni (issue 26): the dealt record holds every mission and card the server
    dealt; imported, the hands and draws are left out, the missions come to light at the
    final scoring as a table records them, the result is the dealt game's, and the game says
    it came from a dealt game."""
    played = random_game("castello-methoni", 3, 1, mode=DEALT)
    text = record.write([record.record_of(played.position)])
    (imported,) = client.import_record(text)
    game = client.get_game(imported.game_id)
    assert game.mode == game_pb2.MODE_TABLE
    assert game.status == service_pb2.GAME_STATUS_ENDED
    result = played.position.game.result(played.position.state)
    assert list(game.result.winners) == list(result.winners)
    assert [s.total for s in game.result.scores] == [s.total for s in result.scores]
    written = client.export_record([game.game_id])
    assert '[DealtGame "dealt by a server; imported as a table game"]' in written
    missions = [n for n in played.notations if n.startswith("mission ")]
    assert written.rstrip().splitlines()[-3:] == [f"* {m}" for m in missions]
    assert not re.search(r"^\* draw ", written, re.MULTILINE)
    assert client.verify(game.game_id).ok


def test_the_record_holds_the_moves_in_effect_not_the_history(client: Client) -> None:
    """Undone and amended moves, and the annotations on a move an amendment took out, are
    history: the strict archive keeps them, the record does not."""
    game_id = client.create_game("medici-card-game", ["Ann", "Bob"]).game_id
    played = random_game("medici-card-game", 2, 8)
    for notation in played.notations[:6]:
        client.record(game_id, notation)
    client.undo(game_id)
    client.record(game_id, played.notations[5])
    first_player_move = next(
        e.revision
        for e in client.export(game_id)
        if e.WhichOneof("body") == "move_recorded" and e.move_recorded.notation == "flip"
    )
    client.annotate(game_id, "kept", revision=first_player_move)
    client.amend(game_id, first_player_move, "flip")  # the same move: the tail stays
    text = client.export_record([game_id])
    (game,) = record.read(text)
    assert [m.notation for m in game.moves] == played.notations[:6]
    assert "kept" not in text  # its move was replaced by the amendment
    (imported,) = client.import_record(text)
    assert (
        _by_revision(client, imported.game_id)[7]
        == _by_revision(client, game_id)[max(_by_revision(client, game_id))]
    )


def test_an_abandoned_game_keeps_its_reason_through_the_record(client: Client) -> None:
    game_id = client.create_game("splendor", ["Ann", "Bob"]).game_id
    for notation in random_game("splendor", 2, 6).notations[:20]:
        client.record(game_id, notation)
    client.abandon(game_id, reason="closing time")
    text = client.export_record([game_id])
    assert '[Abandoned "closing time"]' in text
    (imported,) = client.import_record(text)
    assert imported.status == service_pb2.GAME_STATUS_ABANDONED
    assert client.export_record([imported.game_id]) == text


def test_variations_as_deep_as_a_record_reads_are_imported_and_deeper_is_refused_at_its_line(
    client: Client,
) -> None:
    """The reader's bound is AddAnnotation's: whatever a record reads, the import stores."""
    assert record.MAX_DEPTH == MAX_VARIATION_DEPTH
    head = '[Game "splendor"]\n[Players "Ann; Bob"]\n\n' + _splendor_lines()

    def nested(depth: int) -> str:
        return "(2. Bob: take w u r " * depth + ")" * depth + "\n"

    (game,) = client.import_record(head + nested(record.MAX_DEPTH))
    (note,) = client.annotations(game.game_id)
    line = note.variation
    for _ in range(record.MAX_DEPTH - 1):
        line = line.moves[0].variations[0]
    assert line.moves[0].notation == "take w u r"
    before = _game_ids(client)
    with pytest.raises(TablelogError) as deeper:
        client.import_record(head + nested(record.MAX_DEPTH + 1))
    assert deeper.value.reason == "INVALID_RECORD"
    assert "VARIATION_TOO_DEEP" in deeper.value.metadata.values(), deeper.value.metadata
    assert deeper.value.metadata["line"]
    assert _game_ids(client) == before
