import type { StoredTaskStatus } from "./task.js";

/** Pure walks over a task tree; generic so they serve both the read-only and the internal shape. */
export interface TreeNode<T> {
  readonly id: string;
  readonly status: StoredTaskStatus;
  readonly subTasks: readonly T[];
}

/** Where a task sits: its parent (undefined at root), its row of siblings, and the path to it. */
export interface Located<T> {
  readonly task: T;
  readonly parent: T | undefined;
  readonly row: readonly T[];
  readonly index: number;
  /** From the root task down to and including the task itself. */
  readonly path: readonly T[];
}

export interface Visit<T> {
  readonly task: T;
  readonly parent: T | undefined;
  /** 1 for a root task. */
  readonly depth: number;
}

/** Every task in document order: a parent before its sub-tasks, left before right. */
export function* walk<T extends TreeNode<T>>(
  roots: readonly T[],
  parent?: T,
  depth = 1,
): Generator<Visit<T>> {
  for (const task of roots) {
    yield { task, parent, depth };
    yield* walk(task.subTasks, task, depth + 1);
  }
}

export function locate<T extends TreeNode<T>>(roots: readonly T[], id: string): Located<T> | undefined {
  const search = (row: readonly T[], path: readonly T[]): Located<T> | undefined => {
    for (const [index, task] of row.entries()) {
      const here = [...path, task];
      if (task.id === id) return { task, parent: path.at(-1), row, index, path: here };
      const found = search(task.subTasks, here);
      if (found) return found;
    }
    return undefined;
  };
  return search(roots, []);
}

export function countTasks<T extends TreeNode<T>>(roots: readonly T[]): number {
  let count = 0;
  for (const _visit of walk(roots)) count++;
  return count;
}

/** The task and all its descendants, the task first. */
export function subtreeOf<T extends TreeNode<T>>(task: T): T[] {
  return [task, ...Array.from(walk(task.subTasks), (visit) => visit.task)];
}
