import { z } from "zod";
import type { Task } from "../../tasks/task.js";
import { defineTool } from "../tool.js";
import { mutating, openStack, quoted, ref, sessionIdInput, taskRef } from "./shared.js";

function focusNote(next: Task | undefined): string {
  return next ? `focus moved to ${quoted(next)}` : "no open task is left: zen state";
}

export const completeCurrentTask = defineTool({
  name: "complete_current_task",
  title: "Complete the current task",
  description:
    "Mark the current task completed (permanent) and archive a copy, then move focus: to the leftmost " +
    "open task at the same level; else to the task above it; else to the rightmost open task anywhere; " +
    "else zen state (nothing open). When focus lands on a task with open sub-tasks it moves down to the " +
    "first of them. Refused while the current task has open sub-tasks. Record results with " +
    "update_current_task first. Returns completed_task_id and the new current task (null in zen state).",
  inputSchema: { session_id: sessionIdInput },
  outputSchema: {
    completed_task_id: z.string(),
    message: z.string(),
    current_task_id: z.string().nullable(),
    current_task_title: z.string().nullable(),
    zen: z.boolean(),
  },
  annotations: mutating({ destructive: false, idempotent: false }),
  async run({ session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const { completed, next } = s.completeCurrentTask();
      return {
        completed_task_id: completed.id,
        message: `completed ${quoted(completed)}; ${focusNote(next)}`,
        current_task_id: next?.id ?? null,
        current_task_title: next?.title ?? null,
        zen: s.isZen,
      };
    });
  },
});

export const updateCurrentTask = defineTool({
  name: "update_current_task",
  title: "Rewrite the current task's body",
  description:
    "Replace the body of the current task; its title and id stay. Use it to record results, decisions " +
    "and notes as work goes on. It overwrites: read the body with get_current_task first to keep parts " +
    "of it. Up to 1,000,000 characters. Needs a current task.",
  inputSchema: {
    body: z.string().describe("The new body; replaces the old one entirely."),
    session_id: sessionIdInput,
  },
  outputSchema: { task_id: z.string(), message: z.string() },
  annotations: mutating({ destructive: false, idempotent: true }),
  async run({ body, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const task = s.updateCurrentTask(body);
      return { task_id: task.id, message: `updated the body of ${quoted(task)} (${body.length} characters)` };
    });
  },
});

export const switchFocus = defineTool({
  name: "switch_focus",
  title: "Focus another task",
  description:
    "Make any open task the current one, for work that does not go in order; find ids with " +
    "get_big_picture or get_stack_overview. The task that had focus stays open where it is. Completed " +
    "and removed tasks cannot take focus. Returns the new current task, previous_task_id and focus_path " +
    "(from the top-level task down to the new focus).",
  inputSchema: {
    task_id: z.string().describe('Id of an open task, like "t3".'),
    session_id: sessionIdInput,
  },
  outputSchema: {
    task_id: z.string(),
    title: z.string(),
    previous_task_id: z.string().nullable(),
    message: z.string(),
    focus_path: z.array(taskRef),
  },
  annotations: mutating({ destructive: false, idempotent: true }),
  async run({ task_id, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const { previous, current } = s.switchFocus(task_id);
      const here = s.requireCurrentContext("switch_focus");
      const message =
        previous?.id === current.id
          ? `${quoted(current)} was already the current task`
          : `focus moved to ${quoted(current)}${previous ? `; ${quoted(previous)} stays open` : ""}`;
      return {
        task_id: current.id,
        title: current.title,
        previous_task_id: previous?.id ?? null,
        message,
        focus_path: here.path.map((t) => ref(s, t)),
      };
    });
  },
});

export const removeTask = defineTool({
  name: "remove_task",
  title: "Remove a task",
  description:
    "Remove a task and all its sub-tasks from the visible stack, to declutter. Completed ones stay in " +
    "get_completed_tasks; open ones are dropped for good. If focus was inside what was removed it moves " +
    "as on completion (leftmost open task at that level, else the task above, else the rightmost open " +
    "task, else zen state). Cannot be undone. Returns the removed ids and the current task afterwards.",
  inputSchema: {
    task_id: z.string().describe('Id of the task to remove, like "t3".'),
    session_id: sessionIdInput,
  },
  outputSchema: {
    removed_task_id: z.string(),
    removed_task_ids: z.array(z.string()).describe("The task and every sub-task under it."),
    removed_count: z.number().int(),
    message: z.string(),
    current_task_id: z.string().nullable(),
    zen: z.boolean(),
  },
  annotations: mutating({ destructive: true, idempotent: false }),
  async run({ task_id, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const before = s.currentTaskId;
      const { removed, current } = s.removeTask(task_id);
      const [task] = removed;
      const what = removed.length === 1 ? "" : ` and ${removed.length - 1} sub-task(s)`;
      const focus = current?.id === before ? `focus stays on ${quoted(current)}` : focusNote(current);
      return {
        removed_task_id: task_id,
        removed_task_ids: removed.map((t) => t.id),
        removed_count: removed.length,
        message: `removed ${task ? quoted(task) : task_id}${what}; ${focus}`,
        current_task_id: current?.id ?? null,
        zen: s.isZen,
      };
    });
  },
});
