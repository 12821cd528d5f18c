"""Mercado de Lisboa as a `tablelog.replay.core.Game`: metadata, and one-line delegations from the
common surface to `components.py`, `rules.py`, `scoring.py`, `views.py`, `picture.py` and
`notation.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from google.protobuf.message import Message

from tablelog.replay.core import DEALT, TABLE, OptionDoc, Viewer
from tablelog.replay.games.mercado_de_lisboa import (
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
    reveals_all_at_end: bool = True
    """RULES.md §2 step 8 and final scoring: hidden money is kept behind the screens only
    while playing; the final scoring counts every coin."""
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc("money", "open or hidden money (hidden: other seats see no coins)", "hidden"),
        OptionDoc(
            "first_player",
            "the player who starts (by name in the CLI; the seat from 0 in the API); with 4 "
            "players the last in turn order gets the pub",
            "the first player named",
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
        return components.default_components()

    def setup(
        self,
        players: Sequence[str],
        options: pb.MercadoDeLisboaOptions | None,
        mode: int,
        component_files: Mapping[str, game_pb2.ComponentFile],
    ) -> rules.State:
        return rules.setup(
            players,
            options,
            mode,
            component_files,
            solo_waits_for_refills=self.solo_waits_for_refills,
        )

    def apply(self, state: rules.State, move: pb.MercadoDeLisboaMove) -> rules.State:
        return rules.apply(state, move)

    def legal_moves(self, state: rules.State) -> Sequence[pb.MercadoDeLisboaMove]:
        return rules.legal_moves(state)

    def chance_outcomes(self, state: rules.State) -> Sequence[tuple[pb.MercadoDeLisboaMove, int]]:
        return rules.chance_outcomes(state)

    def is_chance(self, move: pb.MercadoDeLisboaMove) -> bool:
        return move.WhichOneof("action") in rules.CHANCE_ACTIONS

    def visible_to(self, move: pb.MercadoDeLisboaMove, state: rules.State, viewer: Viewer) -> bool:
        return rules.visible_to(move, state, viewer)

    def hides_from(self, state: rules.State, viewer: Viewer) -> bool:
        return views.hides_from(state, viewer)

    def redact(self, state: rules.State, viewer: Viewer) -> rules.State:
        return views.redact(state, viewer)

    def to_move(self, state: rules.State) -> int:
        return rules.to_move(state)

    def result(self, state: rules.State) -> game_pb2.GameResult:
        return scoring.result(state)

    def view(self, state: rules.State, viewer: Viewer) -> pb.MercadoDeLisboaView:
        return views.view(state, viewer)

    def render(self, view: Message) -> str:
        if not isinstance(view, pb.MercadoDeLisboaView):
            raise TypeError("render expects a MercadoDeLisboaView")
        return views.render(view)

    def picture(
        self,
        view: Message,
        *,
        last_move: pb.MercadoDeLisboaMove | None = None,
        approximate: str = "",
        layout: str = "wide",
    ) -> str:
        if not isinstance(view, pb.MercadoDeLisboaView):
            raise TypeError("picture expects a MercadoDeLisboaView")
        return picture.picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: rules.State) -> pb.MercadoDeLisboaMove:
        return notation.parse(text, state)

    def format(self, move: pb.MercadoDeLisboaMove, state: rules.State) -> str:
        return notation.format_move(move, state)

    def undealt(
        self, move: pb.MercadoDeLisboaMove, state: rules.State
    ) -> pb.MercadoDeLisboaMove | None:
        """RULES.md §2 step 3, §4.1, §4.3: every tile the server draws the table turns up
        (a face-down restaurant when it is turned over, not at setup): the same moves."""
        return move

    def detail(self, move: pb.MercadoDeLisboaMove, state: rules.State) -> str:
        """RULES.md §4.1-§4.5: each action's text names the tile it places or takes
        (`stand fish b3 take grape`), never a place alone (docs/notation)."""
        return ""

    def split(self, text: str, state: rules.State) -> Sequence[str]:
        return notation.split(text, state)

    def touches(self, move: pb.MercadoDeLisboaMove, state: rules.State) -> Touches:
        return touches.touches(move, state)

    def words(self, move: pb.MercadoDeLisboaMove, state: rules.State, viewer: Viewer) -> str:
        return words.words(move, state, viewer)


class MercadoDeLisboaRecordedUnderV1(MercadoDeLisboa):
    """The rules as games recorded under mercado-de-lisboa/1 were folded: a solo stage with
    no placement left waited for the display refills of its last turn. Those games keep
    folding, and keep being continued, under the rules they were recorded with."""

    rules_version = "mercado-de-lisboa/1"
    solo_waits_for_refills = True
