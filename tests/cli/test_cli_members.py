"""Who may record, through the `tablelog` command: an owner adds members and tokens, a
second member records only what their role allows, `login` keeps a token for an address,
and on a fresh data directory `tablelog serve` and the CLI beside it need no flags."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import platformdirs
import pytest

from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client
from tablelog_client.credentials import Token, resolve_token, store_token
from tests.service.helpers import OWNER_TOKEN
from tests.service.support import ServeProcess, tablelog_command

pytestmark = pytest.mark.slow


def tablelog(
    address: str, *args: str, token: str | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    """The command with `token` in $TABLELOG_TOKEN (None: no token in the environment)."""
    env = dict(os.environ, TABLELOG_ADDRESS=address)
    env.pop("TABLELOG_TOKEN", None)
    if token is not None:
        env["TABLELOG_TOKEN"] = token
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


def _token_of(output: str) -> str:
    """The token a command printed (shown once)."""
    return next(word for word in output.split() if word.startswith(("tlm_", "tll_")))


def test_a_second_member_records_only_what_their_role_allows(server: BackgroundServer) -> None:
    address = server.target
    owner = OWNER_TOKEN
    added = tablelog(
        address, "members", "add", "Pat", "--role", "player", "--with-token", token=owner
    )
    pat = _token_of(added.stdout)
    assert pat.startswith("tlm_")
    spectator = _token_of(
        tablelog(
            address, "members", "add", "Sam", "--role", "spectator", "--with-token", token=owner
        ).stdout
    )
    listed = tablelog(address, "members", "list", token=owner).stdout
    assert "Pat  player" in listed
    assert "Sam  spectator" in listed
    tablelog(address, "club", "--players-may-record", "yes", token=owner)
    made = json.loads(
        tablelog(
            address, "new", "splendor", "Ann", "Bob", "--mode", "dealt", "--json", token=owner
        ).stdout
    )
    game_id = made["gameId"]
    tablelog(address, "seat", game_id, "0", "Pat", token=owner)
    with Client(address, token=owner) as client:
        first = client.legal_moves(game_id)[1][0].notation
    said = tablelog(address, "move", game_id, first, token=pat).stdout
    assert said.startswith("1. Ann: ")
    with Client(address, token=owner) as client:
        second = client.legal_moves(game_id)[1][0].notation
    bobs = tablelog(address, "move", game_id, second, token=pat, ok=False)
    assert bobs.returncode == 1
    assert "A player records only for their own seats; this move is Bob's." in bobs.stderr
    assert "PERMISSION_DENIED: NOT_YOUR_SEAT" in bobs.stderr
    undo = tablelog(address, "undo", game_id, token=pat, ok=False)
    assert "A player may not call UndoMove." in undo.stderr
    watching = tablelog(address, "move", game_id, second, token=spectator, ok=False)
    assert "A spectator may not call RecordMove." in watching.stderr
    assert tablelog(address, "show", game_id, token=spectator).stdout.startswith("revision ")
    audit = tablelog(address, "audit", game_id, token=owner).stdout
    assert f"Ann: {first} (recorded by Pat)" in audit
    # Tokens are listed by their last characters only, and revoked by id.
    tokens = tablelog(address, "tokens", "list", "Pat", token=owner).stdout
    assert pat not in tokens
    assert f"…{pat[-4:]}" in tokens
    tablelog(address, "tokens", "revoke", tokens.split()[0], token=owner)
    gone = tablelog(address, "whoami", token=pat, ok=False)
    assert "This token has been revoked." in gone.stderr
    assert "tablelog tokens create" in gone.stderr
    missing = tablelog(address, "list", token=None, ok=False)
    assert f"tablelog login {address}" in missing.stderr


def test_login_keeps_the_token_for_its_address(
    server: BackgroundServer, isolated_home: Path
) -> None:
    address = server.target
    refused = tablelog(address, "login", address, "--token", "tlm_nonsense", ok=False)
    assert "TOKEN_UNKNOWN" in refused.stderr
    config = isolated_home / ".config" / "tablelog" / "credentials.json"
    assert not config.exists()
    logged = tablelog(address, "login", address, "--token", OWNER_TOKEN).stdout
    assert f"logged in to {address} as " in logged
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text())["servers"][address]["token"] == OWNER_TOKEN
    assert "(owner) of local club" in tablelog(address, "whoami").stdout
    # The flag and the environment come before the file.
    overridden = tablelog(address, "whoami", token="tlm_other", ok=False)
    assert "TOKEN_UNKNOWN" in overridden.stderr
    game_id = tablelog_game(address)
    shared = tablelog(address, "share", game_id, token=OWNER_TOKEN).stdout
    link = _token_of(shared)
    assert "link token" in tablelog(address, "whoami", "--token", link).stdout
    # The full link a club pastes in its chat: the web app on the server's host.
    host = address.rsplit(":", 1)[0]
    assert f"http://{host}:8080/games/{game_id}#token={link}" in shared.split()
    web = tablelog(address, "share", game_id, "--web", "https://club.example/", token=OWNER_TOKEN)
    assert f"https://club.example/games/{game_id}#token=" in web.stdout


def tablelog_game(address: str) -> str:
    made = tablelog(address, "new", "splendor", "Ann", "Bob", "--json", token=OWNER_TOKEN)
    game_id: str = json.loads(made.stdout)["gameId"]
    return game_id


def test_a_fresh_data_directory_serves_the_cli_beside_it_with_no_flags(isolated_home: Path) -> None:
    data_dir = platformdirs.user_data_path("tablelog", appauthor=False)
    assert str(data_dir).startswith(str(isolated_home))
    serving = ServeProcess(data_dir, "--demo").start()
    try:
        owner_file = data_dir / "owner.token"
        assert stat.S_IMODE(owner_file.stat().st_mode) == 0o600
        demo = serving.read_lines(3)
        game_id = demo[0].split()[2]
        shown = demo[2].strip().split()  # "tablelog show GAME --address ADDRESS", as printed
        assert shown[1:3] == ["show", game_id]
        done = subprocess.run(
            [*tablelog_command(), *shown[1:]],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "TABLELOG_TOKEN"},
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("revision ")
        who = tablelog(serving.address, "whoami").stdout
        assert "(owner) of local club" in who
        # Printed from the home (~/...), as the README shows the credentials file.
        assert f"(token from ~/{owner_file.relative_to(isolated_home)})" in who
    finally:
        serving.stop()


def test_the_local_owner_token_is_sent_only_to_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLELOG_TOKEN", raising=False)
    monkeypatch.setenv("TABLELOG_DATA_DIR", str(tmp_path))
    (tmp_path / "owner.token").write_text("tlm_local\n")
    # Main sent it to whatever listened on any loopback port; now only to the address its
    # server announced in the data directory, over that server's unix socket.
    assert resolve_token("127.0.0.1:50051") is None  # no server announced
    socket = tmp_path / "tablelog.sock"
    (tmp_path / "serve.json").write_text(
        json.dumps({"address": "127.0.0.1:50051", "socket": str(socket)})
    )
    for address in ("127.0.0.1:50051", "localhost:50051", "[::1]:50051"):
        found = resolve_token(address)
        assert found is not None
        assert (found.value, found.source) == ("tlm_local", str(tmp_path / "owner.token"))
        assert found.target == f"unix:{socket}"
    for address in ("127.0.0.1:50052", "localhost:1", "127.8.9.10:2"):
        assert resolve_token(address) is None  # another local port: not its server
    for address in ("10.0.0.1:50051", "tablelog.example:443", "[2001:db8::1]:50051"):
        assert resolve_token(address) is None
    store_token("10.0.0.1:50051", "tlm_kept")
    kept = resolve_token("10.0.0.1:50051")
    assert kept is not None
    assert kept.value == "tlm_kept"
    monkeypatch.setenv("TABLELOG_TOKEN", "tlm_env")
    for address in ("10.0.0.1:50051", "127.0.0.1:1"):
        assert resolve_token(address) == Token("tlm_env", "$TABLELOG_TOKEN")
    assert resolve_token("127.0.0.1:1", "tlm_flag") == Token("tlm_flag", "--token")
