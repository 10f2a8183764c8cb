/**
 * Runs every attempt of every task, N boxes at a time. Attempts already finished in the results
 * directory are skipped (the run resumes), unless the task changed since. Stopping the run
 * (its signal) lets no new attempt start, cancels the running ones, removes every box, and keeps
 * every result already written.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Engine } from "../engine/engine.js";
import { SessionManager } from "../session/session-manager.js";
import { describeError } from "../util/errors.js";
import { RESULT_SCHEMA_VERSION, type AttemptResult } from "./attempt-result.js";
import type { EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import type { MeteredAiderService } from "./metered-aider-service.js";
import type { ProgressCounts } from "./progress-line.js";
import { RepoSources } from "./repo-source.js";
import { readAttempts, writeAttempt } from "./results-dir.js";
import { runAttempt, type AttemptEnv } from "./run-attempt.js";

export interface EvalRunOptions {
  engine: Engine;
  tasks: EvalTask[];
  agent: EvalAgent;
  aider?: MeteredAiderService;
  out: string;
  concurrency: number;
  attempts: number;
  /** Start over: forget every result in `out`. */
  force?: boolean;
  /** Run again attempts that ended in box_error or error. */
  retryErrors?: boolean;
  image: string;
  /** See AttemptEnv.imageFor. */
  imageFor?: AttemptEnv["imageFor"];
  memoryMB?: number;
  cpus?: number;
  defaultTimeoutS: number;
  defaultAgentTimeoutS?: number;
  defaultTestTimeoutS?: number;
  signal: AbortSignal;
  onProgress?: (counts: ProgressCounts) => void;
  /** Things worth a line of their own (a task run again because it changed, a failure). */
  onNote?: (message: string) => void;
}

export interface EvalRunOutcome {
  ran: number;
  skipped: number;
  cancelled: number;
}

interface Item {
  task: EvalTask;
  attempt: number;
}

/** Whether a finished attempt still counts for this task and run. */
function stillCounts(
  previous: AttemptResult,
  task: EvalTask,
  agent: string,
  input: string | undefined,
  retryErrors: boolean,
): boolean {
  if (previous.task_hash !== task.hash || previous.agent !== agent) return false;
  if (previous.agent_input !== input) return false;
  if (retryErrors && (previous.status === "box_error" || previous.status === "error")) return false;
  return true;
}

/** An attempt the agent refuses before any box starts (a task it cannot run). */
function refused(task: EvalTask, attempt: number, agent: EvalAgent, problem: string): AttemptResult {
  const now = new Date().toISOString();
  return {
    schema_version: RESULT_SCHEMA_VERSION,
    task_id: task.id,
    attempt,
    status: "error",
    resolved: false,
    error: problem,
    phase: "start",
    agent: agent.name,
    task_hash: task.hash,
    ...(agent.gradesAnswers ? { prediction: "missing" as const } : {}),
    started_at: now,
    finished_at: now,
    duration_ms: 0,
    timings_ms: { start: 0, setup: 0, agent: 0, tests: 0 },
    tokens: { input: 0, output: 0 },
    cost_usd: 0,
    llm_requests: 0,
    diff_stat: { files: 0, insertions: 0, deletions: 0 },
  };
}

export async function runEval(options: EvalRunOptions): Promise<EvalRunOutcome> {
  const { agent, out, signal } = options;
  if (options.force) await rm(join(out, "tasks"), { recursive: true, force: true });
  const previous = new Map((await readAttempts(out)).map((a) => [`${a.task_id}#${a.attempt}`, a]));
  const counts: ProgressCounts = { total: 0, done: 0, passed: 0, failed: 0, running: 0 };
  const queue: Item[] = [];
  const inputs = new Map<string, string | undefined>();
  let skipped = 0;
  const count = (result: AttemptResult) => {
    counts.done++;
    if (result.resolved) counts.passed++;
    else counts.failed++;
  };
  for (const task of options.tasks) {
    const problem = await agent.check(task);
    const input = await agent.inputKey?.(task);
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      counts.total++;
      const before = previous.get(`${task.id}#${attempt}`);
      if (before && stillCounts(before, task, agent.name, input, options.retryErrors ?? false)) {
        skipped++;
        count(before);
        continue;
      }
      if (before && before.task_hash !== task.hash) {
        options.onNote?.(`${task.id}: the task changed since its last result; running it again`);
      } else if (before && before.agent_input !== input && attempt === 1) {
        options.onNote?.(
          `${task.id}: the agent's input (its prediction) changed since its last result; running it again`,
        );
      }
      if (problem) {
        const result = refused(task, attempt, agent, problem);
        await writeAttempt(out, result, { diff: "", agentLog: `${problem}\n`, testOutput: "" });
        count(result);
        if (attempt === 1) options.onNote?.(`${task.id}: ${problem}`);
        continue;
      }
      inputs.set(task.id, input);
      queue.push({ task, attempt });
    }
  }
  options.onProgress?.({ ...counts });
  if (queue.length === 0) return { ran: 0, skipped, cancelled: 0 };

  const manager = await SessionManager.start(options.engine);
  const env: AttemptEnv = {
    manager,
    repos: new RepoSources(join(out, ".repos")),
    agent,
    aider: options.aider,
    image: options.image,
    imageFor: options.imageFor,
    memoryMB: options.memoryMB,
    cpus: options.cpus,
    defaultTimeoutS: options.defaultTimeoutS,
    defaultAgentTimeoutS: options.defaultAgentTimeoutS,
    defaultTestTimeoutS: options.defaultTestTimeoutS,
    signal,
  };
  let ran = 0;
  let cancelled = 0;
  let next = 0;
  const worker = async () => {
    while (!signal.aborted && next < queue.length) {
      const item = queue[next++]!;
      counts.running++;
      options.onProgress?.({ ...counts });
      try {
        const outcome = await runAttempt(env, item.task, item.attempt, inputs.get(item.task.id));
        if (outcome === "cancelled") {
          cancelled++;
          continue;
        }
        await writeAttempt(out, outcome.result, outcome.texts);
        ran++;
        count(outcome.result);
        const r = outcome.result;
        if (r.status !== "resolved" && r.status !== "unresolved") {
          options.onNote?.(
            `${r.task_id}${options.attempts > 1 ? `#${r.attempt}` : ""}: ${r.status}: ${r.error ?? ""}`,
          );
        }
      } catch (error) {
        // Writing the result failed (disk full, permissions): the run cannot keep its promise.
        options.onNote?.(`${item.task.id}: could not record the result: ${describeError(error)}`);
        throw error;
      } finally {
        counts.running--;
        options.onProgress?.({ ...counts });
      }
    }
  };
  try {
    const workers = Array.from({ length: Math.min(options.concurrency, queue.length) }, () => worker());
    const settled = await Promise.allSettled(workers);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  } finally {
    await manager.closeAll();
  }
  cancelled += queue.length - next;
  return { ran, skipped, cancelled };
}
