import { z } from "zod";
import type { ArchivedTask, TaskNode } from "./task.js";

/** Everything a stack is, as plain JSON-safe data: what the store writes and reads back. */
export interface TaskStackState {
  version: 1;
  /** The number in the next task id ("t<n>"); ids are never reused, even after remove_task. */
  nextId: number;
  /** Null exactly when no open task is left (zen). */
  currentTaskId: string | null;
  tasks: TaskNode[];
  /** Completed tasks in the order they were completed; it only grows. */
  archive: ArchivedTask[];
}

export function emptyTaskStackState(): TaskStackState {
  return { version: 1, nextId: 1, currentTaskId: null, tasks: [], archive: [] };
}

const timestamp = z.iso.datetime();

const taskNodeSchema: z.ZodType<TaskNode> = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  status: z.enum(["pending", "completed"]),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
  get subTasks() {
    return z.array(taskNodeSchema);
  },
});

const archivedTaskSchema = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  createdAt: timestamp,
  completedAt: timestamp,
});

/** The shape of a stored state; the rules between its parts are checked by findInvariantViolations. */
export const taskStackStateSchema: z.ZodType<TaskStackState> = z.object({
  version: z.literal(1),
  nextId: z.number().int().positive(),
  currentTaskId: z.string().nullable(),
  tasks: z.array(taskNodeSchema),
  archive: z.array(archivedTaskSchema),
});
