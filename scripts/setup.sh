#!/usr/bin/env bash
# Makes a fresh machine ready for drydock: dependencies, build, and a Docker Engine that answers.
# Idempotent: every step checks first and does nothing when it is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || die "Node.js >= 20 is required: install it from https://nodejs.org or your package manager."
command -v git >/dev/null || die "git is required: install it (Debian: apt-get install git)."

# 1. Dependencies and build.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
say "building (tsc)"
npm run --silent build

# 2. A Docker Engine that answers.
engine_answers() { node dist/cli/main.js doctor --engine-only >/dev/null 2>&1; }

if engine_answers; then
  say "Docker Engine answers"
  exit 0
fi

if [ "$(id -u)" != "0" ] || [ ! -f /etc/debian_version ]; then
  die "no Docker Engine answers (DOCKER_HOST=${DOCKER_HOST:-unset}). Install Docker Engine (https://docs.docker.com/engine/install/) or Podman with its Docker-compatible socket, start it, and run this again. As root on Debian this script installs docker.io itself."
fi

if ! command -v dockerd >/dev/null; then
  say "installing docker.io and debootstrap with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || say "apt-get update failed; trying the install with the lists already present"
  apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

state_dir="${DRYDOCK_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/drydock}"
mkdir -p "$state_dir"
log="$state_dir/dockerd.log"
if ! pgrep -x dockerd >/dev/null; then
  say "starting dockerd in the background (log: $log)"
  nohup dockerd >"$log" 2>&1 </dev/null &
fi
for _ in $(seq 1 60); do
  if engine_answers; then say "Docker Engine answers"; exit 0; fi
  sleep 1
done
die "dockerd did not answer within 60 s; see $log"
