#!/usr/bin/env bash
# Installs the TypeScript a user gets today from `npm install typescript` (pinned here, beside the
# project's own 5.x) into a cache outside the repository, so the README's library example is
# compiled with both in the tests. Idempotent: does nothing when that version is already there.
set -euo pipefail

VERSION=7.0.2
TYPES_NODE=26.6.6
dir="${DRYDOCK_TS_LATEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drydock/typescript-$VERSION}"

if [ -x "$dir/node_modules/.bin/tsc" ] && "$dir/node_modules/.bin/tsc" --version 2>/dev/null | grep -qx "Version $VERSION"; then
  exit 0
fi
echo "[install-typescript] installing typescript@$VERSION and @types/node@$TYPES_NODE into $dir" >&2
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{"name":"drydock-typescript-latest","private":true}\n' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --save-exact --silent "typescript@$VERSION" "@types/node@$TYPES_NODE" >&2
"$dir/node_modules/.bin/tsc" --version >&2
