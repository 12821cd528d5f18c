"""`tablelog clubs` against a real `tablelog serve` on a fresh data directory: whoever
started the server is its operator with no set-up (the CLI beside it finds `owner.token`),
makes a club and gets its first owner's token on stdout; that owner is no operator."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import platformdirs

from tests.service.support import ServeProcess, tablelog_command


def tablelog(
    address: str, *args: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The command as run beside the server: no token but the one given."""
    env = {k: v for k, v in os.environ.items() if k != "TABLELOG_TOKEN"}
    env["TABLELOG_ADDRESS"] = address
    if token is not None:
        env["TABLELOG_TOKEN"] = token
    return subprocess.run(
        [*tablelog_command(), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_user_who_started_serve_creates_clubs_with_no_set_up(isolated_home: Path) -> None:
    data_dir = platformdirs.user_data_path("tablelog", appauthor=False)
    assert str(data_dir).startswith(str(isolated_home))
    serving = ServeProcess(data_dir).start()
    try:
        address = serving.address
        made = tablelog(address, "clubs", "create", "Thursday club", "--owner", "Tess")
        assert made.returncode == 0, made.stderr
        token = made.stdout.strip()
        assert token.startswith("tlm_")
        assert "Thursday club" in made.stderr
        who = tablelog(address, "whoami", "--json", token=token)
        assert who.returncode == 0, who.stderr
        answer = json.loads(who.stdout)
        assert answer["club"]["name"] == "Thursday club"
        assert answer["member"]["displayName"] == "Tess"
        assert answer["member"]["role"] == "ROLE_OWNER"
        assert not answer.get("operator", False)
        listed = tablelog(address, "clubs", "list", "--json")
        names = {club["name"] for club in json.loads(listed.stdout)["clubs"]}
        assert {"local club", "Thursday club"} <= names
        refused = tablelog(address, "clubs", "list", token=token)
        assert refused.returncode != 0
        assert "Only the server's operator may call ListClubs" in refused.stderr
    finally:
        serving.stop()
