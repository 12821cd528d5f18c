"""The local default: `tablelog serve` on a fresh data directory makes a local club with one
owner (named after the OS user) and writes the owner's token to `<data dir>/owner.token`
(mode 0600). The CLI on the same machine, talking to a loopback address with no token
configured, reads that file (tablelog_client.credentials), so a newcomer's two Quick start
commands need no setup.

That owner is also the server's operator (`tablelog.service.api.operators`: it creates and deletes
the server's clubs), marked here every time `serve` starts: on one machine the person who started
the server administers it with no set-up, and the operator's way in is always the token in the data
directory (or the fixed owner token a deployment registers).

The file is made again when it is missing or its token no longer works (a new Redis under
an old data directory): whoever can read the data directory is the machine's owner anyway."""

from __future__ import annotations

import getpass
import os
import time
from pathlib import Path

from tablelog.service.access.identity import LOCAL_CLUB, Member, Role, TokenRecord, new_id
from tablelog.service.access.members import PRUNE_PERIOD, MemberStore
from tablelog.service.errors import Unauthenticated
from tablelog.v1 import events_pb2

OWNER_TOKEN_FILE = "owner.token"
LOCAL_CLUB_NAME = "local club"
SOCKET_FILE = "tablelog.sock"
"""The gRPC port on a unix socket in the data directory: the local owner's token goes to the
server only through it (see `announce`)."""
SERVED_FILE = "serve.json"
WEB_SIGN_IN_SECONDS = 12 * 3600
"""How long the token in the printed web app address works (`web_sign_in_token`)."""


MAX_SOCKET_PATH = 100
"""A unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS)."""


def local_socket(data_dir: Path) -> Path | None:
    """Where the server of `data_dir` listens on a unix socket: in the data directory, or,
    when that path is too long for a socket, in a directory of this user's own (mode 0700,
    checked: a directory someone else made first is not used) under $XDG_RUNTIME_DIR or the
    temporary directory, named by a hash of the data directory. None: nowhere safe."""
    import hashlib
    import stat
    import tempfile

    inside = data_dir.resolve() / SOCKET_FILE
    if len(str(inside)) <= MAX_SOCKET_PATH:
        return inside
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    own = base / f"tablelog-{os.getuid()}"
    try:
        own.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(own)
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        return None
    name = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    path = own / f"{name}.sock"
    return path if len(str(path)) <= MAX_SOCKET_PATH else None


def announce(data_dir: Path, address: str, socket: Path) -> None:
    """Say, in the data directory (only its owner may write there), which address the
    server that wrote `owner.token` listens on, and its socket: the CLI sends the local
    owner's token only to that address, and then only through the socket, which nothing
    but this user's own server can have made (a process squatting the loopback port after
    the server stops gets nothing)."""
    import json

    text = json.dumps({"address": address, "socket": str(socket)})
    write_secret(data_dir / SERVED_FILE, text)


async def web_sign_in_token(members: MemberStore) -> str:
    """A token of the local owner for the printed web app address, working for
    `WEB_SIGN_IN_SECONDS`: the never-expiring `owner.token` is never printed (terminal
    scrollback, logs of a process supervisor). Expired ones are pruned with the others."""
    owner = await _owner(members)
    token, _record = await members.create_token(
        LOCAL_CLUB, owner.member_id, expires=time.time() + WEB_SIGN_IN_SECONDS
    )
    return token


async def prune_tokens_now(members: MemberStore, data_dir: Path) -> int:
    """Says that this server's owner.token is alive, then prunes every club's token records
    (`MemberStore.prune_tokens`); how many were removed."""
    path = data_dir / OWNER_TOKEN_FILE
    if path.exists():
        await members.alive(path.read_text(encoding="utf-8").strip())
    pruned = 0
    for club_id in await members.club_ids():
        pruned += await members.prune_tokens(club_id)
    return pruned


async def keep_tokens_pruned(members: MemberStore, data_dir: Path) -> None:
    """`prune_tokens_now` at once and every `PRUNE_PERIOD` seconds, until cancelled; a Redis
    that cannot answer now is tried again at the next period."""
    import asyncio

    from tablelog.service.logs import get_logger
    from tablelog.service.store.errors import StoreError

    log = get_logger("tablelog.tokens")
    while True:
        try:
            pruned = await prune_tokens_now(members, data_dir)
        except StoreError as exc:
            log.warning("token pruning failed", error=str(exc))
        else:
            if pruned:
                log.info("token records pruned", count=pruned)
        await asyncio.sleep(PRUNE_PERIOD)


def owner_name() -> str:
    try:
        return getpass.getuser() or "owner"
    except (KeyError, OSError):  # no user name for this uid (a container)
        return "owner"


async def _owner(members: MemberStore) -> Member:
    await members.create_club(LOCAL_CLUB, LOCAL_CLUB_NAME)
    owner = await members.first_owner(LOCAL_CLUB)
    if owner is None:
        owner = await members.add_member(LOCAL_CLUB, owner_name(), Role.OWNER)
    return await members.make_operator(LOCAL_CLUB, owner.member_id)


async def ensure_local_owner(members: MemberStore, data_dir: Path) -> tuple[Member, str]:
    """The local club's owner and a token of theirs that works, from `owner.token` in
    `data_dir` (written when missing or stale)."""
    path = data_dir / OWNER_TOKEN_FILE
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        try:
            _record, member, _club = await members.resolve(token, a_use=False)
        except Unauthenticated:
            pass
        else:
            if member.role is Role.OWNER and member.club_id == LOCAL_CLUB:
                return await members.make_operator(LOCAL_CLUB, member.member_id), token
    owner = await _owner(members)
    token, _record = await members.create_token(
        LOCAL_CLUB, owner.member_id, expires=0, local_file=True
    )
    write_secret(path, token)
    return owner, token


async def register_owner_token(members: MemberStore, token: str) -> Member:
    """Makes `token` a token of the local club's owner (a test deployment's fixed token);
    nothing changes when it is known already."""
    owner = await _owner(members)
    record = TokenRecord(new_id("t_"), LOCAL_CLUB, owner.member_id, time.time(), 0, token[-4:])
    await members.register_token(token, record)
    return owner


def register_owner_token_at(redis_url: str, token: str) -> None:
    """`register_owner_token` on the Redis at `redis_url`, from outside any event loop: for
    tests and benchmarks that call a `tablelog serve` as its owner."""
    import asyncio

    from tablelog.service.store.cluster import open_async_client

    async def register() -> None:
        client = open_async_client(redis_url)
        try:
            await register_owner_token(MemberStore(client), token)
        finally:
            await client.aclose()

    asyncio.run(register())


def write_secret(path: Path, text: str) -> None:
    """Write `text` to `path` readable by its owner only (0600), replacing it whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text + "\n")
    os.chmod(partial, 0o600)
    os.replace(partial, path)


def owner_actor(owner: Member, client: str) -> events_pb2.Actor:
    return events_pb2.Actor(
        user=owner.display_name, club=owner.club_id, client=client, member_id=owner.member_id
    )
