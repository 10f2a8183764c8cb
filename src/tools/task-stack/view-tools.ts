import { z } from "zod";
import type { BigPictureNode } from "../../tasks/render-big-picture.js";
import { bigPictureJson, renderBigPictureText } from "../../tasks/render-big-picture.js";
import { stackOverview } from "../../tasks/stack-overview.js";
import { textFirst } from "../reply-text.js";
import { defineTool } from "../tool.js";
import {
  includeBodyInput,
  info,
  openStack,
  quoted,
  readOnly,
  ref,
  sessionIdInput,
  status,
  taskInfo,
  taskRef,
} from "./shared.js";

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

export const getCurrentTask = defineTool({
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
  annotations: readOnly,
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

export const getBigPicture = defineTool({
  name: "get_big_picture",
  replyText: textFirst("text"),
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
  annotations: readOnly,
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

export const getCompletedTasks = defineTool({
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
  annotations: readOnly,
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

export const getStackOverview = defineTool({
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
  annotations: readOnly,
  async run({ session_id }, ctx) {
    const stack = await openStack(ctx, session_id);
    return stack.read(stackOverview);
  },
});

export const peekContext = defineTool({
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
  annotations: readOnly,
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

export const listSiblings = defineTool({
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
  annotations: readOnly,
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
