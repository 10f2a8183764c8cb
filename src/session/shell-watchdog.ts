/**
 * A bound on every shell call, above the shell: whatever the shell does (a frame that never
 * completes, an exec stream that stalls, a stop that never returns), a call answers by its time
 * limit plus a grace, or by a cancel plus the same grace. The shell's own stop path answers well
 * within that; the watchdog is for when it cannot.
 */

/** Beyond a command's limit (and the SIGINT grace its stop gives it): how long the shell may take to answer. */
export const DEFAULT_WATCHDOG_GRACE_MS = 5_000;

/** How long a new shell may take to start before the call that waits for it gives up. */
export const SHELL_START_LIMIT_MS = 30_000;

export type Watched<T> =
  { kind: "answer"; value: T } | { kind: "silent"; waitedMs: number; cancelled: boolean };

/**
 * Waits for `work` until `limitMs + graceMs` have passed, or `graceMs` after `signal` aborts,
 * whichever comes first; says which. `work` is left running when the watchdog gives up: its
 * owner must end it (what it settles with after that is dropped).
 */
export function watch<T>(
  work: Promise<T>,
  options: { limitMs: number; graceMs: number; signal?: AbortSignal },
): Promise<Watched<T>> {
  const started = Date.now();
  return new Promise<Watched<T>>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let cancelled = false;
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const giveUp = () => finish(() => resolve({ kind: "silent", waitedMs: Date.now() - started, cancelled }));
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(giveUp, ms);
    };
    function onAbort() {
      cancelled = true;
      // A cancel brings the deadline closer, never later.
      const left = started + options.limitMs + options.graceMs - Date.now();
      arm(Math.min(left, options.graceMs));
    }
    arm(options.limitMs + options.graceMs);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => finish(() => resolve({ kind: "answer", value })),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
