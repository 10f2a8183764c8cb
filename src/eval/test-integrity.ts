/**
 * Grading that editing the tests cannot game: before a task's test_patch is applied, every file
 * it touches is put back as it was before the agent ran (as SWE-bench's harness resets the test
 * files to the base commit), and so is every file of the test runner's own (runner-files.ts) the
 * agent changed outside `editable_files`, a module it added that shadows one the runner imports
 * (python-shadowing.ts) included. The diff is also read for code that tampers with the test
 * framework in-process (tamper-scan.ts), and under strict grading a change outside the task's
 * `editable_files` is flagged. The result says which files were put back, which files the agent
 * changed outside `editable_files`, what the scan saw, and why the attempt is flagged.
 */
import type { Box } from "../sandbox/box.js";
import { CommandExitError } from "../util/errors.js";
import { parseGitDiff } from "../workspace/parse-git-diff.js";
import { EVAL_DIR_IN_BOX } from "./box-tree.js";
import { shadowingModules } from "./python-shadowing.js";
import { runnerFiles } from "./runner-files.js";
import { describeFindings, frameworkOwn, scanForTampering, type TamperFinding } from "./tamper-scan.js";

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
 * - `runner_files_restored`: the agent changed files of the test runner's own, or added a module
 *   that shadows one the runner imports; they were put back (or removed).
 * - `fewer_tests_than_base`: the tests reported far fewer results than the same tests without the
 *   agent's diff (output printed by the code under test in place of the runner's, a suite cut short).
 * - `framework_tampering`: lines of the diff look like they change the test framework from inside
 *   the tests' process (a static look: a flag, not a proof; see tamper-scan.ts).
 * - `outside_editable_files`: under strict grading, the agent changed files the task does not
 *   name in `editable_files` (other than the test and runner files put back).
 */
export type IntegrityFlag =
  "runner_files_restored" | "fewer_tests_than_base" | "framework_tampering" | "outside_editable_files";

export interface Integrity {
  /** Files of the test_patch the agent had changed; they were put back before the test_patch. */
  test_files_restored: string[];
  /** Files the agent changed that are not in the task's editable_files (when it names them). */
  outside_editable_files: string[];
  /** Runner files (conftest.py, pytest configuration, ...) the agent changed; put back before the tests. */
  runner_files_restored: string[];
  /** Of runner_files_restored: those that make up a module shadowing one the runner imports, and which. */
  shadowing_modules?: Array<{ path: string; module: string }>;
  /**
   * Under strict grading, with editable_files: the files the agent changed outside them that were
   * not put back (flagged as `outside_editable_files`).
   */
  changed_outside_editable?: string[];
  /** Lines of the diff that look like tampering with the test framework in-process, with file and line. */
  tampering?: TamperFinding[];
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

/** What grading knows besides the diffs, for the checks that need it. */
export interface IntegrityContext {
  /**
   * Every file of the tree the tests start from (before the agent's diff): which modules are the
   * project's own, where pytest puts test directories on sys.path. Without it every module is new.
   */
  baseFiles?: ReadonlySet<string>;
  /** The task's test command: its `-m` module, `cd` and PYTHONPATH (python-shadowing.ts). */
  testCmd?: string;
  /** Flag a change outside editable_files (strict grading, when the task names them). */
  flagOutsideEditable?: boolean;
}

/**
 * What the agent's diff did to the test patch's files, the runner's files (and modules shadowing
 * the runner's) and outside the editable files, and what the static look at it found. Pure.
 */
export function integrityOf(
  agentDiff: string,
  testPatch: string | undefined,
  editable?: string[],
  context: IntegrityContext = {},
): Integrity {
  const changed = touchedPaths(agentDiff);
  const tests = new Set(testPatch ? touchedPaths(testPatch) : []);
  const allowed = editable ? new Set(editable.map((p) => p.replace(/^\.\//, ""))) : undefined;
  const baseFiles = context.baseFiles ?? new Set<string>();
  const { written, deleted } = writtenPaths(agentDiff);
  const shadows = shadowingModules({
    changed: written,
    deleted,
    baseFiles,
    testCmd: context.testCmd ?? "",
    testFiles: [...tests],
  }).filter((s) => !allowed?.has(s.path));
  const shadowPaths = new Set(shadows.map((s) => s.path));
  // A runner file the task names as editable is the agent's to change; a test patch's file is put
  // back (and reported) as a test file already.
  const runner = runnerFiles(changed)
    .map((f) => f.path)
    .filter((p) => !tests.has(p) && !allowed?.has(p) && !shadowPaths.has(p));
  const restored = new Set([...runner, ...shadowPaths, ...tests]);
  const outside = allowed ? changed.filter((p) => !allowed.has(p)) : [];
  const stray = context.flagOutsideEditable ? outside.filter((p) => !restored.has(p)) : [];
  // What the tests never see (put back first) and the project's own copy of the runner are not read.
  const tampering = scanForTampering(agentDiff, (p) => restored.has(p) || frameworkOwn(p, baseFiles));
  return withFlags({
    test_files_restored: changed.filter((p) => tests.has(p)),
    outside_editable_files: outside,
    runner_files_restored: [...runner, ...shadowPaths].sort(),
    ...(shadows.length > 0
      ? { shadowing_modules: shadows.map(({ path, module }) => ({ path, module })) }
      : {}),
    ...(stray.length > 0 ? { changed_outside_editable: stray } : {}),
    ...(tampering.length > 0 ? { tampering } : {}),
    flags: [],
  });
}

/** The paths a diff writes (added, changed, the new side of a rename) and those it deletes. Pure. */
function writtenPaths(diff: string): { written: string[]; deleted: string[] } {
  if (diff.trim() === "") return { written: [], deleted: [] };
  const written = new Set<string>();
  const deleted = new Set<string>();
  for (const change of parseGitDiff(diff)) {
    if (change.status === "deleted") deleted.add(change.path);
    else written.add(change.path);
    if (change.status === "renamed" && change.oldPath) deleted.add(change.oldPath);
  }
  return { written: [...written].sort(), deleted: [...deleted].sort() };
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
    const shadowed = new Map((integrity.shadowing_modules ?? []).map((s) => [s.path, s.module]));
    const named = restored.map((p) => (shadowed.has(p) ? `${p} (shadows ${shadowed.get(p)})` : p));
    const shown = named.slice(0, 5).join(", ") + (named.length > 5 ? `, and ${named.length - 5} more` : "");
    reasons.push(`the agent changed the test runner's files (${shown}); they were put back before the tests`);
  }
  const { tests_found: found, base_tests_found: base } = integrity;
  if (found !== undefined && base !== undefined && base > 0 && found * 2 < base) {
    flags.push("fewer_tests_than_base");
    reasons.push(`the tests reported ${found} result(s) where they report ${base} without the agent's diff`);
  }
  const tampering = integrity.tampering ?? [];
  if (tampering.length > 0) {
    flags.push("framework_tampering");
    reasons.push(
      `the diff looks like it changes the test framework in-process (${describeFindings(tampering)}); a static look, not a proof`,
    );
  }
  const stray = integrity.changed_outside_editable ?? [];
  if (stray.length > 0) {
    flags.push("outside_editable_files");
    const shown = stray.slice(0, 5).join(", ") + (stray.length > 5 ? `, and ${stray.length - 5} more` : "");
    reasons.push(`the agent changed files outside the task's editable_files (${shown})`);
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
