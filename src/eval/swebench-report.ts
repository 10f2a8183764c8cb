/**
 * SWE-bench's report shapes, from drydock's results, so tooling made for SWE-bench's harness reads
 * a drydock run: the run report (`make_run_report`'s `<model>.<run_id>.json`, schema_version 2,
 * as swebench 5.x writes it) and each instance's `report.json` (`get_eval_report`). Pure.
 *
 * The mapping: a task with no prediction (or not run) is incomplete; an empty answer is an empty
 * patch; a task whose tests ran and were graded has a report.json and is completed (resolved or
 * unresolved); anything that stopped before the tests gave a verdict (the patch did not apply, a
 * time limit, a box) is an error. Under `swebench` grading (the default for SWE-bench rows) the
 * instance report exists exactly when SWE-bench's harness would write one, so make_run_report
 * over drydock's task folders gives this very report; `strict` grading also writes one for a task
 * that stopped early (its tests not applied or timed out) and grades empty answers.
 */
import type { AttemptResult } from "./attempt-result.js";
import type { ResultsFile, TaskSummary } from "./results-summary.js";

/**
 * SWE-bench's signatures of failures the environment (not the patch) may have caused, as its
 * harness/infra_failure.py lists them: (reason, tier, pattern), the first match wins. Advisory: a
 * task they match stays unresolved or an error.
 */
const FAILURE_SIGNATURES: ReadonlyArray<[string, "environment" | "ambiguous", RegExp]> = [
  ["browser_launch_failed", "environment", /Failed to launch|Failed to connect to the bus/m],
  ["display_unavailable", "environment", /cannot open display|Missing X server|unable to open X display/m],
  ["out_of_memory", "environment", /Cannot allocate memory|OutOfMemoryError|^Killed$/m],
  ["container_unavailable", "environment", /Error response from daemon|Cannot connect to the Docker daemon/m],
  ["network_unreachable", "environment", /Could not resolve host|Temporary failure in name resolution/m],
  ["missing_module", "ambiguous", /Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError/m],
  ["no_tests_collected", "ambiguous", /no tests ran|collected 0 items/m],
  ["tests_timed_out", "ambiguous", /Timeout error: \d+ seconds exceeded/m],
];

/** SWE-bench's classify_text: the first signature a task's logs match, or undefined. */
export function classifyFailure(
  text: string,
): { reason: string; tier: "environment" | "ambiguous" } | undefined {
  if (!text) return undefined;
  for (const [reason, tier, pattern] of FAILURE_SIGNATURES) {
    if (pattern.test(text)) return { reason, tier };
  }
  return undefined;
}

export interface SwebenchRunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  infra_failure_instances: number;
  ambiguous_failure_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  infra_failure_ids: string[];
  ambiguous_failure_ids: string[];
  /** Why each unresolved or errored task likely failed (see classifyFailure). */
  failure_reasons: Record<string, string>;
  error_ids: string[];
  schema_version: 2;
  /** drydock's additions: which run and model this is, and the tasks its integrity checks flagged. */
  run_id: string;
  model_name_or_path?: string;
  integrity_flagged_ids: string[];
}

type Verdict = "incomplete" | "empty" | "resolved" | "unresolved" | "error";

/** The attempt that stands for a task: the one that resolved it, else the last. */
export function standingAttempt(task: TaskSummary): AttemptResult | undefined {
  return task.attempts.find((a) => a.resolved) ?? task.attempts[task.attempts.length - 1];
}

/** Whether an attempt's tests ran to a verdict: SWE-bench writes report.json only then. */
function graded(a: AttemptResult): boolean {
  return a.tests?.grade !== undefined && (a.status === "resolved" || a.status === "unresolved");
}

function verdict(task: TaskSummary): Verdict {
  const a = standingAttempt(task);
  if (!a || a.prediction === "missing" || a.status === "incomplete") return "incomplete";
  if (a.grading === "swebench") {
    // As make_run_report: an empty patch is never run; a report.json says resolved or not; no
    // report.json (the patch did not apply, a time limit, a box) is an error.
    if (a.prediction === "empty") return "empty";
    if (graded(a)) return a.resolved ? "resolved" : "unresolved";
    return "error";
  }
  if (a.status === "resolved") return "resolved";
  const empty = a.prediction === "empty" || (a.prediction === undefined && a.diff_stat.files === 0);
  if (empty && (a.status === "unresolved" || a.status === "agent_error")) return "empty";
  if (a.status === "unresolved") return "unresolved";
  return "error";
}

/**
 * SWE-bench's run report of a run. `logs` holds, per task id, the standing attempt's logs that
 * SWE-bench classifies (test_output.txt, then agent.log for its run_instance.log); a task not in
 * it is classified on nothing.
 */
