#!/usr/bin/env bash
# The checks of what drydock runs inside boxes, none of which needs Docker: the box agent
# (box-agent/, Python) with ruff, and the shell scripts (src/**/*.sh) with shellcheck; `test` also
# runs the box agent's pytest tests. The pinned tools come from scripts/install-python-tools.sh (a
# virtualenv in a cache outside the repository) and scripts/install-shellcheck.sh. Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-test}"
shift || true
tools="$(bash scripts/install-python-tools.sh)"
"$tools/bin/ruff" check --no-cache box-agent
shellcheck="$(bash scripts/install-shellcheck.sh)"
find src -name '*.sh' -print0 | sort -z | xargs -0 "$shellcheck" --severity=warning
if [ "$what" = test ]; then
  cd box-agent
  PYTHONDONTWRITEBYTECODE=1 "$tools/bin/pytest" "$@"
fi
