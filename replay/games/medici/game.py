"""Medici as a `tablelog.replay.core.Game`: metadata, and one-line delegations from the common
surface to `components.py`, `rules.py`, `scoring.py`, `views.py`, `picture.py` and
`notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from tablelog.replay.core import DEALT, TABLE, Game, OptionDoc, Viewer
from tablelog.replay.games.medici import (
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
from tablelog.v1.medici_pb2 import MediciMove, MediciOptions, MediciView


class Medici:
    name: str = "medici"
    title: str = "Medici"
    min_players: int = 2
    max_players: int = 6
    rules_version: str = "medici/1"
    modes: tuple[game_pb2.Mode.ValueType, ...] = (TABLE, DEALT)
    oneof_field: str = "medici"
    move_type: type[MediciMove] = MediciMove
    options_type: type[Message] = MediciOptions
    view_type: type[Message] = MediciView
    notation_doc: str = "docs/notation/medici.md"
    reveals_all_at_end: bool = True
    """RULES.md, engine decisions and §B2: the tiles removed unseen are hidden only until
    the day ends, and the game ends with day 3."""
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc(
            "edition",
            "classic (3-6 players) or 2016 (adds 2 players: 7 spaces, 20/0, pyramids 10/0); "
            "unset means classic, or 2016 with 2 players.",
            "classic",
        ),
        OptionDoc(
            "first_player",
            "The player who starts day 1 (by name in the CLI; the seat from 0 in the API).",  # §B2
            "the first player named",
        ),
        OptionDoc(
            "lot_limit_others_with_money",
            # RULES.md G-B3: option help speaks to players, the rules reference to us.
            "A lot may not outgrow the largest free space among the other non-full players "
            "with money (default: all non-full players, the drawer included).",
            "false",
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

    def apply(self, state: rules.State, move: MediciMove) -> rules.State:
        return rules.apply(state, move)

    def legal_moves(self, state: rules.State) -> Sequence[MediciMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: rules.State) -> Sequence[tuple[MediciMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: MediciMove) -> bool:
        return move.WhichOneof("action") in rules.CHANCE_ACTIONS

    def visible_to(self, move: MediciMove, state: rules.State, viewer: Viewer) -> bool:
        return rules.visible_to(move, state, viewer)

    def hides_from(self, state: rules.State, viewer: Viewer) -> bool:
        return views.hides_from(state, viewer)

    def redact(self, state: rules.State, viewer: Viewer) -> rules.State:
        return views.redact(state, viewer)

    def to_move(self, state: rules.State) -> int:
        return rules.to_move(state)

    def result(self, state: rules.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rules.State, viewer: Viewer) -> MediciView:
        return views.view(state, viewer)

    def render(self, view: Any) -> str:
        return views.render(view)

    def picture(
        self, view: Any, *, last_move: Any = None, approximate: str = "", layout: str = "wide"
    ) -> str:
        return picture.picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: rules.State) -> MediciMove:
        return notation.parse(text, state)

    def format(self, move: MediciMove, state: rules.State) -> str:
        return notation.format_move(move, state)

    def undealt(self, move: MediciMove, state: rules.State) -> MediciMove | None:
        """RULES.md §B2: the tiles a dealt day's setup removes unseen are, at a table, removed
        without anyone recording them."""
        return None if move.WhichOneof("action") == "remove" else move

    def detail(self, move: MediciMove, state: rules.State) -> str:
        """RULES.md §B3: a turn's tile is drawn face up and named by the table's `draw`;
        no move takes anything by its place (docs/notation)."""
        return ""

    def split(self, text: str, state: rules.State) -> Sequence[str]:
        return notation.split(text, state)

    def touches(self, move: MediciMove, state: rules.State) -> Touches:
        return touches.touches(move, state)

    def words(self, move: MediciMove, state: rules.State, viewer: Viewer) -> str:
        return words.words(move, state, viewer)


_CONFORMS: Game[rules.State, MediciMove] = Medici()
