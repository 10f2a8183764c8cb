/**
 * The `aider` agent: aider in the task's box, its model calls through the session's LLM gateway
 * (live, offline, record or replay). It calls the aider service directly, the same code that
 * serves `aider_ai_code`, rather than going through MCP: one process, the structured result
 * (tokens, cost, message) without a round trip through JSON, and aider's lines straight into
 * agent.log.
 */
import { describeError } from "../util/errors.js";
import { remainingMs, type AgentContext, type AgentOutcome, type EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import type { MeteredAiderService } from "./metered-aider-service.js";

/** aider's own bounds on one run's time limit (aider_options.timeout_s). */
const MIN_AIDER_S = 10;
const MAX_AIDER_S = 7200;

/** aider failures that are the agent breaking, not the model failing the task. */
const BROKE = [
  /^the LLM gateway refused a model call/,
  /^aider exited with code/,
  /^aider was cancelled/,
  // The model answered, but aider could not apply its edits: the agent broke, the task was not tried.
  /^aider could not apply the model's edits/,
];

export class AiderAgent implements EvalAgent {
  readonly name = "aider";

  /** @param service its configuration holds the default model and aider options (--model, --aider-options). */
  constructor(private readonly service: MeteredAiderService) {}

  get model(): string {
    return this.service.chooseModel().model;
  }

  check(task: EvalTask): string | undefined {
    if (!task.editable_files?.length)
      return "editable_files: the aider agent needs at least one file it may edit";
    try {
      this.service.prepare(this.request(task, MAX_AIDER_S));
      return undefined;
    } catch (error) {
      return describeError(error);
    }
  }

  private request(task: EvalTask, timeoutS: number) {
    return {
      prompt: task.prompt,
      editable: task.editable_files ?? [],
      readonly: task.readonly_files ?? [],
      model: task.model,
      // aider's own limit is the task's time left, or less when the options ask for less.
      options: {
        ...task.aider_options,
        timeout_s: Math.min(
          timeoutS,
          task.aider_options?.timeout_s ?? this.service.config.options?.timeout_s ?? MAX_AIDER_S,
        ),
      },
    };
  }

  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const leftS = Math.floor(remainingMs(ctx.deadline) / 1000);
    if (leftS < MIN_AIDER_S) {
      return { timedOut: true, message: `only ${leftS} s left of the task's time; aider was not started` };
    }
    const call = this.service.prepare(this.request(ctx.task, Math.min(leftS, MAX_AIDER_S)));
    ctx.log(
      `$ aider --model ${call.choice.model} ${call.files.editable.join(" ")}  (${call.choice.reason})\n`,
    );
    const result = await this.service.run(ctx.session, call, {
      signal: ctx.signal,
      onLine: (line) => ctx.log(`${line}\n`),
    });
    ctx.log(`\n[drydock] ${result.message}\n`);
    const usage = { model: result.model, message: result.message };
    if (/^aider did not finish within/.test(result.message)) return { ...usage, timedOut: true };
    if (BROKE.some((pattern) => pattern.test(result.message))) return { ...usage, error: result.message };
    return usage;
  }
}
