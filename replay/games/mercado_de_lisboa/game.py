"""Mercado de Lisboa behind the common `Game` surface (replay/core.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from google.protobuf.message import Message

from replay.core import DEALT, TABLE, InvalidSetup, OptionDoc, Viewer, recorded_component
from replay.games.mercado_de_lisboa import notation, scoring, views
from replay.games.mercado_de_lisboa import rules as rl
from replay.games.mercado_de_lisboa.components import COMPONENT_NAME, default_component, load_board
from tablelog.v1 import game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as pb


class MercadoDeLisboa:
    name = "mercado-de-lisboa"
    title = "Mercado de Lisboa"
    min_players = 1
    max_players = 4
    rules_version = "mercado-de-lisboa/2"
    """/2: a solo stage with no placement left ends without the last display refills (§9)."""
    solo_waits_for_refills = False
    modes: tuple[game_pb2.Mode.ValueType, ...] = (TABLE, DEALT)
    oneof_field = "mercado_de_lisboa"
    move_type = pb.MercadoDeLisboaMove
    options_type: type[Message] = pb.MercadoDeLisboaOptions
    view_type: type[Message] = pb.MercadoDeLisboaView
    notation_doc = "docs/notation/mercado-de-lisboa.md"
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc("money", "open or hidden money (hidden: other seats see no coins)", "hidden"),
        OptionDoc(
            "first_player", "the seat that starts; with 4 players the last seat gets the pub", "0"
        ),
        OptionDoc(
            "clamp_penalty_at_zero",
            "the final restaurant penalty cannot make money negative",
            "false",
        ),
        OptionDoc("stage", "solo: the campaign stage 1..9 (0 = solo rules without a stage)", "0"),
        OptionDoc(
            "campaign",
            "solo: the earlier stages' results (stage, fame, money, master stroke, game id)",
            "none",
        ),
        OptionDoc(
            "stage1_good",
            "solo stage 1: the good that earns (unset: fixed by the first earning)",
            "unset",
        ),
        OptionDoc("stage9_side", "solo stage 9: the side of the three starting customers", "west"),
    )

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return [default_component()]

    def setup(
        self,
        players: Sequence[str],
        options: pb.MercadoDeLisboaOptions | None,
        mode: int,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> rl.State:
        """Rules §2: validate players, options and the board file recorded at creation (never
        the packaged default: it may have changed since); all draws stay pending."""
        unknown = sorted(set(components) - {COMPONENT_NAME})
        if unknown:
            raise InvalidSetup(
                "UNKNOWN_COMPONENT",
                f"Mercado de Lisboa uses only {COMPONENT_NAME}, not {', '.join(unknown)}.",
            )
        component = recorded_component(components, COMPONENT_NAME, self.title)
        board = load_board(component)
        if options is None:
            options = pb.MercadoDeLisboaOptions()
        rules = rl.make_rules(len(players), options, board)
        return rl.initial_state(
            replace(rules, names=tuple(players), solo_waits_for_refills=self.solo_waits_for_refills)
        )

    def apply(self, state: rl.State, move: pb.MercadoDeLisboaMove) -> rl.State:
        return rl.apply(state, move)

    def legal_moves(self, state: rl.State) -> Sequence[pb.MercadoDeLisboaMove]:
        return rl.legal_moves(state)

    def chance_outcomes(self, state: rl.State) -> Sequence[tuple[pb.MercadoDeLisboaMove, int]]:
        return rl.chance_outcomes(state)

    def is_chance(self, move: pb.MercadoDeLisboaMove) -> bool:
        return move.WhichOneof("action") in rl.CHANCE_ACTIONS

    def visible_to(self, move: pb.MercadoDeLisboaMove, state: rl.State, viewer: Viewer) -> bool:
        """Rules §2 steps 2-4, §4.1 step 1 and §4.3: no chance move of this game carries hidden
        identity, so every move is visible to everyone. The restaurants are drawn onto the
        marked spaces face down, but that draw is not recorded (engine decision: a face-down
        restaurant's type is recorded only when it is turned over, `flip`, and turning it over
        shows it to the whole table); stand tiles drawn into the display or in front of a
        player are face up (public information, §2 step 3); customer tiles are revealed face
        up. Hidden money (§2 step 8) hides no move: it is a matter of the views and of the
        running result (`result`)."""
        return True

    def to_move(self, state: rl.State) -> int:
        return rl.to_move(state)

    def result(self, state: rl.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rl.State, viewer: Viewer) -> pb.MercadoDeLisboaView:
        return views.view(state, viewer)

    def render(self, view: Message) -> str:
        if not isinstance(view, pb.MercadoDeLisboaView):
            raise TypeError("render expects a MercadoDeLisboaView")
        return views.render(view)

    def parse(self, text: str, state: rl.State) -> pb.MercadoDeLisboaMove:
        return notation.parse(text, state)

    def format(self, move: pb.MercadoDeLisboaMove, state: rl.State) -> str:
        return notation.format_move(move, state)


class MercadoDeLisboaRecordedUnderV1(MercadoDeLisboa):
    """The rules as games recorded under mercado-de-lisboa/1 were folded: a solo stage with
    no placement left waited for the display refills of its last turn. Those games keep
    folding, and keep being continued, under the rules they were recorded with."""

    rules_version = "mercado-de-lisboa/1"
    solo_waits_for_refills = True
