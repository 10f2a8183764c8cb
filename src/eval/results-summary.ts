/**
 * results.json from the run's facts and its finished attempts. Pure, so `eval report` rebuilds
 * exactly what the run wrote. A task is resolved when any of its attempts is (pass@k); pass@1
 * is the share of attempts that resolved.
 */
import {
  ATTEMPT_STATUSES,
  RESULT_SCHEMA_VERSION,
  type AttemptResult,
  type AttemptStatus,
} from "./attempt-result.js";
import type { RunInfo } from "./results-dir.js";
import type { IntegrityFlag } from "./test-integrity.js";
import type { TaskProblem } from "./task-parse.js";

export type TaskStatus = AttemptStatus | "not_run";

export interface TaskSummary {
  id: string;
  source: string;
  resolved: boolean;
  /** resolved if any attempt resolved; else the last finished attempt's status; not_run if none finished. */
  status: TaskStatus;
  attempts_finished: number;
  resolved_attempts: number;
  /** The integrity checks' flags on any of its attempts (see Integrity), when there are any. */
  integrity_flags?: IntegrityFlag[];
  duration_ms: number;
  tokens: { input: number; output: number };
  cost_usd: number;
  attempts: AttemptResult[];
}

export interface ResultsSummary {
  tasks: number;
  resolved: number;
  /** resolved / tasks, 0 when there are no tasks. */
  resolved_rate: number;
  statuses: Record<TaskStatus, number>;
  attempts_planned: number;
  attempts_finished: number;
  resolved_attempts: number;
  /** resolved_attempts / attempts_finished. */
  pass_at_1: number;
  invalid_tasks: number;
  /** Tasks with an attempt the integrity checks flagged. */
  integrity_flagged: number;
  /** Sum of attempt durations (box time), and the wall time of the last invocation. */
  duration_ms: number;
  wall_ms?: number;
  tokens: { input: number; output: number };
  cost_usd: number;
  llm_requests: number;
}

export interface ResultsFile {
  schema_version: number;
  run: RunInfo;
  summary: ResultsSummary;
  tasks: TaskSummary[];
  invalid_tasks: TaskProblem[];
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

export function summarizeTask(id: string, source: string, attempts: AttemptResult[]): TaskSummary {
  const sorted = [...attempts].sort((a, b) => a.attempt - b.attempt);
  const resolvedAttempts = sorted.filter((a) => a.resolved).length;
  const last = sorted[sorted.length - 1];
  const flags = [...new Set(sorted.flatMap((a) => a.integrity?.flags ?? []))].sort();
  return {
    id,
    source,
    resolved: resolvedAttempts > 0,
    status: resolvedAttempts > 0 ? "resolved" : (last?.status ?? "not_run"),
    attempts_finished: sorted.length,
    resolved_attempts: resolvedAttempts,
    ...(flags.length > 0 ? { integrity_flags: flags } : {}),
    duration_ms: sorted.reduce((s, a) => s + a.duration_ms, 0),
    tokens: {
      input: sorted.reduce((s, a) => s + a.tokens.input, 0),
      output: sorted.reduce((s, a) => s + a.tokens.output, 0),
    },
    cost_usd: round(
      sorted.reduce((s, a) => s + a.cost_usd, 0),
      6,
    ),
    attempts: sorted,
  };
}

/** Attempts of tasks no longer in the run, and attempts past --attempts, are left out. */
export function buildResults(run: RunInfo, attempts: AttemptResult[]): ResultsFile {
  const byTask = new Map<string, AttemptResult[]>();
  for (const a of attempts) {
    if (a.attempt > run.attempts) continue;
    const list = byTask.get(a.task_id) ?? [];
    list.push(a);
    byTask.set(a.task_id, list);
  }
  const tasks = run.tasks.map((t) => summarizeTask(t.id, t.source, byTask.get(t.id) ?? []));
  const statuses = Object.fromEntries([...ATTEMPT_STATUSES, "not_run"].map((s) => [s, 0])) as Record<
    TaskStatus,
    number
  >;
  for (const t of tasks) statuses[t.status]++;
  const finished = tasks.flatMap((t) => t.attempts);
  const resolved = tasks.filter((t) => t.resolved).length;
  const resolvedAttempts = finished.filter((a) => a.resolved).length;
  const wall =
    run.finished_at !== undefined ? Date.parse(run.finished_at) - Date.parse(run.started_at) : undefined;
  return {
    schema_version: RESULT_SCHEMA_VERSION,
    run,
    summary: {
      tasks: tasks.length,
      resolved,
      resolved_rate: tasks.length ? round(resolved / tasks.length, 4) : 0,
      statuses,
      attempts_planned: tasks.length * run.attempts,
      attempts_finished: finished.length,
      resolved_attempts: resolvedAttempts,
      pass_at_1: finished.length ? round(resolvedAttempts / finished.length, 4) : 0,
      invalid_tasks: run.invalid_tasks.length,
      integrity_flagged: tasks.filter((t) => t.integrity_flags).length,
      duration_ms: finished.reduce((s, a) => s + a.duration_ms, 0),
      ...(wall !== undefined && Number.isFinite(wall) ? { wall_ms: wall } : {}),
      tokens: {
        input: finished.reduce((s, a) => s + a.tokens.input, 0),
        output: finished.reduce((s, a) => s + a.tokens.output, 0),
      },
      cost_usd: round(
        finished.reduce((s, a) => s + a.cost_usd, 0),
        6,
      ),
      llm_requests: finished.reduce((s, a) => s + a.llm_requests, 0),
    },
    tasks,
    invalid_tasks: run.invalid_tasks,
  };
}

/**
 * The images a run's attempts ran, each with the time spent building it (summed over the attempts
 * that waited for its build) and how many attempts ran it, in the order first used. Pure.
 */
export function environmentImagesOf(
  attempts: readonly AttemptResult[],
): Array<{ image: string; build_ms: number; attempts: number }> {
  const byImage = new Map<string, { image: string; build_ms: number; attempts: number }>();
  const sorted = [...attempts].sort((a, b) => (a.started_at < b.started_at ? -1 : 1));
  for (const a of sorted) {
    if (a.environment_image === undefined) continue;
    const entry = byImage.get(a.environment_image) ?? {
      image: a.environment_image,
      build_ms: 0,
      attempts: 0,
    };
    entry.build_ms += a.environment_build_ms ?? 0;
    entry.attempts++;
    byImage.set(a.environment_image, entry);
  }
  return [...byImage.values()];
}
