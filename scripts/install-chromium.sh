#!/usr/bin/env bash
# Installs Debian's chromium for the eval report test (report.html is checked in a real headless
# browser through playwright-core). Idempotent: does nothing when chromium is already there.
set -euo pipefail

CHROMIUM=${DRYDOCK_CHROMIUM:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "[install-chromium] installing Debian's chromium (for the eval report test)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  if [ -x "$CHROMIUM" ]; then
    echo "[install-chromium] $("$CHROMIUM" --version 2>/dev/null || echo chromium) at $CHROMIUM" >&2
    exit 0
  fi
  echo "[install-chromium] apt-get installed chromium but $CHROMIUM is missing" >&2
  exit 1
fi

cat >&2 <<MSG
[install-chromium] chromium is not installed at $CHROMIUM, and this script can install it only as
root on Debian/Ubuntu (apt-get install -y chromium). Install it yourself, e.g.:
  sudo apt-get install -y chromium          # Debian, Ubuntu
  sudo dnf install -y chromium              # Fedora
or point DRYDOCK_CHROMIUM at a Chromium or Chrome binary. The eval report test fails without it.
MSG
exit 1
