/**
 * Grading that editing the tests cannot game: before a task's test_patch is applied, every file
 * it touches is put back as it was before the agent ran (as SWE-bench's harness resets the test
 * files to the base commit), and so is every file of the test runner's own (runner-files.ts) the
 * agent changed outside `editable_files`. The result says which files were put back, which files
 * the agent changed outside `editable_files`, and why the attempt is flagged.
 */
import type { Box } from "../sandbox/box.js";
import { CommandExitError } from "../util/errors.js";
import { parseGitDiff } from "../workspace/parse-git-diff.js";
import { EVAL_DIR_IN_BOX } from "./box-tree.js";
import { runnerFiles } from "./runner-files.js";

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

/**
 * - `runner_files_restored`: the agent changed files of the test runner's own; they were put back.
 * - `fewer_tests_than_base`: the tests reported far fewer results than the same tests without the
 *   agent's diff (output printed by the code under test in place of the runner's, a suite cut short).
 */
export type IntegrityFlag = "runner_files_restored" | "fewer_tests_than_base";

export interface Integrity {
  /** Files of the test_patch the agent had changed; they were put back before the test_patch. */
  test_files_restored: string[];
  /** Files the agent changed that are not in the task's editable_files (when it names them). */
  outside_editable_files: string[];
  /** Runner files (conftest.py, pytest configuration, ...) the agent changed; put back before the tests. */
  runner_files_restored: string[];
  /** Why the attempt is not to be trusted; empty when nothing was found. */
  flags: IntegrityFlag[];
  /** One line for people, when flagged. */
  reason?: string;
  /** How many test results the output held, with the agent's diff and without it (when counted). */
  tests_found?: number;
  base_tests_found?: number;
}

/**
 * How results are counted: "strict" (the default) counts no flagged attempt as resolved;
 * "lenient" records the flags and lets the tests decide, for agents that are trusted.
 */
export const INTEGRITY_MODES = ["strict", "lenient"] as const;
export type IntegrityMode = (typeof INTEGRITY_MODES)[number];

/** What the agent's diff did to the test patch's files, the runner's files and outside the editable files. Pure. */
export function integrityOf(
  agentDiff: string,
  testPatch: string | undefined,
  editable?: string[],
): Integrity {
  const changed = touchedPaths(agentDiff);
  const tests = new Set(testPatch ? touchedPaths(testPatch) : []);
  const allowed = editable ? new Set(editable.map((p) => p.replace(/^\.\//, ""))) : undefined;
  // A runner file the task names as editable is the agent's to change; a test patch's file is put
  // back (and reported) as a test file already.
  const runner = runnerFiles(changed)
    .map((f) => f.path)
    .filter((p) => !tests.has(p) && !allowed?.has(p));
  return withFlags({
    test_files_restored: changed.filter((p) => tests.has(p)),
    outside_editable_files: allowed ? changed.filter((p) => !allowed.has(p)) : [],
    runner_files_restored: runner,
    flags: [],
  });
}

/**
 * The suite counts next to each other: fewer than half of the results the same tests give without
 * the agent's diff is flagged. The margin is wide because an honest fix can change a
 * parametrised test's count a little; output faked by the code under test names a handful. Pure.
 */
export function withTestCounts(integrity: Integrity, testsFound: number, baseTestsFound?: number): Integrity {
  return withFlags({
    ...integrity,
    tests_found: testsFound,
    ...(baseTestsFound !== undefined ? { base_tests_found: baseTestsFound } : {}),
  });
}

function withFlags(integrity: Integrity): Integrity {
  const flags: IntegrityFlag[] = [];
  const reasons: string[] = [];
  const restored = integrity.runner_files_restored;
  if (restored.length > 0) {
    flags.push("runner_files_restored");
    const shown =
      restored.slice(0, 5).join(", ") + (restored.length > 5 ? `, and ${restored.length - 5} more` : "");
    reasons.push(`the agent changed the test runner's files (${shown}); they were put back before the tests`);
  }
  const { tests_found: found, base_tests_found: base } = integrity;
  if (found !== undefined && base !== undefined && base > 0 && found * 2 < base) {
    flags.push("fewer_tests_than_base");
    reasons.push(`the tests reported ${found} result(s) where they report ${base} without the agent's diff`);
  }
  const { reason: _old, ...rest } = integrity;
  return { ...rest, flags, ...(reasons.length > 0 ? { reason: reasons.join("; ") } : {}) };
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
