import { z } from "zod";
import type { BigPictureNode } from "../tasks/render-big-picture.js";
import { bigPictureJson, renderBigPictureText } from "../tasks/render-big-picture.js";
import { stackOverview } from "../tasks/stack-overview.js";
import { maxTitleChars, type Task } from "../tasks/task.js";
import type { TaskStackAccess } from "../tasks/task-stack-access.js";
import type { TaskStackView } from "../tasks/task-stack.js";
import { defineTool, type AnyToolDefinition, type ToolContext } from "./tool.js";

declare module "./tool.js" {
  interface ToolServices {
    taskStacks: TaskStackAccess;
  }
}

// ---- schemas shared by the tools -------------------------------------------------------------

const sessionIdInput = z
  .string()
  .optional()
  .describe(
    "Session whose task stack to use; omit for your default session. Each session has its own stack.",
  );
const includeBodyInput = z.boolean().optional().describe("Also return each task's body (default false).");

const status = z.enum(["current", "pending", "completed"]);
const taskRef = z.object({ id: z.string(), title: z.string(), status });
const taskInfo = z.object({
  id: z.string(),
  title: z.string(),
  status,
  created_at: z.string(),
  completed_at: z.string().nullable(),
  body: z.string().optional(),
});
const archivedTask = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  created_at: z.string(),
  completed_at: z.string(),
});
const bigPictureNode: z.ZodType<BigPictureNode> = z.object({
  id: z.string(),
  title: z.string(),
  status,
  is_current: z.boolean(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  get sub_tasks() {
    return z.array(bigPictureNode);
  },
});
const createdOutput = {
  task_id: z.string(),
  title: z.string(),
  message: z.string(),
  is_current: z.boolean(),
  parent_task_id: z.string().nullable().describe("The task it sits under; null at the top level."),
  depth: z.number().int().describe("1 for a top-level task."),
};

const titleInput = z.string().describe(`Short one-line description, at most ${maxTitleChars} characters.`);
const bodyInput = z
  .string()
  .describe("Full context: goal, constraints, notes, intermediate results (up to 1,000,000 characters).");

// ---- helpers ---------------------------------------------------------------------------------

function openStack(ctx: ToolContext, sessionId: string | undefined) {
  return ctx.services.taskStacks.open(ctx.clientId, sessionId);
}

function ref(stack: TaskStackView, task: Task): z.infer<typeof taskRef> {
  return { id: task.id, title: task.title, status: stack.statusOf(task) };
}

function info(stack: TaskStackView, task: Task, includeBody: boolean): z.infer<typeof taskInfo> {
  return {
    id: task.id,
    title: task.title,
    status: stack.statusOf(task),
    created_at: task.createdAt,
    completed_at: task.completedAt,
    ...(includeBody ? { body: task.body } : {}),
  };
}

function quoted(task: Task): string {
  return `${task.id} ${JSON.stringify(task.title)}`;
}

function created(stack: TaskStackView, task: Task, how: string) {
  const where = stack.requireCurrentContext("task creation");
  return {
    task_id: task.id,
    title: task.title,
    message: `${how}; it is now the current task`,
    is_current: stack.currentTaskId === task.id,
    parent_task_id: where.parent?.id ?? null,
    depth: where.depth,
  };
}

function focusNote(next: Task | undefined): string {
  return next ? `focus moved to ${quoted(next)}` : "no open task is left: zen state";
}

// ---- the tools -------------------------------------------------------------------------------

const createNewTask = defineTool({
  name: "create_new_task",
  title: "Create a task",
  description:
    "Start a new task and make it the current one. With a current task, the new task nests under it as a " +
    "sub-task: use it to break the current problem down. In zen state (no open task) it starts a new " +
    "top-level task. To add the next step at the same level instead, use extend_current_task. " +
    `title: one line, at most ${maxTitleChars} characters; body: the full context. ` +
    "Returns task_id, is_current (always true), parent_task_id (null at the top level) and depth.",
  inputSchema: { title: titleInput, body: bodyInput, session_id: sessionIdInput },
  outputSchema: createdOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ title, body, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const parent = s.currentTask();
      const task = s.createTask(title, body);
      return created(
        s,
        task,
        `created ${quoted(task)}${parent ? ` under ${quoted(parent)}` : " at the top level"}`,
      );
    });
  },
});

