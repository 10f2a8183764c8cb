import { z } from "zod";
import type { Task } from "../../tasks/task.js";
import type { TaskStackAccess } from "../../tasks/task-stack-access.js";
import type { TaskStackView } from "../../tasks/task-stack.js";
import type { ToolContext, ToolDefinition } from "../tool.js";

declare module "../tool.js" {
  interface ToolServices {
    taskStacks: TaskStackAccess;
  }
}

// ---- schemas shared by the tools -------------------------------------------------------------

export const sessionIdInput = z
  .string()
  .optional()
  .describe(
    "Session whose task stack to use; omit for your default session. Each session has its own stack.",
  );
export const includeBodyInput = z
  .boolean()
  .optional()
  .describe("Also return each task's body (default false).");

export const status = z.enum(["current", "pending", "completed"]);
export const taskRef = z.object({ id: z.string(), title: z.string(), status });
export const taskInfo = z.object({
  id: z.string(),
  title: z.string(),
  status,
  created_at: z.string(),
  completed_at: z.string().nullable(),
  body: z.string().optional(),
});

// ---- annotations -----------------------------------------------------------------------------

type Annotations = NonNullable<ToolDefinition["annotations"]>;

/** Annotations of a tool that only reads the stack. */
export const readOnly: Annotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };

/** Annotations of a tool that changes the stack. */
export function mutating(hints: { destructive: boolean; idempotent: boolean }): Annotations {
  return {
    readOnlyHint: false,
    destructiveHint: hints.destructive,
    idempotentHint: hints.idempotent,
    openWorldHint: false,
  };
}

// ---- helpers ---------------------------------------------------------------------------------

/** The calling client's stack for `sessionId`, or its default session's. */
export function openStack(ctx: ToolContext, sessionId: string | undefined) {
  return ctx.services.taskStacks.open(ctx.clientId, sessionId);
}

/** A task as id, title and status. */
export function ref(stack: TaskStackView, task: Task): z.infer<typeof taskRef> {
  return { id: task.id, title: task.title, status: stack.statusOf(task) };
}

/** A task with its timestamps, and its body when asked for. */
export function info(stack: TaskStackView, task: Task, includeBody: boolean): z.infer<typeof taskInfo> {
  return {
    id: task.id,
    title: task.title,
    status: stack.statusOf(task),
    created_at: task.createdAt,
    completed_at: task.completedAt,
    ...(includeBody ? { body: task.body } : {}),
  };
}

/** `t3 "title"`, for messages. */
export function quoted(task: Task): string {
  return `${task.id} ${JSON.stringify(task.title)}`;
}
