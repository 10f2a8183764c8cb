/**
 * Grading a task's test run, as SWE-bench does: with FAIL_TO_PASS / PASS_TO_PASS names, every
 * named test must be reported as passed (a name the output does not mention counts as failed);
 * without them, test_cmd's exit code decides. Pure.
 *
 * The two modes differ here in how the output is read and what a skip is:
 * - `swebench` reads pytest's output as SWE-bench 5.0.2's parse_log_pytest does (only lines that
 *   start with a status word: a `-v` line `t.py::test_x PASSED` names nothing, the `-rA` summary
 *   does; a name is the line's second word), finds a test the dataset names with a parameter cut
 *   short (`test_x[a b` for `test_x[a b]`, its _resolve_case) by its prefix, and counts a skipped
 *   PASS_TO_PASS test as maintained (a success) and a skipped FAIL_TO_PASS test as a failure, as
 *   its get_eval_tests_report does;
 * - `strict` also reads `-v` lines and full names, and counts any skipped test as not passing.
 */
import { gradedNames, type EvalTaskInput } from "./eval-task.js";
import { parseTestOutput, type TestStatus, type TestStatuses } from "./test-output/test-results.js";

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
  /**
   * `swebench` grading: the test command exited non-zero while its output reports no failure, a
   * log SWE-bench 5.0.2 does not take as the run's (its get_logs_eval): not resolved, and its
   * report.json says the patch did not apply, as SWE-bench's does.
   */
  log_rejected?: boolean;
}

/**
 * SWE-bench's _resolve_case: a name not in the output whose `[` outnumber its `]` (a parameter the
 * dataset cut short) stands for the first reported name it begins, when all such names agree on
 * passing or not.
 */
function swebenchStatus(name: string, statuses: TestStatuses): TestStatus | undefined {
  const exact = statuses.get(name);
  if (exact !== undefined) return exact;
  const count = (c: string) => name.split(c).length - 1;
  if (count("[") <= count("]")) return undefined;
  const matches = [...statuses.byName.entries()].filter(([key]) => key.startsWith(name));
  if (matches.length === 0) return undefined;
  if (new Set(matches.map(([, s]) => s === "passed")).size !== 1) return undefined;
  return matches[0]![1];
}

/**
 * @param skippedPasses whether a skipped test counts as passed (maintained).
 * @param swebench whether a name is looked up as SWE-bench looks it up (see swebenchStatus).
 */
function gradeNames(
  names: string[],
  statuses: TestStatuses,
  skippedPasses: boolean,
  swebench: boolean,
): NameGrades {
  const out: NameGrades = { passed: [], failed: [], missing: [] };
  const skipped: string[] = [];
  for (const name of names) {
    const status = swebench ? swebenchStatus(name, statuses) : statuses.get(name);
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
  const swebench = mode === "swebench";
  const statuses = parseTestOutput(run.output, swebench ? "swebench" : "drydock");
  const f2p = gradeNames(names.failToPass, statuses, false, swebench);
  const p2p = gradeNames(names.passToPass, statuses, swebench, swebench);
  const bad = f2p.failed.length + f2p.missing.length + p2p.failed.length + p2p.missing.length;
  // SWE-bench cross-checks the log against the exit status its eval script records: a run that
  // exited non-zero yet names no failure is not the run the log describes.
  const rejected =
    swebench &&
    run.exitCode !== undefined &&
    run.exitCode !== 0 &&
    statuses.size > 0 &&
    ![...statuses.byName.values()].includes("failed");
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
      swebench
        ? "no test results recognised as SWE-bench reads them (pytest -rA, not -v; unittest -v, vitest/jest verbose or JSON, go test -v or -json)"
        : "no test results recognised (pytest -rA or -v, unittest -v, vitest/jest verbose or JSON, go test -v or -json)",
    );
  if (rejected)
    parts.push(
      `test_cmd exited ${run.exitCode} while its output reports no failure: SWE-bench does not take such a log`,
    );
  return {
    resolved: bad === 0 && !rejected,
    by: "test_names",
    reason: parts.join("; "),
    ...(names.failToPass.length ? { fail_to_pass: f2p } : {}),
    ...(names.passToPass.length ? { pass_to_pass: p2p } : {}),
    tests_found: statuses.size,
    ...(rejected ? { log_rejected: true } : {}),
  };
}