export function swebenchRunReport(
  results: ResultsFile,
  logs: ReadonlyMap<string, string> = new Map(),
): SwebenchRunReport {
  const ids: Record<Verdict, string[]> = {
    incomplete: [],
    empty: [],
    resolved: [],
    unresolved: [],
    error: [],
  };
  for (const task of results.tasks) ids[verdict(task)].push(task.id);
  // A row the task file holds but that could not run (a field missing, no clone given) is an
  // instance of the dataset all the same, never left out of the count: with predictions, as
  // SWE-bench counts it (no prediction: incomplete; an empty one: an empty patch; else an error,
  // as it has no report.json); without, an error.
  const ran = new Set(results.tasks.map((t) => t.id));
  const invalid = new Map<string, "given" | "empty" | undefined>();
  for (const p of results.run.invalid_tasks) {
    if (p.id !== undefined && !ran.has(p.id)) invalid.set(p.id, invalid.get(p.id) ?? p.prediction);
  }
  // Submitted, as SWE-bench counts it: every prediction for an instance of the run.
  const submitted = results.tasks
    .filter((t) => {
      const a = standingAttempt(t);
      return a?.prediction !== "missing" && a?.status !== "incomplete";
    })
    .map((t) => t.id);
  for (const [id, prediction] of invalid) {
    if (!results.run.patches) ids.error.push(id);
    else if (prediction === undefined) ids.incomplete.push(id);
    else {
      submitted.push(id);
      ids[prediction === "empty" ? "empty" : "error"].push(id);
    }
  }
  for (const list of Object.values(ids)) list.sort();
  // Recorded by the run when it had predictions (SWE-bench counts every one for an instance of
  // the dataset, also those --instance-ids left out); else those of the tasks and rows here.
  if (results.run.submitted_ids) submitted.splice(0, submitted.length, ...results.run.submitted_ids);
  submitted.sort();
  const completed = [...ids.resolved, ...ids.unresolved].sort();
  const infra: string[] = [];
  const ambiguous: string[] = [];
  const reasons: Record<string, string> = {};
  for (const id of [...ids.unresolved, ...ids.error].sort()) {
    const found = classifyFailure(logs.get(id) ?? "");
    if (!found) continue;
    reasons[id] = found.reason;
    (found.tier === "environment" ? infra : ambiguous).push(id);
  }
  return {
    total_instances: results.tasks.length + invalid.size,
    submitted_instances: submitted.length,
    completed_instances: completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    infra_failure_instances: infra.length,
    ambiguous_failure_instances: ambiguous.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: completed,
    incomplete_ids: ids.incomplete,
    empty_patch_ids: ids.empty,
    submitted_ids: submitted,
    resolved_ids: ids.resolved,
    unresolved_ids: ids.unresolved,
    infra_failure_ids: infra,
    ambiguous_failure_ids: ambiguous,
    failure_reasons: reasons,
    error_ids: ids.error,
    schema_version: 2,
    run_id: results.run.run_id,
    ...(results.run.model ? { model_name_or_path: results.run.model } : {}),
    integrity_flagged_ids: results.tasks
      .filter((t) => t.integrity_flags)
      .map((t) => t.id)
      .sort(),
  };
}

/** The tasks whose logs swebenchRunReport classifies: its unresolved and errored ones. */
export function tasksToClassify(results: ResultsFile): TaskSummary[] {
  return results.tasks.filter((t) => {
    const v = verdict(t);
    return v === "unresolved" || v === "error";
  });
}

export interface SwebenchInstanceReport {
  [instanceId: string]: {
    patch_is_None: boolean;
    patch_exists: boolean;
    patch_successfully_applied: boolean;
    resolved: boolean;
    /** swebench 5.x: the tests gave no result and their log shows an environment fault. */
    infra_failure: boolean;
    infra_failure_reason?: string;
    tests_status?: Record<
      "FAIL_TO_PASS" | "PASS_TO_PASS" | "FAIL_TO_FAIL" | "PASS_TO_FAIL",
      { success: string[]; failure: string[] }
    >;
  };
}

/**
 * An instance's report.json, or undefined for a task with nothing to report: not run, no
 * prediction, and under `swebench` grading also an empty patch (not run) and a task whose tests
 * gave no verdict (SWE-bench's harness writes none for a patch that does not apply or a time limit).
 */
export function swebenchInstanceReport(
  task: TaskSummary,
  testOutput = "",
): SwebenchInstanceReport | undefined {
  const a = standingAttempt(task);
  if (!a || a.prediction === "missing" || a.status === "incomplete") return undefined;
  if (a.grading === "swebench" && (a.prediction === "empty" || !graded(a))) return undefined;
  const grade = a.tests?.grade;
  const names = (g: { passed: string[]; failed: string[]; missing: string[] } | undefined) => ({
    success: g?.passed ?? [],
    failure: [...(g?.failed ?? []), ...(g?.missing ?? [])],
  });
  // As get_eval_report: tests that ran but reported no result (or whose log SWE-bench rejects) are
  // not a patch that applied, and their log is classified for an environment fault.
  if (grade?.by === "test_names" && (grade.tests_found === 0 || grade.log_rejected)) {
    const found = classifyFailure(testOutput);
    return {
      [task.id]: {
        patch_is_None: false,
        patch_exists: a.diff_stat.files > 0,
        patch_successfully_applied: false,
        resolved: false,
        infra_failure: found?.tier === "environment",
        ...(found ? { infra_failure_reason: found.reason } : {}),
      },
    };
  }
  return {
    [task.id]: {
      patch_is_None: false,
      patch_exists: a.diff_stat.files > 0,
      patch_successfully_applied: a.tests !== undefined,
      resolved: a.resolved,
      infra_failure: false,
      ...(grade?.by === "test_names"
        ? {
            tests_status: {
              FAIL_TO_PASS: names(grade.fail_to_pass),
              PASS_TO_PASS: names(grade.pass_to_pass),
              FAIL_TO_FAIL: { success: [], failure: [] },
              PASS_TO_FAIL: { success: [], failure: [] },
            },
          }
        : {}),
    },
  };
}
