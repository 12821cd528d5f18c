"""The solo campaign (rules §9): stage options, fame, the once-per-campaign master stroke
and the campaign record carried in each stage game's options."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tablelog.replay.core import InvalidSetup
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import PUB
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

from .positions import COMPONENTS, build, fame_parts


def _money_for(stage: int, fame: int) -> int:
    """The least money that earns `fame` in `stage` (§9's thresholds)."""
    thresholds = rl.STAGES[stage].thresholds
    return thresholds[fame - 1] if fame else thresholds[0] - 1


def _options(stage: int, *records: tuple[int, int, bool]) -> pb.MercadoDeLisboaOptions:
    options = pb.MercadoDeLisboaOptions(stage=stage)
    options.campaign.name = "spring"
    for number, fame, stroke in records:
        options.campaign.stages.add(
            stage=number,
            fame=fame,
            money=_money_for(number, min(fame, 3)),
            master_stroke=stroke,
            game_id=f"game-{number}",
        )
    return options


def _record(
    stage: int, fame: int, money: int, game_id: str = "g", stroke: bool = False
) -> pb.MercadoDeLisboaStageRecord:
    return pb.MercadoDeLisboaStageRecord(
        stage=stage, fame=fame, money=money, master_stroke=stroke, game_id=game_id
    )


def _with(stage: int, *records: pb.MercadoDeLisboaStageRecord) -> pb.MercadoDeLisboaOptions:
    options = pb.MercadoDeLisboaOptions(stage=stage)
    options.campaign.stages.extend(records)
    return options


@pytest.mark.parametrize(
    ("stage", "money", "fame"),
    [
        (1, 79, 0),
        (1, 80, 1),
        (1, 100, 3),
        (3, 85, 2),
        (4, 90, 2),
        (6, 50, 3),
        (7, 69, 1),
        (8, 70, 3),
        (9, 109, 2),
    ],
)
def test_fame_thresholds(stage: int, money: int, fame: int) -> None:
    state = replace(build(1, money=[money], options=_options(stage)), over=True)
    assert fame_parts(state)[1] == fame


def test_campaign_total_and_master_stroke_once() -> None:
    earlier = _options(4, (1, 2, False), (2, 1, False), (3, 3, False))
    state = replace(build(1, money=[95], options=earlier), over=True, best_action=32)
    assert fame_parts(state) == (6, 2, 2, 10)
    used = _options(5, (1, 2, True), (4, 3, False))
    state = replace(build(1, money=[50], options=used), over=True, best_action=40, fours_placed=3)
    assert fame_parts(state) == (2 + 3 + 2, 3, 0, 10)


def test_master_stroke_needs_32_in_one_action() -> None:
    state = build(
        1,
        stands={f"{c}1": ("fish", 0) for c in "abcd"},
        offers=["4 fish+flower"],
        restaurants={"a2": "sushi", "b2": "pub", "c2": "sushi", "d2": "pub"},
        options=_options(2),
    )
    state = rl.bring_customers(state, state.rules.kind_of(4, [0, 1]), 10)
    assert state.best_action == 32
    assert state.from_four == 32


def test_stage2_counts_only_four_customer_money() -> None:
    state = replace(build(1, money=[200], options=_options(2)), over=True, from_four=60)
    assert fame_parts(state)[1] == 2
    labels = [i.label for i in GAME.result(state).scores[0].items]
    assert any("counted: 60 from 4-customer tiles" in label for label in labels)


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (pb.MercadoDeLisboaOptions(stage=10), "STAGE"),
        (_options(3, (3, 1, False)), "CAMPAIGN"),
        (_options(5, (2, 1, False), (1, 1, False)), "CAMPAIGN"),
        (_options(5, (1, 4, False)), "CAMPAIGN"),
        (_options(5, (1, 1, True), (2, 1, True)), "CAMPAIGN"),
        (_options(0, (1, 1, False)), "CAMPAIGN"),
        (
            pb.MercadoDeLisboaOptions(stage=2, stage1_good=pb.MERCADO_DE_LISBOA_GOOD_FISH),
            "STAGE1_GOOD",
        ),
        (
            pb.MercadoDeLisboaOptions(stage=2, stage9_side=pb.MERCADO_DE_LISBOA_SIDE_EAST),
            "STAGE9_SIDE",
        ),
    ],
)
def test_invalid_campaign_options(options: pb.MercadoDeLisboaOptions, code: str) -> None:
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["solo"], options, 1, COMPONENTS)
    assert error.value.code == code


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # Fame must match the stage's thresholds for the recorded money.
        (_with(2, _record(1, 2, 85)), "recorded 85 coins: that earns 1 fame (thresholds 80/90"),
        (_with(2, _record(1, 0, 100)), "that earns 3 fame"),
        (_with(9, _record(8, 3, 69)), "stage 8 (In search of the pub) recorded 69 coins"),
        # Stage 5 scores its thresholds, or 0 with fewer than three 4-customer tiles.
        (_with(6, _record(5, 1, 50)), "or 0 with fewer than three 4-customer tiles"),
        # Every stage names its game, once.
        (_with(3, _record(1, 1, 80, game_id=" ")), "must name the game that recorded it"),
        (_with(3, _record(1, 1, 80, "x"), _record(2, 1, 0, "x")), "already the record of"),
        # Order and the master stroke.
        (_with(3, _record(2, 1, 55, "a"), _record(1, 1, 80, "b")), "played in order"),
        (
            _with(4, _record(1, 1, 80, "a", True), _record(2, 0, 0, "b", True)),
            "once per campaign; 2 earlier stages",
        ),
    ],
)
def test_campaign_records_are_checked(options: pb.MercadoDeLisboaOptions, message: str) -> None:
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["solo"], options, 1, COMPONENTS)
    assert error.value.code == "CAMPAIGN"
    assert message in error.value.message


