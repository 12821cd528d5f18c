"""Castello Methoni as a `tablelog.replay.core.Game`: metadata, and one-line delegations from the
common surface to `components.py`, `rules.py`, `scoring.py`, `views.py`, `picture.py` and
`notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tablelog.replay.core import DEALT, TABLE, OptionDoc, Viewer
from tablelog.replay.games.castello_methoni import (
    components,
    notation,
    picture,
    rules,
    scoring,
    touches,
    views,
    words,
)
from tablelog.replay.games.castello_methoni.rules import State
from tablelog.replay.touch import Touches
from tablelog.v1 import castello_methoni_pb2 as pb
from tablelog.v1 import game_pb2


class CastelloMethoni:
    name = "castello-methoni"
    title = "Castello Methoni"
    min_players = 3
    max_players = 5
    rules_version = "1"
    modes = (TABLE, DEALT)
    oneof_field = "castello_methoni"
    move_type = pb.CastelloMethoniMove
    options_type = pb.CastelloMethoniOptions
    view_type = pb.CastelloMethoniView
    option_docs = (
        OptionDoc(
            "first_player",
            "The player who plays first (by name in the CLI; the seat from 0 in the API); "
            "unset: recorded as the first chance move.",
            "unset",
        ),
        OptionDoc(
            "second_place_after_tie",
            "After a tie for the largest castle, still award 5 to the next size (another "
            "reading of the rules).",  # RULES.md §10 #13
            "false",
        ),
        OptionDoc(
            "sea_edges_need_sea_card",
            # RULES.md §10 #9.
            "Only the Market/Sea card may wall a sea edge (another reading of the rules).",
            "false",
        ),
    )
    notation_doc = "docs/notation/castello-methoni.md"
    reveals_all_at_end: bool = True
    """RULES.md §8 and engine decisions: the missions are revealed for the final scoring;
    table mode records no hand, so nothing recorded stays hidden after the end."""

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

    def apply(self, state: State, move: pb.CastelloMethoniMove) -> State:
        return rules.apply(state, move)

    def legal_moves(self, state: State) -> Sequence[pb.CastelloMethoniMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: State) -> Sequence[tuple[pb.CastelloMethoniMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: pb.CastelloMethoniMove) -> bool:
        return move.WhichOneof("action") in rules.CHANCE_ACTIONS

    def visible_to(self, move: pb.CastelloMethoniMove, state: State, viewer: Viewer) -> bool:
        return rules.visible_to(move, state, viewer)

    def hides_from(self, state: State, viewer: Viewer) -> bool:
        return views.hides_from(state, viewer)

    def redact(self, state: State, viewer: Viewer) -> State:
        return views.redact(state, viewer)

    def to_move(self, state: State) -> int:
        return rules.to_move(state)

    def result(self, state: State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: State, viewer: Viewer) -> pb.CastelloMethoniView:
        return views.view(state, viewer)

    def render(self, v: Any) -> str:
        if not isinstance(v, pb.CastelloMethoniView):
            raise TypeError("render expects a CastelloMethoniView")
        return views.render(v)

    def picture(
        self,
        view: pb.CastelloMethoniView,
        *,
        last_move: pb.CastelloMethoniMove | None = None,
        approximate: str = "",
        layout: str = "wide",
    ) -> str:
        return picture.picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: State) -> pb.CastelloMethoniMove:
        return notation.parse(text, state)

    def format(self, move: pb.CastelloMethoniMove, state: State) -> str:
        return notation.format_move(move, state)

    def undealt(
        self, move: pb.CastelloMethoniMove, state: State
    ) -> Sequence[pb.CastelloMethoniMove] | None:
        """RULES.md §2, §4, §8-§9 and the engine decisions on hidden information: see
        `rules.undealt` (the missions dealt at setup come to light at the final scoring,
        a redraw names the hand it reveals, draws are not recorded)."""
        return rules.undealt(state, move) or None

    def detail(self, move: pb.CastelloMethoniMove, state: State) -> str:
        """RULES.md §5: a build or trade names the card played and the cell or edge it
        goes to; nothing is taken by its place alone (docs/notation)."""
        return ""

    def split(self, text: str, state: State) -> Sequence[str]:
        return (text,)  # no line of this game's notation stands for several moves

    def touches(self, move: pb.CastelloMethoniMove, state: State) -> Touches:
        return touches.touches(move, state)

    def words(self, move: pb.CastelloMethoniMove, state: State, viewer: Viewer) -> str:
        return words.words(move, state, viewer)
