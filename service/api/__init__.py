"""The ports: how callers reach the service.

The gRPC server (`server`) and its servicers (`servicer`, `clubs`, `standings_api`,
`operators`), with reflection that resolves methods (`reflection`); the HTTP port that serves
the same handlers over Connect and gRPC-Web with the web app's files (`http_port`, `http_api`,
`http_guard`, `webapp_files`); the per-call interceptor (`interceptors`: admission, the log
line); health (`health`, `healthcheck`, `readiness`), TLS (`transport`) and `tablelog serve`
(`cli`, with `ports`: the ports checked free before it starts).

May import `memory`, `recording`, `access`, `store` and the shared modules; nothing imports
it.
"""
