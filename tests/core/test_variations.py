"""Variations checked by the rules core (`tablelog.replay.variations`): lines of legal alternatives
taken from random games of every game, nested lines, refusals naming the move by its path
and the rule, the hidden-information rule, and stepping into a line giving the states that
recording it in a fresh game gives."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    FULL,
    MESSAGE_LIMIT,
    SPECTATOR,
    TABLE,
    TERMINAL,
    IllegalMove,
    RulesError,
    clip,
)
from tablelog.replay.registry import all_games
from tablelog.replay.variations import (
    IllegalVariationMove,
    VariationRefused,
    check_variation,
    follow,
    line_text,
    start_before,
)
from tablelog.v1 import events_pb2, game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as mercado_pb2
from tests.support.play import choose, created, events_of, random_game

GAMES = sorted(all_games())
PLAYERS = 2
SEEDS = range(3)


def line_from(position: folding.Position, rng: random.Random, length: int) -> list[Message]:
    """Up to `length` random legal moves from `position` (fewer if the game ends)."""
    moves: list[Message] = []
    for _ in range(length):
        if position.to_move() == TERMINAL:
            break
        inner = choose(position.game, position.state, rng)
        moves.append(inner)
        position = folding.record(
            position, position.table.wrap(inner), position.game.format(inner, position.state)
        )
    return moves


def notations(position: folding.Position, moves: Sequence[Message]) -> list[str]:
    """Each move's canonical text in the position the moves before it lead to."""
    texts = []
    for inner in moves:
        texts.append(position.game.format(inner, position.state))
        position = folding.record(position, position.table.wrap(inner), texts[-1])
    return texts


def as_variation(texts: Sequence[str]) -> events_pb2.Variation:
    return events_pb2.Variation(moves=[events_pb2.VariationMove(notation=t) for t in texts])


def played(name: str, seed: int) -> tuple[list[events_pb2.Event], int]:
    """A random game's events and a random revision of one of its moves."""
    players = max(PLAYERS, all_games()[name].min_players)
    game = random_game(name, players, seed)
    events = events_of(created(name, players), game.moves, game.notations)
    rng = random.Random(seed)
    return events, rng.randrange(2, len(events) + 1)


def fresh_states(events: Sequence[events_pb2.Event], anchor: int, line: Sequence[Any]) -> list[Any]:
    """The states recording the game up to the move at `anchor` and then `line` in a fresh
    game give (the oracle knows nothing of variations)."""
    position = folding.start(events[0].game_created)
    for event in events[1 : anchor - 1]:
        position = folding.record(position, event.move_recorded.move, event.move_recorded.notation)
    states = []
    for move in line:
        position = folding.record(position, move.move, move.notation)
        states.append(position.state)
    return states


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", GAMES)
def test_a_line_of_legal_alternatives_is_checked_typed_and_replayed(name: str, seed: int) -> None:
    events, anchor = played(name, seed)
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    rng = random.Random(seed * 7 + 1)
    moves = line_from(start, rng, 6)
    assert moves, "a move was played at the anchor, so one could be played instead"
    texts = notations(start, moves)
    # An alternative to move 2 of the line, from the position before move 2.
    second = folding.record(start, start.table.wrap(moves[0]), texts[0])
    nested_moves = line_from(second, rng, 3)
    asked = as_variation(texts)
    if len(moves) > 1 and nested_moves:
        asked.moves[1].variations.append(as_variation(notations(second, nested_moves)))
    asked.moves[0].comment, asked.moves[0].glyph = "instead", "!?"

    checked = check_variation(start, asked, FULL)

    assert [m.notation for m in checked.moves] == texts
    assert [start.table.unwrap(m.move) for m in checked.moves] == moves
    assert (checked.moves[0].comment, checked.moves[0].glyph) == ("instead", "!?")
    position, line = follow(start, checked, ())
    assert position is start
    states = fresh_states(events, anchor, line)
    for move, state in zip(line, states, strict=True):
        position = folding.record(position, move.move, move.notation)
        assert position.game.view(position.state, FULL) == position.game.view(state, FULL)
    if len(moves) > 1 and nested_moves:
        nested = checked.moves[1].variations[0]
        assert [second.table.unwrap(m.move) for m in nested.moves] == nested_moves
        branch_start, branch = follow(start, checked, (2, 1))
        assert branch_start.state == second.state
        assert list(branch) == list(nested.moves)


