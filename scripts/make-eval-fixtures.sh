#!/usr/bin/env bash
# Makes test/fixtures/swebench/: SWE-bench-style tasks built from real bug-fix commits of two
# open-source Python projects, for the eval tests (nothing is fetched at test time).
#
#   bash scripts/make-eval-fixtures.sh SIX_CLONE MORE_ITERTOOLS_CLONE
#
# SIX_CLONE is a clone of https://github.com/benjaminp/six (graded by pytest), MORE_ITERTOOLS_CLONE
# one of https://github.com/more-itertools/more-itertools (graded by unittest). Each task's
# repository is a one-commit bundle holding the tree of the fix's parent (history trimmed to keep
# the fixture small; the commit message names the upstream commits). The fix is split as SWE-bench
# splits it: the test files make the test patch, the rest the gold patch. Beside them: the tasks as
# drydock task rows (tasks.jsonl, one per prediction kind), as SWE-bench instance rows (rows.jsonl),
# and SWE-bench predictions files: gold, empty, wrong (a plausible fix that is not one) and cheat
# (the tests edited to pass without a fix). Output is deterministic: rerunning changes nothing.
set -euo pipefail
six=${1:?give a clone of benjaminp/six}
mit=${2:?give a clone of more-itertools/more-itertools}
out="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/swebench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# name clone fix_commit test_path...
trim() {
  local name=$1 clone=$2 fix=$3
  shift 3
  local base subject
  base=$(git -C "$clone" rev-parse "$fix^")
  subject=$(git -C "$clone" log -1 --format=%s "$fix")
  rm -rf "$work/$name"
  mkdir -p "$work/$name"
  git -C "$clone" archive "$base" | tar -x -C "$work/$name"
  (
    cd "$work/$name"
    git init -q -b main
    git add -A
    export GIT_AUTHOR_NAME="fixture" GIT_AUTHOR_EMAIL="fixture@localhost"
    export GIT_COMMITTER_NAME="fixture" GIT_COMMITTER_EMAIL="fixture@localhost"
    export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
    git commit -q -m "The tree of ${base} (the parent of ${fix}: ${subject}), history trimmed"
    git bundle create -q "$out/$name.bundle" HEAD main
  )
  git -C "$clone" diff "$base" "$fix" -- "$@" >"$work/$name.test.diff"
  local excludes=()
  for p in "$@"; do excludes+=(":(exclude)$p"); done
  git -C "$clone" diff "$base" "$fix" -- . "${excludes[@]}" >"$work/$name.gold.diff"
}

# name file python-edit: a patch made by editing one file of the trimmed tree.
edit_patch() {
  local name=$1 file=$2 kind=$3 code=$4
  (
    cd "$work/$name"
    python3 - "$file" "$code" <<'PY'
import sys
path, code = sys.argv[1], sys.argv[2]
text = open(path).read()
exec(code)
open(path, "w").write(text)
PY
    git diff >"$work/$name.$kind.diff"
    git checkout -q -- .
  )
}

trim six "$six" 10a2b75b8be7b68eacfa168834d9938b77d2d7e3 test_six.py
trim more-itertools "$mit" cf186b5de4797602fef76c3391da2d110b88a954 tests/test_more.py

# Wrong: looks like a fix, is not one.
edit_patch six six.py wrong '
text = text.replace("def assertRegex(self, *args, **kwargs):\n    return getattr(self, _assertRegex)(*args, **kwargs)\n",
  "def assertRegex(self, *args, **kwargs):\n    return getattr(self, _assertRegex)(*args, **kwargs)\n\n\ndef assertNotRegex(self, *args, **kwargs):\n    return getattr(self, _assertRegex)(*args, **kwargs)\n", 1)'
