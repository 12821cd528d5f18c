"""The legal-move census: on a state, try every move of a generated superset with `apply`
and compare what it accepts with `legal_moves`.

Each game has a candidate generator here (one module per game, using only the public game
surface: views, component files, chance outcomes and the proto move messages). It gives
`ranges` (the values each field of each action may take, from what the components allow),
`candidates` (the moves built from them), `spelling` (what a move means once the
alternative spellings its notation documents are set aside) and, for a game whose moves may
carry the decisions that follow them, `decisions` (the listed moves a shorthand stands
for). The census adds every listed move and its one-field mutations over the same ranges,
so the superset is generated, not read off `legal_moves`."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from google.protobuf.message import Message

from tablelog.replay.core import CHANCE, Game, IllegalMove
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

Step = tuple[Message, bool]
"""One decision a shorthand move stands for, and whether the rules may have taken it
themselves (then it is not listed, and the shorthand merely confirms it)."""

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
    shorthands: int = 0
    """Accepted moves that carry the decisions that follow them (Splendor's `return` and
    `noble` tails), with the outcome of those listed decisions taken one by one."""
    aliases: int = 0
    """Accepted moves that spell a listed move differently (the gems of a take or the houses
    of a build in another order, a card id or payment spelt out) with the same outcome."""
    missing: list[str] = field(default_factory=list)
    """Moves `apply` accepts whose outcome no listed move has."""
    refused: list[str] = field(default_factory=list)
    """Listed moves `apply` refuses."""

    def take(self, game: Game[Any, Any], state: Any) -> None:
        """Count one state: try every candidate, compare with the listed moves."""
        generator = GENERATORS[game.name]
        spelling = generator.spelling(game, state)
        decisions = getattr(generator, "decisions", None)
        listed = {key(move): move for move in game.legal_moves(state)}
        outcomes: dict[Hashable, list[Any]] = {}
        unlisted: list[tuple[Message, Any]] = []
        refused_shorthands: list[list[Step]] = []
        walk = _Walk(game)
        for move in superset(game, state):
            self.candidates += 1
            steps = decisions(move) if decisions is not None else None
            try:
                after = game.apply(state, move)
            except IllegalMove as refusal:
                if key(move) in listed:
                    self.refused.append(f"{move} ({refusal.code}: {refusal.message})")
                elif steps is not None:
                    refused_shorthands.append(steps)
                continue
            if key(move) in listed:
                outcomes.setdefault(spelling(move), []).append(after)
            elif steps is not None:
                if walk.follows(state, steps, after):
                    self.shorthands += 1
                else:
                    self.missing.append(f"{_text(game, state, move)} differs from its decisions")
            else:
                unlisted.append((move, after))
        for move, after in unlisted:
            # Another spelling of a listed move: read as the same decision by the game's
            # generator, with the very same outcome.
            if any(after == outcome for outcome in outcomes.get(spelling(move), [])):
                self.aliases += 1
            else:
                self.missing.append(_text(game, state, move))
        for steps in refused_shorthands:
            if walk.follows(state, steps):
                self.missing.append(f"refused, though each of its decisions is listed: {steps}")
        self.states += 1
        self.listed += len(listed)


def is_listed(game: Game[Any, Any], state: Any, move: Message, after: Any) -> bool:
    """Whether `move`, which led from `state` to `after`, is a listed move: listed as it
    is, spelt differently with the same outcome, or a shorthand of listed decisions (the
    census's judgement, for one move typed in a playthrough)."""
    listed = game.legal_moves(state)
    if key(move) in {key(m) for m in listed}:
        return True
    generator = GENERATORS[game.name]
    spelling = generator.spelling(game, state)
    meaning = spelling(move)
    if any(spelling(m) == meaning and game.apply(state, m) == after for m in listed):
        return True
    decisions = getattr(generator, "decisions", None)
    steps = decisions(move) if decisions is not None else None
    return steps is not None and _Walk(game).follows(state, steps, after)


def _text(game: Game[Any, Any], state: Any, move: Message) -> str:
    return f"{game.format(move, state)!r}: {move}".replace("\n", " ")


class _Walk:
    """Steps through a game from one state, remembering the listed moves and the outcomes
    already worked out (the shorthands of a state share their first decisions). States are
    remembered by identity, and kept alive so that no identity is reused."""

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game
        self.generator = GENERATORS[game.name]
        self.alive: list[Any] = []
        self.listed_at: dict[int, tuple[Callable[[Message], Hashable], set[Hashable]]] = {}
        self.after: dict[tuple[int, bytes], Any] = {}

    def listed(self, state: Any, move: Message) -> bool:
        if id(state) not in self.listed_at:
            self.alive.append(state)
            spelling = self.generator.spelling(self.game, state)
            listed = {spelling(m) for m in self.game.legal_moves(state)}
            self.listed_at[id(state)] = (spelling, listed)
        spelling, listed = self.listed_at[id(state)]
        return spelling(move) in listed

    def apply(self, state: Any, move: Message) -> Any:
        memo = (id(state), key(move))
        if memo not in self.after:
            self.alive.append(state)
            self.after[memo] = self.game.apply(state, move)
        return self.after[memo]

    def follows(self, state: Any, steps: list[Step], outcome: Any | None = None) -> bool:
        """Whether `steps` are each listed where they are taken; when the table must record
        a chance outcome between them (a refill), the first one is recorded. With `outcome`
        (the state the shorthand led to), the steps must end in that state, the same chance
        outcomes recorded on it, and a step marked optional that is not listed is passed
        over (the rules took that decision themselves: a lone qualifying noble visits
        unasked)."""
        game = self.game
        for move, may_be_resolved in steps:
            while game.to_move(state) == CHANCE:
                drawn = game.chance_outcomes(state)[0][0]
                state = self.apply(state, drawn)
                if outcome is not None:
                    if game.to_move(outcome) != CHANCE:
                        return False
                    outcome = game.apply(outcome, drawn)
            if self.listed(state, move):
                state = self.apply(state, move)
            elif outcome is None or not may_be_resolved:
                return False
        return outcome is None or state == outcome
