"""The text record (replay/record.py, docs/record-format.md): every game written and read
back gives the same moves, states and annotations; malformed text is refused at its line
and column; the documentation's examples read."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay import record
from tablelog.replay.core import CHANCE
from tablelog.replay.registry import all_games
from tablelog.v1 import events_pb2
from tests.support.play import created, random_game
from tests.support.records import annotated_game

ROOT = Path(__file__).resolve().parents[2]
GAMES = sorted(all_games())


def _notes_by_move(
    position: folding.Position, notes: list[events_pb2.AnnotationAdded]
) -> list[list[tuple[str, str, bytes]]]:
    revisions = [applied.revision for applied in position.moves()]
    return [
        [
            (n.comment, n.glyph, n.variation.SerializeToString(deterministic=True))
            for n in notes
            if n.revision == revision
        ]
        for revision in revisions
    ]


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_random_game_written_and_read_back_is_the_same_game(name: str, seed: int) -> None:
    position, notes = annotated_game(name, seed)
    text = record.write([record.record_of(position, notes, {"Event": "Club night"})])
    (back,) = record.read(text)
    expected = events_pb2.GameCreated()
    expected.CopyFrom(position.table.created)
    expected.ClearField("game_id")  # the importing server names the game
    expected.rules_version = position.game.rules_version
    getattr(expected.options, position.game.oneof_field).SetInParent()
    expected.record_tags.add(name="Event", value="Club night")
    assert back.created == expected
    assert [m.move for m in back.moves] == [a.move for a in position.moves()]
    assert [m.notation for m in back.moves] == [a.notation for a in position.moves()]
    assert back.status is folding.Status.ENDED
    assert back.result == position.result
    read_notes = [
        [(n.comment, n.glyph, n.variation.SerializeToString(deterministic=True)) for n in m.notes]
        for m in back.moves
    ]
    assert read_notes == _notes_by_move(position, notes)
    # The events the record stands for fold to the same state at every revision.
    events = record.events_of(back)
    replayed = folding.start(events[0].game_created)
    for event, applied in zip(events[1:], position.moves(), strict=False):
        replayed = folding.advance(replayed, event, strict=True)
        assert replayed.state == applied.after
    # Written again, the text is the same: the format has one way to write a game.
    again = record.write([back])
    assert again == text


def test_many_games_in_one_text_read_in_order() -> None:
    first, _ = annotated_game("splendor", 3)
    second, _ = annotated_game("medici", 3)
    text = record.write([record.record_of(first), record.record_of(second)])
    games = record.read(text)
    assert [g.created.game for g in games] == ["splendor", "medici"]
    assert [len(g.moves) for g in games] == [first.move_count, second.move_count]


def _start_of_splendor() -> str:
    """The first lines of a real splendor game: the setup reveals of a seeded game, then
    two moves typed by hand."""
    played = random_game("splendor", 2, 5)
    position = folding.start(created("splendor", ["Ann", "Bob"]))
    lines = []
    for move, notation in zip(played.moves, played.notations, strict=True):
        if position.to_move() != CHANCE:
            break
        lines.append(f"* {notation}")
        position = folding.record(position, move, notation)
    return "\n".join([*lines, "1. Ann: take w u g", "2. Bob: take k r u"]) + "\n"


def test_a_hand_written_record_is_read_leniently() -> None:
    moves = _start_of_splendor()
    first_move = moves
    # Extra whitespace, a comment between the tags and the moves, bare notation with no
    # number or name, a `;` comment to the end of the line, a numeric glyph.
    loose = first_move.replace("1. Ann: ", "1.   ").replace("* ", "*   ")
    text = (
        '[Game  "Splendor"]\n[Players "ann;bob"]\n{before anything}\n'
        + loose.replace("\n", "  ; typed at the table\n", 1)
        + " $5 {good}"
    )
    (game,) = record.read(text)
    assert [(n.comment, n.glyph) for n in game.opening] == [("before anything", "")]
    assert game.moves[-1].notes[0].glyph == "!?"
    assert game.moves[-1].notes[0].comment == "good"
    assert game.created.players[0].name == "ann"


def _refusal(text: str) -> record.RecordError:
    with pytest.raises(record.RecordError) as refused:
        record.read(text)
    return refused.value


def test_malformed_records_are_refused_at_their_line_and_column() -> None:
    moves = _start_of_splendor()
    head = '[Game "splendor"]\n[Players "Ann; Bob"]\n\n'
    after = len(moves.splitlines()) + 4  # the line after the moves
    tags = '[Game "splendor"]\n[Players "Ann; Bob"]\n'
    cases: list[tuple[str, str, int, int]] = [
        ('[Game "splendor"\n', "BAD_TAG", 1, 1),
        ('[Game "splendor"]\n[Players "Ann; Bob"]\n[Game "medici"]\n', "DUPLICATE_TAG", 3, 1),
        ('[Game "chess"]\n[Players "Ann; Bob"]\n', "UNKNOWN_GAME", 1, 1),
        ('[Game "splendor"]\n', "MISSING_TAG", 1, 1),
        ('[Game "splendor"]\n[Players "Ann; Bob"]\n[Mode "online"]\n', "BAD_TAG", 3, 1),
        (tags + '[Option "colour=red"]\n', "BAD_OPTION", 3, 1),
        (head + moves + "{never closed\n", "UNBALANCED_BRACE", after, 1),
        (
            head + moves + " (2. Bob: take w u g\n",
            "UNBALANCED_PAREN",
            after,
            2,
        ),
        (head + moves + ")\n", "UNBALANCED_PAREN", after, 1),
        (head + moves + "}\n", "UNBALANCED_BRACE", after, 1),
        (head + "1. Ann: take w u g\n", "REVEAL_PENDING", 4, 1),
        (head + moves + " (! 2. Bob: take w u g)\n", "NOTHING_TO_ANNOTATE", after, 3),
        ("1. Ann: take\n", "NO_TAGS", 1, 1),
        (head + moves + "?!!\n", "BAD_GLYPH", after, 1),
        (head + moves.replace("1. Ann:", "1. Bob:"), "NOT_YOUR_TURN", 0, 1),
        (head + moves.replace("1. Ann:", "1. Zed:"), "INVALID_NOTATION", 0, 1),
        (
            '[Game "splendor"]\n[Players "Ann; Bob"]\n[Result "Ann 3; Bob 0"]\n',
            "WRONG_RESULT",
            3,
            1,
        ),
    ]
    for text, code, line, column in cases:
        refused = _refusal(text)
        assert refused.code == code, (text, refused.message)
        if line:
            assert (refused.line, refused.column) == (line, column), (text, refused.message)
        assert refused.message.startswith(f"Line {refused.line}, column {refused.column}: ")


def test_an_illegal_move_in_the_main_line_or_a_variation_names_it_and_the_rule() -> None:
    moves = _start_of_splendor()
    lines = moves.splitlines()
    head = '[Game "splendor"]\n[Players "Ann; Bob"]\n\n'
    # The main line: Ann buys a card she cannot pay for.
    refused = _refusal(head + moves + "3. Ann: buy 3.1\n")
    assert (refused.line, refused.column) == (len(lines) + 4, 1)
    assert "'Ann: buy 3.1'" in refused.message
    # A variation nested two deep: Bob's second alternative takes two green, which the
    # bank no longer has four of once Ann took one.
    last = lines[-1]
    variation = f"{last} (2. Bob: take k k (2. Bob: take g g))\n"
    refused = _refusal(head + "\n".join(lines[:-1]) + "\n" + variation)
    assert refused.line == len(lines) + 3
    assert refused.column == variation.index("2. Bob: take g g") + 1
    assert "'Bob: take g g'" in refused.message


def test_a_hidden_move_is_written_but_never_read_as_a_move() -> None:
    position, _ = annotated_game("splendor", 4)
    chance = {a.revision for a in position.moves() if a.chance}
    text = record.write([record.record_of(position, visible=lambda a: a.revision not in chance)])
    assert "* hidden" in text
    refused = _refusal(text)
    assert refused.code == "HIDDEN_MOVE"


def test_a_component_not_shipped_is_embedded_and_checked_by_its_hash() -> None:
    rules = all_games()["splendor"]
    components = list(rules.default_components())
    changed = components[0].__class__()
    changed.CopyFrom(components[0])
    changed.approximate_note = "our printing"
    body = created("splendor", ["Ann", "Bob"], components=[changed, *components[1:]])
    position = folding.start(body)
    text = record.write([record.record_of(position)])
    assert text.count(" file=") == 1
    (back,) = record.read(text)
    assert list(back.created.components) == [changed, *components[1:]]
    tampered = re.sub(r"sha256=[0-9a-f]{4}", "sha256=0000", text, count=1)
    assert _refusal(tampered).code == "COMPONENT_HASH"


def _doc_examples() -> list[str]:
    doc = (ROOT / "docs" / "record-format.md").read_text(encoding="utf-8")
    return re.findall(r"```record\n(.*?)```", doc, flags=re.DOTALL)


def test_every_example_in_the_documentation_reads() -> None:
    examples = _doc_examples()
    games = {g.created.game for text in examples for g in record.read(text)}
    assert games == set(GAMES)


def test_the_documented_example_games_were_written_by_the_writer() -> None:
    """Each game's example is a real record: reading and writing it gives it back."""
    for text in _doc_examples():
        games = record.read(text)
        assert record.write(games) == text


