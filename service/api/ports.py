"""Whether the ports `tablelog serve` is asked to listen on are free, checked before the
server starts: a port in use is then said in words with the flags that choose another,
for every port at once (gRPC and HTTP), instead of a line from gRPC's C core about the
first one."""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence


def _host_port(address: str) -> tuple[str, int] | None:
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None  # not host:port: the server's own start reports it
    return host.strip("[]") or "0.0.0.0", int(port)  # an empty host: every interface


def why_not_free(address: str) -> str | None:
    """Why `address` cannot be listened on (None: it can, or it cannot be told here)."""
    parsed = _host_port(address)
    if parsed is None or parsed[1] == 0:
        return None
    host, port = parsed
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return None  # an unknown name: the server's own start reports it
    family, kind, protocol, _, where = found[0]
    with socket.socket(family, kind, protocol) as probe:
        # As the servers bind: a port another program left in TIME_WAIT is free to them.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return "the port is in use (another tablelog serve, or another program)"
            if exc.errno == errno.EACCES:
                return "this user may not listen on that port (ports below 1024 need privilege)"
            if exc.errno == errno.EADDRNOTAVAIL:
                return "that is not an address of this machine"
            return None
    return None


def ports_refused(addresses: Sequence[tuple[str, str]]) -> str | None:
    """The refusal for every (flag, address) that cannot be listened on, or None."""
    lines = [
        f"cannot listen on {address} ({flag}): {reason}"
        for flag, address in addresses
        if (reason := why_not_free(address)) is not None
    ]
    if not lines:
        return None
    flags = " and ".join(f"{flag} HOST:PORT" for flag, _ in addresses)
    return "\n".join(lines) + (
        f"\nStop what listens there, or choose other ports: {flags} (--http-address for the "
        "web app and browsers)."
        if len(addresses) > 1
        else f"\nStop what listens there, or choose another port: {flags}."
    )
