"""Medici: The Card Game as a `tablelog.replay.core.Game`: metadata, and one-line delegations from
the common surface to `components.py`, `rules.py`, `scoring.py`, `views.py`,
`picture.py` and `notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from tablelog.replay.core import DEALT, TABLE, Game, OptionDoc, Viewer
from tablelog.replay.games.medici_card_game import (
    components,
    notation,
    picture,
    rules,
    scoring,
    touches,
    views,
    words,
)
from tablelog.replay.touch import Touches
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
    reveals_all_at_end: bool = True
    """RULES.md §A3: every card is turned face up into the market; nothing recorded is
    hidden."""
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc(
            "first_player",
            # RULES.md §A2.
            "The player who starts round 1 (by name in the CLI; the seat from 0 in the API).",
            "the first player named",
        ),
        OptionDoc(
            "ship_rewards",
            # RULES.md G-A2 and §A4: option help speaks to players, the reference to us.
            "Ship-value rewards by place, best first (default: the rulebook's table; only "
            "its 4-player row is sourced, the others are marked approximate).",
            "",
        ),
        OptionDoc(
            "two_player_second_place_pays_nothing",
            "With 2 players a goods majority pays 10/0 instead of 10/5.",  # RULES.md G-A3
            "false",
        ),
        OptionDoc(
            "majority_without_icons",
            "A player with no icon of a good may take a majority place.",  # RULES.md G-A4
            "false",
        ),
        OptionDoc(
            "big_volume_bonus",
            "A variant of the rulebook: the volume bonus is 20 at the big threshold.",  # §A4
            "false",
        ),
        OptionDoc(
            "big_volume_threshold",
            "The variant's threshold, inclusive (0 = 8, or 10 with 2 players).",
            "0",
        ),
    )

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return components.default_components()

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: int,
        component_files: Mapping[str, game_pb2.ComponentFile],
    ) -> rules.State:
        return rules.setup(players, options, mode, component_files)

    def apply(self, state: rules.State, move: MediciCardGameMove) -> rules.State:
        return rules.apply(state, move)

    def legal_moves(self, state: rules.State) -> Sequence[MediciCardGameMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: rules.State) -> Sequence[tuple[MediciCardGameMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: MediciCardGameMove) -> bool:
        return move.WhichOneof("action") in rules.CHANCE_ACTIONS

    def visible_to(self, move: MediciCardGameMove, state: rules.State, viewer: Viewer) -> bool:
        return rules.visible_to(move, state, viewer)

    def hides_from(self, state: rules.State, viewer: Viewer) -> bool:
        return views.hides_from(state, viewer)

    def redact(self, state: rules.State, viewer: Viewer) -> rules.State:
        return views.redact(state, viewer)

    def to_move(self, state: rules.State) -> int:
        return rules.to_move(state)

    def result(self, state: rules.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rules.State, viewer: Viewer) -> MediciCardGameView:
        return views.view(state)

    def render(self, view: Any) -> str:
        return views.render(view)

    def picture(
        self, view: Any, *, last_move: Any = None, approximate: str = "", layout: str = "wide"
    ) -> str:
        return picture.picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: rules.State) -> MediciCardGameMove:
        return notation.parse(text, state)

    def format(self, move: MediciCardGameMove, state: rules.State) -> str:
        return notation.format_move(move, state)

    def undealt(self, move: MediciCardGameMove, state: rules.State) -> MediciCardGameMove | None:
        """RULES.md §A3 step 1: every card the server deals is turned face up into the
        market, as the table records it (`reveal fur3`): the same moves."""
        return move

    def detail(self, move: MediciCardGameMove, state: rules.State) -> str:
        return notation.detail(move, state)

    def split(self, text: str, state: rules.State) -> Sequence[str]:
        return notation.split(text, state)

    def touches(self, move: MediciCardGameMove, state: rules.State) -> Touches:
        return touches.touches(move, state)

    def words(self, move: MediciCardGameMove, state: rules.State, viewer: Viewer) -> str:
        return words.words(move, state, viewer)


_CONFORMS: Game[rules.State, MediciCardGameMove] = MediciCardGame()
