#!/usr/bin/env bash
# Guard the API: `buf breaking` (FILE rules, proto/buf.yaml) between proto/ as it is now and
# an earlier state of it in this repository's own git history; no network is needed.
#
#   scripts/check_api_compat.sh               # against main, or on main against the last commit
#   scripts/check_api_compat.sh --against REF # against any git ref (a tag, origin/main, HEAD~3)
#
# On a branch other than main the baseline is main. On main it is HEAD when proto/ has
# uncommitted changes (what is about to be committed), else HEAD~1 (what the last commit
# changed). A clone without that history (a shallow clone of one commit) has nothing to
# compare with: the check says so and passes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUF="${BUF:-$ROOT/.venv/bin/buf}"
cd "$ROOT"

ref=""
case "${1:-}" in
  --against) ref="${2:?--against needs a git ref}" ;;
  "") ;;
  *) echo "usage: $0 [--against REF]" >&2; exit 2 ;;
esac

if [[ -z "$ref" ]]; then
  branch="$(git rev-parse --abbrev-ref HEAD)"
  if [[ "$branch" != "main" ]] && git rev-parse --verify -q refs/heads/main >/dev/null; then
    ref="main"
  elif [[ -n "$(git status --porcelain -- proto)" ]]; then
    ref="HEAD"
  else
    ref="HEAD~1"
  fi
fi

if ! commit="$(git rev-parse --verify -q "$ref^{commit}")"; then
  echo "api compat: no $ref in this clone's history; nothing to compare with"
  exit 0
fi
if ! git cat-file -e "$commit:proto/buf.yaml" 2>/dev/null; then
  echo "api compat: $ref ($commit) has no proto/buf.yaml; nothing to compare with"
  exit 0
fi

# buf reads the baseline straight from the local .git directory at that commit.
"$BUF" breaking proto --against ".git#ref=$commit,subdir=proto"
echo "api compat: proto/ has no breaking change against $ref ($(git rev-parse --short "$commit"))"
