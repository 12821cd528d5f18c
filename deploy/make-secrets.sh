#!/bin/sh
# The secrets deploy/compose.yaml reads: a chain key, a Redis password, and a self-signed
# TLS certificate for the gRPC port, in deploy/secrets/ (or $SECRETS_DIR: Kubernetes' are
# deploy/kubernetes/base/secrets/). Files already there are kept.
# Each secret ends 0600 (tls.crt 0644): for Compose, owned by the user its container reads it
# as (as root directly; as another user through a one-off Docker container). With
# SECRETS_OWNER=me (Kubernetes: kustomize reads the files as you, the pods get the Secret's
# defaultMode), owned by you.
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
# Each secret readable by its container's user only: chain.key, redis-password and tls.key
# (tls.crt too, 0644) the server's uid 10001, redis-server-password Redis's uid 999.
give='chown 10001:10001 chain.key redis-password tls.key tls.crt &&
  chown 999:999 redis-server-password &&
  chmod 0600 chain.key redis-password redis-server-password tls.key && chmod 0644 tls.crt'
if [ "${SECRETS_OWNER:-containers}" = me ]; then
  chmod 0600 "$out/chain.key" "$out/redis-password" "$out/redis-server-password" "$out/tls.key"
  chmod 0644 "$out/tls.crt"
elif [ "$(id -u)" = 0 ]; then
  (cd "$out" && sh -c "$give")
else
  # Without root the files cannot be given away here; Docker can (whoever may run Compose
  # may run a container as root): a one-off container of the redis image Compose runs
  # anyway, with the directory mounted, does it. Under rootless Docker or Podman the
  # container's 10001 and 999 are the host's mapped ids, which is what its containers see.
  docker="${DOCKER:-docker}"
  where=$(cd "$out" && pwd)
  if command -v "$docker" >/dev/null 2>&1 &&
    "$docker" run --rm --user 0:0 --network none -v "$where:/secrets" -w /secrets \
      --entrypoint sh "${SECRETS_IMAGE:-redis:7.2}" -c "$give"; then
    :
  else
    # No Docker to do it: readable by the containers' users, inside a directory only you
    # may enter.
    chmod 0644 "$out/chain.key" "$out/redis-password" "$out/redis-server-password" \
      "$out/tls.key" "$out/tls.crt"
    echo "note: neither root nor a working $docker: the secrets are 0644 in a 0700" \
      "directory; run as root (sudo $0), or where docker runs, to make each 0600" >&2
  fi
fi
echo "secrets in $out (keep chain.key: games sealed with it verify only with it)"
