"""What a load balancer or an orchestrator reads on the HTTP port, apart from the API:

- ``GET /healthz``: 200 while the process answers at all (liveness). It never follows Redis:
  a Redis outage is not cured by restarting every server, and restarting them all in a loop
  (what a liveness check that followed Redis did) only adds a thundering start when Redis
  is back.
- ``GET /readyz``: 200 once the server serves (its start-up is done: Redis answered, the
  local owner and the games' listing index were made, the gRPC port listens) and for as
  long as the store probe (`tablelog.service.api.health`) hears Redis, else 503 with the reason in
  one line. It turns 503 for good when the server begins to stop.

Both answer plain text, take no authentication (they tell nothing about any club) and are
bounded like any request of the port; neither touches Redis (the probe's verdict is read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

if TYPE_CHECKING:
    from tablelog.service.api.health import StoreProbe

HEALTH_PATHS = frozenset({"/healthz", "/readyz"})


class Readiness:
    """Whether the server should be sent calls, as `why_not` says (None: it should)."""

    def __init__(self, probe: StoreProbe | None = None) -> None:
        self.probe = probe
        self.started = False
        """Set by `tablelog.service.api.server.mark_serving` once everything before serving is
        done."""
        self.stopping = False
        """Set by `tablelog.service.api.server.stop_serving`: never ready again."""

    def why_not(self) -> str | None:
        if self.stopping:
            return "stopping"
        if not self.started:
            return "starting"
        if self.probe is not None and not self.probe.serving:
            return f"the store is failing: {self.probe.failure or 'no answer'}"
        return None


async def answer_health(readiness: Readiness, scope: Scope, receive: Receive, send: Send) -> None:
    """`/healthz` or `/readyz` (the caller checked `scope["path"]` is one of them)."""
    if scope["method"] not in ("GET", "HEAD"):
        response = PlainTextResponse("GET only\n", status_code=405, headers={"allow": "GET, HEAD"})
    elif scope["path"] == "/healthz":
        response = PlainTextResponse("alive\n", headers={"cache-control": "no-store"})
    else:
        why = readiness.why_not()
        response = PlainTextResponse(
            "ready\n" if why is None else f"not ready: {why}\n",
            status_code=200 if why is None else 503,
            headers={"cache-control": "no-store"},
        )
    await response(scope, receive, send)
