#!/usr/bin/env bash
# Installs the Python package of this checkout (python/: drydock-sandbox) with the pinned
# frameworks its tests drive (Inspect AI, mini-swe-agent, SWE-ReX, the MCP SDK, pytest) into a virtualenv
# in a cache outside the repository, and Docker Compose v2 when `docker compose` is missing
# (Inspect's docker sandbox, which the tests compare with, needs it). Idempotent: the pinned
# packages are installed once per set of pins; the package itself is reinstalled from python/ on
# every run (a second), so the tests run this checkout's code. Prints the virtualenv's path.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned on 2026-11-28: the newest releases then (inspect-ai 0.3.285, mini-swe-agent 2.4.6,
# swe-rex 1.4.0).
PINS=(
  "inspect-ai==0.3.285"
  "mini-swe-agent==2.4.6"
  "swe-rex==1.4.0"
  "mcp==2.3.0"
  "pytest==9.2.0"
  "pytest-asyncio==1.5.0"
  "hatchling==1.33.0"
  "build==1.6.1"
)
COMPOSE_VERSION=v2.40.3

stamp=$(printf '%s\n' "${PINS[@]}" | sha256sum | cut -c1-12)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/drydock"
dir="${DRYDOCK_PYTHON_PACKAGE_DIR:-$cache/python-package-$stamp}"
say() { echo "[install-python-package] $*" >&2; }

if [ ! -f "$dir/.pins-installed" ]; then
  say "installing ${PINS[*]} into $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "${PINS[@]}" >&2
  touch "$dir/.pins-installed"
fi
# This checkout's package, built with the pinned hatchling (no build isolation: no download).
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --force-reinstall ./python >&2
"$dir/bin/python" -c "import drydock, drydock.inspect_sandbox, drydock.mini_swe_agent, drydock.swerex" >&2

# Docker Compose v2 for Inspect's docker sandbox: Debian 12 packages only Compose v1. Built from
# its Go module (the Go module proxy serves it) once per machine into the cache, then installed
# as a Docker CLI plugin.
if ! docker compose version >/dev/null 2>&1; then
  bin="$cache/compose-$COMPOSE_VERSION/docker-compose"
  if [ ! -x "$bin" ]; then
    command -v go >/dev/null || { say "docker compose is missing and there is no Go toolchain to build it; install Docker Compose v2"; exit 1; }
    say "building Docker Compose $COMPOSE_VERSION from its Go module (about 5 to 15 minutes once per machine)"
    src=$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
    work=$(mktemp -d)
    cp -r "$src/." "$work/" && chmod -R u+w "$work"
    mkdir -p "$(dirname "$bin")"
    (cd "$work" && go build -trimpath \
      -ldflags "-X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
      -o "$bin.tmp" ./cmd) >&2
    mv "$bin.tmp" "$bin"
    rm -rf "$work"
  fi
  if [ "$(id -u)" = "0" ]; then plugins=/usr/local/lib/docker/cli-plugins; else plugins="$HOME/.docker/cli-plugins"; fi
  mkdir -p "$plugins"
  install -m 0755 "$bin" "$plugins/docker-compose"
  say "installed $(docker compose version) into $plugins"
fi

echo "$dir"
