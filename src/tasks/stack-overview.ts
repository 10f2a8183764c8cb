import type { TaskStatus } from "./task.js";
import type { TaskStackView } from "./task-stack.js";
import { walk } from "./task-tree.js";

/** One row of the flat overview: enough to navigate by id without walking a tree. */
export interface OverviewEntry {
  id: string;
  title: string;
  status: TaskStatus;
  is_current: boolean;
  /** Null for a root task. */
  parent_id: string | null;
  /** 1 for a root task. */
  depth: number;
  /** 0-based place in its row of siblings. */
  position: number;
  sub_task_ids: string[];
  created_at: string;
  completed_at: string | null;
}

export interface StackOverview {
  zen: boolean;
  current_task_id: string | null;
  counts: { total: number; open: number; completed: number; archived: number };
  /** Every visible task in document order: a parent before its sub-tasks, left before right. */
  tasks: OverviewEntry[];
}

/** The stack as flat, structured data: counts plus one entry per visible task. */
export function stackOverview(stack: TaskStackView): StackOverview {
  const tasks: OverviewEntry[] = [];
  for (const { task, parent, depth } of walk(stack.tasks)) {
    const status = stack.statusOf(task);
    tasks.push({
      id: task.id,
      title: task.title,
      status,
      is_current: status === "current",
      parent_id: parent?.id ?? null,
      depth,
      position: (parent?.subTasks ?? stack.tasks).indexOf(task),
      sub_task_ids: task.subTasks.map((t) => t.id),
      created_at: task.createdAt,
      completed_at: task.completedAt,
    });
  }
  const completed = tasks.filter((t) => t.status === "completed").length;
  return {
    zen: stack.isZen,
    current_task_id: stack.currentTaskId,
    counts: {
      total: tasks.length,
      open: tasks.length - completed,
      completed,
      archived: stack.completedTasks("chronological").length,
    },
    tasks,
  };
}
