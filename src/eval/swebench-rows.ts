/**
 * SWE-bench's instance rows as drydock tasks. A row (`instance_id`, `repo` as "owner/name",
 * `base_commit`, `problem_statement`, `FAIL_TO_PASS` / `PASS_TO_PASS` as JSON text, `test_patch`,
 * `patch`, `environment_setup_commit`, ...) becomes a task whose repository is a local clone the
 * caller maps (nothing is fetched) and whose test command runs the files the test patch touches,
 * as SWE-bench's harness does. Pure, but for finding the clone on disk (`findClone`).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The test command SWE-bench runs for most Python repositories, on the test patch's files. */
export const DEFAULT_SWEBENCH_TEST_CMD = "python -m pytest -rA {test_files}";

/** Row fields with a drydock meaning, or known to SWE-bench and deliberately unused. */
const ROW_FIELDS = new Set([
  "instance_id",
  "repo",
  "base_commit",
  "problem_statement",
  "FAIL_TO_PASS",
  "PASS_TO_PASS",
  "test_patch",
  "patch",
  "environment_setup_commit",
  "version",
  "created_at",
  "hints_text",
  "test_cmd",
  // SWE-bench Verified / Multimodal / Lite extras that grading does not need.
  "difficulty",
  "image_assets",
  "pull_number",
  "issue_numbers",
]);

export function isSwebenchRow(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "instance_id" in value &&
    !("id" in value)
  );
}

/** The files a unified diff touches (its `b/` side), as SWE-bench's get_test_directives reads them. */
export function patchFiles(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^diff --git a\/\S+ b\/(\S+)$/gm)) {
    if (!out.includes(m[1]!)) out.push(m[1]!);
  }
  return out;
}

/** What SWE-bench leaves out of a test command: data the test patch adds beside the tests. */
const NON_TEST_FILE = /\.(json|png|csv|txt|md|jpe?g|pkl|ya?ml|toml)$/i;

const quote = (s: string) => (/^[A-Za-z0-9_./:=@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * `{test_files}`: the test patch's files (non-test files such as fixtures and data left out);
 * `{test_modules}`: the same as dotted module names, for `python -m unittest`.
 */
export function testCommandFor(template: string, testPatch: string): string {
  const files = patchFiles(testPatch).filter((f) => !NON_TEST_FILE.test(f));
  const modules = files.filter((f) => f.endsWith(".py")).map((f) => f.slice(0, -3).replace(/\//g, "."));
  return template
    .replace(/\{test_files\}/g, files.map(quote).join(" "))
    .replace(/\{test_modules\}/g, modules.map(quote).join(" "));
}

export interface RowConversion {
  /** The task in drydock's fields (repo still "owner/name"; see findClone). */
  task: Record<string, unknown>;
  /** Row fields neither mapped nor known to SWE-bench. */
  unknown: string[];
}

/** Maps a row's fields to a task's; validation is left to the task schema, field names kept for messages. */
export function rowToTask(
  row: Record<string, unknown>,
  testCmdTemplate = DEFAULT_SWEBENCH_TEST_CMD,
): RowConversion {
  const testPatch = typeof row.test_patch === "string" ? row.test_patch : undefined;
  const task: Record<string, unknown> = {
    id: row.instance_id,
    repo: row.repo,
    ref: row.base_commit,
    prompt: row.problem_statement,
    test_cmd:
      row.test_cmd ?? (testPatch !== undefined ? testCommandFor(testCmdTemplate, testPatch) : undefined),
    fail_to_pass: row.FAIL_TO_PASS,
    pass_to_pass: row.PASS_TO_PASS,
    test_patch: row.test_patch,
    patch: row.patch,
    environment_ref: row.environment_setup_commit,
  };
  for (const k of Object.keys(task)) if (task[k] === undefined || task[k] === null) delete task[k];
  return { task, unknown: Object.keys(row).filter((k) => !ROW_FIELDS.has(k)) };
}

/** Where to look for a clone of "owner/name": `--repo owner/name=PATH` first, then under each `--repos DIR`. */
export interface CloneMap {
  explicit: Map<string, string>;
  dirs: string[];
}

export function findClone(repo: string, map: CloneMap): string | undefined {
  const given = map.explicit.get(repo);
  if (given) return given;
  const [owner, name] = repo.split("/");
  if (!owner || !name) return undefined;
  for (const dir of map.dirs) {
    for (const candidate of [join(dir, `${owner}__${name}`), join(dir, owner, name), join(dir, name)]) {
      if (existsSync(join(candidate, ".git")) || existsSync(join(candidate, "HEAD"))) return candidate;
    }
  }
  return undefined;
}
