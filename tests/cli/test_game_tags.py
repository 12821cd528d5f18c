"""`tablelog new --event --site --date --table` (issue 26): stored with the game and
written as the text record's tags; by default the club's name and today's date."""

from __future__ import annotations

import datetime
import json

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli import tablelog

pytestmark = pytest.mark.slow


def test_new_sets_the_records_tags(server: BackgroundServer, client: Client) -> None:
    made = tablelog(
        server, "new", "splendor", "Ann", "Bob", "--json",
        "--event", "Thursday club night", "--site", "Lisbon", "--date", "2026.12.01",
        "--table", "2",
    )  # fmt: skip
    game_id = json.loads(made.stdout)["gameId"]
    record = client.export_record([game_id])
    assert (
        '[Event "Thursday club night"]\n[Site "Lisbon"]\n[Date "2026.12.01"]\n[Table "2"]\n'
        in record
    )
    plain = json.loads(tablelog(server, "new", "splendor", "Ann", "Bob", "--json").stdout)
    tags = client.export_record([plain["gameId"]])
    club = client.whoami().club.name
    today = datetime.date.today().strftime("%Y.%m.%d")
    assert f'[Event "{club}"]\n[Date "{today}"]\n' in tags
    refused = tablelog(server, "new", "splendor", "Ann", "Bob", "--event", "x\ny", ok=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: A tag's value is one line.")
