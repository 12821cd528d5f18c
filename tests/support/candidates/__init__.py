"""The legal-move census: on a state, try every move of a generated superset with `apply`
and compare what it accepts with `legal_moves`.

Each game has a candidate generator here (one module per game, using only the public game
surface: views, component files, chance outcomes and the proto move messages). It gives
`ranges` (the values each field of each action may take, from what the components allow),
`candidates` (the moves built from them) and `spelling` (what a move means once the
alternative spellings its notation documents are set aside). The census adds every listed
move and its one-field mutations over the same ranges, so the superset is generated, not
read off `legal_moves`."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from google.protobuf.message import Message

from replay.core import Game, IllegalMove
from tests.support.candidates import (
    castello_methoni,
    medici,
    medici_card_game,
    mercado_de_lisboa,
    splendor,
)
from tests.support.candidates.fields import mutations

GENERATORS: dict[str, ModuleType] = {
    "castello-methoni": castello_methoni,
    "medici": medici,
    "medici-card-game": medici_card_game,
    "mercado-de-lisboa": mercado_de_lisboa,
    "splendor": splendor,
}

MUTATED_MOVES = 60
"""At most this many listed moves (spread over the list) are mutated per state, so that a
state with thousands of listed moves stays quick."""


def key(move: Message) -> bytes:
    return move.SerializeToString(deterministic=True)


def superset(game: Game[Any, Any], state: Any) -> list[Message]:
    """The candidate moves of `state`, each once: the game's generated candidates, the
    listed moves, and one-field mutations of (a spread of) the listed moves."""
    generator = GENERATORS[game.name]
    legal: Sequence[Message] = game.legal_moves(state)
    ranges = generator.ranges(game, state, legal)
    step = max(1, len(legal) // MUTATED_MOVES)

    def everything() -> Iterator[Message]:
        yield from generator.candidates(game, state, ranges, legal)
        yield from legal
        for move in legal[::step]:
            yield from mutations(move, ranges)

    unique: dict[bytes, Message] = {}
    for move in everything():
        unique.setdefault(key(move), move)
    return list(unique.values())


@dataclass
class Census:
    """What the census of one game found, over all the states it visited."""

    states: int = 0
    candidates: int = 0
    listed: int = 0
    aliases: int = 0
    """Accepted moves that spell a listed move differently (the gems of a take or the houses
    of a build in another order, a card id or payment spelt out) with the same outcome."""
    missing: list[str] = field(default_factory=list)
    """Moves `apply` accepts whose outcome no listed move has."""
    refused: list[str] = field(default_factory=list)
    """Listed moves `apply` refuses."""

    def take(self, game: Game[Any, Any], state: Any) -> None:
        """Count one state: try every candidate, compare with the listed moves."""
        spelling = GENERATORS[game.name].spelling(game, state)
        listed = {key(move): move for move in game.legal_moves(state)}
        outcomes: dict[Hashable, list[Any]] = {}
        unlisted: list[tuple[Message, Any]] = []
        for move in superset(game, state):
            self.candidates += 1
            try:
                after = game.apply(state, move)
            except IllegalMove as refusal:
                if key(move) in listed:
                    self.refused.append(f"{move} ({refusal.code}: {refusal.message})")
                continue
            if key(move) in listed:
                outcomes.setdefault(spelling(move), []).append(after)
            else:
                unlisted.append((move, after))
        for move, after in unlisted:
            # Another spelling of a listed move: read as the same decision by the game's
            # generator, with the very same outcome.
            if any(after == outcome for outcome in outcomes.get(spelling(move), [])):
                self.aliases += 1
            else:
                self.missing.append(f"{game.format(move, state)!r}: {move}".replace("\n", " "))
        self.states += 1
        self.listed += len(listed)