@pytest.mark.parametrize("name", GAMES)
def test_a_variation_of_the_whole_game_replaces_the_first_move(name: str) -> None:
    events, _ = played(name, 0)
    start = start_before(folding.fold(events, until_revision=1), 1)
    assert start.move_count == 0
    first = events[1].move_recorded
    checked = check_variation(start, as_variation([first.notation]), FULL)
    assert checked.moves[0].move == first.move


def refused_move(
    position: folding.Position, after: folding.Position, rng: random.Random
) -> tuple[Message, RulesError] | None:
    """A move legal at `position` that the rules refuse at `after` (not a typo), with the
    refusal the rules give when it is recorded there."""
    if position.to_move() == TERMINAL:
        return None
    candidates = list(position.game.legal_moves(position.state))
    rng.shuffle(candidates)
    for inner in candidates:
        try:
            folding.check_move(after, after.table.wrap(inner))
        except (IllegalMove, RulesError) as refusal:
            return inner, refusal
    return None


@pytest.mark.parametrize("name", GAMES)
def test_an_illegal_move_is_refused_by_its_path_notation_and_rule(name: str) -> None:
    found = 0
    for seed in range(10):
        events, anchor = played(name, seed)
        start = start_before(folding.fold(events, until_revision=anchor), anchor)
        rng = random.Random(seed)
        moves = line_from(start, rng, 2)
        if len(moves) < 2:
            continue
        texts = notations(start, moves)
        one = folding.record(start, start.table.wrap(moves[0]), texts[0])
        two = folding.record(one, one.table.wrap(moves[1]), texts[1])
        bad = refused_move(one, two, rng)
        if bad is None:
            continue
        inner, rule = bad
        shown = one.game.format(inner, one.state)
        asked = as_variation(texts)
        asked.moves.add(move=two.table.wrap(inner), notation=shown)
        with pytest.raises(IllegalVariationMove) as info:
            check_variation(start, asked, FULL)
        assert info.value.path == "3"
        assert info.value.cause.code == rule.code
        expected = f"Move 3 of the variation ({clip(shown)}): {rule.message}"
        assert info.value.message == clip(expected, MESSAGE_LIMIT)
        # Nested: the same refusal inside the first alternative to move 2.
        with pytest.raises(IllegalVariationMove) as deeper:
            check_variation(start, _shifted(asked, texts), FULL)
        assert deeper.value.path == "2.1:2"
        assert deeper.value.message.startswith(
            f"Move 2 of line 2.1 of the variation ({clip(shown)}"
        )
        found += 1
    assert found, f"no refusable move found in {name}'s random games"


def _shifted(bad: events_pb2.Variation, texts: Sequence[str]) -> events_pb2.Variation:
    """A variation [m1, m2] whose move 2 has the line `bad` as its first alternative, `bad`
    being checked from the position before move 2: its own first move is m2 again."""
    outer = as_variation(texts[:2])
    alternative = events_pb2.Variation()
    alternative.CopyFrom(bad)
    del alternative.moves[0]  # `bad` starts before m1; from before m2 it starts at its m2
    outer.moves[1].variations.append(alternative)
    return outer


def test_a_typo_is_refused_as_notation_by_its_path() -> None:
    events, anchor = played("splendor", 1)
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    with pytest.raises(IllegalVariationMove) as info:
        check_variation(start, as_variation(["no such move"]), FULL)
    assert info.value.path == "1"
    assert info.value.cause.code == "INVALID_NOTATION"
    assert info.value.message.startswith("Move 1 of the variation (no such move): ")


