#!/bin/sh
# The secrets deploy/compose.yaml reads: a chain key, a Redis password, and a self-signed
# TLS certificate for the gRPC port, in deploy/secrets/ (or $SECRETS_DIR: Kubernetes' are
# deploy/kubernetes/base/secrets/). Files already there are kept.
# For a server others reach by name, give the names: deploy/make-secrets.sh tablelog.club.example
# Clients then connect with: tablelog list --ca deploy/secrets/tls.crt --address HOST:50051
set -eu
here=$(dirname "$0")
out="${SECRETS_DIR:-$here/secrets}"
mkdir -p "$out"
chmod 0700 "$out"
umask 077
names="DNS:localhost,DNS:tablelog,IP:127.0.0.1"
for name in "$@"; do names="$names,DNS:$name"; done
[ -e "$out/chain.key" ] || python3 -c 'import secrets; print(secrets.token_hex(32))' > "$out/chain.key"
[ -e "$out/redis-password" ] || python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > "$out/redis-password"
if [ ! -e "$out/tls.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
    -keyout "$out/tls.key" -out "$out/tls.crt" -subj "/CN=tablelog" -addext "subjectAltName=$names"
fi
# Redis's own copy of its password: Compose mounts each file as it is on the host, and
# Redis (uid 999 in the redis image) and the server (uid 10001) each need to read theirs.
[ -e "$out/redis-server-password" ] || cp "$out/redis-password" "$out/redis-server-password"
if [ "$(id -u)" = 0 ]; then
  # Each secret readable by its container's user only.
  chown 10001:10001 "$out/chain.key" "$out/redis-password" "$out/tls.key" "$out/tls.crt"
  chown 999:999 "$out/redis-server-password"
  chmod 0600 "$out/chain.key" "$out/redis-password" "$out/redis-server-password" "$out/tls.key"
  chmod 0644 "$out/tls.crt"
else
  # Without root the files cannot be given to the containers' users: readable by them,
  # inside a directory only you may enter.
  chmod 0644 "$out/chain.key" "$out/redis-password" "$out/redis-server-password" \
    "$out/tls.key" "$out/tls.crt"
  echo "note: run as root (sudo $0) to make each secret 0600 for its container's user" >&2
fi
echo "secrets in $out (keep chain.key: games sealed with it verify only with it)"
