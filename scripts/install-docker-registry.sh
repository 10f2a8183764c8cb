#!/usr/bin/env bash
# Installs Debian's docker-registry (the CNCF distribution registry) and htpasswd for the registry
# test, which starts its own registries on 127.0.0.1 (one open, one behind htpasswd) and pulls from
# them. Idempotent: does nothing when both are there. The package's own service is not used.
set -euo pipefail

REGISTRY=${DRYDOCK_DOCKER_REGISTRY:-/usr/bin/docker-registry}

if [ -x "$REGISTRY" ] && command -v htpasswd >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "[install-docker-registry] installing Debian's docker-registry and apache2-utils (for the registry test)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends docker-registry apache2-utils >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends docker-registry apache2-utils >/dev/null; }
  # The package starts a registry on :5000 where a service manager runs; the test needs none.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
    systemctl disable --now docker-registry >/dev/null 2>&1 || true
  fi
  if [ -x "$REGISTRY" ] && command -v htpasswd >/dev/null 2>&1; then exit 0; fi
  echo "[install-docker-registry] apt-get ran but $REGISTRY or htpasswd is missing" >&2
  exit 1
fi

cat >&2 <<MSG
[install-docker-registry] docker-registry (at $REGISTRY) or htpasswd is missing, and this script can
install them only as root on Debian/Ubuntu. Install them yourself, e.g.:
  sudo apt-get install -y docker-registry apache2-utils
or point DRYDOCK_DOCKER_REGISTRY at a registry binary (github.com/distribution/distribution).
The registry test fails without them.
MSG
exit 1
