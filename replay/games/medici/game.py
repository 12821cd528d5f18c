"""Medici as a `replay.core.Game`: metadata, and the glue from the common surface to
`rules.py`, `scoring.py`, `views.py` and `notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from google.protobuf.message import Message

from replay.core import CHANCE, DEALT, TABLE, TERMINAL, Game, OptionDoc, Viewer
from replay.games.medici import notation, rules, scoring, views
from replay.games.medici.components import default_tiles_file
from tablelog.v1 import game_pb2
from tablelog.v1.medici_pb2 import MediciMove, MediciOptions, MediciView

CHANCE_PHASES: Final = frozenset({rules.DRAW, rules.FILL, rules.REMOVE, rules.START})


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
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc(
            "edition",
            "classic (3-6 players) or 2016 (adds 2 players: 7 spaces, 20/0, pyramids 10/0); "
            "unset means classic, or 2016 with 2 players.",
            "classic",
        ),
        OptionDoc("first_player", "Seat (0-based) that starts day 1 (B2).", "0"),
        OptionDoc(
            "lot_limit_others_with_money",
            "G-B3: a lot may not outgrow the largest free space among the other non-full "
            "players with money (default: all non-full players, the drawer included).",
            "false",
        ),
    )

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return (default_tiles_file(),)

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: int,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> rules.State:
        chosen = options if options is not None else MediciOptions()
        return rules.setup(rules.make_rules(players, chosen, mode, components), chosen.first_player)

    def apply(self, state: rules.State, move: MediciMove) -> rules.State:
        return rules.apply(state, move)

    def legal_moves(self, state: rules.State) -> Sequence[MediciMove]:
        phase = state.phase
        if phase == rules.BID:
            return [notation.pass_move(), *(notation.bid_move(b) for b in rules.bid_range(state))]
        if phase == rules.DECIDE:
            moves = [notation.close_move()]
            if rules.can_draw_more(state):
                moves.insert(0, notation.draw_more_move())
            return moves
        if phase == rules.OVER:
            return []
        return [move for move, _ in self.chance_outcomes(state)]

    def chance_outcomes(self, state: rules.State) -> Sequence[tuple[MediciMove, int]]:
        phase = state.phase
        kinds = state.rules.tiles.kinds
        if phase in (rules.DRAW, rules.FILL):
            return [(notation.draw_move(kinds[k].name), c) for k, c in rules.tile_weights(state)]
        if phase == rules.REMOVE:
            return [(notation.remove_move(kinds[k].name), c) for k, c in rules.tile_weights(state)]
        if phase == rules.START:
            return [(notation.start_move(s), 1) for s in state.tied]
        return []

    def is_chance(self, move: MediciMove) -> bool:
        return move.WhichOneof("action") in ("draw", "remove", "start_player")

    def visible_to(self, move: MediciMove, state: rules.State, viewer: Viewer) -> bool:
        return rules.visible_to(move, viewer)

    def to_move(self, state: rules.State) -> int:
        phase = state.phase
        if phase in CHANCE_PHASES:
            return CHANCE
        if phase == rules.OVER:
            return TERMINAL
        return state.current

    def result(self, state: rules.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rules.State, viewer: Viewer) -> MediciView:
        return views.view(state, viewer)

    def render(self, view: Any) -> str:
        return views.render(view)

    def parse(self, text: str, state: rules.State) -> MediciMove:
        return notation.parse(text, state)

    def format(self, move: MediciMove, state: rules.State) -> str:
        return notation.format_move(move, state)


_CONFORMS: Game[rules.State, MediciMove] = Medici()
