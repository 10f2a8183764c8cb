/**
 * SWE-bench's report shapes, from drydock's results, so tooling made for SWE-bench's harness reads
 * a drydock run: the run report (`make_run_report`'s `<model>.<run_id>.json`, schema_version 2)
 * and each instance's `report.json` (`get_eval_report`). Pure.
 *
 * The mapping: a task with no prediction (or not run) is incomplete; an empty answer is an empty
 * patch (not graded, as SWE-bench does); resolved and unresolved are completed; anything that
 * stopped before the tests gave a verdict (the patch did not apply, a time limit, a box) is an error.
 */
import type { AttemptResult } from "./attempt-result.js";
import type { ResultsFile, TaskSummary } from "./results-summary.js";

export interface SwebenchRunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
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

function verdict(task: TaskSummary): Verdict {
  const a = standingAttempt(task);
  if (!a || a.prediction === "missing") return "incomplete";
  if (a.status === "resolved") return "resolved";
  const empty = a.prediction === "empty" || (a.prediction === undefined && a.diff_stat.files === 0);
  if (empty && (a.status === "unresolved" || a.status === "agent_error")) return "empty";
  if (a.status === "unresolved") return "unresolved";
  return "error";
}

export function swebenchRunReport(results: ResultsFile): SwebenchRunReport {
  const ids: Record<Verdict, string[]> = {
    incomplete: [],
    empty: [],
    resolved: [],
    unresolved: [],
    error: [],
  };
  for (const task of results.tasks) ids[verdict(task)].push(task.id);
  // A row the task file holds but that could not run (a field missing, no clone given) is an
  // instance of the dataset all the same: an error, never left out of the count.
  const ran = new Set(results.tasks.map((t) => t.id));
  const invalid = [
    ...new Set(
      results.run.invalid_tasks.flatMap((p) => (p.id !== undefined && !ran.has(p.id) ? [p.id] : [])),
    ),
  ];
  ids.error.push(...invalid);
  for (const list of Object.values(ids)) list.sort();
  const submittedIds = results.tasks
    .filter((t) => standingAttempt(t)?.prediction !== "missing")
    .map((t) => t.id)
    .sort();
  const completed = [...ids.resolved, ...ids.unresolved].sort();
  return {
    total_instances: results.tasks.length + invalid.length,
    submitted_instances: submittedIds.length,
    completed_instances: completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: completed,
    incomplete_ids: ids.incomplete,
    empty_patch_ids: ids.empty,
    submitted_ids: submittedIds,
    resolved_ids: ids.resolved,
    unresolved_ids: ids.unresolved,
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

export interface SwebenchInstanceReport {
  [instanceId: string]: {
    patch_is_None: boolean;
    patch_exists: boolean;
    patch_successfully_applied: boolean;
    resolved: boolean;
    tests_status?: Record<
      "FAIL_TO_PASS" | "PASS_TO_PASS" | "FAIL_TO_FAIL" | "PASS_TO_FAIL",
      { success: string[]; failure: string[] }
    >;
  };
}

/** An instance's report.json, or undefined for a task with nothing to report (not run, no prediction). */
export function swebenchInstanceReport(task: TaskSummary): SwebenchInstanceReport | undefined {
  const a = standingAttempt(task);
  if (!a || a.prediction === "missing") return undefined;
  const grade = a.tests?.grade;
  const names = (g: { passed: string[]; failed: string[]; missing: string[] } | undefined) => ({
    success: g?.passed ?? [],
    failure: [...(g?.failed ?? []), ...(g?.missing ?? [])],
  });
  return {
    [task.id]: {
      patch_is_None: false,
      patch_exists: a.diff_stat.files > 0,
      patch_successfully_applied: a.tests !== undefined,
      resolved: a.resolved,
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
