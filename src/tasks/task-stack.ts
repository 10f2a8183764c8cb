import { LimitExceededError, NotFoundError, TaskStackError } from "../util/errors.js";
import { nextFocus } from "./next-focus.js";
import {
  defaultMaxBodyChars,
  defaultMaxStackChars,
  defaultMaxTasks,
  isOpen,
  type ArchivedTask,
  type Task,
  type TaskNode,
  type TaskStatus,
} from "./task.js";
import { formatTaskId, parseTaskId } from "./task-id.js";
import { checkBody, checkTitle } from "./task-input.js";
import { findInvariantViolations } from "./task-stack-invariants.js";
import { emptyTaskStackState, taskStackStateSchema, type TaskStackState } from "./task-stack-state.js";
import { countTasks, locate, subtreeOf, walk, type Located } from "./task-tree.js";

export interface TaskStackOptions {
  /** Clock for created_at and completed_at; tests pass a fixed one. */
  now?: () => Date;
  /** Largest body accepted, in characters; default 1,000,000. */
  maxBodyChars?: number;
  /** Most tasks visible in the stack at once; default 10,000. */
  maxTasks?: number;
  /** Most characters of titles and bodies the stack holds, archive included; default 8,000,000. */
  maxStackChars?: number;
}

/** "chronological": first completed first. "logical": last completed first (the spec's right-to-left). */
export type CompletedOrder = "chronological" | "logical";

/** The focused task and what surrounds it. */
export interface FocusContext {
  readonly task: Task;
  readonly parent: Task | undefined;
  /** 1 for a root task. */
  readonly depth: number;
  /** From the root task down to and including the focused task. */
  readonly path: readonly Task[];
  /** Tasks before the focused one in its row, leftmost first, whatever their status. */
  readonly leftSiblings: readonly Task[];
  /** Tasks after it in its row; empty unless focus was switched or the row was extended. */
  readonly rightSiblings: readonly Task[];
}

/** The questions a stack answers without changing; what a stored stack hands to readers. */
export interface TaskStackView {
  readonly tasks: readonly Task[];
  readonly currentTaskId: string | null;
  /** True when no task is open: nothing exists yet, or everything is completed. */
  readonly isZen: boolean;
  currentTask(): Task | undefined;
  currentContext(): FocusContext | undefined;
  /** Like currentContext, but throws the zen-state error naming `action`. */
  requireCurrentContext(action: string): FocusContext;
  find(id: string): Located<Task> | undefined;
  statusOf(task: Task): TaskStatus;
  completedTasks(order: CompletedOrder): readonly ArchivedTask[];
  toState(): TaskStackState;
}

/**
 * The hierarchical task stack: a tree of tasks with one focused (current) task, rules for where
 * focus moves, and an archive of completed tasks. Pure: no I/O, the clock comes in as an option.
 * A method that throws leaves the stack as it was.
 */
export class TaskStack implements TaskStackView {
  private readonly now: () => Date;
  private readonly maxBodyChars: number;
  private readonly maxTasks: number;
  private readonly maxStackChars: number;

  private constructor(
    private readonly state: TaskStackState,
    private readonly options: TaskStackOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.maxBodyChars = options.maxBodyChars ?? defaultMaxBodyChars;
    this.maxTasks = options.maxTasks ?? defaultMaxTasks;
    this.maxStackChars = options.maxStackChars ?? defaultMaxStackChars;
  }

  static empty(options: TaskStackOptions = {}): TaskStack {
    return new TaskStack(emptyTaskStackState(), options);
  }

  /** Rebuilds a stack from stored data (copied); throws TaskStackError when the data is malformed. */
  static fromState(state: unknown, options: TaskStackOptions = {}): TaskStack {
    const parsed = taskStackStateSchema.safeParse(state);
    if (!parsed.success) {
      throw new TaskStackError("task_stack_invalid", `task stack data is malformed: ${parsed.error.message}`);
    }
    const problems = findInvariantViolations(parsed.data);
    if (problems.length > 0) {
      throw new TaskStackError(
        "task_stack_invalid",
        `task stack data is inconsistent: ${problems.join("; ")}`,
      );
    }
    return new TaskStack(structuredClone(parsed.data), options);
  }

