import { describe, expect, it } from "vitest";
import { renderBigPictureText } from "../../../src/tasks/render-big-picture.js";
import { findInvariantViolations } from "../../../src/tasks/task-stack-invariants.js";
import { newStack } from "./fixtures.js";

// The spec's "Complex Problem Solving" scenario, one step at a time.
describe("the spec's ten-step scenario", () => {
  it("walks from an empty stack through nesting, extension and completion back to zen", () => {
    const s = newStack();
    const expectStep = (current: string | null, outline: string) => {
      expect(s.currentTask()?.title ?? null).toBe(current);
      expect(renderBigPictureText(s)).toBe(outline);
      expect(findInvariantViolations(s.toState())).toEqual([]);
    };

    // 1. Create root task "Design new feature" (current task)
    s.createTask("Design new feature", "Ship the export feature");
    expectStep("Design new feature", "[t1] Design new feature (current) <-- YOU ARE HERE");

    // 2. Create subtask "Research requirements" (pushes onto stack, becomes current)
    s.createTask("Research requirements", "");
    expectStep(
      "Research requirements",
      ["[t1] Design new feature (pending)", "  [t2] Research requirements (current) <-- YOU ARE HERE"].join(
        "\n",
      ),
    );

    // 3. Create subtask "Interview users" (pushes onto stack, becomes current)
    s.createTask("Interview users", "");
    expectStep(
      "Interview users",
      [
        "[t1] Design new feature (pending)",
        "  [t2] Research requirements (pending)",
        "    [t3] Interview users (current) <-- YOU ARE HERE",
      ].join("\n"),
    );

    // 4. Extend with "Analyze competitor solutions" (adds to right, becomes current)
    s.extendCurrentTask("Analyze competitor solutions", "");
    expectStep(
      "Analyze competitor solutions",
      [
        "[t1] Design new feature (pending)",
        "  [t2] Research requirements (pending)",
        "    [t3] Interview users (pending)",
        "    [t4] Analyze competitor solutions (current) <-- YOU ARE HERE",
      ].join("\n"),
    );
    expect(s.currentContext()?.leftSiblings.map((t) => t.title)).toEqual(["Interview users"]);

    // 5. Complete "Analyze competitor solutions" (focus moves left)
    expect(s.completeCurrentTask().next?.title).toBe("Interview users");
    expectStep(
      "Interview users",
      [
        "[t1] Design new feature (pending)",
        "  [t2] Research requirements (pending)",
        "    [t3] Interview users (current) <-- YOU ARE HERE",
        "    [t4] Analyze competitor solutions (completed)",
      ].join("\n"),
    );

    // 6. Complete "Interview users" (stack pops, back to "Research requirements")
    s.completeCurrentTask();
    expectStep(
      "Research requirements",
      [
        "[t1] Design new feature (pending)",
        "  [t2] Research requirements (current) <-- YOU ARE HERE",
        "    [t3] Interview users (completed)",
        "    [t4] Analyze competitor solutions (completed)",
      ].join("\n"),
    );

    // 7. Complete "Research requirements" (stack pops, back to "Design new feature")
    s.completeCurrentTask();
    expectStep(
      "Design new feature",
      [
        "[t1] Design new feature (current) <-- YOU ARE HERE",
        "  [t2] Research requirements (completed)",
        "    [t3] Interview users (completed)",
        "    [t4] Analyze competitor solutions (completed)",
      ].join("\n"),
    );

    // 8. Extend with "Create specification" (adds to right, becomes current)
    s.extendCurrentTask("Create specification", "");
    expectStep(
      "Create specification",
      [
        "[t1] Design new feature (pending)",
        "  [t2] Research requirements (completed)",
        "    [t3] Interview users (completed)",
        "    [t4] Analyze competitor solutions (completed)",
        "[t5] Create specification (current) <-- YOU ARE HERE",
      ].join("\n"),
    );

    // 9. Complete "Create specification" (focus moves left)
    s.completeCurrentTask();
    expectStep(
      "Design new feature",
      [
        "[t1] Design new feature (current) <-- YOU ARE HERE",
        "  [t2] Research requirements (completed)",
        "    [t3] Interview users (completed)",
        "    [t4] Analyze competitor solutions (completed)",
        "[t5] Create specification (completed)",
      ].join("\n"),
    );

    // 10. Complete root task "Design new feature" (focus goes to zen)
    expect(s.completeCurrentTask().next).toBeUndefined();
    expect(s.isZen).toBe(true);
    expectStep(
      null,
      [
        "[t1] Design new feature (completed)",
        "  [t2] Research requirements (completed)",
        "    [t3] Interview users (completed)",
        "    [t4] Analyze competitor solutions (completed)",
        "[t5] Create specification (completed)",
        "(all tasks completed: zen state)",
      ].join("\n"),
    );
    expect(s.completedTasks("chronological").map((t) => t.id)).toEqual(["t4", "t3", "t2", "t5", "t1"]);
  });
});
