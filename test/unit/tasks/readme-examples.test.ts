import { Command } from "commander";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { registerTasksCommand } from "../../../src/cli/tasks-command.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { scenarioSteps } from "./scenario-steps.js";

/** The lines of the fenced block of `file` (README.md or a docs file) that starts with `firstLine`. */
async function readmeBlock(file: string, firstLine: string): Promise<string[]> {
  const readme = await readFile(join(process.cwd(), file), "utf8");
  const lines = readme.split("\n");
  const start = lines.findIndex((line, i) => line === firstLine && lines[i - 1]?.startsWith("```"));
  expect(start, `${file} has a line ${JSON.stringify(firstLine)}`).toBeGreaterThan(0);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("```"));
  return lines.slice(start, end);
}

const timeless = (lines: string[]) => lines.map((line) => line.replace(/saved \S+/, "saved <time>"));

// The README shows what the server does at step 8 of the spec's scenario; these run it.
describe("the README's task stack examples", () => {
  it("`drydock tasks show default` prints what the README shows after step 8", async () => {
    const dir = await mkdtemp(join(tmpdir(), "drydock-readme-"));
    try {
      const stack = await new TaskStackStore({ dir }).open("default");
      for (const step of scenarioSteps.slice(0, 8)) {
        await stack.mutate((s) => {
          if (step.tool === "create_new_task") s.createTask(step.title!, "");
          else if (step.tool === "extend_current_task") s.extendCurrentTask(step.title!, "");
          else s.completeCurrentTask();
        });
      }
      let out = "";
      const program = new Command("drydock")
        .exitOverride()
        .configureOutput({ writeOut: (s) => void (out += s) });
      registerTasksCommand(program);
      await program.parseAsync(["node", "drydock", "tasks", "show", "default", "--dir", dir]);
      const shown = ["$ drydock tasks show default", ...out.trimEnd().split("\n")];
      expect(timeless(shown)).toEqual(
        timeless(await readmeBlock("docs/cli.md", "$ drydock tasks show default")),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the Task stack section's outline is the big picture after step 8", async () => {
    const block = await readmeBlock("docs/task-stack.md", "[t1] Design new feature (pending)");
    expect(block).toEqual(scenarioSteps[7]!.outline);
  });
});
