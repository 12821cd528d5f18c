#!/usr/bin/env bash
# Guard the API: `buf breaking` (FILE rules, proto/buf.yaml) between proto/ as it is now and
# an earlier state of it in this repository's git history.
#
#   scripts/check_api_compat.sh               # against the baseline chosen below
#   scripts/check_api_compat.sh --against REF # against any git ref (a tag, origin/main, HEAD~3)
#
# The baseline: on a branch other than main, where it left main (the merge base with main,
# or with origin/main in a clone that has no local main). On main, the last release tag
# (v*) when there is one, else HEAD when proto/ has uncommitted changes (what is about to be
# committed), else HEAD~1 (what the last commit changed).
#
# A shallow clone lacks the baseline: the script fetches more history from origin first.
# When there is still nothing to compare with, it fails under CI (CI set: a check that
# compares nothing proves nothing) and otherwise says so and passes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUF="${BUF:-$ROOT/.venv/bin/buf}"
cd "$ROOT"

ref=""
label=""
case "${1:-}" in
  --against) ref="${2:?--against needs a git ref}" ;;
  "") ;;
  *) echo "usage: $0 [--against REF]" >&2; exit 2 ;;
esac

no_baseline() {
  if [[ -n "${CI:-}" ]]; then
    echo "api compat: $1; CI is set, so this fails (fetch the history, or pass --against)" >&2
    exit 1
  fi
  echo "api compat: $1; nothing to compare with"
  exit 0
}

has_commit() { git rev-parse --verify -q "$1^{commit}" >/dev/null; }

# A shallow clone: fetch the history the baseline needs (origin is where it was cloned from).
if [[ "$(git rev-parse --is-shallow-repository)" == "true" ]] && git remote get-url origin >/dev/null 2>&1; then
  git fetch --quiet --unshallow --tags origin || echo "api compat: could not fetch history from origin" >&2
fi

if [[ -z "$ref" ]]; then
  branch="$(git rev-parse --abbrev-ref HEAD)"
  main=""
  for candidate in refs/heads/main refs/remotes/origin/main; do
    if has_commit "$candidate"; then main="$candidate"; break; fi
  done
  if [[ "$branch" != "main" && -n "$main" ]] && [[ "$(git rev-parse HEAD)" != "$(git rev-parse "$main")" ]]; then
    ref="$(git merge-base HEAD "$main")" || no_baseline "HEAD and $main share no history"
    label="where this branch left ${main#refs/*/}"
  elif tag="$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null)"; then
    ref="$tag"
  elif [[ -n "$(git status --porcelain -- proto)" ]]; then
    ref="HEAD"
  else
    ref="HEAD~1"
  fi
fi

if ! commit="$(git rev-parse --verify -q "$ref^{commit}")"; then
  no_baseline "no $ref in this clone's history"
fi
if ! git cat-file -e "$commit:proto/buf.yaml" 2>/dev/null; then
  # The API starts at or after the baseline: there is no earlier version of it to break.
  echo "api compat: $ref ($commit) has no proto/buf.yaml; nothing to compare with"
  exit 0
fi

# buf reads the baseline straight from the local git directory at that commit.
"$BUF" breaking proto --against ".git#ref=$commit,subdir=proto"
echo "api compat: proto/ has no breaking change against ${label:-$ref} ($(git rev-parse --short "$commit"))"
