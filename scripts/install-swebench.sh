#!/usr/bin/env bash
# Installs SWE-bench's harness (the `swebench` package, pinned) into a virtualenv in a cache
# outside the repository, so the tests can hand drydock's per-task reports to SWE-bench's own
# make_run_report and compare what it writes with drydock's swebench-report.json. Idempotent:
# does nothing when that version is already there.
set -euo pipefail

VERSION=5.0.2
dir="${DRYDOCK_SWEBENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drydock/swebench-$VERSION}"

if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('swebench') != '$VERSION')" 2>/dev/null; then
  exit 0
fi
echo "[install-swebench] installing swebench==$VERSION into $dir" >&2
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "swebench==$VERSION" >&2
"$dir/bin/python" -c "import importlib.metadata as m; print('[install-swebench] swebench', m.version('swebench'))" >&2
