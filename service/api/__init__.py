"""The ports: how callers reach the service.

The gRPC server (`server`, `servicer`, `clubs`) and the HTTP port that serves the same
handlers over Connect and gRPC-Web with the web app's files (`http_port`, `http_api`,
`webapp_files`); the per-call interceptor (`interceptors`: admission, the log line); health
(`health`, `healthcheck`), TLS (`transport`) and `tablelog serve` (`cli`).

May import `recording`, `access`, `store` and the shared modules; nothing imports it.
"""