const extendCurrentTask = defineTool({
  name: "extend_current_task",
  title: "Add the next step",
  description:
    "Add a sequential step at the same level as the current task (appended at the end of its row of " +
    "sibling tasks) and make it current. When it is completed, focus returns to the earliest open task " +
    "before it. Needs a current task: in zen state use create_new_task. " +
    `title: one line, at most ${maxTitleChars} characters; body: the full context. ` +
    "Returns task_id, is_current (always true), parent_task_id and depth.",
  inputSchema: { title: titleInput, body: bodyInput, session_id: sessionIdInput },
  outputSchema: createdOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ title, body, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const previous = s.requireCurrentContext("extend_current_task").task;
      const task = s.extendCurrentTask(title, body);
      return created(s, task, `added ${quoted(task)} at the level of ${quoted(previous)}`);
    });
  },
});

const getCurrentTask = defineTool({
  name: "get_current_task",
  title: "Show the current task",
  description:
    "Show the task in focus: id, title, full body, status, depth (1 = top level), siblings_to_left (the " +
    "tasks before it at its level, with their status) and breadcrumb (from the top-level task down to " +
    "it). In zen state (no open task) it returns zen: true and no task. Read-only; call it to resume " +
    "work after an interruption.",
  inputSchema: { session_id: sessionIdInput },
  outputSchema: {
    zen: z.boolean(),
    message: z.string(),
    task: taskInfo.optional(),
    depth: z.number().int().optional(),
    siblings_to_left: z.array(taskRef).optional(),
    breadcrumb: z.array(taskRef).optional(),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read((s) => {
      const here = s.currentContext();
      if (!here) {
        const total = stackOverview(s).counts.total;
        return {
          zen: true,
          message:
            total === 0
              ? "no current task (zen state: the stack is empty); start one with create_new_task"
              : `no current task (zen state: all ${total} tasks are completed); start new work with create_new_task`,
        };
      }
      return {
        zen: false,
        message: `current task is ${quoted(here.task)} at depth ${here.depth}`,
        task: info(s, here.task, true),
        depth: here.depth,
        siblings_to_left: here.leftSiblings.map((t) => ref(s, t)),
        breadcrumb: here.path.map((t) => ref(s, t)),
      };
    });
  },
});

const getBigPicture = defineTool({
  name: "get_big_picture",
  title: "Show the whole task tree",
  description:
    'Show every task in the stack. format "text" (default): an indented outline, one line per task ' +
    '"[id] title (status)", two spaces per level, the current task marked "<-- YOU ARE HERE". ' +
    'format "json": nested tasks with id, title, status, is_current, created_at, completed_at and ' +
    "sub_tasks (bodies left out). Completed tasks stay visible until removed with remove_task. Use it " +
    "to see what is done and what is left, and to find ids for switch_focus. Read-only.",
  inputSchema: {
    format: z.enum(["text", "json"]).optional().describe('"text" (default) or "json".'),
    session_id: sessionIdInput,
  },
  outputSchema: {
    format: z.enum(["text", "json"]),
    zen: z.boolean(),
    current_task_id: z.string().nullable(),
    text: z.string().optional().describe('The outline, for format "text".'),
    tasks: z.array(bigPictureNode).optional().describe('The tree, for format "json".'),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ format = "text", session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read((s) => ({
      format,
      zen: s.isZen,
      current_task_id: s.currentTaskId,
      ...(format === "text" ? { text: renderBigPictureText(s) } : { tasks: bigPictureJson(s) }),
    }));
  },
});

