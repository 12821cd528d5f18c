"""`tablelog amend`, `insert` and `delete`: a move in the middle of a game corrected with
one command, the answer naming who moved and what changed; a refusal names the first later
move that no longer applies and its rule."""

from __future__ import annotations

import pytest

from tablelog.replay.core import CHANCE
from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import tablelog
from tests.service.test_amend import (
    DELETION_SEED,
    PLAYERS,
    find_deletion,
    find_insertion,
    find_replacement,
    record_fresh,
    recorded,
)

pytestmark = pytest.mark.slow


def _mover(line: list[str], index: int) -> str:
    return PLAYERS[record_fresh(line[:index]).position.to_move()]


def _number(line: list[str], index: int) -> int:
    """The number the text record gives the player's move at `index` of `line` (the
    table's reveals not counted)."""
    position = record_fresh(line[: index + 1]).position
    return position.move_count - position.chance_count


def _move_words(line: list[str], index: int) -> str:
    """The move at `index` of `line` with who made it: "Bob's take w u g", "the table's
    reveal ..."."""
    who = record_fresh(line[:index]).position.to_move()
    return f"{'the table' if who == CHANCE else PLAYERS[who]}'s {line[index]}"


def test_amend_names_who_moved_and_what_changed(server: BackgroundServer, client: Client) -> None:
    game_id, _version, line = recorded(client)
    case = find_replacement(line, breaks=False)
    assert case.notation is not None
    revision = case.index + 2
    done = tablelog(
        server, "amend", game_id, str(revision), *case.notation.split(), "--reason", "typo"
    )
    mover = _mover(line, case.index)
    number = _number(line, case.index)
    assert (
        f"amended {number}. {mover}'s {line[case.index]} (revision {revision}) → "
        f"{case.notation} (typo)" in done.stdout
    )
    assert client.state(game_id, full=True).moves[case.index] == case.notation


def test_a_refusal_names_the_first_breaking_move_and_its_rule(
    server: BackgroundServer, client: Client
) -> None:
    game_id, version, line = recorded(client)
    case = find_replacement(line, breaks=True)
    assert case.notation is not None
    assert case.fresh.refusal is not None
    breaking = case.fresh.applied
    done = tablelog(server, "amend", game_id, str(case.index + 2), case.notation, ok=False)
    assert done.returncode == 1
    assert f"revision {breaking + 2}, {_move_words(line, breaking)}, no longer" in done.stderr
    assert "AMEND_BREAKS_LATER_MOVE" in done.stderr
    assert f"rule={case.fresh.refusal.code}" in done.stderr
    assert client.get_game(game_id).version == version

    dropped = tablelog(server, "amend", game_id, str(case.index + 2), case.notation, "--drop-tail")
    count = len(case.corrected) - breaking
    assert f"dropped {count} later move" in dropped.stdout
    assert client.get_game(game_id).move_count == breaking


def test_insert_and_delete(server: BackgroundServer, client: Client) -> None:
    game_id, _version, line = recorded(client)
    case = find_insertion(line)
    assert case.notation is not None
    done = tablelog(server, "insert", game_id, str(case.index + 2), case.notation)
    mover = _mover(line, case.index)
    assert (
        f"inserted {mover}'s {case.notation} before {_number(line, case.index)}. {mover}'s "
        f"{line[case.index]} (revision {case.index + 2})" in done.stdout
    )

    game_id, _version, line = recorded(client, DELETION_SEED)
    case = find_deletion(line, breaks=False)
    done = tablelog(server, "delete", game_id, str(case.index + 2), "--reason", "never played")
    mover = _mover(line, case.index)
    assert (
        f"deleted {_number(line, case.index)}. {mover}'s {line[case.index]} "
        f"(revision {case.index + 2}) (never played)" in done.stdout
    )
    assert list(client.state(game_id, full=True).moves) == case.corrected
