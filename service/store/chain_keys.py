"""Where the chain keys come from: a key file kept outside Redis.

A key file holds one key per line, as hex (at least 32 bytes, 64 hex digits); blank lines
and lines starting with `#` are skipped. The first key seals every new event and receipt;
the keys after it only verify (the keys used before a rotation, so games recorded under
them still verify). Rotating: put a new key on the first line and keep the old ones below.

`tablelog serve` reads `--chain-key-file` (or `$TABLELOG_CHAIN_KEY_FILE`): the deployments'
way, several instances sharing one key (a Kubernetes secret, say). Without it, the key is
`chain.key` in the data directory, generated on first start (mode 0600, created atomically
so server processes starting together agree on one key).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from tablelog.service.store.chain import MIN_KEY_BYTES, Chain, ChainKey

KEY_FILE_NAME = "chain.key"
MAX_KEY_FILE_BYTES = 64 * 1024
MAX_KEYS = 64


class ChainKeyError(RuntimeError):
    """A key file that cannot be used (missing, unreadable, malformed)."""


def parse_key_file(text: str, source: str) -> Chain:
    """The chain of a key file's text (see the module's docstring)."""
    keys: list[ChainKey] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            secret = bytes.fromhex(line)
        except ValueError:
            raise ChainKeyError(f"{source} line {number}: a key is written in hex") from None
        if len(secret) < MIN_KEY_BYTES:
            raise ChainKeyError(
                f"{source} line {number}: a key needs at least {MIN_KEY_BYTES} bytes "
                f"({2 * MIN_KEY_BYTES} hex digits)"
            )
        keys.append(ChainKey.of(secret))
        if len(keys) > MAX_KEYS:
            raise ChainKeyError(f"{source}: at most {MAX_KEYS} keys")
    if not keys:
        raise ChainKeyError(f"{source} holds no key")
    return Chain(keys[0], keys[1:])


def load_key_file(path: Path) -> Chain:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise ChainKeyError(f"cannot read the chain key file {path}: {exc.strerror}") from exc
    if len(data) > MAX_KEY_FILE_BYTES:
        raise ChainKeyError(f"{path} is larger than a key file can be")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ChainKeyError(f"{path}: a key file is hex text") from None
    return parse_key_file(text, str(path))


def new_key_line() -> str:
    return secrets.token_bytes(MIN_KEY_BYTES).hex()


def data_dir_chain(data_dir: Path) -> Chain:
    """The chain key of a data directory: `chain.key`, generated on first use. The new key
    is written to a private temporary file (0600) and linked into place, which fails when
    another process got there first: then that process's key is the one read."""
    path = data_dir / KEY_FILE_NAME
    if not path.exists():
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = data_dir / f".{KEY_FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as file:
                file.write(
                    "# tablelog chain key: keep it secret, keep it with backups of the data.\n"
                    f"{new_key_line()}\n"
                )
                file.flush()
                os.fsync(file.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    return load_key_file(path)


def configured_chain(key_file: str | None, data_dir: Path) -> Chain:
    """`key_file` when given (--chain-key-file, $TABLELOG_CHAIN_KEY_FILE), else the data
    directory's own key."""
    if key_file:
        return load_key_file(Path(key_file))
    return data_dir_chain(data_dir)
