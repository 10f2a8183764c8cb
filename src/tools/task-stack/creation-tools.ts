import { z } from "zod";
import { maxTitleChars, type Task } from "../../tasks/task.js";
import type { TaskStack, TaskStackView } from "../../tasks/task-stack.js";
import { defineTool } from "../tool.js";
import { mutating, openStack, quoted, sessionIdInput } from "./shared.js";

const titleInput = z.string().describe(`Short one-line description, at most ${maxTitleChars} characters.`);
const bodyInput = z
  .string()
  .describe("Full context: goal, constraints, notes, intermediate results (up to 1,000,000 characters).");

const createdOutput = {
  task_id: z.string(),
  title: z.string(),
  message: z.string(),
  is_current: z.boolean(),
  parent_task_id: z.string().nullable().describe("The task it sits under; null at the top level."),
  depth: z.number().int().describe("1 for a top-level task."),
};

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

/** A tool that adds a task from a title and a body and makes it current; `create` says how. */
function creationTool(spec: {
  name: string;
  title: string;
  /** What the tool does; the title/body note and `returns` follow it. */
  description: string;
  returns: string;
  /** Adds the task and describes what it did, for the message. */
  create(stack: TaskStack, title: string, body: string): { task: Task; how: string };
}) {
  return defineTool({
    name: spec.name,
    title: spec.title,
    description:
      spec.description +
      `title: one line, at most ${maxTitleChars} characters; body: the full context. ` +
      spec.returns,
    inputSchema: { title: titleInput, body: bodyInput, session_id: sessionIdInput },
    outputSchema: createdOutput,
    annotations: mutating({ destructive: false, idempotent: false }),
    async run({ title, body, session_id }, ctx) {
      const stack = await openStack(ctx, session_id);
      return stack.mutate((s) => {
        const { task, how } = spec.create(s, title, body);
        return created(s, task, how);
      });
    },
  });
}

export const createNewTask = creationTool({
  name: "create_new_task",
  title: "Create a task",
  description:
    "Start a new task and make it the current one. With a current task, the new task nests under it as a " +
    "sub-task: use it to break the current problem down. In zen state (no open task) it starts a new " +
    "top-level task. To add the next step at the same level instead, use extend_current_task. ",
  returns: "Returns task_id, is_current (always true), parent_task_id (null at the top level) and depth.",
  create(s, title, body) {
    const parent = s.currentTask();
    const task = s.createTask(title, body);
    return {
      task,
      how: `created ${quoted(task)}${parent ? ` under ${quoted(parent)}` : " at the top level"}`,
    };
  },
});

export const extendCurrentTask = creationTool({
  name: "extend_current_task",
  title: "Add the next step",
  description:
    "Add a sequential step at the same level as the current task (appended at the end of its row of " +
    "sibling tasks) and make it current; a step of a top-level task goes at the end of that task's " +
    "sub-tasks, since steps never stand at the top level. When it is completed, focus returns to the " +
    "earliest open task before it. Needs a current task: in zen state use create_new_task. ",
  returns: "Returns task_id, is_current (always true), parent_task_id and depth.",
  create(s, title, body) {
    const { task: previous, parent } = s.requireCurrentContext("extend_current_task");
    const task = s.extendCurrentTask(title, body);
    const how = parent
      ? `added ${quoted(task)} at the level of ${quoted(previous)}`
      : `added ${quoted(task)} as the last step under the top-level task ${quoted(previous)}`;
    return { task, how };
  },
});
