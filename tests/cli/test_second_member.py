"""The second member's path (issue 26, item 2), on two machines (two HOMEs): the owner
invites Dana; on Dana's machine `tablelog login ADDRESS` makes that server the default
(with its token), so `tablelog list`, `whoami` and recording need no --address;
`tablelog logout` forgets it again."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tablelog.service.api.server import BackgroundServer
from tests.service.helpers import OWNER_TOKEN
from tests.service.support import Certificates, tablelog_command
from tests.service.test_transport import certificates, tls_server

__all__ = ["certificates", "tls_server"]

pytestmark = pytest.mark.slow


def machine(home: Path) -> dict[str, str]:
    """The environment of a machine whose user's home is `home`: nothing about any server
    in it (no $TABLELOG_ADDRESS, no token)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLELOG_")}
    env["HOME"] = str(home)
    for variable, folder in (
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        env[variable] = str(home / folder)
    return env


def run(env: dict[str, str], *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*tablelog_command(), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def test_an_invited_member_logs_in_once_and_records_without_flags(
    server: BackgroundServer, tmp_path: Path
) -> None:
    address = server.target
    owner = machine(tmp_path / "owner-home") | {
        "TABLELOG_ADDRESS": address,
        "TABLELOG_TOKEN": OWNER_TOKEN,
    }
    dana = machine(tmp_path / "dana-home")
    added = run(owner, "members", "add", "Dana", "--role", "recorder", "--with-token").stdout
    token = next(word for word in added.split() if word.startswith("tlm_"))
    game_id = json.loads(run(owner, "new", "splendor", "Ann", "Dana", "--json").stdout)["gameId"]

    logged = run(dana, "login", address, "--token", token).stdout
    assert f"logged in to {address} as Dana (recorder of " in logged
    assert f"{address} is now your default server" in logged
    # Printed from the home, as the README shows it (a user knows ~, not its full path).
    assert "; token kept in ~/.config/tablelog/credentials.json\n" in logged
    # Every later command goes to that server with that token, no flags.
    assert game_id in run(dana, "list").stdout
    who = run(dana, "whoami").stdout
    assert who.startswith("Dana (recorder) of ")
    assert who.rstrip().endswith(f", on {address} (token from ~/.config/tablelog/credentials.json)")
    run(dana, "use", game_id)
    recorded = run(dana, "move", "table: reveal 1.1 1w0:u1g2r1k1").stdout
    assert recorded.startswith("table: reveal 1.1 1w0:u1g2r1k1  (revision 2)")
    audit = run(owner, "audit", game_id).stdout
    assert "(recorded by Dana)" in audit

    out = run(dana, "logout").stdout
    assert out.startswith(f"logged out of {address}: its token is forgotten on this machine")
    config = json.loads((tmp_path / "dana-home/.config/tablelog/credentials.json").read_text())
    assert config == {"servers": {}}
    missing = run(dana, "whoami", "--address", address, ok=False)
    assert "TOKEN_MISSING" in missing.stderr
    again = run(dana, "logout", ok=False)
    assert again.stderr == "not logged in to any server (tablelog login ADDRESS)\n"


def test_login_keeps_the_servers_ca_with_its_token(
    tls_server: BackgroundServer, certificates: Certificates, tmp_path: Path
) -> None:
    address = tls_server.target
    dana = machine(tmp_path / "home")
    token = tls_server.owner_token
    run(dana, "login", address, "--token", token, "--ca", str(certificates.ca))
    # TLS to the default server, trusting the CA kept at login: no --ca, no --address.
    assert f", on {address} (token from " in run(dana, "whoami").stdout
    run(dana, "login", address, "--token", token)  # again: the CA kept stays
    assert f", on {address} (token from " in run(dana, "whoami").stdout
    # A machine that has not kept the CA cannot even shake hands with that server.
    stranger = run(machine(tmp_path / "other"), "whoami", "--address", address, ok=False)
    assert stranger.returncode == 1
