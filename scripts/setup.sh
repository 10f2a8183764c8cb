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
if [ -L node_modules ]; then
  # Another checkout's modules (a worktree's link): npm ci would empty them for both.
  say "node_modules is a link to $(readlink node_modules): left as it is (run npm ci there if it is stale)"
elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
say "building (tsc)"
npm run --silent build

# 2. A Docker Engine that answers, with gVisor (runsc) registered for `--runtime runsc` where this
#    script may: on Debian as root it installs the runsc package, and writes the runtime into
#    daemon.json of a dockerd it starts (or started before, by its pid file), reloading that one with
#    SIGHUP (no restart: running containers stay). An engine it did not start is left as it is: it
#    prints how to add the runtime. See docs/runtimes.md.
engine_answers() { node dist/cli/main.js doctor --engine-only >/dev/null 2>&1; }

state_dir="${DRYDOCK_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/drydock}"
daemon_json="${DRYDOCK_DAEMON_JSON:-/etc/docker/daemon.json}"
pidfile="$state_dir/dockerd.pid"
debian_root() { [ "$(id -u)" = "0" ] && [ -f /etc/debian_version ]; }

install_runsc() {
  command -v runsc >/dev/null && return 0
  debian_root || return 1
  say "installing gVisor (runsc) with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null; }
}

runsc_hint() {
  say "to run boxes under gVisor (--runtime runsc): install runsc (Debian: apt-get install runsc), add"
  say '  {"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none"]}}}'
  say "  to $daemon_json and reload the engine (kill -HUP \$(pidof dockerd)); see docs/runtimes.md"
}

# The engine answers here. runsc is registered, or registered now, or the way to do it is printed.
ensure_runsc() {
  if node scripts/runsc-runtime.mjs check; then say "gVisor (runsc) is registered with the engine"; return 0; fi
  if ! install_runsc; then
    say "warning: runsc is not installed and this script cannot install it here (Debian as root only)"
    runsc_hint; return 0
  fi
  local pid; pid="$(pgrep -x dockerd | head -n 1 || true)"
  if [ -z "$pid" ] || [ ! -f "$pidfile" ] || [ "$(cat "$pidfile")" != "$pid" ]; then
    say "the running engine was not started by this script: its configuration is left as it is"
    runsc_hint; return 0
  fi
  node scripts/runsc-runtime.mjs merge "$daemon_json"
  say "reloading dockerd (SIGHUP: running containers stay)"
  kill -HUP "$pid"
  for _ in $(seq 1 20); do
    if node scripts/runsc-runtime.mjs check; then say "gVisor (runsc) is registered with the engine"; return 0; fi
    sleep 0.5
  done
  say "warning: dockerd did not take the runsc runtime after a reload; see $state_dir/dockerd.log"
  runsc_hint
}

if engine_answers; then
  say "Docker Engine answers"
  ensure_runsc
  exit 0
fi

if ! debian_root; then
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

mkdir -p "$state_dir"
log="$state_dir/dockerd.log"
if ! pgrep -x dockerd >/dev/null; then
  # The runtime goes in before the engine starts: no reload needed.
  if install_runsc; then node scripts/runsc-runtime.mjs merge "$daemon_json"; else runsc_hint; fi
  say "starting dockerd in the background (log: $log)"
  # A session of its own: whoever ran this script may stop its whole process group afterwards
  # (a CI step, a job runner), and that must not take the engine with it.
  setsid nohup dockerd >"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
fi
for _ in $(seq 1 60); do
  if engine_answers; then say "Docker Engine answers"; ensure_runsc; exit 0; fi
  sleep 1
done
die "dockerd did not answer within 60 s; see $log"
