"""The per-RPC log line: written without structlog's chain, it is the line the chain writes
(same fields, same order); successful reads may be sampled (`--log-sample-reads`), changes
and refusals never are."""

from __future__ import annotations

import io
import json
import re
import time

import pytest
import structlog

from tablelog.service import logs
from tablelog.service.api import interceptors
from tablelog.service.api.http_api import API_PREFIXES
from tests.service.test_connect_get import every_rpc, marked

FIELDS = {
    "method": "RecordMove",
    "game_id": "abcdefghijkl",
    "request_id": "r" * 16,
    "member_id": "m_1",
    "club": "local",
    "revision": 57,
    "duration_ms": 0.412,
    "status": "OK",
}


def sink_into(monkeypatch: pytest.MonkeyPatch, threshold: int = 20) -> io.StringIO:
    captured = io.StringIO()
    monkeypatch.setattr(logs, "_rpc_sink", logs._JsonSink(captured, threshold))
    return captured


def test_the_line_is_the_one_structlog_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    by_chain = io.StringIO()
    chained = structlog.wrap_logger(
        structlog.PrintLogger(by_chain),
        processors=[
            structlog.processors.add_log_level,
            logs.UtcStamp(),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=logs.json_line),
        ],
    )
    chained.warning("rpc", **FIELDS)
    direct = sink_into(monkeypatch)
    logs.RpcLogger("tablelog.rpc").warning("rpc", **dict(FIELDS))
    expected, written = by_chain.getvalue(), direct.getvalue()
    assert written.endswith("\n")
    assert written.count("\n") == 1
    stamp = re.compile(r'"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"')
    assert stamp.sub("T", written) == stamp.sub("T", expected)
    assert list(json.loads(written)) == [*FIELDS, "event", "level", "timestamp"]


def test_below_the_level_nothing_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = sink_into(monkeypatch, threshold=30)
    rpc = logs.RpcLogger("tablelog.rpc")
    rpc.info("rpc", **dict(FIELDS))
    assert captured.getvalue() == ""
    rpc.warning("rpc", **dict(FIELDS))
    assert json.loads(captured.getvalue())["level"] == "warning"


def finish(method: str, status: str) -> None:
    fields = {"method": method, "game_id": "g"}
    interceptors._finish(fields, time.perf_counter(), status)


def test_successful_reads_are_sampled_changes_and_refusals_never(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    captured = sink_into(monkeypatch)
    monkeypatch.setattr(interceptors, "log", logs.RpcLogger("tablelog.rpc"))
    monkeypatch.setattr(logs, "_read_sample_rate", 0.0)
    for _ in range(50):
        finish("GetState", "OK")
        finish("WatchGame", "OK")
    finish("RecordMove", "OK")
    finish("AmendMove", "OK")
    finish("AddMember", "OK")
    finish("GetState", "NOT_FOUND")
    finish("GetState", "CANCELLED")
    logged = [
        (line["method"], line["status"])
        for line in map(json.loads, captured.getvalue().splitlines())
    ]
    assert logged == [
        ("RecordMove", "OK"),
        ("AmendMove", "OK"),
        ("AddMember", "OK"),
        ("GetState", "NOT_FOUND"),
        ("GetState", "CANCELLED"),
    ]
    monkeypatch.setattr(logs, "_read_sample_rate", 0.5)
    captured.truncate(0)
    captured.seek(0)
    for _ in range(400):
        finish("GetState", "OK")
    assert 120 <= captured.getvalue().count("\n") <= 280  # about half (binomial, 400 draws)
    monkeypatch.setattr(logs, "_read_sample_rate", 1.0)
    captured.truncate(0)
    captured.seek(0)
    for _ in range(20):
        finish("GetState", "OK")
    assert captured.getvalue().count("\n") == 20


def test_the_sampled_reads_are_the_methods_marked_as_changing_nothing() -> None:
    """The list was written by hand and missed the reads added since (the standings, the
    rosters, the clubs): their successful calls were logged every time."""
    reads = {
        name.rsplit("/", 1)[1]
        for name, method in every_rpc().items()
        if f"/{name}".startswith(API_PREFIXES) and marked(method)
    }
    assert reads == interceptors.SAMPLED_READS
    assert {"GetStandings", "GetPlayerRecord", "ListPlayers", "GetState"} <= reads
    assert not {"RecordMove", "VerifyGame", "AddMember"} & reads


def test_a_sample_rate_is_a_share() -> None:
    assert logs.parse_sample_rate("0.25") == 0.25
    for bad in ("-0.1", "1.5"):
        with pytest.raises(ValueError, match="between 0 and 1"):
            logs.parse_sample_rate(bad)
    with pytest.raises(ValueError, match="could not convert"):
        logs.parse_sample_rate("lots")


def test_serve_reads_the_share_from_its_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tablelog_client.cli import build_parser

    parsed = build_parser().parse_args(["serve", "--log-sample-reads", "0.1"])
    assert parsed.log_sample_reads == 0.1
    monkeypatch.setenv(logs.READ_SAMPLE_VARIABLE, "0.25")
    assert build_parser().parse_args(["serve"]).log_sample_reads == 0.25
    monkeypatch.delenv(logs.READ_SAMPLE_VARIABLE)
    assert build_parser().parse_args(["serve"]).log_sample_reads == 1.0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--log-sample-reads", "2"])
    assert "--log-sample-reads" in capsys.readouterr().err
