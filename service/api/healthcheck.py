"""`python -m tablelog.service.api.healthcheck`: exit 0 when the server in this container answers
SERVING on the standard health service, 1 otherwise. For the image's HEALTHCHECK and a
Kubernetes exec probe: Kubernetes' own gRPC probe speaks no TLS.

`python -m tablelog.service.api.healthcheck --live`: exit 0 when the server answers the health
service at all, SERVING or NOT_SERVING: the process is alive (a Kubernetes liveness probe). It does
not follow Redis: restarting a server cures no Redis outage (see `tablelog.service.api.readiness`).

It reads the server's own settings from the environment, with the server's defaults: it
connects to $TABLELOG_ADDRESS (a wildcard host, "0.0.0.0" or "[::]", is reached on this
machine's loopback), and with $TABLELOG_TLS_CERT it speaks TLS, trusting $TABLELOG_CA (else
the certificate itself, as for a self-signed one) and expecting the name
$TABLELOG_TLS_SERVER_NAME (default: localhost) on the certificate."""

from __future__ import annotations

import os
import sys
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablelog.service.api.cli import DEFAULT_ADDRESS
from tablelog.service.api.transport import listening_host

CHECK_SECONDS = 2.0

WILDCARD_TARGETS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "[::1]"}
"""Where a server listening on every interface is reached from inside its own container."""


def check_target(address: str) -> str:
    """The address to check a server listening on `address` at: the same host and port,
    a wildcard host replaced by loopback, a unix socket as it is."""
    host = listening_host(address)
    if host.startswith(("unix:", "unix-abstract:")):
        return address
    port = address.rsplit(":", 1)[-1]
    if host in WILDCARD_TARGETS:
        return f"{WILDCARD_TARGETS[host]}:{port}"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def local_channel() -> grpc.Channel:
    target = check_target(os.environ.get("TABLELOG_ADDRESS", DEFAULT_ADDRESS))
    certificate = os.environ.get("TABLELOG_TLS_CERT")
    if not certificate:
        return grpc.insecure_channel(target)
    with open(os.environ.get("TABLELOG_CA") or certificate, "rb") as pem:
        roots = pem.read()
    name = os.environ.get("TABLELOG_TLS_SERVER_NAME", "localhost")
    return grpc.secure_channel(
        target,
        grpc.ssl_channel_credentials(roots),
        options=[("grpc.ssl_target_name_override", name)],
    )


def main(argv: list[str] | None = None) -> int:
    live = "--live" in (sys.argv[1:] if argv is None else argv)
    try:
        with local_channel() as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)  # the stubs type it loosely
            answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=CHECK_SECONDS)
    except (grpc.RpcError, OSError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    serving: bool = answer.status == health_pb2.HealthCheckResponse.SERVING
    return 0 if serving or live else 1


if __name__ == "__main__":
    sys.exit(main())
