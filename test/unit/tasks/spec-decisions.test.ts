import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderBigPictureText } from "../../../src/tasks/render-big-picture.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { NotFoundError, TaskStackError } from "../../../src/util/errors.js";
import { newStack } from "./fixtures.js";

// One test per entry of "Decisions where the spec is ambiguous" in docs/task-stack.md, same order.
describe("decisions where the spec is ambiguous", () => {
  it("1. create_new_task nests under the current task; in zen state it starts a top-level task", () => {
    const s = newStack();
    const root = s.createTask("root", "");
    const sub = s.createTask("sub", "");
    const subsub = s.createTask("sub-sub", "");
    expect(s.find(subsub.id)?.path.map((t) => t.id)).toEqual([root.id, sub.id, subsub.id]);
    expect(s.tasks).toHaveLength(1);
  });

  it("2. extend_current_task appends to the end of the current task's own row; a top-level task's step goes under it", () => {
    const s = newStack();
    s.createTask("A", ""); // t1
    s.extendCurrentTask("A.1", ""); // t2: a step of the top-level task A, never a second top-level task
    expect(s.tasks.map((t) => t.id)).toEqual(["t1"]);
    expect(s.find("t1")?.task.subTasks.map((t) => t.id)).toEqual(["t2"]);
    s.extendCurrentTask("A.2", ""); // t3: after A.1, in its row
    s.switchFocus("t1");
    s.extendCurrentTask("A.3", ""); // t4: focus on A again, so the step goes at the end of A's steps
    s.switchFocus("t2");
    s.extendCurrentTask("A.4", ""); // t5: from A.1, still at the end of the row
    expect(s.tasks.map((t) => t.id)).toEqual(["t1"]);
    expect(s.find("t1")?.task.subTasks.map((t) => t.id)).toEqual(["t2", "t3", "t4", "t5"]);
    expect(s.completeCurrentTask().next?.id).toBe("t2"); // the earliest open step
  });

  it("3. siblings to the left are the tasks before the current one in its row, whatever their status", () => {
    const s = newStack();
    s.createTask("A", "");
    s.createTask("1", ""); // t2
    s.extendCurrentTask("2", ""); // t3
    s.extendCurrentTask("3", ""); // t4
    s.extendCurrentTask("4", ""); // t5
    s.switchFocus("t2");
    s.completeCurrentTask(); // focus → t3, the leftmost open
    const here = s.requireCurrentContext("test");
    expect(here.task.id).toBe("t3");
    expect(here.leftSiblings.map((t) => [t.id, s.statusOf(t)])).toEqual([["t2", "completed"]]);
    expect(here.rightSiblings.map((t) => t.id)).toEqual(["t4", "t5"]);
  });

  it("4. completion moves focus to the leftmost open task in the row on either side, then the parent, then the rightmost open task", () => {
    const s = newStack();
    s.createTask("A", "");
    s.createTask("1", ""); // t2
    s.extendCurrentTask("2", ""); // t3
    s.switchFocus("t2");
    expect(s.completeCurrentTask().next?.id).toBe("t3"); // to the right: nothing open on the left
    expect(s.completeCurrentTask().next?.id).toBe("t1"); // row done: the parent
  });

  it("5. focus that moves by itself lands on the first open sub-task of the task it reaches", () => {
    const s = newStack();
    s.createTask("A", ""); // t1
    s.createTask("A.1", ""); // t2
    s.switchFocus("t1");
    s.extendCurrentTask("B", ""); // t3
    expect(s.completeCurrentTask().next?.id).toBe("t2"); // not t1, which cannot be completed yet
  });

  it("6. remove_task moves focus only when the current task is inside what was removed, by the completion rules", () => {
    const s = newStack();
    s.createTask("A", ""); // t1
    s.createTask("A.1", ""); // t2
    s.extendCurrentTask("A.2", ""); // t3
    expect(s.removeTask("t2").current?.id).toBe("t3"); // elsewhere: focus stays
    expect(s.removeTask("t3").current?.id).toBe("t1"); // the current one: its parent takes over
    expect(s.removeTask("t1").current).toBeUndefined(); // nothing open is left: zen
    expect(s.isZen).toBe(true);
  });

  it("7. open tasks can be removed; they are dropped, only completed tasks stay in the archive", () => {
    const s = newStack();
    s.createTask("A", "");
    s.createTask("done", "");
    s.completeCurrentTask();
    s.createTask("open", "");
    s.removeTask("t1");
    expect(s.completedTasks("chronological").map((t) => t.title)).toEqual(["done"]);
  });

  it("8. a removed task cannot be focused, and its id is never reused", () => {
    const s = newStack();
    s.createTask("A", "");
    s.extendCurrentTask("B", "");
    s.removeTask("t2");
    expect(() => s.switchFocus("t2")).toThrow(NotFoundError);
    expect(() => s.switchFocus("t2")).toThrow(/was removed with remove_task/);
    expect(s.extendCurrentTask("C", "").id).toBe("t3");
  });

  it("9. a completed task cannot take focus: completion is permanent", () => {
    const s = newStack();
    s.createTask("A", "");
    s.extendCurrentTask("B", "");
    s.completeCurrentTask();
    expect(() => s.switchFocus("t2")).toThrow(TaskStackError);
  });

  it("10. switch_focus may pick a parent with open sub-tasks; completing it waits for them", () => {
    const s = newStack();
    s.createTask("A", "");
    s.createTask("A.1", "");
    s.switchFocus("t1");
    expect(() => s.completeCurrentTask()).toThrow(/sub-tasks are open \(t2 "A.1"\)/);
  });

  it("11. zen state means no open task; get_current_task reports it, tools that need a task refuse", () => {
    const s = newStack();
    s.createTask("A", "");
    s.completeCurrentTask();
    expect(s.isZen).toBe(true);
    expect(s.currentContext()).toBeUndefined();
    expect(() => s.updateCurrentTask("x")).toThrow(
      /no current task \(zen state: all 1 tasks are completed\)/,
    );
  });

  it('12. get_completed_tasks "logical" is the reverse of completion order', () => {
    const s = newStack();
    s.createTask("parent", "");
    s.createTask("child", "");
    s.completeCurrentTask();
    s.completeCurrentTask();
    expect(s.completedTasks("chronological").map((t) => t.title)).toEqual(["child", "parent"]);
    expect(s.completedTasks("logical").map((t) => t.title)).toEqual(["parent", "child"]);
  });

  it("13. the text big picture shows ids, so switch_focus and remove_task can use it", () => {
    const s = newStack();
    s.createTask("A", "");
    expect(renderBigPictureText(s)).toBe("[t1] A (current) <-- YOU ARE HERE");
  });

  it("14. the archive is kept with the stack on disk, not only while the server runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "drydock-decision-"));
    try {
      const stack = await new TaskStackStore({ dir }).open("s");
      await stack.mutate((s) => s.createTask("A", ""));
      await stack.mutate((s) => s.completeCurrentTask());
      await stack.mutate((s) => s.removeTask("t1"));
      const reopened = await new TaskStackStore({ dir }).open("s");
      expect(reopened.read((s) => s.completedTasks("chronological").map((t) => t.title))).toEqual(["A"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("15. titles are one trimmed line of 1 to 256 characters; bodies and stacks have generous caps", () => {
    const s = newStack({ maxBodyChars: 5, maxTasks: 1 });
    expect(s.createTask("  padded  ", "12345").title).toBe("padded");
    expect(() => s.extendCurrentTask("two\nlines", "")).toThrow(/single line/);
    expect(() => s.updateCurrentTask("123456")).toThrow(/limit is 5/);
    expect(() => s.extendCurrentTask("another", "")).toThrow(/holds 1 tasks, the limit/);
  });
});
