/**
 * The `patch` agent: applies a given patch (the task's gold patch, or `<id>.diff` from a folder of
 * predictions) inside the box. It validates task files and the harness itself: with gold patches
 * every task should resolve. An empty patch is a valid, empty answer.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { applyPatchInBox } from "./box-patch.js";
import { type AgentContext, type AgentOutcome, type EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";

export class PatchAgent implements EvalAgent {
  readonly name = "patch";

  /** @param patchesDir a folder of `<task id>.diff` (or `.patch`) files instead of the tasks' own patches. */
  constructor(private readonly patchesDir?: string) {}

  check(task: EvalTask): string | undefined {
    if (this.patchesDir || task.patch !== undefined) return undefined;
    return "the patch agent needs the task's patch or patch_file (or --patches DIR)";
  }

  private async patchFor(task: EvalTask): Promise<string> {
    if (!this.patchesDir) return task.patch ?? "";
    for (const ext of [".diff", ".patch"]) {
      try {
        return await readFile(join(this.patchesDir, `${task.id}${ext}`), "utf8");
      } catch {
        // Try the next name; no file at all is an empty answer.
      }
    }
    return "";
  }

  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const patch = await this.patchFor(ctx.task);
    const result = await applyPatchInBox(ctx.session.box, patch, "agent", ctx.signal);
    ctx.log(result.log);
    if (!result.applied) {
      return {
        error:
          "the patch does not apply: git apply, git apply --3way and patch --fuzz=3 all failed (see agent.log)",
      };
    }
    ctx.log(`applied with ${result.method}\n`);
    return { message: `applied with ${result.method}` };
  }
}
