#!/bin/sh
# A consistent copy of Redis's append-only file (every game, as acknowledged up to the
# copy), as a tar archive on standard output. It runs where Redis's files are, e.g. in the
# compose's Redis container:
#   docker compose -f deploy/compose.yaml exec -T redis sh -s < deploy/redis-backup.sh > backup.tar
# or in a Kubernetes pod: kubectl exec -i POD -- sh -s < deploy/redis-backup.sh > backup.tar
# Restoring, and a copy taken from elsewhere (redis-cli --rdb): docs/deploy.md, Backups.
# tests/deploy/test_backup.py takes one, restores it and verifies every game.
set -eu
password_file="${REDIS_PASSWORD_FILE:-/run/secrets/redis-password}"
if [ -r "$password_file" ]; then
  REDISCLI_AUTH="$(cat "$password_file")"
  export REDISCLI_AUTH
fi
cli() { redis-cli -p "${REDIS_PORT:-6379}" "$@"; }
setting() { cli config get "$1" | sed -n 2p; }
dir=$(setting dir)
aof_dir=$(setting appenddirname)
[ "$(setting appendonly)" = yes ] || { echo "Redis keeps no append-only file" >&2; exit 1; }
# Redis's own procedure: no rewrite may replace the files while they are read (a command
# being appended at the end is cut off when the copy is loaded: aof-load-truncated).
rewrite=$(setting auto-aof-rewrite-percentage)
cli config set auto-aof-rewrite-percentage 0 >/dev/null
trap 'cli config set auto-aof-rewrite-percentage "$rewrite" >/dev/null' EXIT
while cli info persistence | grep -q '^aof_rewrite_in_progress:1'; do sleep 1; done
tar -C "$dir" -cf - "$aof_dir"
