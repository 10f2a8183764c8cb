/**
 * results.json from the run's facts and its finished attempts. Pure, so `eval report` rebuilds
 * exactly what the run wrote. A task is resolved when any of its attempts is; pass@1 is the
 * share of attempts that resolved, and pass_at_k the unbiased estimate of pass@k for each k up to
 * --attempts.
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
  /**
   * For each k from 1 to --attempts: the chance that at least one of k attempts resolves a task,
   * estimated without bias from each task's n finished attempts and c resolved ones as
   * 1 - C(n-c, k) / C(n, k) (Chen et al. 2021), averaged over the tasks with at least k finished
   * attempts (`tasks` says how many).
   */
  pass_at_k: Record<string, { value: number; tasks: number }>;
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

/**
 * The unbiased estimator of pass@k for one task with n attempts of which c resolved:
 * 1 - C(n-c, k) / C(n, k), computed as a product so large n does not overflow.
 */
export function passAtKOfTask(n: number, c: number, k: number): number {
  if (k > n) throw new RangeError(`pass@${k} needs at least ${k} attempts, not ${n}`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

function passAtK(tasks: TaskSummary[], attempts: number): Record<string, { value: number; tasks: number }> {
  const out: Record<string, { value: number; tasks: number }> = {};
  for (let k = 1; k <= attempts; k++) {
    const counted = tasks.filter((t) => t.attempts_finished >= k);
    const sum = counted.reduce((s, t) => s + passAtKOfTask(t.attempts_finished, t.resolved_attempts, k), 0);
    out[String(k)] = { value: counted.length ? round(sum / counted.length, 4) : 0, tasks: counted.length };
  }
  return out;
}

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
      pass_at_k: passAtK(tasks, run.attempts),
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
 * The images a run's attempts ran, each with the time its build took and how many attempts ran
 * it, in the order first used. Pure. Attempts that asked for an image while it was being built
 * waited on that one build, each for part of it: the build's time is the longest wait, never
 * their sum (two attempts waiting on one 31 s build are 31 s of building, not 62).
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
    entry.build_ms = Math.max(entry.build_ms, a.environment_build_ms ?? 0);
    entry.attempts++;
    byImage.set(a.environment_image, entry);
  }
  return [...byImage.values()];
}
