/**
 * Grading a task's test run, as SWE-bench does: with FAIL_TO_PASS / PASS_TO_PASS names, every
 * named test must be reported as passed (a name the output does not mention counts as failed);
 * without them, test_cmd's exit code decides. Pure.
 *
 * Two modes differ in one thing here: a test the runner reports as skipped. `swebench` (SWE-bench
 * 5.x's get_eval_tests_report) counts a skipped PASS_TO_PASS test as maintained (a success) and a
 * skipped FAIL_TO_PASS test as a failure; `strict` counts any skipped test as not passing.
 */
import { gradedNames, type EvalTaskInput } from "./eval-task.js";
import { parseTestOutput } from "./test-output/test-results.js";

export interface NameGrades {
  passed: string[];
  failed: string[];
  /** Named by the task, not found in the output. */
  missing: string[];
  /**
   * Of `passed`, those the runner reported as skipped: `swebench` grading counts a skipped
   * PASS_TO_PASS test as maintained (strict, and FAIL_TO_PASS in both, count it as failed).
   */
  skipped?: string[];
}

/** How results are graded and reported: as SWE-bench's harness does, or drydock's stricter way. */
export const GRADING_MODES = ["swebench", "strict"] as const;
export type GradingMode = (typeof GRADING_MODES)[number];

export interface Grade {
  resolved: boolean;
  by: "exit_code" | "test_names";
  /** One line for people: why resolved or not. */
  reason: string;
  fail_to_pass?: NameGrades;
  pass_to_pass?: NameGrades;
  /** How many test results the output held (test_names grading only). */
  tests_found?: number;
}

/** @param skippedPasses whether a skipped test counts as passed (maintained). */
function gradeNames(
  names: string[],
  statuses: ReturnType<typeof parseTestOutput>,
  skippedPasses: boolean,
): NameGrades {
  const out: NameGrades = { passed: [], failed: [], missing: [] };
  const skipped: string[] = [];
  for (const name of names) {
    const status = statuses.get(name);
    if (status === "passed") out.passed.push(name);
    else if (status === undefined) out.missing.push(name);
    else if (status === "skipped" && skippedPasses) {
      out.passed.push(name);
      skipped.push(name);
    } else out.failed.push(name);
  }
  return skipped.length > 0 ? { ...out, skipped } : out;
}

export function gradeTests(
  task: Pick<EvalTaskInput, "fail_to_pass" | "pass_to_pass">,
  run: { exitCode: number | undefined; output: string },
  mode: GradingMode = "strict",
): Grade {
  const names = gradedNames(task);
  if (!names) {
    const resolved = run.exitCode === 0;
    return {
      resolved,
      by: "exit_code",
      reason: resolved ? "test_cmd exited 0" : `test_cmd exited ${run.exitCode ?? "without a code"}`,
    };
  }
  const statuses = parseTestOutput(run.output);
  const f2p = gradeNames(names.failToPass, statuses, false);
  const p2p = gradeNames(names.passToPass, statuses, mode === "swebench");
  const bad = f2p.failed.length + f2p.missing.length + p2p.failed.length + p2p.missing.length;
  const parts: string[] = [];
  if (names.failToPass.length)
    parts.push(`FAIL_TO_PASS ${f2p.passed.length}/${names.failToPass.length} pass`);
  if (names.passToPass.length)
    parts.push(`PASS_TO_PASS ${p2p.passed.length}/${names.passToPass.length} pass`);
  const skipped = p2p.skipped?.length ?? 0;
  if (skipped > 0) parts.push(`${skipped} PASS_TO_PASS skipped (maintained, as SWE-bench grades)`);
  const missing = f2p.missing.length + p2p.missing.length;
  if (missing > 0) parts.push(`${missing} not found in the output`);
  if (statuses.size === 0)
    parts.push(
      "no test results recognised (pytest -rA or -v, unittest -v, vitest/jest verbose or JSON, go test -v or -json)",
    );
  return {
    resolved: bad === 0,
    by: "test_names",
    reason: parts.join("; "),
    ...(names.failToPass.length ? { fail_to_pass: f2p } : {}),
    ...(names.passToPass.length ? { pass_to_pass: p2p } : {}),
    tests_found: statuses.size,
  };
}
