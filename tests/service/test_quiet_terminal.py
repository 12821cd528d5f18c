"""The server's terminal keeps its start-up banner in view (issue 26, smaller friction):
with readable log lines (a terminal), a successful call writes no line, a refusal still
does; `--log-calls` writes every call's line, as JSON logs do by default."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from tablelog_client import Client, TablelogError
from tests.service.support import ServeProcess

pytestmark = pytest.mark.slow


def _calls_logged(data_dir: Path, *extra: str) -> str:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        served = ServeProcess(data_dir, *(extra or ("--no-json-logs",)), stderr=stderr).start()
        try:
            with Client(served.address, token=served.token, timeout=30) as client:
                client.create_game("splendor", ["Ann", "Bob"])
                with pytest.raises(TablelogError):
                    client.get_game("no-such-game")
            time.sleep(0.3)  # the refusal's line is written after the answer
        finally:
            served.stop()
        stderr.seek(0)
        return stderr.read()


def test_a_terminal_gets_refusals_not_a_line_per_call(tmp_path: Path) -> None:
    quiet = _calls_logged(tmp_path / "quiet")
    assert "CreateGame" not in quiet
    assert "GetGame" in quiet  # the refusal
    loud = _calls_logged(tmp_path / "loud", "--no-json-logs", "--log-calls")
    assert "CreateGame" in loud
