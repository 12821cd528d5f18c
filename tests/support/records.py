"""Games with annotations and variations, for the text record's tests and benchmark."""

from __future__ import annotations

import random
from typing import Any

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL
from tablelog.replay.registry import all_games
from tablelog.v1 import events_pb2
from tests.support.play import choose, created, random_game

PLAYERS = ["Ann", "Bob Lee", "Cleo"]


def random_line(
    table: folding.Table, state: Any, rng: random.Random, length: int
) -> events_pb2.Variation:
    """A random legal line of up to `length` moves from `state`, with glyphs, comments and
    (once) a nested alternative to its first move."""
    game = table.game
    variation = events_pb2.Variation()
    for step in range(length):
        if game.to_move(state) == TERMINAL:
            break
        inner = choose(game, state, rng)
        moved = variation.moves.add(move=table.wrap(inner), notation=game.format(inner, state))
        if step == 0 and length > 1:
            moved.glyph = "?!"
            moved.comment = "the {obvious} move \\ or not"
            nested = random_line(table, state, rng, 1)
            if nested.moves and nested.moves[0].notation != moved.notation:
                moved.variations.append(nested)
        state = game.apply(state, inner)
    return variation


def annotated_game(
    name: str, seed: int
) -> tuple[folding.Position, list[events_pb2.AnnotationAdded]]:
    """A seeded random game with players named (one with a space), and annotations on some
    moves: glyphs, comments with braces, several notes on one move, variations."""
    game = all_games()[name]
    players = PLAYERS[: max(game.min_players, 2)]
    played = random_game(name, len(players), seed)
    position = folding.start(created(name, players))
    rng = random.Random(seed)
    notes = [  # on the game as a whole, with a line instead of its first move
        events_pb2.AnnotationAdded(
            revision=1,
            comment="A club night game.",
            variation=random_line(position.table, position.state, rng, 2),
        )
    ]
    for index, move in enumerate(played.moves):
        before = position
        position = folding.record(position, move, played.notations[index])
        if index % 7 == 3:
            notes.append(
                events_pb2.AnnotationAdded(
                    revision=position.revision,
                    glyph="!?",
                    comment="why {not} this?",
                    variation=random_line(before.table, before.state, rng, 3),
                )
            )
            notes.append(events_pb2.AnnotationAdded(revision=position.revision, comment="second"))
        elif index % 11 == 5:
            notes.append(events_pb2.AnnotationAdded(revision=position.revision, glyph="??"))
    if position.to_move() == TERMINAL:
        position = folding.end(position, position.game.result(position.state))
    return position, notes
