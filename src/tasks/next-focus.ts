import { isOpen } from "./task.js";
import { walk, type TreeNode } from "./task-tree.js";

/**
 * Where focus goes when the focused task leaves the open set (completed or removed), given the row
 * it sat in and that row's parent. The spec's order: the leftmost open sibling; else the parent if
 * open; else the rightmost open task anywhere; else undefined (zen).
 */
export function nextFocus<T extends TreeNode<T>>(
  roots: readonly T[],
  parent: T | undefined,
  row: readonly T[],
): T | undefined {
  const sibling = row.find(isOpen);
  if (sibling) return firstWorkableTask(sibling);
  if (parent && isOpen(parent)) return firstWorkableTask(parent);
  return rightmostOpenTask(roots);
}

/**
 * Follows the leftmost open sub-task down until a task with no open sub-tasks: focus that moves on
 * its own should land on something that can be completed next, not on a parent that cannot.
 */
export function firstWorkableTask<T extends TreeNode<T>>(task: T): T {
  let here = task;
  for (;;) {
    const child = here.subTasks.find(isOpen);
    if (!child) return here;
    here = child;
  }
}

/** The last open task in document order: the rightmost, deepest one, which has no open sub-tasks. */
export function rightmostOpenTask<T extends TreeNode<T>>(roots: readonly T[]): T | undefined {
  let last: T | undefined;
  for (const { task } of walk(roots)) if (isOpen(task)) last = task;
  return last;
}
