/**
 * The progress channel of the tool call under way, for work deep below the tool that may take
 * long (an environment build when a session starts): the server's one tool wrapper opens the
 * scope, and anything below reports without each tool passing a callback down.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<(message: string) => void>();

/** Runs `fn` with `report` as the progress channel of everything it calls. */
export function withProgress<T>(report: (message: string) => void, fn: () => T): T {
  return scope.run(report, fn);
}

/** Reports to the caller of the tool call under way; a no-op outside one. */
export function reportProgress(message: string): void {
  scope.getStore()?.(message);
}
