#!/usr/bin/env bash
# drydock's main job in one command, on a fresh machine: set up, build the sandbox image, copy the
# sample repository to a temporary git repository, and let scripts/demo.mjs drive `drydock serve`
# over MCP: aider fixes the sample in a box (offline model, or the real one when a provider key is
# in the environment), the diff is printed and applied to a branch, and the tests run there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[demo] %s\n' "$*" >&2; }

bash scripts/setup.sh

say "building the sandbox image (cached: unchanged inputs are not rebuilt)"
image=$(node dist/cli/main.js image build)
say "sandbox image: $image"

work=$(mktemp -d "${TMPDIR:-/tmp}/drydock-demo-XXXXXX")
repo="$work/sample-repo"
cp -R examples/sample-repo "$repo"
git -C "$repo" init -q
git -C "$repo" checkout -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name="drydock demo" -c user.email=demo@drydock.invalid commit -q -m "The sample repository"
say "sample repository: $repo"

node scripts/demo.mjs "$repo" "$image"

# The README's next steps type `drydock`: say how to get it on PATH when it is not there yet.
if ! command -v drydock >/dev/null 2>&1; then
  say "next: \`npm link\` (once, in $(pwd)) puts the drydock command on your PATH; until then it is \`node $(pwd)/dist/cli/main.js\`"
fi