const completeCurrentTask = defineTool({
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
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
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

const getCompletedTasks = defineTool({
  name: "get_completed_tasks",
  title: "List completed tasks",
  description:
    "The archive of completed tasks with their bodies and completion times, including tasks since " +
    'removed from the stack. order "chronological" (default): first completed first; "logical": last ' +
    "completed first, so a task comes before the sub-tasks it was broken into. Returns count and tasks. " +
    "Read-only.",
  inputSchema: {
    order: z
      .enum(["chronological", "logical"])
      .optional()
      .describe('"chronological" (default) or "logical".'),
    session_id: sessionIdInput,
  },
  outputSchema: {
    order: z.enum(["chronological", "logical"]),
    count: z.number().int(),
    tasks: z.array(archivedTask),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ order = "chronological", session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read((s) => {
      const tasks = s.completedTasks(order).map((t) => ({
        id: t.id,
        title: t.title,
        body: t.body,
        created_at: t.createdAt,
        completed_at: t.completedAt,
      }));
      return { order, count: tasks.length, tasks };
    });
  },
});

const updateCurrentTask = defineTool({
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
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ body, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.mutate((s) => {
      const task = s.updateCurrentTask(body);
      return { task_id: task.id, message: `updated the body of ${quoted(task)} (${body.length} characters)` };
    });
  },
});

const getStackOverview = defineTool({
  name: "get_stack_overview",
  title: "Task stack as data",
  description:
    "Structured data about the whole stack: zen, current_task_id, counts (total, open, completed, " +
    "archived) and every visible task as a flat list in outline order with id, title, status, " +
    "is_current, parent_id, depth, position, sub_task_ids and timestamps. Use it to navigate by id; " +
    "get_big_picture is the readable view. Read-only.",
  inputSchema: { session_id: sessionIdInput },
  outputSchema: {
    zen: z.boolean(),
    current_task_id: z.string().nullable(),
    counts: z.object({
      total: z.number().int(),
      open: z.number().int(),
      completed: z.number().int(),
      archived: z.number().int(),
    }),
    tasks: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        status,
        is_current: z.boolean(),
        parent_id: z.string().nullable(),
        depth: z.number().int(),
        position: z.number().int(),
        sub_task_ids: z.array(z.string()),
        created_at: z.string(),
        completed_at: z.string().nullable(),
      }),
    ),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read(stackOverview);
  },
});

const peekContext = defineTool({
  name: "peek_context",
  title: "Why the current task exists",
  description:
    "Without changing focus, show the context of the current task: parent_context is the task it sits " +
    "under (null at the top level), immediate_context the task just before it at its level (null when " +
    "it is the first). Each has id, title, status, created_at, completed_at; include_body adds bodies. " +
    "Needs a current task. Read-only.",
  inputSchema: { include_body: includeBodyInput, session_id: sessionIdInput },
  outputSchema: {
    current_task_id: z.string(),
    parent_context: taskInfo.nullable(),
    immediate_context: taskInfo.nullable(),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ include_body = false, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read((s) => {
      const here = s.requireCurrentContext("peek_context");
      const left = here.leftSiblings.at(-1);
      return {
        current_task_id: here.task.id,
        parent_context: here.parent ? info(s, here.parent, include_body) : null,
        immediate_context: left ? info(s, left, include_body) : null,
      };
    });
  },
});

const listSiblings = defineTool({
  name: "list_siblings",
  title: "Tasks beside the current one",
  description:
    "List the tasks before the current task at its level (siblings, leftmost first) with their status, " +
    "to judge progress through a sequence of steps. siblings_to_right lists the tasks after it, which " +
    "exist only when focus was switched or the level was extended past it. include_body adds bodies. " +
    "Needs a current task. Read-only.",
  inputSchema: { include_body: includeBodyInput, session_id: sessionIdInput },
  outputSchema: {
    current_task_id: z.string(),
    count: z.number().int().describe("How many tasks are to the left."),
    siblings: z.array(taskInfo),
    siblings_to_right: z.array(taskInfo),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ include_body = false, session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read((s) => {
      const here = s.requireCurrentContext("list_siblings");
      return {
        current_task_id: here.task.id,
        count: here.leftSiblings.length,
        siblings: here.leftSiblings.map((t) => info(s, t, include_body)),
        siblings_to_right: here.rightSiblings.map((t) => info(s, t, include_body)),
      };
    });
  },
});

const switchFocus = defineTool({
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
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
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

const removeTask = defineTool({
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
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
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

/** The twelve task-stack tools, in the order a model meets them. */
export const taskStackTools: AnyToolDefinition[] = [
  createNewTask,
  extendCurrentTask,
  getCurrentTask,
  getBigPicture,
  completeCurrentTask,
  getCompletedTasks,
  updateCurrentTask,
  getStackOverview,
  peekContext,
  listSiblings,
  switchFocus,
  removeTask,
];
