#!/usr/bin/env bash
# The box agent's own checks (box-agent/: the Python program drydock runs in each box), none of
# which needs Docker: `lint` runs ruff on it, `test` runs ruff and then its pytest tests. The
# pinned tools come from scripts/install-python-tools.sh (a virtualenv in a cache outside the
# repository). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-test}"
shift || true
tools="$(bash scripts/install-python-tools.sh)"
"$tools/bin/ruff" check --no-cache box-agent
if [ "$what" = test ]; then
  cd box-agent
  PYTHONDONTWRITEBYTECODE=1 "$tools/bin/pytest" "$@"
fi
