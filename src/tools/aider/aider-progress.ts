/**
 * Progress for a long aider run: each output line as a notification, and a heartbeat when aider is
 * quiet (a model thinking), because clients that reset their time limit on progress need to hear
 * something before about 60 s pass.
 */
export interface AiderProgress {
  onLine(line: string): void;
  stop(): void;
}

export function aiderProgress(
  report: (message: string) => void,
  options: { heartbeatMs?: number; maxLines?: number; now?: () => number } = {},
): AiderProgress {
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const maxLines = options.maxLines ?? 5000;
  const now = options.now ?? Date.now;
  const started = now();
  let last = started;
  let lines = 0;
  report("starting aider in the box");
  const timer = setInterval(
    () => {
      if (now() - last < heartbeatMs) return;
      last = now();
      report(`aider is still working (${Math.round((last - started) / 1000)} s)`);
    },
    Math.max(250, Math.floor(heartbeatMs / 4)),
  );
  timer.unref();
  return {
    onLine(line) {
      if (line.trim() === "") return;
      last = now();
      lines += 1;
      if (lines <= maxLines) report(line.length > 500 ? `${line.slice(0, 500)}…` : line);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
