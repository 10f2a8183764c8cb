import type { Task, TaskStatus } from "./task.js";
import type { TaskStackView } from "./task-stack.js";

/** One task in the JSON big picture (snake_case: this is what tools and `--json` print). */
export interface BigPictureNode {
  id: string;
  title: string;
  status: TaskStatus;
  is_current: boolean;
  created_at: string;
  completed_at: string | null;
  sub_tasks: BigPictureNode[];
}

export const youAreHere = "<-- YOU ARE HERE";

/**
 * The whole stack as an indented outline, two spaces a level: `[id] title (status)`, with the
 * current task marked `<-- YOU ARE HERE`. Zen state gets a closing line saying so.
 */
export function renderBigPictureText(stack: TaskStackView): string {
  if (stack.tasks.length === 0) return "(no tasks: zen state)";
  const lines: string[] = [];
  const visit = (tasks: readonly Task[], indent: string): void => {
    for (const task of tasks) {
      const status = stack.statusOf(task);
      const marker = status === "current" ? ` ${youAreHere}` : "";
      lines.push(`${indent}[${task.id}] ${task.title} (${status})${marker}`);
      visit(task.subTasks, indent + "  ");
    }
  };
  visit(stack.tasks, "");
  if (stack.isZen) lines.push("(all tasks completed: zen state)");
  return lines.join("\n");
}

/** The whole stack as nested JSON: ids, titles, statuses, timestamps; bodies left out. */
export function bigPictureJson(stack: TaskStackView): BigPictureNode[] {
  const node = (task: Task): BigPictureNode => {
    const status = stack.statusOf(task);
    return {
      id: task.id,
      title: task.title,
      status,
      is_current: status === "current",
      created_at: task.createdAt,
      completed_at: task.completedAt,
      sub_tasks: task.subTasks.map(node),
    };
  };
  return stack.tasks.map(node);
}
