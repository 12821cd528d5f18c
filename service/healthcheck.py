"""`python -m service.healthcheck`: exit 0 when the server in this container answers
SERVING on the standard health service, 1 otherwise. For the image's HEALTHCHECK and a
Kubernetes exec probe: Kubernetes' own gRPC probe speaks no TLS.

It reads the server's own settings from the environment: the port of $TABLELOG_ADDRESS,
and with $TABLELOG_TLS_CERT it speaks TLS, trusting $TABLELOG_CA (else the certificate
itself, as for a self-signed one) and expecting the name $TABLELOG_TLS_SERVER_NAME
(default: localhost) on the certificate, since it connects to 127.0.0.1."""

from __future__ import annotations

import os
import sys
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

CHECK_SECONDS = 2.0


def local_channel() -> grpc.Channel:
    port = os.environ.get("TABLELOG_ADDRESS", "127.0.0.1:50051").rsplit(":", 1)[-1]
    target = f"127.0.0.1:{port}"
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


def main() -> int:
    try:
        with local_channel() as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)  # the stubs type it loosely
            answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=CHECK_SECONDS)
    except (grpc.RpcError, OSError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    serving: bool = answer.status == health_pb2.HealthCheckResponse.SERVING
    return 0 if serving else 1


if __name__ == "__main__":
    sys.exit(main())
