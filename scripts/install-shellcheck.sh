#!/usr/bin/env bash
# Installs shellcheck, pinned, for the scripts drydock runs in boxes (src/**/*.sh): from Debian's
# packages with apt-get, as root on Debian; elsewhere it says what to install. Idempotent: does
# nothing when that version is already there. Prints the binary's path on stdout.
set -euo pipefail

VERSION=0.9.0
have() { command -v shellcheck >/dev/null && shellcheck --version | grep -qx "version: $VERSION"; }

if ! have; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    echo "[install-shellcheck] installing shellcheck $VERSION with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "shellcheck=$VERSION-*" >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq "shellcheck=$VERSION-*" >/dev/null; }
  fi
  have || { echo "[install-shellcheck] shellcheck $VERSION is missing: install it (Debian: apt-get install shellcheck)" >&2; exit 1; }
fi
command -v shellcheck
