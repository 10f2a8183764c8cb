import type { TaskStack, TaskStackView } from "./task-stack.js";

/** One session's stack as kept by a store: reads see the last saved state, changes are saved. */
export interface StoredTaskStack {
  readonly sessionId: string;
  /** Answers from the last state that was saved. */
  read<T>(fn: (stack: TaskStackView) => T): T;
  /**
   * Runs `fn` on a copy, saves the copy, then makes it the state readers see. Calls on one stack
   * run one at a time in call order. If `fn` throws or the save fails, nothing changes.
   */
  mutate<T>(fn: (stack: TaskStack) => T): Promise<T>;
}

/**
 * How task-stack tools reach a stack. The server implements it: it checks that the client owns
 * the session and maps an omitted session id to the client's default session.
 */
export interface TaskStackAccess {
  open(clientId: string, sessionId: string | undefined): Promise<StoredTaskStack>;
}

/** Anything that opens stored stacks by session id (TaskStackStore does). */
export interface TaskStackOpener {
  open(sessionId: string): Promise<StoredTaskStack>;
}

/** The id used when a caller names no session and no server maps it to one. */
export const defaultTaskSessionId = "default";

/**
 * Access straight to a store with no ownership check: an omitted session id means "default".
 * For tests and for a client that wants only the task stack.
 */
export function storeTaskStackAccess(store: TaskStackOpener): TaskStackAccess {
  return {
    open: (_clientId, sessionId) => store.open(sessionId ?? defaultTaskSessionId),
  };
}