def test_variations_nest_deep_but_not_without_bound() -> None:
    moves = _start_of_splendor()
    head = '[Game "splendor"]\n[Players "Ann; Bob"]\n\n'

    def nested(depth: int) -> str:
        return "(2. Bob: take w u r " * depth + ")" * depth

    (game,) = record.read(head + moves + nested(record.MAX_DEPTH))
    variation = game.moves[-1].notes[0].variation
    for _ in range(record.MAX_DEPTH - 1):
        variation = variation.moves[0].variations[0]
    assert variation.moves[0].notation == "take w u r"
    refused = _refusal(head + moves + nested(record.MAX_DEPTH + 1))
    assert refused.code == "VARIATION_TOO_DEEP"


def test_players_and_comments_with_the_formats_own_characters_read_back() -> None:
    players = ["Dr: No", 'Ann "the; fox"']
    played = random_game("splendor", 2, 8)
    position = folding.start(created("splendor", players))
    for move, notation in zip(played.moves[:20], played.notations[:20], strict=True):
        position = folding.record(position, move, notation)
    note = events_pb2.AnnotationAdded(
        revision=position.revision, comment="a } and a \\ at the end \\", glyph="!"
    )
    text = record.write([record.record_of(position, [note])])
    assert "Dr: No: " in text
    assert '"the' not in text.split("\n\n", 1)[1]  # a name with a `;` is left out of the moves
    (back,) = record.read(text)
    assert [p.name for p in back.created.players] == players
    assert back.moves[-1].notes[0].comment == note.comment
    assert [m.move for m in back.moves] == [a.move for a in position.moves()]


