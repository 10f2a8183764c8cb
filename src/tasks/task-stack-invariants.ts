import { checkTitle } from "./task-input.js";
import { parseTaskId } from "./task-id.js";
import type { TaskStackState } from "./task-stack-state.js";
import { locate, walk } from "./task-tree.js";

/**
 * The rules a well-formed stack keeps between its parts, as a list of broken ones (empty when
 * sound). The store refuses a file that breaks any; the property tests check every step.
 */
export function findInvariantViolations(state: TaskStackState): string[] {
  const problems: string[] = [];
  const archived = new Set<string>();
  for (const entry of state.archive) {
    if (archived.has(entry.id)) problems.push(`task ${entry.id} is archived twice`);
    archived.add(entry.id);
    if (!issuedBefore(entry.id, state.nextId)) problems.push(`archived id ${entry.id} was never issued`);
  }

  const seen = new Set<string>();
  let anyOpen = false;
  for (const { task, parent } of walk(state.tasks)) {
    if (seen.has(task.id)) problems.push(`task id ${task.id} appears twice`);
    seen.add(task.id);
    if (!issuedBefore(task.id, state.nextId)) problems.push(`task id ${task.id} was never issued`);
    if (!titleIsValid(task.title)) problems.push(`task ${task.id} has an invalid title`);
    if (task.status === "completed") {
      if (task.completedAt === null) problems.push(`completed task ${task.id} has no completion time`);
      if (!archived.has(task.id)) problems.push(`completed task ${task.id} is missing from the archive`);
    } else {
      anyOpen = true;
      if (task.completedAt !== null) problems.push(`open task ${task.id} has a completion time`);
      if (parent?.status === "completed")
        problems.push(`open task ${task.id} sits under completed ${parent.id}`);
    }
  }

  if (state.currentTaskId === null) {
    if (anyOpen) problems.push("open tasks exist but none is current");
  } else {
    const current = locate(state.tasks, state.currentTaskId);
    if (!current) problems.push(`current task ${state.currentTaskId} is not in the stack`);
    else if (current.task.status === "completed")
      problems.push(`current task ${current.task.id} is completed`);
  }
  return problems;
}

function issuedBefore(id: string, nextId: number): boolean {
  const n = parseTaskId(id);
  return n !== undefined && n < nextId;
}

function titleIsValid(title: string): boolean {
  try {
    return checkTitle(title) === title;
  } catch {
    return false;
  }
}
