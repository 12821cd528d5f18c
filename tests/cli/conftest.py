"""The CLI tests run the real `tablelog` command against a live server (the service tests'
session fixtures: an embedded Redis and a server on a free port).

Every test gets its own home, state and data directories: the CLI remembers what each
terminal saw of a game in the user's state directory, and a test must never write there
(nor read what a real recorder's terminal remembered). They call as the session server's
owner ($TABLELOG_TOKEN)."""

from pathlib import Path

import pytest

from tests.service.conftest import client, embedded_redis, game_id, server
from tests.service.helpers import OWNER_TOKEN

__all__ = ["client", "embedded_redis", "game_id", "isolated_home", "server"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME and the XDG directories moved under the test's temporary directory (the
    subprocesses the tests start inherit them)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for variable, folder in (
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        monkeypatch.setenv(variable, str(home / folder))
    monkeypatch.delenv("TABLELOG_STATE_DIR", raising=False)
    # The session server's owner (the commands find no other token in a fresh home).
    monkeypatch.setenv("TABLELOG_TOKEN", OWNER_TOKEN)
    return home