def test_a_record_past_its_bounds_is_refused_before_any_rule_is_applied() -> None:
    position, _ = annotated_game("medici", 1)
    one = record.write([record.record_of(position)])
    three = "\n".join([one] * 3)
    assert len(record.read(three, max_games=3)) == 3
    refused = _refusal_of(lambda: record.read(three, max_games=2))
    assert refused.code == "TOO_MANY_GAMES"
    assert refused.line == 2 * one.count("\n") + 3
    moves = position.move_count
    assert len(record.read(one, max_moves=moves)) == 1
    assert _refusal_of(lambda: record.read(one, max_moves=moves - 1)).code == "TOO_MANY_MOVES"


def _refusal_of(reading: Callable[[], object]) -> record.RecordError:
    with pytest.raises(record.RecordError) as refused:
        reading()
    return refused.value


def test_descriptive_tags_are_kept_in_their_order_and_written_back() -> None:
    position, _ = annotated_game("medici-card-game", 2)
    text = record.write([record.record_of(position)])
    tags = '[Round "3"]\n[Club "Lisbon \\"Meeples\\""]\n[Annotator "Bob"]\n[Date "2026.12.01"]\n'
    tagged = text.replace("[Result ", tags + "[Result ", 1)
    (back,) = record.read(tagged)
    assert [(t.name, t.value) for t in back.created.record_tags] == [
        ("Round", "3"),
        ("Club", 'Lisbon "Meeples"'),
        ("Annotator", "Bob"),
        ("Date", "2026.12.01"),
    ]
    # Stored with the game, they are written back where they were, as they were.
    events = record.events_of(back)
    replayed = folding.fold(events)
    assert record.write([record.record_of(replayed)]) == tagged


def test_descriptive_tags_past_their_bounds_are_refused_before_any_move() -> None:
    position, _ = annotated_game("splendor", 3)
    text = record.write([record.record_of(position)])
    bounds = record.TagBounds(count=2, name=10, value=5)
    two = text.replace("[Result ", '[Event "Club"]\n[Site "Home"]\n[Result ', 1)
    assert len(record.read(two, tag_bounds=bounds)) == 1
    three = two.replace("[Result ", '[Round "1"]\n[Result ', 1)
    refused = _refusal_of(lambda: record.read(three, tag_bounds=bounds))
    assert refused.code == "TOO_MANY_TAGS"
    assert refused.line == three.splitlines().index('[Round "1"]') + 1
    long_value = text.replace("[Result ", '[Event "Thursday"]\n[Result ', 1)
    assert _refusal_of(lambda: record.read(long_value, tag_bounds=bounds)).code == "TAG_TOO_LONG"
    long_name = text.replace("[Result ", '[Tournament_Name "x"]\n[Result ', 1)
    assert _refusal_of(lambda: record.read(long_name, tag_bounds=bounds)).code == "TAG_TOO_LONG"
