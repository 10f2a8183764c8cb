import { TaskStack, type TaskStackOptions } from "../../../src/tasks/task-stack.js";

/** A clock that ticks one second per call from 2026-01-01, so timestamps are predictable. */
export function tickingClock(start = Date.UTC(2026, 0, 1)): () => Date {
  let ms = start;
  return () => {
    const now = new Date(ms);
    ms += 1000;
    return now;
  };
}

export function newStack(options: TaskStackOptions = {}): TaskStack {
  return TaskStack.empty({ now: tickingClock(), ...options });
}
