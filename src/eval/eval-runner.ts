/**
 * Runs every attempt of every task, N boxes at a time. Attempts already finished in the results
 * directory are skipped (the run resumes), unless the task changed since. Stopping the run
 * (its signal) lets no new attempt start, cancels the running ones, removes every box, and keeps
 * every result already written.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import type { Engine } from "../engine/engine.js";
import { describeError } from "../util/errors.js";
import { terminalLine } from "../util/terminal-text.js";
import { RESULT_SCHEMA_VERSION, type AttemptResult } from "./attempt-result.js";
import type { EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import type { MeteredAiderService } from "./metered-aider-service.js";
import type { ProgressCounts } from "./progress-line.js";
import { RepoSources } from "./repo-source.js";
import { readAttempts, writeAttempt, type RunInfo } from "./results-dir.js";
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import { EnginePool, engineDied, type EngineSlot } from "./engine-pool.js";
import { gradingOf, runAttempt, type AttemptEnv } from "./run-attempt.js";
import { PreparedTasks } from "./prepared-task.js";
import { BaseCounts } from "./base-count-cache.js";
import type { GradingMode } from "./grade.js";
import type { IntegrityMode } from "./test-integrity.js";

export interface EvalRunOptions {
  /** The engines to run on (Docker engines, or a Kubernetes namespace). */
  engines: BoxEngine[];
  /** The Docker engine where images are found and built, sent to the others from (see engine-pool.ts). */
  images: Engine;
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
  /**
   * With several attempts: run the task's setup in every attempt's box (and every box its tests
   * run in) instead of once, forking the rest from it (`--setup-per-attempt`; see prepared-task.ts).
   */
  setupPerAttempt?: boolean;
  image: string;
  /** See AttemptEnv.imageFor. */
  imageFor?: AttemptEnv["imageFor"];
  /** See AttemptEnv.taskImage. */
  taskImage?: AttemptEnv["taskImage"];
  memoryMB?: number;
  cpus?: number;
  defaultTimeoutS: number;
  defaultAgentTimeoutS?: number;
  defaultTestTimeoutS?: number;
  gradeInAgentBox?: boolean;
  integrity?: IntegrityMode;
  /** `--grading`: every task graded this way (else SWE-bench rows as SWE-bench does, other tasks strict). */
  grading?: GradingMode;
  /** Run the tests on an empty answer even under SWE-bench grading (`eval validate`'s run without a fix). */
  gradeEmptyAnswers?: boolean;
  /** The run's id, recorded with the counts of the tests without the agent's diff it takes. */
  runId?: string;
  /**
   * Where counts of the tests without the agent's diff are kept for later runs (base-count-cache.ts);
   * none keeps them for this run only.
   */
  baseCountsDir?: string;
  signal: AbortSignal;
  onProgress?: (counts: ProgressCounts) => void;
  /** Things worth a line of their own (a task run again because it changed, a failure). */
  onNote?: (message: string) => void;
}

export interface EvalRunOutcome {
  ran: number;
  skipped: number;
  cancelled: number;
  /** Each engine, with the attempts placed there (retries included) and why it died, if it did. */
  engines: NonNullable<RunInfo["engines"]>;
}

/** How many times an attempt runs again after the engine under it died. */
export const ENGINE_RETRIES = 2;

interface Item {
  task: EvalTask;
  attempt: number;
  /** "engine X died", once per engine lost under it. */
  retriedAfter: string[];
}

/** Whether a finished attempt still counts for this task and run. */
function stillCounts(
  previous: AttemptResult,
  task: EvalTask,
  agent: string,
  input: string | undefined,
  retryErrors: boolean,
  grading: GradingMode,
): boolean {
  if (previous.task_hash !== task.hash || previous.agent !== agent) return false;
  if ((previous.grading ?? "strict") !== grading) return false;
  if (previous.agent_input !== input) return false;
  if (retryErrors && (previous.status === "box_error" || previous.status === "error")) return false;
  // A missing prediction recorded as an error by an older drydock: refused again (no box), as incomplete.
  if (previous.status === "error" && previous.prediction === "missing") return false;
  return true;
}

/**
 * An empty answer under SWE-bench grading: not run, as SWE-bench's harness skips empty patches
 * (its report counts them apart); no box starts.
 */
