"""Snapshots (`tablelog.replay.snapshots`): every game's position, at every point of random
histories with undos, redos, amendments and annotations, and of finished games in each mode, reads
back as the same position, sharing what it shared, and folding on from it gives what folding on from
the original gives. Bytes that are not a snapshot are refused, and a snapshot never makes a reader
build anything but the rules' own values."""

from __future__ import annotations

import json

import pytest

from tablelog.replay import fold as folding
from tablelog.replay import snapshots
from tablelog.replay.registry import all_games
from tests.support.histories import players_of, random_history
from tests.support.play import created, events_of, random_game

GAMES = sorted(all_games())


@pytest.mark.parametrize("name", GAMES)
def test_every_position_of_a_history_reads_back_the_same(name: str) -> None:
    events = random_history(name, 160, seed=11)
    position = folding.start(events[0].game_created)
    table = folding.Table.from_created(events[0].game_created)  # a reader's own table
    for index, event in enumerate(events[1:], start=1):
        position = folding.advance(position, event)
        if index % 5:
            continue
        data = snapshots.encode(position)
        back = snapshots.decode(table, data)
        assert snapshots.same_position(back, position), event.sequence
        assert back.table is table
        assert snapshots.encode(back) == data  # canonical for a position read back
        # Shared as the fold shares it: the state is its last move's `after`.
        if position.applied is not None and position.applied.head.after is position.state:
            assert back.applied is not None
            assert back.applied.head.after is back.state
        # Folding on from the copy is folding on from the original.
        ahead, copied = position, back
        for later in events[index + 1 : index + 12]:
            ahead, copied = folding.advance(ahead, later), folding.advance(copied, later)
            assert snapshots.same_position(copied, ahead), later.sequence


@pytest.mark.parametrize("name", GAMES)
def test_finished_games_in_every_mode_read_back_the_same(name: str) -> None:
    game = all_games()[name]
    for mode in game.modes:
        played = random_game(name, players_of(name), seed=4, mode=mode)
        body = created(name, players_of(name), mode=mode)
        position = folding.fold(events_of(body, played.moves, played.notations))
        back = snapshots.decode(folding.Table.from_created(body), snapshots.encode(position))
        assert snapshots.same_position(back, position)
        assert back.state == played.position.state


def _snapshot_of_splendor() -> tuple[folding.Table, list[object]]:
    events = random_history("splendor", 30, seed=1)
    position = folding.fold(events)
    return position.table, json.loads(snapshots.encode(position))


def _refused(table: folding.Table, document: object) -> str:
    with pytest.raises(snapshots.Undecodable) as refused:
        snapshots.decode(table, json.dumps(document).encode())
    return str(refused.value)


def test_bytes_that_are_not_a_snapshot_are_refused() -> None:
    table, document = _snapshot_of_splendor()
    for damaged in (b"", b"{", b"[1]", b"[2, [], 0]", b"\xff\xfe", b'[1, [], ["x"]]'):
        with pytest.raises(snapshots.Undecodable):
            snapshots.decode(table, damaged)
    _, classes, root = document
    assert isinstance(classes, list)
    assert isinstance(root, list)
    # A reference to nothing written yet, a class number past the list.
    assert "reference" in _refused(table, [1, classes, ["r", 10**6]])
    assert "class number" in _refused(table, [1, classes, ["D", 999]])
    # Deeply nested lists: refused, not a crash of the reader.
    depth = 100_000
    deep = b"[1, [], " + b'["t", ' * depth + b"0" + b"]" * depth + b"]"
    with pytest.raises(snapshots.Undecodable):
        snapshots.decode(table, deep)
    assert _refused(table, [1, classes, 5])  # not a position


@pytest.mark.parametrize(
    "name",
    [
        "os:system",
        "builtins:eval",
        "subprocess:Popen",
        "tablelog.replay.fold:fold",  # a function of the rules, not a value class
        "tablelog.replay.fold:Link.__init__",
        "tablelog.replay.fold:Missing",
        "tablelog.v1.nothing:Else",
    ],
)
def test_a_snapshot_cannot_name_anything_but_a_value_class_of_the_rules(name: str) -> None:
    table, document = _snapshot_of_splendor()
    _, classes, root = document
    assert isinstance(classes, list)
    message = _refused(table, [1, [*classes[:-1], name], root])
    assert "not a" in message


def test_a_position_holding_a_value_outside_the_rules_is_not_written() -> None:
    events = random_history("medici", 10, seed=2)
    position = folding.fold(events)
    odd = folding.Position(
        position.table, state=object(), revision=position.revision, sequence=position.sequence
    )
    with pytest.raises(snapshots.Unencodable):
        snapshots.encode(odd)
    mixed = folding.Position(position.table, state=frozenset({1, "a"}), revision=1, sequence=1)
    with pytest.raises(snapshots.Unencodable):
        snapshots.encode(mixed)


def test_a_tables_initial_state_is_numbered_once_and_the_tables_kept_are_bounded() -> None:
    events = random_history("splendor", 12, seed=3)
    position = folding.fold(events)
    data = snapshots.encode(position)
    numbered = snapshots._numbered(position.table)
    assert snapshots._numbered(position.table)[1] is numbered[1]  # walked once, kept
    assert numbered[0] == snapshots._context(position.table)
    # Another table from the same GameCreated: numbered on its own, read back alike.
    other = folding.Table.from_created(events[0].game_created)
    assert snapshots._numbered(other)[1] is not numbered[1]
    assert snapshots.encode(snapshots.decode(other, data)) == data
    for _ in range(snapshots.CONTEXTS_KEPT + 1):
        snapshots._numbered(folding.Table.from_created(events[0].game_created))
    assert len(snapshots._CONTEXTS) <= snapshots.CONTEXTS_KEPT
    assert snapshots.encode(position) == data  # the table dropped is numbered again, alike
