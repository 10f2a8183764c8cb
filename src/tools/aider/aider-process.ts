/**
 * One aider process in the box: started with its pid recorded, its output delivered a line at a
 * time, and stopped (its whole process session, test and lint commands included) when the caller
 * cancels or the time limit passes. Stopping the exec stream alone would leave aider running.
 */
import type { Box } from "../../sandbox/box.js";
import { LineSplitter } from "./line-splitter.js";
import { AIDER_RUN_DIR } from "./workspace-snapshot.js";

export interface AiderProcessOptions {
  /** Starts with `aider`; see buildAiderArgv. */
  argv: string[];
  env: Record<string, string>;
  /** Names the pid file; unique per run. */
  runId: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Each line of aider's output (stdout and stderr), as it comes. */
  onLine?: (line: string) => void;
  /** Output kept for the result; older lines are dropped past it. Default 1_000_000 characters. */
  maxOutputChars?: number;
}

export interface AiderProcessResult {
  /** Undefined when aider was stopped. */
  exitCode: number | undefined;
  output: string;
  stopped?: "cancelled" | "timeout";
  durationMs: number;
}

// Each exec is its own process session in the box, so the session id is aider's pid.
const START = 'echo "$$" > "$1"; shift; exec "$@"';
const STOP = `
pid=$(cat "$1" 2>/dev/null) || exit 0
[ -n "$pid" ] || exit 0
for sig in TERM KILL; do
  pkill -"$sig" -s "$pid" 2>/dev/null || exit 0
  for _ in $(seq 30); do pgrep -s "$pid" >/dev/null || exit 0; sleep 0.1; done
done
`;

export async function runAiderProcess(box: Box, options: AiderProcessOptions): Promise<AiderProcessResult> {
  const started = performance.now();
  const pidFile = `${AIDER_RUN_DIR}/${options.runId}.pid`;
  const maxChars = options.maxOutputChars ?? 1_000_000;
  const kept: string[] = [];
  let keptChars = 0;
  const deliver = (lines: string[]) => {
    for (const line of lines) {
      kept.push(line);
      keptChars += line.length + 1;
      while (keptChars > maxChars && kept.length > 1) keptChars -= (kept.shift() ?? "").length + 1;
      options.onLine?.(line);
    }
  };
  const out = new LineSplitter();
  const err = new LineSplitter();

  const stop = new AbortController();
  let stopped: AiderProcessResult["stopped"];
  const onAbort = () => {
    stopped ??= "cancelled";
    stop.abort();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    stopped ??= "timeout";
    stop.abort();
  }, options.timeoutMs);

  let exitCode: number | undefined;
  try {
    const result = await box.exec(["bash", "-c", START, "drydock-aider", pidFile, ...options.argv], {
      env: options.env,
      // The timer above stops aider; this only ends an exec whose stream never closes.
      timeoutMs: options.timeoutMs + 60_000,
      signal: stop.signal,
      maxOutputBytes: 1024 * 1024,
      onStdout: (chunk) => deliver(out.push(chunk)),
      onStderr: (chunk) => deliver(err.push(chunk)),
    });
    exitCode = result.exitCode;
  } catch (error) {
    if (stopped === undefined) {
      await stopAider(box, pidFile);
      throw error;
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (stopped !== undefined) {
    exitCode = undefined;
    await stopAider(box, pidFile);
  }
  deliver([...out.flush(), ...err.flush()]);
  return {
    exitCode,
    output: kept.join("\n"),
    ...(stopped ? { stopped } : {}),
    durationMs: Math.round(performance.now() - started),
  };
}

/** Signals aider's process session TERM, then KILL, and waits until it is gone. */
async function stopAider(box: Box, pidFile: string): Promise<void> {
  await box.sh(STOP, [pidFile], { timeoutMs: 30_000 }).catch(() => undefined);
}
