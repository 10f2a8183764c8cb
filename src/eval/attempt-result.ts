/**
 * What one attempt at one task came to: the record written as `result.json` in its folder and
 * gathered into `results.json`. The schema is documented in docs/eval.md; bump
 * RESULT_SCHEMA_VERSION when a field changes meaning.
 */
import type { Grade, GradingMode } from "./grade.js";
import type { Integrity } from "./test-integrity.js";

export const RESULT_SCHEMA_VERSION = 1;

/**
 * - `resolved`: the tests passed after the agent.
 * - `unresolved`: the tests ran and did not pass.
 * - `agent_error`: the agent broke (aider exited with an error or was refused a model call, the
 *   command exited non-zero, the patch did not apply); the tests were not run.
 * - `timeout`: the task's time limit passed (in setup, the agent or the tests).
 * - `setup_error`: the task's setup command failed, or the test patch did not apply.
 * - `box_error`: the box could not be started or died (out of memory, removed).
 * - `error`: anything else that stopped the attempt (a repository that cannot be read, a clone that failed).
 * - `incomplete`: an agent that grades given answers had none for the task (no prediction); nothing
 *   ran, as SWE-bench's make_run_report counts such an instance incomplete.
 */
export const ATTEMPT_STATUSES = [
  "resolved",
  "unresolved",
  "agent_error",
  "timeout",
  "setup_error",
  "box_error",
  "error",
  "incomplete",
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

export type Phase = "start" | "setup" | "agent" | "tests" | "grade";

export interface AttemptResult {
  schema_version: number;
  task_id: string;
  /** 1-based. */
  attempt: number;
  status: AttemptStatus;
  resolved: boolean;
  /** What went wrong, in words, when status is not resolved/unresolved. */
  error?: string;
  /** Where it stopped, for errors and timeouts. */
  phase?: Phase;
  agent: string;
  model?: string;
  task_hash: string;
  /** A key of what the agent was given beyond the task (a prediction's content); see EvalAgent.inputKey. */
  agent_input?: string;
  /**
   * How it was graded (see GradingMode): `swebench` for SWE-bench rows unless `--grading` says
   * otherwise, `strict` for drydock tasks. Absent in results from before the choice existed (strict).
   */
  grading?: GradingMode;
  /** Agents that grade given answers: whether the task's answer was given, empty or missing. */
  prediction?: "given" | "empty" | "missing";
  session_id?: string;
  /**
   * Where the tests ran, once they did: "fresh box" (the task's setup, the agent's diff and the
   * test patch, nothing else) or "agent box" (`--grade-in-agent-box`).
   */
  graded_in?: "fresh box" | "agent box";
  /** The image the task's boxes ran, its tests included: the task's `image`, its environment's, or the sandbox image. */
  environment_image?: string;
  /**
   * Time this attempt spent waiting for its environment image to be built (0 when it was there
   * already); not counted in `duration_ms`, `timings_ms.start` or the task's time limit.
   */
  environment_build_ms?: number;
  /**
   * The registry digest (`name@sha256:…`) of the task's own `image`, when it has one (it was
   * pulled, or pushed from this engine): the exact bytes the task ran on.
   */
  image_digest?: string;
  /** The engine that ran it (its --engine URL), when the run used several. */
  engine?: string;
  /** The cluster node the scheduler put the agent's box on, when the engine is a Kubernetes namespace. */
  node?: string;
  /** Why it ran again on another engine: "engine URL died" once per engine lost under it. */
  retried_after?: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  timings_ms: { start: number; setup: number; agent: number; tests: number };
  tokens: { input: number; output: number };
  cost_usd: number;
  llm_requests: number;
  /** Files changed by the agent (the patch, not counting setup). */
  diff_stat: { files: number; insertions: number; deletions: number };
  agent_result?: { exit_code?: number; message?: string };
  tests?: {
    exit_code?: number;
    timed_out: boolean;
    grade?: Grade;
    /**
     * How long the graded test_cmd ran: the suite's own time, without the box, setup, patches or
     * drydock's count (timings_ms.tests holds all of those too).
     */
    duration_ms?: number;
  };
  /** What the agent did to the test patch's files and outside editable_files (set once tests run). */
  integrity?: Integrity;
}

/** Statuses that are the agent's own outcome; the others are the run's or the box's trouble. */
export function isOutcome(status: AttemptStatus): boolean {
  return status === "resolved" || status === "unresolved" || status === "agent_error" || status === "timeout";
}

/** Counts files, added and removed lines of a unified diff. */
export function diffStat(diff: string): { files: number; insertions: number; deletions: number } {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) files++;
    else if (line.startsWith("+") && !line.startsWith("+++ ")) insertions++;
    else if (line.startsWith("-") && !line.startsWith("--- ")) deletions++;
  }
  return { files, insertions, deletions };
}