def test_consistent_campaign_records_are_accepted() -> None:
    """Stage 2's fame counts money the record does not hold (any fame goes); stage 5 may
    score 0 whatever its money (fewer than three 4-customer tiles placed)."""
    options = _with(
        6,
        _record(1, 3, 100, "a"),
        _record(2, 3, 10, "b"),
        _record(3, 0, 69, "c", True),
        _record(4, 1, 89, "d"),
        _record(5, 0, 50, "e"),
    )
    state = GAME.setup(["solo"], options, 1, COMPONENTS)
    assert state.rules.campaign_fame == 3 + 3 + 0 + 1 + 0 + 2
    assert state.rules.master_stroke_used
    stage5 = _with(6, _record(5, 3, 50, "e"))
    assert GAME.setup(["solo"], stage5, 1, COMPONENTS).rules.campaign_fame == 3


def test_stages_are_solo_only() -> None:
    with pytest.raises(InvalidSetup) as error:
        GAME.setup(["a", "b"], pb.MercadoDeLisboaOptions(stage=3), 1, COMPONENTS)
    assert error.value.code == "SOLO_OPTIONS"


def test_stage_setups() -> None:
    s7 = GAME.setup(["solo"], pb.MercadoDeLisboaOptions(stage=7), 1, COMPONENTS)
    assert [item for item in s7.pending if item[0] == rl.REVEAL_ENTRANCE][:1] == [
        (rl.REVEAL_ENTRANCE, 0, 1)
    ]
    assert sum(1 for item in s7.pending if item[0] == rl.REVEAL_OFFER) == 0
    s8 = GAME.setup(["solo"], pb.MercadoDeLisboaOptions(stage=8), 1, COMPONENTS)
    assert s8.held == ((PUB,),)
    s9 = GAME.setup(
        ["solo"],
        pb.MercadoDeLisboaOptions(stage=9, stage9_side=pb.MERCADO_DE_LISBOA_SIDE_NORTH),
        1,
        COMPONENTS,
    )
    assert [item[1] for item in s9.pending if item[0] == rl.REVEAL_ENTRANCE] == [0, 2, 4]
    assert s9.rules.stage9_closed == (1, 3)


def test_stage7_tile_pays_every_stand_when_its_line_fills() -> None:
    """Stage 7 (seed): a 2/3/4-customer tile pays only once its line holds 2/3/4 stands; then
    it pays every matching stand of the line, and afterwards each new matching stand."""
    state = build(
        1,
        stands={"a2": ("fish", 0)},
        customers={"e2": "2 fish+meat"},
        hands=[["fish", "fish", "meat"]],
        money=[10],
        options=_options(7),
    )
    state = rl.open_stand(state, 0, 6, 3, False)  # fish on b2: the line reaches 2 stands
    assert state.ledger[0][rl.L_STANDS] == 2 * 2
    state = rl.open_stand(replace(state, pending=()), 3, 7, 4, False)  # meat on c2
    assert state.ledger[0][rl.L_STANDS] == 4 + 2


def test_stage7_ends_after_the_eighth_stand() -> None:
    stands = {f"{c}1": ("meat", 0) for c in "abcde"}
    stands.update({"a5": ("meat", 0), "b5": ("meat", 0)})
    state = build(1, stands=stands, hands=[["fish"]], money=[20], options=_options(7))
    assert rl.open_stand(state, 0, 12, 3, False).over
