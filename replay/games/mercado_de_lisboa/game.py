"""Mercado de Lisboa behind the common `Game` surface (replay/core.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Final

from google.protobuf.message import Message

from replay.core import DEALT, TABLE, InvalidSetup, OptionDoc, Viewer, recorded_component
from replay.games.mercado_de_lisboa import moves as mv
from replay.games.mercado_de_lisboa import notation, views
from replay.games.mercado_de_lisboa import rules as rl
from replay.games.mercado_de_lisboa.components import COMPONENT_NAME, default_component, load_board
from tablelog.v1 import game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

COMPLETED: Final = game_pb2.TERMINATION_COMPLETED
ONGOING: Final = game_pb2.TERMINATION_ONGOING


SHORT_LEDGER: Final = ("start", "customers", "stands", "restaurants", "coins", "costs")
FAME_EARLIER: Final = "fame from earlier stages"
FAME_STAGE: Final = "fame for stage"
FAME_STROKE: Final = "fame for the master stroke"


def _money_items(state: rl.State, seat: int) -> tuple[int, list[game_pb2.ScoreItem]]:
    """Rules §7: the seat's money, itemised (costs and the restaurant penalty negative)."""
    final, penalty = rl.final_money(state, seat) if state.over else (state.money(seat), 0)
    items = [
        game_pb2.ScoreItem(label=label, value=-value if i == rl.L_COSTS else value)
        for i, (label, value) in enumerate(zip(rl.LEDGER_LABELS, state.ledger[seat], strict=True))
    ]
    items.append(game_pb2.ScoreItem(label="unplaced restaurants", value=-penalty))
    return final, items


def _stage_result(state: rl.State, stage: rl.Stage) -> game_pb2.SeatScore:
    """Rules §9: a stage game scores fame; the total is the campaign's fame so far (the
    earlier stages carried in the options, this stage, the once-per-campaign master stroke).
    The stage's money and its breakdown are spelled out in the stage item's label."""
    money, items = _money_items(state, 0)
    fame, stroke, counted = rl.stage_fame(state)
    breakdown = ", ".join(
        f"{short} {item.value}"
        for short, item in zip((*SHORT_LEDGER, "penalty"), items, strict=True)
    )
    detail = f"{money} coins ({breakdown}); needs {'/'.join(map(str, stage.thresholds))}"
    if stage.number == 2:
        detail += f"; counted: {counted} from 4-customer tiles"
    if stage.number == 5:
        detail += f"; 4-customer tiles placed: {state.fours_placed} (3 needed)"
    fame_items = [
        game_pb2.ScoreItem(label=FAME_EARLIER, value=state.rules.campaign_fame),
        game_pb2.ScoreItem(label=f"{FAME_STAGE} {stage.number}: {detail}", value=fame),
        game_pb2.ScoreItem(
            label=f"{FAME_STROKE} (best single action {state.best_action}, needs "
            f"{rl.MASTER_STROKE}{', already used' if state.rules.master_stroke_used else ''})",
            value=stroke,
        ),
    ]
    total = state.rules.campaign_fame + fame + stroke
    return game_pb2.SeatScore(seat=0, total=total, items=fame_items)


def _hidden_result(state: rl.State, stage: rl.Stage | None) -> game_pb2.GameResult:
    """Rules §2 step 8 (hidden money): while the game is in progress the result, which every
    viewer receives, reports no money at all: no per-seat scores. A solo stage (§9) reports
    only the fame of the earlier stages, which the campaign record makes public anyway."""
    scores = []
    if state.rules.solo and stage is not None:
        fame = state.rules.campaign_fame
        scores.append(
            game_pb2.SeatScore(
                seat=0,
                total=fame,
                items=[game_pb2.ScoreItem(label=FAME_EARLIER, value=fame)],
            )
        )
    return game_pb2.GameResult(termination=ONGOING, scores=scores)


def result(state: rl.State) -> game_pb2.GameResult:
    """Rules §7: money after the restaurant penalty, itemised; most money wins, then most
    stands on the market, then a shared win. A solo stage (§9) scores the campaign's fame.
    With hidden money (§2 step 8) nothing about money is reported until the game is over."""
    rules = state.rules
    termination = COMPLETED if state.over else ONGOING
    stage = rl.stage_of(rules)
    if rules.money_hidden and not state.over:
        return _hidden_result(state, stage)
    if rules.solo and stage is not None:
        score = _stage_result(state, stage)
        return game_pb2.GameResult(
            termination=termination, scores=[score], winners=[0] if state.over else []
        )
    scores = []
    finals = []
    for seat in range(rules.players):
        final, items = _money_items(state, seat)
        scores.append(game_pb2.SeatScore(seat=seat, total=final, items=items))
        finals.append((final, state.stands[seat]))
    if not state.over:
        return game_pb2.GameResult(termination=termination, scores=scores)
    best_money = max(f[0] for f in finals)
    leaders = [i for i, f in enumerate(finals) if f[0] == best_money]
    tiebreak = ""
    if len(leaders) > 1:
        most = max(finals[i][1] for i in leaders)
        leaders = [i for i in leaders if finals[i][1] == most]
        tiebreak = "most stands on the market"
        if len(leaders) > 1:
            tiebreak = "most stands on the market; still tied: shared win"
    return game_pb2.GameResult(
        termination=termination, scores=scores, winners=leaders, tiebreak=tiebreak
    )


class MercadoDeLisboa:
    name = "mercado-de-lisboa"
    title = "Mercado de Lisboa"
    min_players = 1
    max_players = 4
    rules_version = "mercado-de-lisboa/1"
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
        return rl.initial_state(replace(rules, names=tuple(players)))

    def apply(self, state: rl.State, move: pb.MercadoDeLisboaMove) -> rl.State:
        return mv.apply(state, move)

    def legal_moves(self, state: rl.State) -> Sequence[pb.MercadoDeLisboaMove]:
        return mv.legal_moves(state)

    def chance_outcomes(self, state: rl.State) -> Sequence[tuple[pb.MercadoDeLisboaMove, int]]:
        return mv.chance_outcomes(state)

    def is_chance(self, move: pb.MercadoDeLisboaMove) -> bool:
        return move.WhichOneof("action") in mv.CHANCE_ACTIONS

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
        return mv.to_move(state)

    def result(self, state: rl.State) -> game_pb2.GameResult:
        return result(state)

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