edit_patch more-itertools more_itertools/more.py wrong '
text = text.replace("    if len(element) != len(args):", "    if len(list(element)) != len(args):", 1)'
# Cheat: the library untouched, the test file made to pass.
edit_patch six test_six.py cheat '
text = text.replace("import six\n", "import six\n\nsix.assertNotRegex = lambda self, text, regex: self.assertNotRegex(text, regex)\n", 1)'
edit_patch more-itertools tests/test_more.py cheat '
text = text.replace("import more_itertools as mi\n", "import more_itertools as mi\n\n_product_index = mi.product_index\nmi.product_index = lambda element, *args: _product_index(tuple(element), *map(tuple, args))\n", 1)'

python3 - "$work" "$out" <<'PY'
import json, subprocess, sys
work, out = sys.argv[1], sys.argv[2]
read = lambda p: open(p).read()
head = lambda name: subprocess.check_output(["git", "-C", f"{work}/{name}", "rev-parse", "HEAD"], text=True).strip()
tasks = [
    {
        "name": "six", "repo": "benjaminp/six",
        "problem": "six has assertRegex and assertRaisesRegex helpers but no assertNotRegex: "
                   "add six.assertNotRegex(self, text, regex), which calls the TestCase's "
                   "assertNotRegex (assertNotRegexpMatches on Python 2).",
        "f2p": ["test_six.py::test_assertNotRegex"],
        "p2p": ["test_six.py::test_assertRegex", "test_six.py::test_assertRaisesRegex", "test_six.py::test_wraps"],
        "test_cmd": None,
    },
    {
        "name": "more-itertools", "repo": "more-itertools/more-itertools",
        "problem": "more_itertools.product_index(element, *args) fails when element or the "
                   "pools are iterators (it calls len() on them): "
                   "product_index(iter(['i', 'a']), iter('snicker'), iter('snack')) should be 12.",
        "f2p": ["tests.test_more.ProductIndexTests.test_iterator_input"],
        "p2p": ["tests.test_more.ProductIndexTests.test_basic", "tests.test_more.ProductIndexTests.test_long",
                "tests.test_more.ProductIndexTests.test_invalid_match"],
        "test_cmd": "python -m unittest -v tests.test_more",
    },
]
kinds = ["gold", "empty", "wrong", "cheat"]
rows, drydock = [], []
preds = {k: [] for k in kinds}
for t in tasks:
    name = t["name"]
    instance = f"{t['repo'].replace('/', '__')}-fixture"
    row = {
        "instance_id": instance, "repo": t["repo"], "base_commit": head(name),
        "problem_statement": t["problem"], "version": "fixture",
        "FAIL_TO_PASS": json.dumps(t["f2p"]), "PASS_TO_PASS": json.dumps(t["p2p"]),
        "test_patch": read(f"{work}/{name}.test.diff"), "patch": read(f"{work}/{name}.gold.diff"),
        "environment_setup_commit": head(name),
    }
    if t["test_cmd"]:
        row["test_cmd"] = t["test_cmd"]
    rows.append(row)
    for k in kinds:
        patch = "" if k == "empty" else read(f"{work}/{name}.{k}.diff")
        preds[k].append({"instance_id": instance, "model_patch": patch, "model_name_or_path": f"fixture-{k}"})
        drydock.append({
            "id": f"{name}-{k}", "repo": f"clones/{t['repo'].replace('/', '__')}", "ref": head(name),
            "prompt": t["problem"],
            "test_cmd": t["test_cmd"] or "python -m pytest -rA test_six.py",
            "fail_to_pass": t["f2p"], "pass_to_pass": t["p2p"],
            "test_patch": row["test_patch"], "patch": patch,
        })
def jsonl(path, items):
    with open(path, "w") as f:
        for item in items:
            f.write(json.dumps(item, sort_keys=True) + "\n")
jsonl(f"{out}/rows.jsonl", rows)
jsonl(f"{out}/tasks.jsonl", drydock)
for k in kinds:
    jsonl(f"{out}/predictions-{k}.jsonl", preds[k])
PY
ls -l "$out"
