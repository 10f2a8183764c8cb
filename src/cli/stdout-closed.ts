/**
 * stdout's reader may go first (`drydock sessions log --follow | head`, `drydock run ... | head -1`):
 * each write then fails with EPIPE, which without a listener crashes the process with a stack
 * trace, before `run` applies its diff or removes its box. With this listener the process carries
 * on (what it prints is dropped), and verbs that only print stop when `stdoutClosed` aborts.
 */
import { printErr, stdoutStream } from "./terminal-out.js";

const closed = new AbortController();

/** Aborts once stdout's reader has gone. */
export const stdoutClosed: AbortSignal = closed.signal;

export function watchStdout(): void {
  stdoutStream().on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && !closed.signal.aborted) {
      printErr(`drydock: cannot write to stdout: ${error.message}\n`);
    }
    closed.abort();
  });
}
