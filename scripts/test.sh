#!/usr/bin/env bash
# The test command: makes the machine ready (scripts/setup.sh), builds the sandbox image if it is
# missing, then runs every test (unit and integration against the real Docker Engine, and the
# kubernetes project against a real cluster it brings up).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node dist/cli/main.js image build >/dev/null
npx tsc -p tsconfig.test.json --noEmit
# What runs inside boxes: the box agent (box-agent/, Python: ruff, pytest) and shellcheck of src/**/*.sh; no Docker.
bash scripts/check-box-code.sh test
bash scripts/install-typescript-latest.sh || echo "[test] typescript 7 is missing: the README library test will fail (see the message above)" >&2
bash scripts/install-python-mcp.sh || echo "[test] the MCP Python SDK is missing: the Python client test will fail (see the message above)" >&2
bash scripts/install-python-package.sh >/dev/null || echo "[test] the Python package's venv is missing: the Python package test will fail (see the message above)" >&2
bash scripts/install-swebench.sh || echo "[test] the swebench package is missing: the SWE-bench parity test will fail (see the message above)" >&2
bash scripts/install-docker-registry.sh || echo "[test] docker-registry is missing: the registry test will fail (see the message above)" >&2
bash scripts/install-chromium.sh || echo "[test] chromium is missing: the eval report test will fail (see the message above)" >&2
# The test cluster's binaries, built from source once per machine into a cache (about 25 min of
# 2 cores when the cache is empty, a second when it is current): the kubernetes project needs them.
bash scripts/kube/build.sh || echo "[test] the Kubernetes binaries did not build: the kubernetes tests will fail (see the message above)" >&2
npx vitest run "$@"
