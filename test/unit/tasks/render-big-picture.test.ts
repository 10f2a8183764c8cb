import { describe, expect, it } from "vitest";
import { bigPictureJson, renderBigPictureText } from "../../../src/tasks/render-big-picture.js";
import { stackOverview } from "../../../src/tasks/stack-overview.js";
import { newStack } from "./fixtures.js";

/** The spec's example outline: Main Task › Subtask 1 (1.1, 1.2) › Subtask 2 (2.1, 2.2 current). */
function specExample() {
  const s = newStack();
  s.createTask("Main Task", "");
  s.createTask("Subtask 1", "");
  s.createTask("Deeper task 1.1", "");
  s.extendCurrentTask("Deeper task 1.2", "");
  s.completeCurrentTask();
  s.completeCurrentTask();
  s.completeCurrentTask(); // Subtask 1; focus back on Main Task
  s.createTask("Subtask 2", "");
  s.createTask("Deeper task 2.1", "");
  s.extendCurrentTask("Deeper task 2.2", "");
  s.switchFocus("t6");
  s.completeCurrentTask(); // 2.1; focus on 2.2
  return s;
}

describe("renderBigPictureText", () => {
  it("reproduces the spec's example outline, with ids", () => {
    expect(renderBigPictureText(specExample())).toBe(
      [
        "[t1] Main Task (pending)",
        "  [t2] Subtask 1 (completed)",
        "    [t3] Deeper task 1.1 (completed)",
        "    [t4] Deeper task 1.2 (completed)",
        "  [t5] Subtask 2 (pending)",
        "    [t6] Deeper task 2.1 (completed)",
        "    [t7] Deeper task 2.2 (current) <-- YOU ARE HERE",
      ].join("\n"),
    );
  });

  it("says so for an empty stack", () => {
    expect(renderBigPictureText(newStack())).toBe("(no tasks: zen state)");
  });

  it("marks exactly one line as current", () => {
    const text = renderBigPictureText(specExample());
    expect(text.split("\n").filter((line) => line.includes("<-- YOU ARE HERE"))).toHaveLength(1);
  });
});

describe("bigPictureJson", () => {
  it("nests tasks with ids, statuses, timestamps and is_current, without bodies", () => {
    const s = newStack();
    s.createTask("root", "secret notes");
    s.createTask("child", "");
    expect(bigPictureJson(s)).toEqual([
      {
        id: "t1",
        title: "root",
        status: "pending",
        is_current: false,
        created_at: "2026-01-01T00:00:00.000Z",
        completed_at: null,
        sub_tasks: [
          {
            id: "t2",
            title: "child",
            status: "current",
            is_current: true,
            created_at: "2026-01-01T00:00:01.000Z",
            completed_at: null,
            sub_tasks: [],
          },
        ],
      },
    ]);
  });
});

describe("stackOverview", () => {
  it("lists every task flat, in outline order, with parent, depth and position", () => {
    const overview = stackOverview(specExample());
    expect(overview.tasks.map((t) => [t.id, t.parent_id, t.depth, t.position])).toEqual([
      ["t1", null, 1, 0],
      ["t2", "t1", 2, 0],
      ["t3", "t2", 3, 0],
      ["t4", "t2", 3, 1],
      ["t5", "t1", 2, 1],
      ["t6", "t5", 3, 0],
      ["t7", "t5", 3, 1],
    ]);
    expect(overview.tasks[0]?.sub_task_ids).toEqual(["t2", "t5"]);
    expect(overview).toMatchObject({
      zen: false,
      current_task_id: "t7",
      counts: { total: 7, open: 3, completed: 4, archived: 4 },
    });
  });

  it("counts archived tasks that were removed from view", () => {
    const s = newStack();
    s.createTask("a", "");
    s.completeCurrentTask();
    s.removeTask("t1");
    expect(stackOverview(s).counts).toEqual({ total: 0, open: 0, completed: 0, archived: 1 });
  });
});
