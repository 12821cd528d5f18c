"""A whole Mercado de Lisboa solo campaign (rules §9) recorded through the real `tablelog`
command: nine stage games, each created with `tablelog new --option campaign=<json>`
carrying the earlier stages' records (the game ids the CLI answered, the fame and money the
CLI reported), its moves from a golden playthrough typed with `tablelog move`, and its
result read back with `tablelog info --json`. The campaign's fame total is checked at the
end, and a stage whose campaign record contradicts the stage thresholds is refused.

`new` and `info` run the installed command in a process of its own; the ~600 moves run the
same command's entry point (`tablelog_client.cli.main`) in this process, so that the whole
campaign takes seconds rather than a process start per move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format

from tablelog.service.api.server import BackgroundServer
from tablelog.v1 import game_pb2
from tablelog_client import cli
from tests.cli.test_cli import tablelog

pytestmark = pytest.mark.slow

PLAYTHROUGHS = Path(__file__).resolve().parents[1] / "games" / "mercado_de_lisboa" / "playthroughs"
STAGE_FILES = {
    stage: "campaign_stage6_fame.txt" if stage == 6 else f"solo_stage{stage}.txt"
    for stage in range(1, 10)
}
"""The golden stage games; stage 6 is the one that earns fame (1), so the total is not 0."""
FAME_TOTAL = 1


def _header(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            fields[key.strip()] = value.strip()
    return fields


def _moves(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


def _move(
    server: BackgroundServer, capsys: pytest.CaptureFixture[str], game_id: str, text: str
) -> str:
    code = cli.main(["move", "--address", server.target, game_id, text])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _result(server: BackgroundServer, game_id: str) -> tuple[str, game_pb2.GameResult]:
    info = json.loads(tablelog(server, "info", game_id, "--json").stdout)
    return info["status"], json_format.ParseDict(info["result"], game_pb2.GameResult())


def test_a_whole_solo_campaign_through_the_cli(
    server: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    campaign: dict[str, object] = {"name": "cli campaign", "stages": []}
    records: list[dict[str, object]] = []
    total = 0
    for stage, name in STAGE_FILES.items():
        path = PLAYTHROUGHS / name
        header = _header(path)
        assert header["options"] == f"stage={stage}"
        created = tablelog(
            server,
            "new",
            "mercado-de-lisboa",
            "solo",
            "--option",
            f"stage={stage}",
            "--option",
            "campaign=" + json.dumps(campaign | {"stages": records}),
            "--json",
        ).stdout
        game_id: str = json.loads(created)["gameId"]
        # The first move typed alone, the rest piped into one `tablelog record` (as a
        # recorder replaying a scoresheet would): one process per stage, not per move.
        first, *rest = _moves(path)
        assert "  (revision " in _move(server, capsys, game_id, first)
        piped = tablelog(server, "record", game_id, stdin="\n".join(rest) + "\n")
        assert piped.stdout.count("  (revision ") == len(rest), piped.stdout

        status, result = _result(server, game_id)
        assert status == "GAME_STATUS_ENDED"
        (score,) = result.scores
        assert list(result.winners) == [0]
        earlier, this_stage, stroke = score.items
        money = int(header["expect"].split()[1])
        assert earlier.label == "fame from earlier stages"
        assert earlier.value == total
        assert this_stage.label.startswith(f"fame for stage {stage}: {money} coins")
        assert this_stage.value == int(header["fame"])
        assert stroke.value == int(header["master_stroke"])
        total += this_stage.value + stroke.value
        assert score.total == total
        records.append(
            {
                "stage": stage,
                "fame": this_stage.value,
                "money": money,
                "master_stroke": stroke.value > 0,
                "game_id": game_id,
            }
        )
    assert total == FAME_TOTAL

    # A tenth game that contradicts its record (stage 6's 31 coins earn 1 fame, not 3).
    forged = [dict(r, fame=3) if r["stage"] == 6 else r for r in records[:6]]
    refused = tablelog(
        server,
        "new",
        "mercado-de-lisboa",
        "solo",
        "--option",
        "stage=7",
        "--option",
        "campaign=" + json.dumps(campaign | {"stages": forged}),
        ok=False,
    )
    assert refused.returncode != 0
    assert "recorded 31 coins: that earns 1 fame (thresholds 30/40/50), not 3" in refused.stderr