function skippedEmpty(
  task: EvalTask,
  attempt: number,
  agent: EvalAgent,
  input: string | undefined,
): AttemptResult {
  const now = new Date().toISOString();
  return {
    schema_version: RESULT_SCHEMA_VERSION,
    task_id: task.id,
    attempt,
    status: "unresolved",
    resolved: false,
    agent: agent.name,
    task_hash: task.hash,
    grading: "swebench",
    ...(input !== undefined ? { agent_input: input } : {}),
    prediction: "empty",
    started_at: now,
    finished_at: now,
    duration_ms: 0,
    timings_ms: { start: 0, setup: 0, agent: 0, tests: 0 },
    tokens: { input: 0, output: 0 },
    cost_usd: 0,
    llm_requests: 0,
    diff_stat: { files: 0, insertions: 0, deletions: 0 },
    agent_result: { message: EMPTY_SKIPPED },
  };
}

export const EMPTY_SKIPPED =
  "empty patch: not graded, as SWE-bench skips empty patches (--grading strict runs the tests on the unchanged tree)";

/**
 * An attempt the agent refuses before any box starts (a task it cannot run): `incomplete` for an
 * agent that grades given answers and has none for the task (as SWE-bench counts an instance
 * without a prediction), else `error`.
 */
function refused(
  task: EvalTask,
  attempt: number,
  agent: EvalAgent,
  problem: string,
  grading: GradingMode,
): AttemptResult {
  const now = new Date().toISOString();
  return {
    schema_version: RESULT_SCHEMA_VERSION,
    task_id: task.id,
    attempt,
    status: agent.gradesAnswers ? "incomplete" : "error",
    resolved: false,
    error: problem,
    phase: "start",
    agent: agent.name,
    task_hash: task.hash,
    grading,
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
    const grading = gradingOf(task, options.grading);
    const skipEmpty =
      grading === "swebench" &&
      !options.gradeEmptyAnswers &&
      !problem &&
      (await agent.emptyAnswer?.(task)) === true;
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      counts.total++;
      const before = previous.get(`${task.id}#${attempt}`);
      if (before && stillCounts(before, task, agent.name, input, options.retryErrors ?? false, grading)) {
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
      if (skipEmpty) {
        const result = skippedEmpty(task, attempt, agent, input);
        await writeAttempt(out, result, { diff: "", agentLog: `${EMPTY_SKIPPED}\n`, testOutput: "" });
        count(result);
        continue;
      }
      if (problem) {
        const result = refused(task, attempt, agent, problem, grading);
        await writeAttempt(out, result, { diff: "", agentLog: `${problem}\n`, testOutput: "" });
        count(result);
        if (attempt === 1) options.onNote?.(`${task.id}: ${problem}`);
        continue;
      }
      inputs.set(task.id, input);
      queue.push({ task, attempt, retriedAfter: [] });
    }
  }
  options.onProgress?.({ ...counts });
  if (queue.length === 0) return { ran: 0, skipped, cancelled: 0, engines: [] };

  // With several attempts, each task's setup runs once and its attempts' boxes are forks of the
  // box it ran in, unless the run asks for setup in every attempt.
  const perTask = new Map<string, number>();
  for (const item of queue) perTask.set(item.task.id, (perTask.get(item.task.id) ?? 0) + 1);
  const prepared = options.attempts > 1 && !options.setupPerAttempt ? new PreparedTasks(perTask) : undefined;
  const pool = await EnginePool.start(options.engines, options.images);
  // Each attempt names its engine, and images are put there, unless the one engine builds them too.
  const several = pool.slots.length > 1 || pool.slots[0]!.engine !== options.images;
  const memoryMB = options.memoryMB ?? DEFAULT_LIMITS.memoryMB;
  const env: Omit<AttemptEnv, "manager"> = {
    repos: new RepoSources(join(out, ".repos")),
    agent,
    aider: options.aider,
    image: options.image,
    imageFor: options.imageFor,
    taskImage: options.taskImage,
    memoryMB: options.memoryMB,
    cpus: options.cpus,
    defaultTimeoutS: options.defaultTimeoutS,
    defaultAgentTimeoutS: options.defaultAgentTimeoutS,
    defaultTestTimeoutS: options.defaultTestTimeoutS,
    gradeInAgentBox: options.gradeInAgentBox,
    integrity: options.integrity,
    grading: options.grading,
    prepared,
    baseCounts: new BaseCounts(options.runId ?? "(this run)", options.baseCountsDir),
    signal,
  };
  // A box the tests run in, started beside the agent, takes room on the attempt's engine when
  // there is some now (beside-agent.ts); it never waits for room.
  const roomOn = (slot: EngineSlot) => () =>
    pool.tryTake(slot, memoryMB) ? () => pool.release(slot, memoryMB) : undefined;
  const envOn = (slot: EngineSlot): AttemptEnv =>
    several
      ? {
          ...env,
          manager: slot.manager,
          engine: slot.engine.name,
          ensureImage: (image) => pool.ensureImage(slot, image),
          roomBeside: roomOn(slot),
        }
      : { ...env, manager: slot.manager, roomBeside: roomOn(slot) };
  let ran = 0;
  let cancelled = 0;
  let inFlight = 0;
  // Workers with nothing to take wait here while attempts run: one may come back for a retry.
  let changed: () => void = () => undefined;
  let change = new Promise<void>((resolve) => (changed = resolve));
  const announce = () => {
    changed();
    change = new Promise<void>((resolve) => (changed = resolve));
  };
  const worker = async () => {
    while (!signal.aborted) {
      if (queue.length === 0) {
        if (inFlight === 0) return;
        await change;
        continue;
      }
      const item = queue.shift()!;
      inFlight++;
      let slot: EngineSlot | undefined;
      // Whether this attempt is over for the task's prepared box (not when it runs again).
      let ended = true;
      try {
        slot = await pool.acquire(memoryMB, signal);
        if (!slot) {
          queue.unshift(item);
          ended = false;
          return;
        }
        counts.running++;
        options.onProgress?.({ ...counts });
        const outcome = await runAttempt(envOn(slot), item.task, item.attempt, inputs.get(item.task.id));
        if (outcome === "cancelled") {
          cancelled++;
          continue;
        }
        const r = outcome.result;
        const label = `${r.task_id}${options.attempts > 1 ? `#${r.attempt}` : ""}`;
        if (r.status !== "resolved" && r.status !== "unresolved") {
          const died = await engineDied(slot);
          if (died) {
            pool.markDead(slot, died);
            const why = `engine ${slot.engine.name} died`;
            if (item.retriedAfter.length < ENGINE_RETRIES && pool.live().length > 0) {
              options.onNote?.(`${label}: ${why} (${died}); running it again on another engine`);
              queue.unshift({ ...item, retriedAfter: [...item.retriedAfter, why] });
              ended = false;
              continue;
            }
            r.error = `${r.error ?? r.status}; ${why}`;
          }
        }
        if (item.retriedAfter.length > 0) r.retried_after ??= item.retriedAfter.join("; ");
        await writeAttempt(out, r, outcome.texts);
        ran++;
        count(r);
        if (r.status !== "resolved" && r.status !== "unresolved") {
          options.onNote?.(`${label}: ${r.status}: ${r.error ?? ""}`);
        }
        if (r.integrity?.reason) {
          // The reason names files the agent chose: made safe for a terminal.
          options.onNote?.(`${label}: ${r.status}, flagged: ${terminalLine(r.integrity.reason)}`);
        }
      } catch (error) {
        // Writing the result failed (disk full, permissions): the run cannot keep its promise.
        options.onNote?.(`${item.task.id}: could not record the result: ${describeError(error)}`);
        throw error;
      } finally {
        if (ended) await prepared?.done(item.task.id);
        inFlight--;
        if (slot) {
          pool.release(slot, memoryMB);
          counts.running--;
          options.onProgress?.({ ...counts });
        }
        announce();
      }
    }
  };
  try {
    const workers = Array.from({ length: Math.min(options.concurrency, queue.length) }, () => worker());
    const settled = await Promise.allSettled(workers);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  } finally {
    await prepared?.close();
    await pool.closeAll();
  }
  if (queue.length > 0 && !signal.aborted && pool.live().length === 0) {
    options.onNote?.(
      `every engine died; ${queue.length} attempt(s) did not run (run the same command again to run them)`,
    );
  }
  cancelled += queue.length;
  const engines = pool.slots.map((s) => ({
    name: s.engine.name,
    memory_mb: s.capacityMB,
    attempts: s.placed,
    ...(s.dead ? { died: s.dead } : {}),
  }));
  return { ran, skipped, cancelled, engines };
}
