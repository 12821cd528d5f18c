"""Castello Methoni as a `replay.core.Game`: metadata, setup from the board component, and
the dispatch of moves to the rule functions of `rules.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replay.core import DEALT, FULL, TABLE, InvalidSetup, OptionDoc, Viewer
from replay.games.castello_methoni import notation, rules, scoring, views
from replay.games.castello_methoni.components import (
    BOARD_COMPONENT,
    default_component,
    load_board,
)
from replay.games.castello_methoni.rules import Context, State
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
            "The seat (0-based) that plays first; unset: recorded as the first chance move.",
            "unset",
        ),
        OptionDoc(
            "second_place_after_tie",
            "After a tie for the largest castle, still award 5 to the next size (§10 #13).",
            "false",
        ),
        OptionDoc(
            "sea_edges_need_sea_card",
            "Only the Market/Sea card may wall a sea edge (§10 #9 alternative reading).",
            "false",
        ),
    )
    notation_doc = "docs/notation/castello-methoni.md"

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return [default_component()]

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: int,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> State:
        unknown = sorted(set(components) - {BOARD_COMPONENT})
        if unknown:
            raise InvalidSetup(
                "UNKNOWN_COMPONENT",
                f"Castello Methoni takes one component file, 'board', not {', '.join(unknown)}.",
            )
        if BOARD_COMPONENT not in components:
            raise InvalidSetup(
                "MISSING_COMPONENT", "Castello Methoni needs a 'board' component file."
            )
        component = components[BOARD_COMPONENT]
        board = load_board(component)
        opts = options if isinstance(options, pb.CastelloMethoniOptions) else None
        ctx = Context(
            board=board,
            players=tuple(players),
            dealt=mode == DEALT,
            second_place_after_tie=bool(opts and opts.second_place_after_tie),
            sea_edges_need_sea_card=bool(opts and opts.sea_edges_need_sea_card),
        )
        first = opts.first_player if opts is not None and opts.HasField("first_player") else None
        return rules.setup(ctx, first)

    def apply(self, state: State, move: pb.CastelloMethoniMove) -> State:
        return rules.apply(state, move)

    def legal_moves(self, state: State) -> Sequence[pb.CastelloMethoniMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: State) -> Sequence[tuple[pb.CastelloMethoniMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: pb.CastelloMethoniMove) -> bool:
        return move.WhichOneof("action") in ("first_player", "mission", "draw")

    def visible_to(self, move: pb.CastelloMethoniMove, state: State, viewer: Viewer) -> bool:
        """RULES.md §2 steps 3-4, §4 step 2 and §9 (engine decisions on hidden information):
        in dealt mode a mission dealt at setup and a card dealt or drawn into a hand are
        seen only by the seat that receives them (and FULL). Everything else is public: the
        first player, a card named when it is played, a redraw (the hand is revealed) and
        the missions recorded at the final scoring (table mode, REVEAL phase)."""
        if viewer is FULL:
            return True
        owner = rules.hidden_owner(state, move)
        return owner is None or viewer == owner

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

    def parse(self, text: str, state: State) -> pb.CastelloMethoniMove:
        return notation.parse(text, state)

    def format(self, move: pb.CastelloMethoniMove, state: State) -> str:
        return notation.format_move(move, state)
