"""Which bearer token a client sends to a server, first found wins:

1. the one given (`--token`, `Client(token=...)`);
2. `$TABLELOG_TOKEN`;
3. the config file `$XDG_CONFIG_HOME/tablelog/credentials.json`
   (`{"servers": {"host:port": {"token": "...", "ca": "/path/ca.pem"}}, "default":
   "host:port"}`, mode 0600), written by `tablelog login`;
4. for a loopback address only: the local owner's token that `tablelog serve` wrote to
   `owner.token` in its data directory ($TABLELOG_DATA_DIR, else the platform's user data
   directory for "tablelog"), so the CLI beside a local server needs no setup. It goes only
   to the server that wrote it: only when that server's `serve.json` (beside the token, in
   a directory only this user may write) names the address asked for, and then over the
   unix socket it names (`Token.target`), which only this user's own server can have made;
   never to whatever else listens on a loopback port.

The same file names the server a command goes to when none is given (`default`, the last
server logged in to) and the CA to trust for each server: a member invited to another
machine's server logs in once and then types commands as the owner does."""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

ENV_TOKEN = "TABLELOG_TOKEN"
OWNER_TOKEN_FILE = "owner.token"
SERVED_FILE = "serve.json"


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    source: str
    """Where it was found, in words ("--token", "$TABLELOG_TOKEN", a file's path)."""
    target: str = ""
    """Where to send it instead of the address asked for (the local owner's: its server's
    unix socket, "unix:/path"); empty: the address."""


def shown_path(path: Path) -> str:
    """A path as the CLI prints it: under the user's home, from `~` (what a README can show
    and a user recognises), else whole."""
    try:
        return str(Path("~") / path.relative_to(Path.home()))
    except (ValueError, RuntimeError):  # elsewhere, or no home to be found
        return str(path)


def config_file() -> Path:
    return platformdirs.user_config_path("tablelog", appauthor=False) / "credentials.json"


def data_dir() -> Path:
    """The server's default data directory (as `tablelog serve` picks it)."""
    configured = os.environ.get("TABLELOG_DATA_DIR")
    return (
        Path(configured) if configured else platformdirs.user_data_path("tablelog", appauthor=False)
    )


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0] if ":" in address else address
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise CredentialsError(f"{path} is not a readable credentials file: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _servers(path: Path) -> dict[str, dict[str, str]]:
    servers = _read(path).get("servers", {})
    return servers if isinstance(servers, dict) else {}


class CredentialsError(Exception):
    """A credentials file that cannot be read or written."""


def stored_token(address: str, path: Path | None = None) -> Token | None:
    path = path or config_file()
    entry = _servers(path).get(address)
    token = entry.get("token") if isinstance(entry, dict) else None
    return Token(token, shown_path(path)) if isinstance(token, str) and token else None


def local_owner_token(address: str) -> Token | None:
    if not is_loopback(address):
        return None
    directory = data_dir()
    path = directory / OWNER_TOKEN_FILE
    try:
        token = path.read_text(encoding="utf-8").strip()
        served = json.loads((directory / SERVED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(served, dict) or not token:
        return None
    socket = served.get("socket")
    if not _same_address(str(served.get("address", "")), address) or not socket:
        return None
    return Token(token, shown_path(path), target=f"unix:{socket}")


def _same_address(served: str, asked: str) -> bool:
    """Whether `asked` names the address the server announced (localhost and the loopback
    IPs name the same host)."""

    def parts(address: str) -> tuple[str, str]:
        host, _, port = address.rpartition(":")
        host = host.strip("[]").lower()
        return ("loopback" if host in ("localhost", "127.0.0.1", "::1") else host), port

    return parts(served) == parts(asked)


def resolve_token(address: str, given: str | None = None) -> Token | None:
    """The token to send to `address` (see the module doc); None when there is none."""
    if given:
        return Token(given, "--token")
    from_env = os.environ.get(ENV_TOKEN)
    if from_env:
        return Token(from_env, f"${ENV_TOKEN}")
    return stored_token(address) or local_owner_token(address)


def default_server(path: Path | None = None) -> str | None:
    """The server `tablelog login` last kept a token for (None: none)."""
    path = path or config_file()
    data = _read(path)
    default = data.get("default")
    return default if isinstance(default, str) and default in _servers(path) else None


def stored_ca(address: str, path: Path | None = None) -> str | None:
    """The CA file `tablelog login --ca` kept for `address` (None: plaintext)."""
    entry = _servers(path or config_file()).get(address)
    ca = entry.get("ca") if isinstance(entry, dict) else None
    return ca if isinstance(ca, str) and ca else None


def store_token(
    address: str, token: str, path: Path | None = None, *, ca: str | None = None
) -> Path:
    """Keep `token` (and the CA to trust, if any) for `address` in the credentials file
    (mode 0600), and make `address` the default server; the file's path."""
    path = path or config_file()
    data = _read(path)
    servers = _servers(path)
    servers[address] = {"token": token, **({"ca": ca} if ca else {})}
    _write(path, {**data, "servers": servers, "default": address})
    return path


def forget_server(address: str, path: Path | None = None) -> bool:
    """Forget the token kept for `address` (and that it is the default); whether one was."""
    path = path or config_file()
    data = _read(path)
    servers = _servers(path)
    if servers.pop(address, None) is None:
        return False
    data["servers"] = servers
    if data.get("default") == address:
        del data["default"]
    _write(path, data)
    return True


def _write(path: Path, data: dict[str, Any]) -> None:
    """Written whole under a new name, then renamed: never half a file, never readable by
    another user (the tokens are secrets)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(data, file, indent=2)
        file.write("\n")
    os.chmod(partial, 0o600)
    os.replace(partial, path)
