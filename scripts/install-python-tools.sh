#!/usr/bin/env bash
# Installs the tools that check the box agent (box-agent/: the Python program drydock runs in each
# box), pinned, into a virtualenv in a cache outside the repository: ruff (lint) and pytest (its
# tests, which need no Docker). Idempotent: does nothing when those versions are already there.
# Prints the virtualenv's directory on stdout, so a caller can run "$dir/bin/ruff".
set -euo pipefail

RUFF=0.17.5
PYTEST=9.2.0
dir="${DRYDOCK_PYTHON_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drydock/python-tools-ruff$RUFF-pytest$PYTEST}"

have() {
  [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(m.version('ruff') != '$RUFF' or m.version('pytest') != '$PYTEST')" 2>/dev/null
}

if ! have; then
  echo "[install-python-tools] installing ruff==$RUFF and pytest==$PYTEST into $dir" >&2
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "ruff==$RUFF" "pytest==$PYTEST" >&2
fi
echo "$dir"
