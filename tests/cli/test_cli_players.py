"""`tablelog players`: list the club's players, merge two names of one person, rename, and
read the log of changes, through the command as a user types it."""

from __future__ import annotations

import json
import uuid

import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tests.cli.test_cli_members import tablelog
from tests.service.helpers import OWNER_NAME, OWNER_TOKEN

pytestmark = pytest.mark.slow


def test_players_list_merge_rename_and_log(server: BackgroundServer) -> None:
    tag = uuid.uuid4().hex[:6]
    ann, anne, bob = f"Ann{tag}", f"anne{tag}", f"Bob{tag}"
    with Client(server.target, token=OWNER_TOKEN) as owner:
        owner.create_game("splendor", [ann, bob])
        owner.create_game("splendor", [anne, bob.upper()])
    listed = tablelog(server.target, "players", token=OWNER_TOKEN).stdout.splitlines()
    assert {ann, anne, bob} <= set(listed)
    merged = tablelog(server.target, "players", "merge", ann, anne.upper(), token=OWNER_TOKEN)
    assert merged.stdout.strip() == f"merged: {ann}  (also {anne})"
    tablelog(server.target, "players", "rename", bob.lower(), f"Robert{tag}", token=OWNER_TOKEN)
    shown = json.loads(tablelog(server.target, "players", "--json", token=OWNER_TOKEN).stdout)
    mine = {
        p["displayName"]: p.get("aliases", [])
        for p in shown["players"]
        if tag in p["displayName"].lower()
    }
    assert mine == {ann: [anne], f"Robert{tag}": [bob]}
    log = tablelog(server.target, "players", "log", token=OWNER_TOKEN).stdout
    assert f"{anne} merged into {ann} (by {OWNER_NAME})" in log
    assert f"{bob} renamed Robert{tag} (by {OWNER_NAME})" in log
    refused = tablelog(
        server.target, "players", "rename", ann, f"Robert{tag}", token=OWNER_TOKEN, ok=False
    )
    assert refused.returncode != 0
    assert "merge them" in refused.stderr
