/**
 * Grading that editing the tests cannot game: before a task's test_patch is applied, every file
 * it touches is put back as it was before the agent ran (as SWE-bench's harness resets the test
 * files to the base commit), and the result says which of those files the agent had changed and
 * which files it changed outside `editable_files`.
 */
import type { Box } from "../sandbox/box.js";
import { CommandExitError } from "../util/errors.js";
import { parseGitDiff } from "../workspace/parse-git-diff.js";
import { EVAL_DIR_IN_BOX } from "./box-tree.js";

/** Paths a diff touches (both sides of a rename). Pure. */
export function touchedPaths(diff: string): string[] {
  if (diff.trim() === "") return [];
  const paths = new Set<string>();
  for (const change of parseGitDiff(diff)) {
    paths.add(change.path);
    if (change.oldPath) paths.add(change.oldPath);
  }
  return [...paths].sort();
}

export interface Integrity {
  /** Files of the test_patch the agent had changed; they were put back before the test_patch. */
  test_files_restored: string[];
  /** Files the agent changed that are not in the task's editable_files (when it names them). */
  outside_editable_files: string[];
}

/** What the agent's diff did to the test patch's files and outside the editable files. Pure. */
export function integrityOf(
  agentDiff: string,
  testPatch: string | undefined,
  editable?: string[],
): Integrity {
  const changed = touchedPaths(agentDiff);
  const tests = new Set(testPatch ? touchedPaths(testPatch) : []);
  const allowed = editable ? new Set(editable.map((p) => p.replace(/^\.\//, ""))) : undefined;
  return {
    test_files_restored: changed.filter((p) => tests.has(p)),
    outside_editable_files: allowed ? changed.filter((p) => !allowed.has(p)) : [],
  };
}

const RESTORE = `
set -e
cd /workspace
tree=$1; shift
export GIT_INDEX_FILE=${EVAL_DIR_IN_BOX}/restore.index
git read-tree "$tree"
for path in "$@"; do
  if git cat-file -e "$tree:$path" 2>/dev/null; then
    rm -rf -- "$path"
    git checkout-index -f -- "$path"
  else
    rm -rf -- "$path"
  fi
done
rm -f "$GIT_INDEX_FILE"
`;

/** Puts `paths` back as they were in `tree` (the workspace before the agent); removes those it did not have. */
export async function restorePaths(
  box: Box,
  tree: string,
  paths: string[],
  signal?: AbortSignal,
): Promise<void> {
  if (paths.length === 0) return;
  const result = await box.sh(RESTORE, [tree, ...paths], { timeoutMs: 120_000, signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(result.exitCode, result.stderr.toString("utf8"), "restoring the test files");
  }
}
