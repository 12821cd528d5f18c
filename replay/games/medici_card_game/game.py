"""Medici: The Card Game as a `replay.core.Game`: metadata, and the glue from the common
surface to `rules.py`, `scoring.py`, `views.py` and `notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from replay.core import CHANCE, DEALT, TABLE, TERMINAL, Game, OptionDoc, Viewer
from replay.games.medici_card_game import notation, rules, scoring, views
from replay.games.medici_card_game.components import default_deck_file
from tablelog.v1 import game_pb2
from tablelog.v1.medici_card_game_pb2 import (
    MediciCardGameMove,
    MediciCardGameOptions,
    MediciCardGameView,
)


class MediciCardGame:
    name: str = "medici-card-game"
    title: str = "Medici: The Card Game"
    min_players: int = 2
    max_players: int = 6
    rules_version: str = "medici-card-game/1"
    modes: tuple[game_pb2.Mode.ValueType, ...] = (TABLE, DEALT)
    oneof_field: str = "medici_card_game"
    move_type: type[MediciCardGameMove] = MediciCardGameMove
    options_type: type[Message] = MediciCardGameOptions
    view_type: type[Message] = MediciCardGameView
    notation_doc: str = "docs/notation/medici-card-game.md"
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc("first_player", "Seat (0-based) that starts round 1 (A2).", "0"),
        OptionDoc(
            "ship_rewards",
            "G-A2: ship-value rewards by place, best first (default: the A4 table; only "
            "its 4-player row is sourced, the others are marked approximate).",
            "",
        ),
        OptionDoc(
            "two_player_second_place_pays_nothing",
            "G-A3: with 2 players a goods majority pays 10/0 instead of 10/5.",
            "false",
        ),
        OptionDoc(
            "majority_without_icons",
            "G-A4: a player with no icon of a good may take a majority place.",
            "false",
        ),
        OptionDoc(
            "big_volume_bonus", "A4 variant: the volume bonus is 20 at the big threshold.", "false"
        ),
        OptionDoc(
            "big_volume_threshold",
            "The variant's threshold, inclusive (0 = 8, or 10 with 2 players).",
            "0",
        ),
    )

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return (default_deck_file(),)

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: int,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> rules.State:
        chosen = options if options is not None else MediciCardGameOptions()
        table_rules = rules.make_rules(players, chosen, mode, components)
        return rules.setup(table_rules, chosen.first_player)

    def apply(self, state: rules.State, move: MediciCardGameMove) -> rules.State:
        return rules.apply(state, move)

    def legal_moves(self, state: rules.State) -> Sequence[MediciCardGameMove]:
        phase = state.phase
        if phase == rules.PLAY:
            moves = [notation.take_move(p) for p in rules.take_options(state)]
            if rules.can_flip(state):
                moves.insert(0, notation.flip_move())
            return moves
        if phase == rules.REVEAL:
            kinds = state.rules.deck.kinds
            if state.rules.strict:
                return [notation.reveal_move(kinds[k].name) for k, _ in rules.reveal_weights(state)]
            return [notation.reveal_move(k.name) for k in kinds]
        if phase == rules.START:
            return [notation.start_move(s) for s in state.tied]
        return []

    def chance_outcomes(self, state: rules.State) -> Sequence[tuple[MediciCardGameMove, int]]:
        if state.phase == rules.REVEAL:
            kinds = state.rules.deck.kinds
            return [
                (notation.reveal_move(kinds[k].name), w) for k, w in rules.reveal_weights(state)
            ]
        if state.phase == rules.START:
            return [(notation.start_move(s), 1) for s in state.tied]
        return []

    def is_chance(self, move: MediciCardGameMove) -> bool:
        return move.WhichOneof("action") in ("reveal", "start_player")

    def visible_to(self, move: MediciCardGameMove, state: rules.State, viewer: Viewer) -> bool:
        return rules.visible_to(move, viewer)

    def to_move(self, state: rules.State) -> int:
        phase = state.phase
        if phase == rules.PLAY:
            return state.current
        if phase == rules.OVER:
            return TERMINAL
        return CHANCE

    def result(self, state: rules.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rules.State, viewer: Viewer) -> MediciCardGameView:
        return views.view(state)

    def render(self, view: Any) -> str:
        return views.render(view)

    def parse(self, text: str, state: rules.State) -> MediciCardGameMove:
        return notation.parse(text, state)

    def format(self, move: MediciCardGameMove, state: rules.State) -> str:
        return notation.format_move(move, state)


_CONFORMS: Game[rules.State, MediciCardGameMove] = MediciCardGame()
