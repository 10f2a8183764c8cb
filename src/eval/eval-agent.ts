/**
 * What an agent is to the runner: something that works on a task in a session's box until it is
 * done, the deadline passes or the run is stopped. What its model calls cost is counted per
 * session by MeteredAiderService, not by the agent.
 */
import type { Session } from "../session/session.js";
import type { EvalTask } from "./eval-task.js";

export interface AgentContext {
  task: EvalTask;
  session: Session;
  /** Which attempt at the task this is, from 1 (--attempts K runs 1…K). */
  attempt: number;
  /** Epoch ms by which the agent must be done: its own limit (agent_timeout_s), else the task's. */
  deadline: number;
  /** Aborted when the run is stopped (Ctrl-C). */
  signal: AbortSignal;
  /** Appends to the attempt's agent.log. */
  log(text: string): void;
}

export interface AgentOutcome {
  /** Set when the agent broke (not when it merely failed to fix the task): the attempt is an agent_error. */
  error?: string;
  /** The agent ran out of time. */
  timedOut?: boolean;
  exitCode?: number;
  /** One line about how it went. */
  message?: string;
  /** The agent's answer was empty (an empty prediction). */
  empty?: boolean;
  model?: string;
}

export interface EvalAgent {
  readonly name: string;
  /** The model named in results, when the agent has one. */
  readonly model?: string;
  /** True for agents that grade answers given in advance (predictions): results say which were empty or missing. */
  readonly gradesAnswers?: boolean;
  /** Why this agent cannot run the task (checked before any box starts), or undefined. */
  check(task: EvalTask): string | undefined | Promise<string | undefined>;
  /**
   * A short key of what the agent is given for the task beyond the task itself (a prediction's
   * content, a command): a finished result with another key is run again on resume.
   */
  inputKey?(task: EvalTask): Promise<string | undefined>;
  /** Agents that grade given answers: whether the task's answer is empty (SWE-bench grading skips it). */
  emptyAnswer?(task: EvalTask): Promise<boolean>;
  run(ctx: AgentContext): Promise<AgentOutcome>;
}

/** Milliseconds left before the deadline (never negative). */
export function remainingMs(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}