  get tasks(): readonly Task[] {
    return this.state.tasks;
  }

  get currentTaskId(): string | null {
    return this.state.currentTaskId;
  }

  get isZen(): boolean {
    return this.state.currentTaskId === null;
  }

  /** A deep copy of the stack's data, fit for JSON. */
  toState(): TaskStackState {
    return structuredClone(this.state);
  }

  clone(): TaskStack {
    return new TaskStack(this.toState(), this.options);
  }

  find(id: string): Located<Task> | undefined {
    return locate<Task>(this.state.tasks, id);
  }

  statusOf(task: Task): TaskStatus {
    return task.id === this.state.currentTaskId ? "current" : task.status;
  }

  currentTask(): Task | undefined {
    return this.currentContext()?.task;
  }

  currentContext(): FocusContext | undefined {
    const id = this.state.currentTaskId;
    const where = id === null ? undefined : this.find(id);
    if (!where) return undefined;
    return {
      task: where.task,
      parent: where.parent,
      depth: where.path.length,
      path: where.path,
      leftSiblings: where.row.slice(0, where.index),
      rightSiblings: where.row.slice(where.index + 1),
    };
  }

  requireCurrentContext(action: string): FocusContext {
    const context = this.currentContext();
    if (!context) throw this.noCurrentTask(action);
    return context;
  }

  /**
   * Adds a task under the current one (at the root in zen state) and focuses it: this is how work
   * is broken down into sub-tasks, to any depth.
   */
  createTask(title: string, body: string): Task {
    const node = this.newNode(title, body);
    const current = this.currentNode();
    (current ? current.subTasks : this.state.tasks).push(node);
    this.state.currentTaskId = node.id;
    return node;
  }

  /**
   * Appends a task at the end of the current task's row (its next sibling step) and focuses it. A
   * step never becomes a top-level task: extending a top-level task appends the step to that
   * task's own sub-tasks, as the spec's data model says (a SubTask goes under a MainTask).
   */
  extendCurrentTask(title: string, body: string): Task {
    const where = this.requireCurrentNode("extend_current_task");
    const node = this.newNode(title, body);
    (where.parent ?? where.task).subTasks.push(node);
    this.state.currentTaskId = node.id;
    return node;
  }

  /** Overwrites the current task's body; title and id stay. */
  updateCurrentTask(body: string): Task {
    const { task } = this.requireCurrentNode("update_current_task");
    this.assertRoomFor(checkBody(body, this.maxBodyChars).length - task.body.length);
    task.body = body;
    return task;
  }

  /**
   * Completes the current task, archives a copy, and moves focus by the spec's rules (see
   * nextFocus); `next` is undefined when the stack is left in zen state.
   */
  completeCurrentTask(): { completed: Task; next: Task | undefined } {
    const where = this.requireCurrentNode("complete_current_task");
    const { task } = where;
    const open = task.subTasks.filter(isOpen);
    if (open.length > 0) {
      const list = open.map((t) => `${t.id} ${JSON.stringify(t.title)}`).join(", ");
      throw new TaskStackError(
        "open_sub_tasks",
        `task ${task.id} cannot be completed while sub-tasks are open (${list}); switch_focus to one and complete it first, or drop it with remove_task`,
      );
    }
    task.status = "completed";
    task.completedAt = this.now().toISOString();
    this.state.archive.push({
      id: task.id,
      title: task.title,
      body: task.body,
      createdAt: task.createdAt,
      completedAt: task.completedAt,
    });
    const next = nextFocus(this.state.tasks, where.parent, where.row);
    this.state.currentTaskId = next?.id ?? null;
    return { completed: task, next };
  }

  /** Focuses any open task by id; the task that had focus stays pending. */
  switchFocus(id: string): { previous: Task | undefined; current: Task } {
    const target = this.requireNode(id);
    if (target.task.status === "completed") {
      throw new TaskStackError(
        "task_completed",
        `task ${id} is completed, and completion is permanent, so it cannot take focus; pick an open task from get_big_picture, or start new work with create_new_task`,
      );
    }
    const previous = this.currentNode();
    this.state.currentTaskId = target.task.id;
    return { previous, current: target.task };
  }

