"""Scoring of Mercado de Lisboa: the final money with its itemised ledger, the winner and
the tie-break (rules §7), and the fame of a solo campaign stage (§9)."""

from __future__ import annotations

from typing import Final

from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.v1 import game_pb2

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
