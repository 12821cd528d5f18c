"""Golden playthroughs: whole recorded games replayed from notation, with their results.

Multiplayer files name the players, options and expected totals; the solo campaign is nine
stage files replayed in order, each stage's options carrying the campaign so far (the
campaign record is data in the options; see test_campaign.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL
from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.v1 import mercado_de_lisboa_pb2 as pb
from tests.support.play import created, events_of, new_position, play_all

from .positions import fame_parts

GOLDEN = Path(__file__).parent / "playthroughs"
MULTIPLAYER = sorted(p.name for p in GOLDEN.glob("*_players.txt"))


def _header(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            fields[key.strip()] = value.strip()
    return fields


def _options(
    text: str, campaign: pb.MercadoDeLisboaCampaign | None = None
) -> pb.MercadoDeLisboaOptions:
    options = pb.MercadoDeLisboaOptions()
    for pair in text.split():
        key, value = pair.split("=")
        if key == "money":
            options.money = (
                pb.MERCADO_DE_LISBOA_MONEY_OPEN
                if value == "open"
                else pb.MERCADO_DE_LISBOA_MONEY_HIDDEN
            )
        else:
            setattr(options, key, int(value))
    if campaign is not None:
        options.campaign.CopyFrom(campaign)
    return options


def _replay(path: Path, options: pb.MercadoDeLisboaOptions) -> folding.Position:
    header = _header(path)
    players = header["players"].split()
    lines = path.read_text(encoding="utf-8").splitlines()
    position = play_all(new_position("mercado-de-lisboa", players, options), lines)
    assert position.to_move() == TERMINAL
    # The same game folded from its events gives the same state (replay and verify).
    events = events_of(
        created("mercado-de-lisboa", players, options),
        [a.move for a in position.moves()],
        [a.notation for a in position.moves()],
    )
    assert folding.fold(events).state == position.state
    return position


def test_golden_files_exist() -> None:
    assert len(MULTIPLAYER) >= 2
    assert len(list(GOLDEN.glob("solo_stage*.txt"))) == 9


@pytest.mark.parametrize("name", MULTIPLAYER)
def test_multiplayer_golden(name: str) -> None:
    path = GOLDEN / name
    header = _header(path)
    players = header["players"].split()
    position = _replay(path, _options(header["options"]))
    result = GAME.result(position.state)
    totals = ", ".join(f"{players[s.seat]} {s.total}" for s in result.scores)
    assert totals == header["expect"]
    stands = ", ".join(f"{players[s]} {position.state.stands[s]}" for s in range(len(players)))
    assert stands == header["stands"]
    assert ", ".join(players[w] for w in result.winners) == header["winners"]
    assert result.tiebreak == header.get("tiebreak", "")
    for score in result.scores:
        items = {i.label: i.value for i in score.items}
        assert score.total == sum(v for k, v in items.items() if k != "stands on the market")


def test_solo_campaign_golden() -> None:
    campaign = pb.MercadoDeLisboaCampaign(name="golden")
    for stage in range(1, 10):
        path = GOLDEN / f"solo_stage{stage}.txt"
        header = _header(path)
        position = _replay(path, _options(header["options"], campaign))
        earlier, fame, stroke, total = fame_parts(position.state)
        money = rl.final_money(position.state, 0)[0]
        assert f"solo {money}" == header["expect"]
        assert fame == int(header["fame"])
        assert stroke == int(header["master_stroke"])
        assert total == int(header["campaign_total"]) == earlier + fame + stroke
        campaign.stages.add(
            stage=stage,
            fame=fame,
            money=money,
            master_stroke=stroke > 0,
            game_id=f"golden-stage-{stage}",
        )
    assert len(campaign.stages) == 9


def test_the_stage6_game_that_earns_fame() -> None:
    """A stage-6 game that earns 1 fame (the CLI campaign test plays it as its stage 6)."""
    path = GOLDEN / "campaign_stage6_fame.txt"
    header = _header(path)
    position = _replay(path, _options(header["options"]))
    _, fame, stroke, _ = fame_parts(position.state)
    assert f"solo {rl.final_money(position.state, 0)[0]}" == header["expect"]
    assert (fame, stroke) == (int(header["fame"]), int(header["master_stroke"]))
