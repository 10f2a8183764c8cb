#!/usr/bin/env bash
# Installs the official MCP Python SDK (pinned) into a virtualenv in a cache outside the
# repository, so the tests can call drydock from the Python client a user would use. Idempotent:
# does nothing when that version is already there.
set -euo pipefail

VERSION=2.3.0
dir="${DRYDOCK_PYTHON_MCP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drydock/python-mcp-$VERSION}"

if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$VERSION')" 2>/dev/null; then
  exit 0
fi
echo "[install-python-mcp] installing mcp==$VERSION into $dir" >&2
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "mcp==$VERSION" >&2
"$dir/bin/python" -c "import importlib.metadata as m; print('[install-python-mcp] mcp', m.version('mcp'))" >&2