def test_nothing_is_played_past_the_end_of_the_game() -> None:
    game = random_game("splendor", PLAYERS, 2)
    events = events_of(created("splendor", PLAYERS), game.moves, game.notations)
    anchor = len(events)  # the last move: the game ends after it
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    last = events[-1].move_recorded.notation
    with pytest.raises(IllegalVariationMove) as info:
        check_variation(start, as_variation([last, last]), FULL)
    assert (info.value.path, info.value.cause.code) == ("2", "GAME_OVER")


def blind_reserve(seed: int) -> tuple[folding.Position, list[Message]] | None:
    """A Splendor position (dealt mode: the analyst names the card, as the table would
    reveal it) where a seat may reserve blind, the reserve and the reveal of the reserved
    card that follows it."""
    game = random_game("splendor", PLAYERS, seed, mode=DEALT)
    events = events_of(created("splendor", PLAYERS, mode=DEALT), game.moves, game.notations)
    for anchor in range(2, len(events) + 1):
        start = start_before(folding.fold(events, until_revision=anchor), anchor)
        if start.to_move() < 0:
            continue
        for inner in start.game.legal_moves(start.state):
            after = folding.record(start, start.table.wrap(inner), "")
            if after.to_move() != CHANCE:
                continue
            outcomes = after.game.chance_outcomes(after.state)
            reveal = outcomes[0][0]
            if not after.game.visible_to(reveal, after.state, SPECTATOR):
                return start, [inner, reveal]
    return None


def test_a_move_that_deals_hidden_information_is_refused_unless_the_view_is_full() -> None:
    found = blind_reserve(3)
    assert found is not None
    start, moves = found
    asked = as_variation(notations(start, moves))
    with pytest.raises(VariationRefused) as info:
        check_variation(start, asked, SPECTATOR)
    assert (info.value.code, info.value.path) == ("VARIATION_MOVE_HIDDEN", "2")
    assert len(check_variation(start, asked, FULL).moves) == 2
    # After that reveal the state hides the reserved card from a spectator: nothing more
    # is checked there for one (the answer could tell what the card is).
    after = folding.record(start, start.table.wrap(moves[0]), asked.moves[0].notation)
    after = folding.record(after, after.table.wrap(moves[1]), asked.moves[1].notation)
    assert after.game.hides_from(after.state, SPECTATOR)
    with pytest.raises(VariationRefused) as hidden:
        check_variation(after, as_variation(["anything at all"]), SPECTATOR)
    assert (hidden.value.code, hidden.value.path) == ("VARIATION_HIDDEN", "1")


def test_a_state_that_hides_something_refuses_before_the_move_is_read() -> None:
    options = game_pb2.GameOptions()
    options.mercado_de_lisboa.money = mercado_pb2.MERCADO_DE_LISBOA_MONEY_HIDDEN
    body = created("mercado-de-lisboa", PLAYERS, options.mercado_de_lisboa, TABLE)
    start = folding.start(body)
    assert start.game.hides_from(start.state, SPECTATOR)
    with pytest.raises(VariationRefused) as info:
        check_variation(start, as_variation(["no such move"]), SPECTATOR)
    assert info.value.code == "VARIATION_HIDDEN"  # not INVALID_NOTATION: nothing was read


def test_lines_are_named_by_move_and_alternative() -> None:
    assert line_text(()) == ""
    assert line_text((3, 1)) == "3.1"
    assert line_text((3, 1, 2, 2)) == "3.1/2.2"


def test_following_a_line_that_is_not_there_names_the_lines_that_are() -> None:
    events, anchor = played("splendor", 0)
    start = start_before(folding.fold(events, until_revision=anchor), anchor)
    moves = line_from(start, random.Random(0), 2)
    texts = notations(start, moves)
    asked = as_variation(texts)
    asked.moves[1].variations.append(as_variation(texts[1:]))
    checked = check_variation(start, asked, FULL)
    with pytest.raises(IllegalMove) as info:
        follow(start, checked, (1, 1))
    assert info.value.code == "NO_SUCH_LINE"
    assert "its lines there are 2.1" in info.value.message
