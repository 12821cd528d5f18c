#!/usr/bin/env bash
# Regenerate the TypeScript and Go clients' code from proto/tablelog/v1/*.proto, or check
# that the committed code is fresh.
#
#   scripts/generate_clients.sh          # rewrite clients/typescript/src/gen and clients/go/gen
#   scripts/generate_clients.sh --check  # exit 1 if regenerating would change anything
#
# Works offline from the registries: protoc is the one bundled with grpcio-tools (in .venv),
# protoc-gen-es comes from clients/typescript/node_modules (pinned by package-lock.json) and
# protoc-gen-go / protoc-gen-go-grpc are built from the versions pinned by clients/go/go.mod
# (`tool` directives), so the module cache from `go mod download` is all they need.
# Every .proto file in proto/tablelog/v1 is picked up; nothing is listed by hand.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
PROTO_ROOT="$ROOT/proto"
TS_DIR="$ROOT/clients/typescript"
GO_DIR="$ROOT/clients/go"
GO_MODULE="$(cd "$GO_DIR" && go list -m)"
GO_PACKAGE="$GO_MODULE/gen/tablelog/v1;tablelogv1"

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ ! -x "$TS_DIR/node_modules/.bin/protoc-gen-es" ]]; then
  echo "protoc-gen-es missing: run (cd clients/typescript && npm ci)" >&2
  exit 1
fi
# The plugins are built from the module cache at the versions go.mod pins.
(cd "$GO_DIR" && go build -o "$work/bin/" \
  google.golang.org/protobuf/cmd/protoc-gen-go \
  google.golang.org/grpc/cmd/protoc-gen-go-grpc)

well_known="$("$PYTHON" -c 'import grpc_tools, pathlib; print(pathlib.Path(grpc_tools.__file__).parent / "_proto")')"
protoc=("$PYTHON" -m grpc_tools.protoc "-I$PROTO_ROOT" "-I$TS_DIR/proto" "-I$well_known")

mapfile -t protos < <(cd "$PROTO_ROOT" && ls tablelog/v1/*.proto | LC_ALL=C sort)
mapfile -t services < <(cd "$PROTO_ROOT" && grep -l '^service ' "${protos[@]}" | LC_ALL=C sort)

# TypeScript: messages, enums and service descriptors (protobuf-es v2, used by Connect).
mkdir -p "$work/ts"
(cd "$PROTO_ROOT" && "${protoc[@]}" \
  "--plugin=protoc-gen-es=$TS_DIR/node_modules/.bin/protoc-gen-es" \
  "--es_out=$work/ts" \
  "--es_opt=target=ts,import_extension=js" \
  "${protos[@]}" google/rpc/error_details.proto)

# Go: one package for all of tablelog.v1 (the .proto files carry no go_package option).
go_map=()
for p in "${protos[@]}"; do
  go_map+=("M$p=$GO_PACKAGE")
done
go_opt="paths=source_relative$(printf ',%s' "${go_map[@]}")"
mkdir -p "$work/go"
(cd "$PROTO_ROOT" && "${protoc[@]}" \
  "--plugin=protoc-gen-go=$work/bin/protoc-gen-go" \
  "--plugin=protoc-gen-go-grpc=$work/bin/protoc-gen-go-grpc" \
  "--go_out=$work/go" "--go_opt=$go_opt" \
  "--go-grpc_out=$work/go" "--go-grpc_opt=$go_opt" \
  "${protos[@]}")

# The protoc version printed in the Go headers follows the installed grpcio-tools; it is not
# part of what "fresh" means, so it is masked when comparing.
normalise() {
  sed -E 's#^(//[[:space:]]+protoc[[:space:]]+).*$#\1(masked)#' "$1"
}

stale=()
compare() {  # compare <fresh dir> <committed dir> <label>
  local fresh="$1" committed="$2" label="$3" f
  while IFS= read -r f; do
    if [[ ! -f "$fresh/$f" || ! -f "$committed/$f" ]]; then
      stale+=("$label/$f")
    elif ! cmp -s <(normalise "$fresh/$f") <(normalise "$committed/$f"); then
      stale+=("$label/$f")
    fi
  done < <( (cd "$fresh" && find . -type f; [[ -d "$committed" ]] && cd "$committed" && find . -type f) | sed 's#^\./##' | LC_ALL=C sort -u)
}
compare "$work/ts" "$TS_DIR/src/gen" "clients/typescript/src/gen"
compare "$work/go" "$GO_DIR/gen" "clients/go/gen"

ts_count="$(find "$work/ts" -type f | wc -l)"
go_count="$(find "$work/go" -type f | wc -l)"
if (( check )); then
  if (( ${#stale[@]} )); then
    echo "generated client code is stale:" "${stale[@]}"
    echo "run: scripts/generate_clients.sh"
    exit 1
  fi
  echo "generated client code is fresh ($ts_count TypeScript, $go_count Go files from ${#protos[@]} protos)"
  exit 0
fi

rm -rf "$TS_DIR/src/gen" "$GO_DIR/gen"
mkdir -p "$TS_DIR/src/gen" "$GO_DIR/gen"
cp -R "$work/ts/." "$TS_DIR/src/gen/"
cp -R "$work/go/." "$GO_DIR/gen/"
echo "wrote $ts_count TypeScript and $go_count Go files from ${#protos[@]} protos (services: ${services[*]}); changed: ${stale[*]:-none}"
