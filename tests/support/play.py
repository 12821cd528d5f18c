"""Drive any registered game through the rules core: build creation events, play seeded
random games, fold event lists. Used by every game's tests and by the benchmarks."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, TABLE, TERMINAL, Game
from tablelog.replay.registry import find_game
from tablelog.v1 import events_pb2, game_pb2
from tests.support import candidates


def created(
    game: str,
    players: int | Sequence[str],
    options: Message | None = None,
    mode: game_pb2.Mode.ValueType = TABLE,
    components: Sequence[game_pb2.ComponentFile] | None = None,
) -> events_pb2.GameCreated:
    """A GameCreated body for `game` with default components unless others are given."""
    rules = find_game(game)
    names = [f"p{i + 1}" for i in range(players)] if isinstance(players, int) else list(players)
    event = events_pb2.GameCreated(
        game_id="test",
        game=rules.name,
        players=[events_pb2.Player(name=n) for n in names],
        mode=mode,
        components=list(components if components is not None else rules.default_components()),
    )
    if options is not None:
        getattr(event.options, rules.oneof_field).CopyFrom(options)
    return event


def new_position(
    game: str,
    players: int | Sequence[str],
    options: Message | None = None,
    mode: game_pb2.Mode.ValueType = TABLE,
    components: Sequence[game_pb2.ComponentFile] | None = None,
) -> folding.Position:
    return folding.start(created(game, players, options, mode, components))


def play(position: folding.Position, text: str) -> folding.Position:
    """Record one move typed in notation (as a recorder would). A move the rules accept must
    also be one that `legal_moves` lists at that point, or another spelling or a shorthand
    of listed moves (golden playthroughs and scenarios hold the two to each other); a move
    the rules refuse raises as recording it would."""
    game = position.game
    move = game.parse(text, position.state)
    recorded = folding.record(
        position, position.table.wrap(move), game.format(move, position.state)
    )
    if not candidates.is_listed(game, position.state, move, recorded.state):
        raise AssertionError(
            f"{text!r} was accepted but is not among the legal moves listed at move "
            f"{position.move_count + 1}"
        )
    return recorded


def play_all(position: folding.Position, lines: Sequence[str]) -> folding.Position:
    """Record each non-blank, non-comment (`#`) line in order."""
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if text:
            position = play(position, text)
    return position


def choose(game: Game[Any, Any], state: Any, rng: random.Random) -> Message:
    """A random legal move: chance outcomes by their weights, players' moves uniformly."""
    if game.to_move(state) == CHANCE:
        outcomes: Sequence[tuple[Message, int]] = game.chance_outcomes(state)
        total = sum(weight for _, weight in outcomes)
        return folding.pick_outcome(outcomes, rng.randrange(total))
    moves: Sequence[Message] = game.legal_moves(state)
    return moves[rng.randrange(len(moves))]


@dataclass
class PlayedGame:
    position: folding.Position
    moves: list[game_pb2.Move]
    notations: list[str]
    states: list[Any]


Check = Callable[[Any, Any], None]
"""An invariant: called as check(state_before, state_after) after every move."""


def random_game(
    game_name: str,
    players: int,
    seed: int,
    options: Message | None = None,
    mode: game_pb2.Mode.ValueType = TABLE,
    check: Check | None = None,
    max_moves: int = 5_000,
    keep_states: bool = False,
) -> PlayedGame:
    """Play one seeded random game to its end through `tablelog.replay.fold.record`."""
    rng = random.Random(seed)
    position = new_position(game_name, players, options, mode)
    game = position.game
    moves: list[game_pb2.Move] = []
    notations: list[str] = []
    states: list[Any] = [position.state] if keep_states else []
    while game.to_move(position.state) != TERMINAL:
        if len(moves) >= max_moves:
            raise AssertionError(f"{game_name} seed {seed}: no end after {max_moves} moves")
        inner = choose(game, position.state, rng)
        before = position.state
        notation = game.format(inner, before)
        envelope = position.table.wrap(inner)
        position = folding.record(position, envelope, notation)
        if check is not None:
            check(before, position.state)
        moves.append(envelope)
        notations.append(notation)
        if keep_states:
            states.append(position.state)
    return PlayedGame(position, moves, notations, states)


def events_of(
    created_body: events_pb2.GameCreated,
    moves: Sequence[game_pb2.Move],
    notations: Sequence[str] | None = None,
) -> list[events_pb2.Event]:
    """A well-formed event list (no hashes, no times) recording `moves` after creation."""
    events = [events_pb2.Event(sequence=1, revision=1, game_created=created_body)]
    for i, move in enumerate(moves):
        events.append(
            events_pb2.Event(
                sequence=i + 2,
                revision=i + 2,
                move_recorded=events_pb2.MoveRecorded(
                    move=move, notation=notations[i] if notations else ""
                ),
            )
        )
    return events


def assert_round_trip(game: Game[Any, Any], state: Any) -> None:
    """parse(format(m)) == m, and format is canonical, for every legal move of `state`."""
    for move in game.legal_moves(state):
        text = game.format(move, state)
        again = game.parse(text, state)
        assert again == move, f"{text!r} parsed as {again} instead of {move}"
        assert game.format(again, state) == text


def fenced_blocks(markdown: str) -> list[list[str]]:
    """The lines of each fenced code block of a Markdown document, in order (the notation
    docs' example games are replayed by the tests)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def directives(lines: Sequence[str]) -> dict[str, str]:
    """A playthrough file's `#! key: value` lines (players, options, expected results)."""
    found: dict[str, str] = {}
    for line in lines:
        if line.startswith("#!"):
            key, _, value = line[2:].partition(":")
            found[key.strip()] = value.strip()
    return found


def replay_golden(
    game: str, path: Path, options: Message
) -> tuple[folding.Position, dict[str, str]]:
    """Record the golden playthrough in `path` (its `#!` directives: players, options in
    protobuf text format into `options`, winners): every line must be canonical notation,
    the game must end with the named winners and itemised scores that add up, and the
    recorded moves, stored as events, must fold back to the same state. Returns the final
    position and the directives, for the game's own expectations."""
    lines = path.read_text(encoding="utf-8").splitlines()
    meta = directives(lines)
    players = meta["players"].split()
    text_format.Parse(meta.get("options", ""), options)
    position = play_all(new_position(game, players, options), lines)
    recorded = [applied.notation for applied in position.moves()]
    typed = [line.split("#", 1)[0].strip() for line in lines]
    assert recorded == [text for text in typed if text]
    assert position.to_move() == TERMINAL
    result = position.game.result(position.state)
    assert [players[w] for w in result.winners] == meta["winners"].split()
    for score in result.scores:
        assert score.total == sum(item.value for item in score.items)
    moves = [applied.move for applied in position.moves()]
    assert folding.fold(events_of(created(game, players, options), moves)).state == position.state
    return position, meta


def random_games(default: int) -> int:
    """How many seeded random games a random-play test plays: `default` in the suite (kept
    within its time), or `$TABLELOG_RANDOM_GAMES` for a longer sweep
    (`TABLELOG_RANDOM_GAMES=1000 pytest tests/games`)."""
    return int(os.environ.get("TABLELOG_RANDOM_GAMES") or default)
