/**
 * The `patch` agent: applies a given patch (the task's gold patch, or the task's prediction from
 * `--patches`) inside the box. It validates task files and the harness itself: with gold patches
 * every task should resolve. An empty patch is a valid, empty answer; a task the predictions do not
 * answer at all is refused before a box starts, so the two never look alike.
 */
import { applyPatchInBox } from "./box-patch.js";
import { type AgentContext, type AgentOutcome, type EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import { answerKey, type Prediction, type Predictions } from "./predictions.js";

export class PatchAgent implements EvalAgent {
  readonly name = "patch";
  readonly model?: string;
  readonly gradesAnswers = true;

  /** @param predictions the `--patches` folder or file instead of the tasks' own patches. */
  constructor(private readonly predictions?: Predictions) {
    this.model = predictions?.model;
  }

  private async answer(task: EvalTask): Promise<Prediction | undefined> {
    if (this.predictions) return this.predictions.get(task.id);
    return task.patch === undefined ? undefined : { patch: task.patch, source: "the task's patch" };
  }

  async check(task: EvalTask): Promise<string | undefined> {
    if (await this.answer(task)) return undefined;
    if (this.predictions) {
      return this.predictions.kind === "dir"
        ? `no prediction: ${this.predictions.path} holds no ${task.id}.diff or ${task.id}.patch`
        : `no prediction: ${this.predictions.path} has no instance_id ${task.id}`;
    }
    return "the patch agent needs the task's patch or patch_file (or --patches)";
  }

  async inputKey(task: EvalTask): Promise<string | undefined> {
    const answer = await this.answer(task);
    return answer ? answerKey(answer.patch) : undefined;
  }

  async emptyAnswer(task: EvalTask): Promise<boolean> {
    const answer = await this.answer(task);
    return answer !== undefined && answer.patch.trim() === "";
  }

  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const answer = await this.answer(ctx.task);
    const patch = answer?.patch ?? "";
    if (patch.trim() === "") {
      ctx.log(
        `empty patch (${answer?.source ?? "none"}): nothing applied; the tests run on the task's tree\n`,
      );
      return { message: "empty patch", empty: true, ...(answer?.model ? { model: answer.model } : {}) };
    }
    const result = await applyPatchInBox(ctx.session.box, patch, "agent", ctx.signal);
    ctx.log(result.log);
    if (!result.applied) {
      return {
        error: `the patch (${answer?.source}) does not apply: git apply, git apply --3way and patch --fuzz=3 all failed (see agent.log)`,
      };
    }
    ctx.log(`applied with ${result.method} (${answer?.source})\n`);
    return { message: `applied with ${result.method}`, ...(answer?.model ? { model: answer.model } : {}) };
  }
}
