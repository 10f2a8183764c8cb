/** Stored status; "current" is derived from the stack's focus, never stored. */
export type StoredTaskStatus = "pending" | "completed";

/** Status as callers see it: the focused task reads "current". */
export type TaskStatus = "current" | StoredTaskStatus;

/**
 * One task. Every task may hold sub-tasks: the spec's MainTask/SubTask split is bookkeeping the
 * agent never sees, and a uniform tree is what lets "create a subtask" nest to any depth.
 */
export interface Task {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly status: StoredTaskStatus;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601; null while the task is open. */
  readonly completedAt: string | null;
  readonly subTasks: readonly Task[];
}

/** The mutable shape the stack keeps internally; handed out only as `Task`. */
export interface TaskNode {
  id: string;
  title: string;
  body: string;
  status: StoredTaskStatus;
  createdAt: string;
  completedAt: string | null;
  subTasks: TaskNode[];
}

/** A copy of a task taken when it was completed; the archive keeps it even after remove_task. */
export interface ArchivedTask {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly createdAt: string;
  readonly completedAt: string;
}

/** Titles are one line of at most this many characters (Unicode code points). */
export const maxTitleChars = 256;

/** Default cap on a body, in characters; the spec says "unlimited", a host process cannot be. */
export const defaultMaxBodyChars = 1_000_000;

/** Default cap on tasks visible in one stack (the archive is not counted). */
export const defaultMaxTasks = 10_000;

/**
 * Default cap on the text (titles and bodies, the archive's included) one stack holds. Each change
 * rewrites the whole stack on the host: without a cap, a client repeating big bodies would make
 * every save slower and could exhaust the server's memory.
 */
export const defaultMaxStackChars = 8_000_000;

export function isOpen(task: Pick<Task, "status">): boolean {
  return task.status === "pending";
}
