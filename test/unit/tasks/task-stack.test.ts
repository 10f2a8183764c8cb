import { describe, expect, it } from "vitest";
import { TaskStack } from "../../../src/tasks/task-stack.js";
import { findInvariantViolations } from "../../../src/tasks/task-stack-invariants.js";
import {
  InvalidArgumentError,
  LimitExceededError,
  NotFoundError,
  TaskStackError,
} from "../../../src/util/errors.js";
import { newStack } from "./fixtures.js";

function titles(tasks: readonly { title: string }[]): string[] {
  return tasks.map((t) => t.title);
}

/** A root A with sub-tasks B, C, D, focus on D; returns their ids. */
function rowOfThree(s: TaskStack) {
  const a = s.createTask("A", "");
  const b = s.createTask("B", "");
  const c = s.extendCurrentTask("C", "");
  const d = s.extendCurrentTask("D", "");
  return { a: a.id, b: b.id, c: c.id, d: d.id };
}

describe("TaskStack", () => {
  describe("zen state", () => {
    it("starts empty with no current task", () => {
      const s = newStack();
      expect(s.isZen).toBe(true);
      expect(s.currentTask()).toBeUndefined();
      expect(s.currentContext()).toBeUndefined();
      expect(s.tasks).toEqual([]);
    });

    it("refuses every change that needs a current task, naming create_new_task", () => {
      const s = newStack();
      for (const action of [
        () => s.extendCurrentTask("x", ""),
        () => s.completeCurrentTask(),
        () => s.updateCurrentTask("x"),
        () => s.requireCurrentContext("peek_context"),
      ]) {
        expect(action).toThrow(TaskStackError);
        expect(action).toThrow(
          /no current task \(zen state: the stack is empty\); create one with create_new_task/,
        );
      }
    });

    it("is reached again when every task is completed, with the tasks still visible", () => {
      const s = newStack();
      s.createTask("only", "");
      s.completeCurrentTask();
      expect(s.isZen).toBe(true);
      expect(titles(s.tasks)).toEqual(["only"]);
      expect(() => s.extendCurrentTask("x", "")).toThrow(/zen state: all 1 tasks are completed/);
    });

    it("starts a new top-level task when a task is created in zen state after completions", () => {
      const s = newStack();
      s.createTask("first", "");
      s.completeCurrentTask();
      const second = s.createTask("second", "");
      expect(titles(s.tasks)).toEqual(["first", "second"]);
      expect(s.currentTaskId).toBe(second.id);
    });
  });

  describe("creating and extending", () => {
    it("gives each task an id, the trimmed title, the body, pending status and a created_at", () => {
      const s = newStack();
      const task = s.createTask("  Fix the parser  ", "line 1\nline 2");
      expect(task).toMatchObject({
        id: "t1",
        title: "Fix the parser",
        body: "line 1\nline 2",
        status: "pending",
        createdAt: "2026-01-01T00:00:00.000Z",
        completedAt: null,
      });
      expect(s.statusOf(task)).toBe("current");
    });

    it("nests a created task under the current one and focuses it", () => {
      const s = newStack();
      const root = s.createTask("root", "");
      const child = s.createTask("child", "");
      expect(s.find(child.id)?.parent?.id).toBe(root.id);
      expect(s.currentTaskId).toBe(child.id);
    });

    it("appends an extension at the end of the current task's row and focuses it", () => {
      const s = newStack();
      const { a, b, c, d } = rowOfThree(s);
      expect(s.find(a)?.task.subTasks.map((t) => t.id)).toEqual([b, c, d]);
      expect(s.currentTaskId).toBe(d);
    });

    it("nests without limit", () => {
      const s = newStack();
      for (let depth = 1; depth <= 200; depth++) s.createTask(`level ${depth}`, "");
      const here = s.requireCurrentContext("test");
      expect(here.depth).toBe(200);
      expect(here.path).toHaveLength(200);
      for (let depth = 200; depth >= 1; depth--) {
        expect(s.currentTask()?.title).toBe(`level ${depth}`);
        s.completeCurrentTask();
      }
      expect(s.isZen).toBe(true);
    });

    it("never reuses an id, even after remove_task", () => {
      const s = newStack();
      const first = s.createTask("one", "");
      s.removeTask(first.id);
      expect(s.createTask("two", "").id).toBe("t2");
    });
  });

  describe("titles and bodies", () => {
    it("refuses an empty or blank title", () => {
      const s = newStack();
      expect(() => s.createTask("", "")).toThrow(InvalidArgumentError);
      expect(() => s.createTask("   ", "")).toThrow(/title: must not be empty/);
    });

    it("accepts 256 characters and refuses 257", () => {
      const s = newStack();
      expect(s.createTask("x".repeat(256), "").title).toHaveLength(256);
      expect(() => s.createTask("x".repeat(257), "")).toThrow(/title: is 257 characters, the limit is 256/);
    });

    it("counts characters, not UTF-16 units", () => {
      const s = newStack();
      expect(() => s.createTask("😀".repeat(256), "")).not.toThrow();
      expect(() => s.createTask("😀".repeat(257), "")).toThrow(InvalidArgumentError);
    });

    it("refuses a title of more than one line", () => {
      expect(() => newStack().createTask("one\ntwo", "")).toThrow(/single line; put details in body/);
    });

    it("refuses a body over the cap, in create and update, leaving the stack unchanged", () => {
      const s = newStack({ maxBodyChars: 10 });
      expect(() => s.createTask("t", "x".repeat(11))).toThrow(LimitExceededError);
      expect(s.tasks).toEqual([]);
      s.createTask("t", "x".repeat(10));
      expect(() => s.updateCurrentTask("y".repeat(11))).toThrow(/body: is 11 characters, the limit is 10/);
      expect(s.currentTask()?.body).toBe("x".repeat(10));
    });

    it("refuses a task past the stack's cap", () => {
      const s = newStack({ maxTasks: 2 });
      s.createTask("a", "");
      s.createTask("b", "");
      expect(() => s.extendCurrentTask("c", "")).toThrow(/holds 2 tasks, the limit; remove finished ones/);
    });
  });

  describe("update_current_task", () => {
    it("overwrites the body of the current task only", () => {
      const s = newStack();
      const parent = s.createTask("parent", "keep");
      const child = s.createTask("child", "old");
      s.updateCurrentTask("new");
      expect(s.find(child.id)?.task).toMatchObject({ title: "child", body: "new" });
      expect(s.find(parent.id)?.task.body).toBe("keep");
    });
  });

  describe("completing and where focus goes", () => {
    it("moves focus to the leftmost open sibling", () => {
      const s = newStack();
      const { b, d } = rowOfThree(s);
      expect(s.completeCurrentTask()).toMatchObject({ completed: { id: d }, next: { id: b } });
    });

    it("moves focus to an open sibling on the right when none is open on the left", () => {
      const s = newStack();
      const { b, c } = rowOfThree(s);
      s.switchFocus(b);
      expect(s.completeCurrentTask().next?.id).toBe(c);
    });

    it("moves focus to the parent when the whole row is completed", () => {
      const s = newStack();
      const { a, b, c } = rowOfThree(s);
      s.completeCurrentTask(); // D → B
      s.completeCurrentTask(); // B → C
      expect(s.currentTaskId).toBe(c);
      expect(s.completeCurrentTask().next?.id).toBe(a);
      expect(s.find(b)?.task.status).toBe("completed");
    });

    it("moves down into the open sub-tasks of the sibling it lands on", () => {
      const s = newStack();
      const { b, d } = rowOfThree(s);
      s.switchFocus(b);
      const b1 = s.createTask("B1", "");
      s.switchFocus(d);
      expect(s.completeCurrentTask().next?.id).toBe(b1.id);
    });

    it("moves between top-level tasks and into their open sub-tasks", () => {
      const s = newStack();
      const first = s.createTask("first", "");
      const inner = s.createTask("inner", "");
      s.switchFocus(first.id);
      const second = s.extendCurrentTask("second", "");
      expect(s.completeCurrentTask()).toMatchObject({ completed: { id: second.id }, next: { id: inner.id } });
    });

    it("marks the task completed with a completion time and archives a copy", () => {
      const s = newStack();
      const task = s.createTask("t", "notes");
      const { completed } = s.completeCurrentTask();
      expect(completed).toMatchObject({ id: task.id, status: "completed" });
      expect(completed.completedAt).toMatch(/^2026-01-01T00:00:01/);
      expect(s.completedTasks("chronological")).toEqual([
        {
          id: task.id,
          title: "t",
          body: "notes",
          createdAt: task.createdAt,
          completedAt: completed.completedAt,
        },
      ]);
    });

    it("refuses to complete a task with open sub-tasks and names them", () => {
      const s = newStack();
      const { a, b, c } = rowOfThree(s);
      s.switchFocus(a);
      expect(() => s.completeCurrentTask()).toThrow(TaskStackError);
      expect(() => s.completeCurrentTask()).toThrow(
        new RegExp(
          `cannot be completed while sub-tasks are open \\(${b} "B", ${c} "C", t4 "D"\\); switch_focus`,
        ),
      );
      expect(s.find(a)?.task.status).toBe("pending");
      expect(s.completedTasks("chronological")).toEqual([]);
    });

    it("keeps a completed task completed: it cannot take focus again", () => {
      const s = newStack();
      const { d } = rowOfThree(s);
      s.completeCurrentTask();
      expect(() => s.switchFocus(d)).toThrow(/is completed, and completion is permanent/);
    });
  });

  describe("completed tasks", () => {
    it("lists them in completion order (chronological) or the reverse (logical)", () => {
      const s = newStack();
      rowOfThree(s);
      s.completeCurrentTask(); // D
      s.completeCurrentTask(); // B
      s.completeCurrentTask(); // C
      s.completeCurrentTask(); // A
      expect(titles(s.completedTasks("chronological"))).toEqual(["D", "B", "C", "A"]);
      expect(titles(s.completedTasks("logical"))).toEqual(["A", "C", "B", "D"]);
    });
  });

  describe("switch_focus", () => {
    it("focuses an open task and leaves the previous one pending", () => {
      const s = newStack();
      const { b, d } = rowOfThree(s);
      const { previous, current } = s.switchFocus(b);
      expect(previous?.id).toBe(d);
      expect(current.id).toBe(b);
      expect(s.statusOf(s.find(d)!.task)).toBe("pending");
      expect(s.statusOf(s.find(b)!.task)).toBe("current");
    });

    it("may focus a parent with open sub-tasks", () => {
      const s = newStack();
      const { a } = rowOfThree(s);
      s.switchFocus(a);
      expect(s.currentTaskId).toBe(a);
    });

    it("is harmless on the current task", () => {
      const s = newStack();
      const { d } = rowOfThree(s);
      expect(s.switchFocus(d).previous?.id).toBe(d);
      expect(s.currentTaskId).toBe(d);
    });

    it("refuses an unknown id and says how to find ids", () => {
      const s = newStack();
      rowOfThree(s);
      expect(() => s.switchFocus("t99")).toThrow(NotFoundError);
      expect(() => s.switchFocus("nonsense")).toThrow(/no task "nonsense" in this stack; .*get_big_picture/);
    });

    it("refuses a removed task, saying it was removed", () => {
      const s = newStack();
      const { b, c } = rowOfThree(s);
      s.removeTask(b);
      expect(() => s.switchFocus(b)).toThrow(
        /task t2 was removed with remove_task; removed tasks cannot be focused/,
      );
      s.switchFocus(c);
      s.completeCurrentTask();
      s.removeTask(c);
      expect(() => s.switchFocus(c)).toThrow(/its completed copy is in get_completed_tasks/);
    });
  });

  describe("remove_task", () => {
    it("removes a task with all its sub-tasks and keeps focus when it was elsewhere", () => {
      const s = newStack();
      const { b, d } = rowOfThree(s);
      s.switchFocus(b);
      const b1 = s.createTask("B1", "");
      s.switchFocus(d);
      const { removed, current } = s.removeTask(b);
      expect(removed.map((t) => t.id)).toEqual([b, b1.id]);
      expect(current?.id).toBe(d);
      expect(s.find(b1.id)).toBeUndefined();
    });

    it("moves focus as on completion when the current task is removed", () => {
      const s = newStack();
      const { b, d } = rowOfThree(s);
      expect(s.removeTask(d).current?.id).toBe(b);
    });

    it("moves focus to the parent when the removed current task was the last open one in its row", () => {
      const s = newStack();
      const root = s.createTask("root", "");
      const child = s.createTask("child", "");
      expect(s.removeTask(child.id).current?.id).toBe(root.id);
    });

    it("moves focus off a removed ancestor of the current task", () => {
      const s = newStack();
      const first = s.createTask("first", "");
      s.extendCurrentTask("second", "");
      s.createTask("inside second", "");
      const { current } = s.removeTask("t2");
      expect(current?.id).toBe(first.id);
    });

    it("leaves zen state when the last open task is removed", () => {
      const s = newStack();
      const only = s.createTask("only", "");
      expect(s.removeTask(only.id).current).toBeUndefined();
      expect(s.isZen).toBe(true);
      expect(s.tasks).toEqual([]);
    });

    it("keeps completed tasks in the archive and forgets open ones", () => {
      const s = newStack();
      const { a, d } = rowOfThree(s);
      s.completeCurrentTask(); // D done
      s.removeTask(a);
      expect(s.tasks).toEqual([]);
      expect(s.completedTasks("chronological").map((t) => t.id)).toEqual([d]);
    });

    it("refuses an unknown id", () => {
      expect(() => newStack().removeTask("t1")).toThrow(NotFoundError);
    });
  });

  describe("context around the current task", () => {
    it("gives the path, depth and the siblings on either side", () => {
      const s = newStack();
      const { a, b, c, d } = rowOfThree(s);
      s.switchFocus(c);
      const here = s.requireCurrentContext("test");
      expect(here.path.map((t) => t.id)).toEqual([a, c]);
      expect(here.depth).toBe(2);
      expect(here.parent?.id).toBe(a);
      expect(here.leftSiblings.map((t) => t.id)).toEqual([b]);
      expect(here.rightSiblings.map((t) => t.id)).toEqual([d]);
    });

    it("has no parent and no siblings for a single task", () => {
      const s = newStack();
      s.createTask("single", "");
      expect(s.requireCurrentContext("test")).toMatchObject({
        parent: undefined,
        depth: 1,
        leftSiblings: [],
        rightSiblings: [],
      });
    });
  });

  describe("state", () => {
    it("round-trips through toState and fromState", () => {
      const s = newStack();
      rowOfThree(s);
      s.completeCurrentTask();
      const copy = TaskStack.fromState(JSON.parse(JSON.stringify(s.toState())));
      expect(copy.toState()).toEqual(s.toState());
      expect(copy.currentTaskId).toBe(s.currentTaskId);
    });

    it("refuses malformed or inconsistent data", () => {
      const s = newStack();
      rowOfThree(s);
      const state = s.toState();
      expect(() => TaskStack.fromState({ ...state, nextId: "x" })).toThrow(/malformed/);
      expect(() => TaskStack.fromState({ ...state, currentTaskId: "t77" })).toThrow(/inconsistent.*t77/);
    });

    it("hands out copies: changing the state it returned changes nothing", () => {
      const s = newStack();
      s.createTask("a", "");
      s.toState().tasks[0]!.title = "changed";
      expect(s.tasks[0]?.title).toBe("a");
      const clone = s.clone();
      clone.createTask("b", "");
      expect(s.tasks[0]?.subTasks).toEqual([]);
    });

    it("keeps its invariants through a mixed session", () => {
      const s = newStack();
      rowOfThree(s);
      s.switchFocus("t2");
      s.createTask("B1", "");
      s.removeTask("t3");
      s.completeCurrentTask();
      expect(findInvariantViolations(s.toState())).toEqual([]);
    });
  });
});
