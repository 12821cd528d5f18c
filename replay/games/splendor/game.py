"""Splendor as a `tablelog.replay.core.Game`: metadata, and one-line delegations from the common
surface to `components.py`, `rules.py`, `scoring.py`, `views.py`, `picture.py` and `notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from tablelog.replay.core import DEALT, TABLE, OptionDoc, Viewer
from tablelog.replay.games.splendor import (
    components,
    notation,
    picture,
    rules,
    scoring,
    touches,
    views,
    words,
)
from tablelog.replay.games.splendor.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import SplendorMove, SplendorOptions, SplendorView


class Splendor:
    """Splendor's surface for the registry and the fold (replay.core.Game)."""

    name: str = "splendor"
    title: str = "Splendor"
    min_players: int = 2
    max_players: int = 4
    rules_version: str = "splendor-1"
    modes: tuple[game_pb2.Mode.ValueType, ...] = (TABLE, DEALT)
    oneof_field: str = "splendor"
    move_type: type[SplendorMove] = SplendorMove
    options_type: type[Message] = SplendorOptions
    view_type: type[Message] = SplendorView
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc(
            "allow_take_fewer_anytime",
            # RULES.md E1: option help speaks to players, the rules reference to us.
            "Allow taking 1 or 2 different colours even while 3 or more are in the bank.",
            "false",
        ),
        OptionDoc(
            "first_player",
            "The player who plays first (by name in the CLI; the seat from 0 in the API); it "
            "defines the round for the game end.",  # RULES.md §8
            "the first player named",
        ),
    )
    notation_doc: str = "docs/notation/splendor.md"
    reveals_all_at_end: bool = False
    """RULES.md E13 and §8: a blind reserve stays hidden from opponents until it is bought,
    and no rule turns the unbought ones face up at the end."""

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return components.default_components()

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: int,
        component_files: Mapping[str, game_pb2.ComponentFile],
    ) -> State:
        return rules.setup(players, options, mode, component_files)

    def apply(self, state: State, move: SplendorMove) -> State:
        return rules.apply(state, move)

    def legal_moves(self, state: State) -> Sequence[SplendorMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: State) -> Sequence[tuple[SplendorMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: SplendorMove) -> bool:
        return move.WhichOneof("action") in rules.CHANCE_ACTIONS

    def visible_to(self, move: SplendorMove, state: State, viewer: Viewer) -> bool:
        return rules.visible_to(move, state, viewer)

    def hides_from(self, state: State, viewer: Viewer) -> bool:
        return views.hides_from(state, viewer)

    def redact(self, state: State, viewer: Viewer) -> State:
        return views.redact(state, viewer)

    def to_move(self, state: State) -> int:
        return rules.to_move(state)

    def result(self, state: State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: State, viewer: Viewer) -> SplendorView:
        return views.view(state, viewer)

    def render(self, view: Any) -> str:
        return views.render(view)

    def picture(
        self,
        view: Any,
        *,
        last_move: SplendorMove | None = None,
        approximate: str = "",
        layout: str = "wide",
    ) -> str:
        return picture.picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: State) -> SplendorMove:
        return notation.parse(text, state)

    def format(self, move: SplendorMove, state: State) -> str:
        return notation.format_move(move, state)

    def undealt(self, move: SplendorMove, state: State) -> SplendorMove | None:
        return rules.undealt(move, state)

    def detail(self, move: SplendorMove, state: State) -> str:
        return notation.detail(move, state)

    def split(self, text: str, state: State) -> Sequence[str]:
        return (text,)  # no line of this game's notation stands for several moves

    def touches(self, move: SplendorMove, state: State) -> Touches:
        return touches.touches(move, state)

    def words(self, move: SplendorMove, state: State, viewer: Viewer) -> str:
        return words.words(move, state, viewer)
