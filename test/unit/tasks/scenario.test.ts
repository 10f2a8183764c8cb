import { describe, expect, it } from "vitest";
import { renderBigPictureText } from "../../../src/tasks/render-big-picture.js";
import { stackOverview } from "../../../src/tasks/stack-overview.js";
import { findInvariantViolations } from "../../../src/tasks/task-stack-invariants.js";
import { newStack } from "./fixtures.js";
import { scenarioSteps, structureOf } from "./scenario-steps.js";

// The spec's "Complex Problem Solving" scenario, one step at a time, checking the whole stack after
// each: every task's place, status and the focus.
describe("the spec's ten-step scenario", () => {
  it("walks from an empty stack through nesting, extension and completion back to zen", () => {
    const s = newStack();
    for (const [i, step] of scenarioSteps.entries()) {
      const label = `step ${i + 1}: ${step.says}`;
      if (step.tool === "create_new_task") s.createTask(step.title!, "");
      else if (step.tool === "extend_current_task") s.extendCurrentTask(step.title!, "");
      else s.completeCurrentTask();
      expect(s.currentTask()?.title ?? null, label).toBe(step.current);
      expect(renderBigPictureText(s).split("\n"), label).toEqual(step.outline);
      const overview = stackOverview(s).tasks.map((t) => ({
        id: t.id,
        parent_id: t.parent_id,
        depth: t.depth,
        status: t.status,
      }));
      expect(overview, label).toEqual(structureOf(step.outline));
      expect(findInvariantViolations(s.toState()), label).toEqual([]);
    }
    expect(s.isZen).toBe(true);
    expect(s.tasks.map((t) => t.id)).toEqual(["t1"]);
    expect(s.completedTasks("chronological").map((t) => t.id)).toEqual(["t4", "t3", "t2", "t5", "t1"]);
  });
});