  /**
   * Takes a task and all its sub-tasks out of the visible stack; the archive keeps copies of the
   * completed ones. If focus was inside what was removed it moves as if that task had completed.
   */
  removeTask(id: string): { removed: readonly Task[]; current: Task | undefined } {
    const where = this.requireNode(id);
    const removed = subtreeOf<Task>(where.task);
    const row = where.parent ? where.parent.subTasks : this.state.tasks;
    row.splice(where.index, 1);
    if (removed.some((t) => t.id === this.state.currentTaskId)) {
      const next = nextFocus(this.state.tasks, where.parent, row);
      this.state.currentTaskId = next?.id ?? null;
    }
    return { removed, current: this.currentNode() };
  }

  completedTasks(order: CompletedOrder): readonly ArchivedTask[] {
    const chronological = this.state.archive.slice();
    return order === "chronological" ? chronological : chronological.reverse();
  }

  private newNode(title: string, body: string): TaskNode {
    const node: TaskNode = {
      id: formatTaskId(this.state.nextId),
      title: checkTitle(title),
      body: checkBody(body, this.maxBodyChars),
      status: "pending",
      createdAt: this.now().toISOString(),
      completedAt: null,
      subTasks: [],
    };
    if (countTasks(this.state.tasks) >= this.maxTasks) {
      throw new LimitExceededError(
        `the stack already holds ${this.maxTasks} tasks, the limit; remove finished ones with remove_task`,
      );
    }
    this.assertRoomFor(node.title.length + node.body.length);
    this.state.nextId++;
    return node;
  }

  /** Throws when `added` more characters would take the stack's text past its cap. */
  private assertRoomFor(added: number): void {
    if (added <= 0) return;
    const held = stackChars(this.state);
    if (held + added <= this.maxStackChars) return;
    throw new LimitExceededError(
      `the task stack holds ${held.toLocaleString("en-US")} characters of titles and bodies (completed tasks included); this change would add ${added.toLocaleString("en-US")} and the limit is ${this.maxStackChars.toLocaleString("en-US")}. Keep long notes in files in the workspace and bodies short, or use a new session's stack`,
    );
  }

  private currentNode(): TaskNode | undefined {
    const id = this.state.currentTaskId;
    return id === null ? undefined : locate(this.state.tasks, id)?.task;
  }

  private requireCurrentNode(action: string): Located<TaskNode> {
    const id = this.state.currentTaskId;
    const where = id === null ? undefined : locate(this.state.tasks, id);
    if (!where) throw this.noCurrentTask(action);
    return where;
  }

  private noCurrentTask(action: string): TaskStackError {
    const total = countTasks(this.state.tasks);
    const why = total === 0 ? "zen state: the stack is empty" : `zen state: all ${total} tasks are completed`;
    return new TaskStackError(
      "no_current_task",
      `${action}: no current task (${why}); create one with create_new_task`,
    );
  }

  private requireNode(id: string): Located<TaskNode> {
    const where = locate(this.state.tasks, id);
    if (where) return where;
    const n = parseTaskId(id);
    if (n !== undefined && n < this.state.nextId) {
      const archived = this.state.archive.some((t) => t.id === id);
      throw new NotFoundError(
        `task ${id} was removed with remove_task; removed tasks cannot be focused or changed${archived ? " (its completed copy is in get_completed_tasks)" : ""}. Find open tasks with get_big_picture`,
      );
    }
    throw new NotFoundError(
      `no task ${JSON.stringify(id)} in this stack; task ids look like t1, t2 — find them with get_big_picture or get_stack_overview`,
    );
  }
}

/** Characters of titles and bodies in the tree, and in archived tasks no longer in it (counted once). */
function stackChars(state: TaskStackState): number {
  let chars = 0;
  const visible = new Set<string>();
  for (const { task } of walk(state.tasks)) {
    visible.add(task.id);
    chars += task.title.length + task.body.length;
  }
  for (const task of state.archive) if (!visible.has(task.id)) chars += task.title.length + task.body.length;
  return chars;
}
