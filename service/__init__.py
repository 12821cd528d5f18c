"""The tablelog service: the gRPC and HTTP API over a Redis-stream event store.

Installed as `tablelog.service`. Five rooms, each importing only the rooms below it
(import-linter holds this, see pyproject.toml):

- `api/`: the ports. The gRPC server and the HTTP port (Connect, gRPC-Web, the web app's
  files), their servicers, the per-call interceptor, health, TLS and `tablelog serve`.
- `memory/`: club memory. The club's players, the projector that follows the games into
  standings, ratings and statistics, and the pure functions that compute them.
- `recording/`: the use cases. Creating, recording, amending, importing and reading games;
  the head cache, checkpoints, the chain walk, views per viewer and live watching.
- `access/`: who the caller is and what they may do. Identities, tokens and the members'
  table, the gate every call passes, the role table, admission and quotas, the local owner.
- `store/`: the event store. Redis streams and the append script, the keyed chain it seals
  events with and its keys, the embedded Redis, the listing index, checkpoints' storage.

Beside the rooms, modules any room may use: `errors` (the one table from domain errors to
gRPC codes), `limits` and `bounds` (every input bounded before it is used), `logs`
(structured logging, one line per call), `tracing` (trace and request ids), `spans` (a span
per call over OTLP, when configured) and `metrics` (the Prometheus metrics). They may import
the store, one another, the rules core and the generated code, never a room above the store
(`metrics` names the server's type for the type checker only). See docs/service.md for the
module map.
"""
