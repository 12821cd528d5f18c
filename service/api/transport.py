"""How the gRPC port is exposed: TLS from a certificate and key (`tablelog serve
--tls-cert/--tls-key`), and the rule that a server reachable from other machines speaks
TLS unless told otherwise (`--allow-insecure`).

Plaintext on loopback stays the default, so the README's Quick start (127.0.0.1) needs no
certificate: nothing but this machine can reach it. Anything else without TLS would carry
the games, and soon the callers' tokens, in the clear over the network, so it is refused
at start-up with a message saying what to do."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

import grpc

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


class TransportError(Exception):
    """A listening configuration refused at start-up (the message says what to change)."""


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The server's certificate chain and private key, both PEM."""

    certificate: Path
    key: Path

    def credentials(self) -> grpc.ServerCredentials:
        """grpc's server credentials from the two files (read now: a missing or unreadable
        file is a start-up error, not a failure of the first handshake)."""
        chain = _read_pem(self.certificate, "--tls-cert", "CERTIFICATE")
        key = _read_pem(self.key, "--tls-key", "PRIVATE KEY")
        return grpc.ssl_server_credentials([(key, chain)])


def _read_pem(path: Path, flag: str, label: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TransportError(f"cannot read {flag} {path}: {exc.strerror or exc}") from exc
    if b"-----BEGIN " not in data or label.encode() not in data:
        raise TransportError(f"{flag} {path} holds no PEM {label.lower()}")
    return data


def tls_files(certificate: str | None, key: str | None) -> TlsFiles | None:
    """The TLS files from the two options: both or neither."""
    if not certificate and not key:
        return None
    if not certificate or not key:
        missing = "--tls-cert" if not certificate else "--tls-key"
        raise TransportError(f"TLS needs both --tls-cert and --tls-key: {missing} is missing")
    return TlsFiles(Path(certificate), Path(key))


def listening_host(address: str) -> str:
    """The host part of a gRPC listening address ("[::1]:50051" -> "::1")."""
    if address.startswith("unix:") or address.startswith("unix-abstract:"):
        return address
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def is_loopback(address: str) -> bool:
    """Whether only this machine can connect to `address`: a loopback IP, a loopback
    name, or a unix socket. A wildcard ("0.0.0.0", "[::]", "") is every interface."""
    host = listening_host(address)
    if host.startswith(("unix:", "unix-abstract:")):
        return True
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def check_listening(address: str, tls: TlsFiles | None, allow_insecure: bool) -> None:
    """Refuse plaintext on an address other machines can reach, unless `allow_insecure`."""
    if tls is not None or allow_insecure or is_loopback(address):
        return
    raise TransportError(
        f"refusing to listen on {address} without TLS: anyone on the network could read "
        "and change the games. Give --tls-cert FILE --tls-key FILE (clients then use "
        "--ca FILE), listen on 127.0.0.1, or pass --allow-insecure when something in "
        "front of the server (a TLS-terminating proxy, a private network) protects the port."
    )
