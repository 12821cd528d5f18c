#!/usr/bin/env bash
# Build the TypeScript and Go clients (and install the web app's build tools) from nothing, as
# CI does before the tests.
#
#   bash clients/ci-setup.sh
#
# Needs Node >= 20 with npm and Go >= 1.26 on PATH, and the npm registry and the Go module
# proxy (nothing else is fetched). Afterwards `pytest tests/clients` runs both clients' unit
# tests, the conformance scenario of every client against a live server, and the check that
# the generated code is fresh (which builds protoc-gen-go and protoc-gen-go-grpc from the
# module cache filled here, at the versions clients/go/go.mod pins).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
started=$SECONDS

step() {
  local label="$1"
  shift
  local t0=$SECONDS
  echo "::: $label: $*"
  "$@"
  echo "::: $label took $((SECONDS - t0)) s"
}

for tool in node npm go; do
  if ! command -v "$tool" >/dev/null; then
    echo "clients/ci-setup.sh: $tool is not installed" >&2
    exit 1
  fi
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if (( node_major < 20 )); then
  echo "clients/ci-setup.sh: Node >= 20 is needed, found $(node --version)" >&2
  exit 1
fi
echo "::: node $(node --version), npm $(npm --version), $(go version)"

cd "$ROOT/clients/typescript"
step "typescript install" npm ci --no-audit --no-fund
step "typescript build" npm run build --silent

# The web app's bundler and type checker, for scripts/build_webapp.py and its freshness test.
cd "$ROOT/clients/web"
step "web app install" npm ci --no-audit --no-fund

cd "$ROOT/clients/go"
step "go download" go mod download
step "go build" go build ./...
step "go vet" go vet ./...
# The code generators, so that `scripts/generate_clients.sh --check` finds them compiled.
step "go codegen tools" go build google.golang.org/protobuf/cmd/protoc-gen-go \
  google.golang.org/grpc/cmd/protoc-gen-go-grpc

echo "::: clients built in $((SECONDS - started)) s"
