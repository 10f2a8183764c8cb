import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bigPictureJson, type BigPictureNode } from "../../../src/tasks/render-big-picture.js";
import { walk } from "../../../src/tasks/task-tree.js";
import { TaskStack } from "../../../src/tasks/task-stack.js";
import { findInvariantViolations } from "../../../src/tasks/task-stack-invariants.js";
import type { TaskNode } from "../../../src/tasks/task.js";
import type { TaskStackState } from "../../../src/tasks/task-stack-state.js";
import { DrydockError } from "../../../src/util/errors.js";
import { newStack } from "./fixtures.js";

type Op =
  | { kind: "create"; title: string }
  | { kind: "extend"; title: string }
  | { kind: "complete" }
  | { kind: "update"; body: string }
  | { kind: "switch"; pick: number }
  | { kind: "remove"; pick: number };

const title = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("plan", "build", "test", "ship") },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: title.map((t) => ({ kind: "create" as const, title: t })) },
  { weight: 3, arbitrary: title.map((t) => ({ kind: "extend" as const, title: t })) },
  { weight: 4, arbitrary: fc.constant({ kind: "complete" as const }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((b) => ({ kind: "update" as const, body: b })) },
  { weight: 2, arbitrary: fc.nat(40).map((n) => ({ kind: "switch" as const, pick: n })) },
  { weight: 1, arbitrary: fc.nat(40).map((n) => ({ kind: "remove" as const, pick: n })) },
);

/** Ids to aim at: issued ones (some removed by now), plus one never issued. */
function target(state: TaskStackState, pick: number): string {
  return `t${(pick % state.nextId) + 1}`;
}

function apply(s: TaskStack, o: Op): void {
  const state = s.toState();
  switch (o.kind) {
    case "create":
      return void s.createTask(o.title, "");
    case "extend":
      return void s.extendCurrentTask(o.title, "");
    case "complete":
      return void s.completeCurrentTask();
    case "update":
      return void s.updateCurrentTask(o.body);
    case "switch":
      return void s.switchFocus(target(state, o.pick));
    case "remove":
      return void s.removeTask(target(state, o.pick));
  }
}

function visible(state: TaskStackState) {
  return new Map(Array.from(walk(state.tasks), ({ task }) => [task.id, task]));
}

/** A task without its sub-tasks, which remove_task may take away even under a completed task. */
function ownFields({ subTasks, ...fields }: TaskNode) {
  void subTasks;
  return fields;
}

function countCurrent(nodes: readonly BigPictureNode[]): number {
  return nodes.reduce((n, node) => n + (node.is_current ? 1 : 0) + countCurrent(node.sub_tasks), 0);
}

describe("TaskStack under random operation sequences", () => {
  it("keeps every invariant after every step", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = newStack();
        const removed = new Set<string>();
        for (const o of ops) {
          const before = s.toState();
          let failed = false;
          try {
            apply(s, o);
          } catch (error) {
            // Refusals are our own errors, never crashes, and change nothing.
            expect(error).toBeInstanceOf(DrydockError);
            expect(s.toState()).toEqual(before);
            failed = true;
          }
          const after = s.toState();

          expect(findInvariantViolations(after)).toEqual([]);

          // Exactly one current task, or zen with no open task at all.
          const open = [...visible(after).values()].filter((t) => t.status === "pending");
          expect(countCurrent(bigPictureJson(s))).toBe(s.isZen ? 0 : 1);
          expect(s.isZen).toBe(open.length === 0);

          // The archive only grows, and what it held stays as it was.
          expect(after.archive.slice(0, before.archive.length)).toEqual(before.archive);

          // A completed task stays completed while it is visible.
          const now = visible(after);
          for (const [id, task] of visible(before)) {
            if (!now.has(id)) removed.add(id);
            if (task.status === "completed" && now.has(id))
              expect(ownFields(now.get(id)!)).toEqual(ownFields(task));
          }
          // A removed task never comes back.
          for (const id of removed) expect(now.has(id)).toBe(false);

          if (!failed && (o.kind === "create" || o.kind === "extend")) {
            expect(s.currentTaskId).toBe(`t${before.nextId}`);
          }
          if (!failed && o.kind === "complete") {
            expect(after.archive.at(-1)?.id).toBe(before.currentTaskId);
            expect(s.currentTaskId).not.toBe(before.currentTaskId);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("automatic focus always lands on a task that can be completed", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = newStack();
        for (const o of ops) {
          const before = s.currentTaskId;
          try {
            apply(s, o);
          } catch {
            continue;
          }
          // Focus moves on its own only on completion and on removal of the focused task.
          if ((o.kind !== "complete" && o.kind !== "remove") || s.currentTaskId === before) continue;
          const current = s.currentTask();
          if (current) expect(current.subTasks.every((t) => t.status === "completed")).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("can always be completed down to zen from any reachable state", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = newStack();
        for (const o of ops) {
          try {
            apply(s, o);
          } catch {
            // Refused operations are part of the sequence.
          }
        }
        let steps = 0;
        while (!s.isZen) {
          const current = s.currentTask()!;
          // After a switch_focus the focus may sit on a parent; move it down as a model would.
          const open = current.subTasks.find((t) => t.status === "pending");
          if (open) s.switchFocus(open.id);
          else s.completeCurrentTask();
          expect(++steps).toBeLessThan(1000);
        }
        const state = s.toState();
        expect([...visible(state).values()].every((t) => t.status === "completed")).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("survives a JSON round trip unchanged from any reachable state", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const s = newStack();
        for (const o of ops) {
          try {
            apply(s, o);
          } catch {
            // Refused operations are part of the sequence.
          }
        }
        const copy = TaskStack.fromState(JSON.parse(JSON.stringify(s.toState())));
        expect(copy.toState()).toEqual(s.toState());
      }),
      { numRuns: 200 },
    );
  });
});
