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
# Compose mounts these files as they are on the host, and the server runs as uid 10001:
# readable by it, inside a directory only you may enter.
chmod 0644 "$out/chain.key" "$out/redis-password" "$out/tls.key" "$out/tls.crt"
echo "secrets in $out (keep chain.key: games sealed with it verify only with it)"
