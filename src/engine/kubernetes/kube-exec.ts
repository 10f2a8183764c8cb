/**
 * One program run in a box's Pod through pods/exec, with the Docker exec's contract (exec.ts):
 * stdin then closed, a time limit, output capped per stream. Hand-written over `ws` rather than
 * the client library's `Exec`, whose stdin handler sends each chunk as it is read with no regard
 * for the socket's backlog (a large tar would sit whole in memory) and which gives no way to bound
 * the output it writes on. Here stdin is paused while the socket's backlog is high, and what is
 * past the cap is counted and dropped as it arrives.
 *
 * Where it differs from Docker's exec, and why:
 * - `user` is not honoured: pods/exec has no user, a box's Pod runs as its securityContext's.
 * - `workdir` and `env` go through `/usr/bin/env --chdir` (pods/exec has neither), so a program
 *   that cannot be started then exits as env says: 127 not found, 126 not executable, its words on
 *   stderr. Without them the runtime's refusal comes back as Docker's: exit 126, its words on stdout.
 */
import { Readable } from "node:stream";
import type WebSocket from "ws";
import { BoxGoneError, CommandTimeoutError, DrydockError } from "../../util/errors.js";
import { CappedBuffer, writeOrPause, type ExecOptions, type ExecResult } from "../exec.js";
import { CHANNEL, closeStdinFrame, frame, withWorkdirAndEnv, type ExecStatus } from "./kube-channel.js";
import { openExecSocket, podGone, socketError, type PodTarget } from "./kube-socket.js";

export type { PodTarget } from "./kube-socket.js";

/** Stdin is paused while more than this is waiting to be sent. */
const MAX_BACKLOG_BYTES = 1024 * 1024;
/** The largest stdin frame: big chunks of a Buffer are cut to this. */
const MAX_FRAME_BYTES = 64 * 1024;
/** ws's readyState of an open socket. */
const CHANNEL_OPEN = 1;
/** Docker's exit status for a program its runtime could not start. */
export const NOT_STARTED_EXIT_CODE = 126;

/** Runs argv in the target's container and collects its output; see ExecOptions for the limits. */
export async function kubeExec(
  target: PodTarget,
  argv: string[],
  options: ExecOptions = {},
): Promise<ExecResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const cap = options.maxOutputBytes ?? 64 * 1024 * 1024;
  if (options.signal?.aborted) throw new Error("cancelled");
  const hasStdin = options.stdin !== undefined;
  const stdout = new CappedBuffer(cap);
  const stderr = new CappedBuffer(cap);
  let status: ExecStatus | undefined;
  let input: Readable | undefined;
  const streams = { stdin: hasStdin, tty: false };
  // The socket is known once open; until then nothing arrives to pause for.
  const opened: { socket?: WebSocket } = {};
  const paused = { pause: () => opened.socket?.pause(), resume: () => opened.socket?.resume() };
  const { socket, closed } = await openExecSocket(
    target,
    withWorkdirAndEnv(argv, options),
    streams,
    (parsed) => {
      if (parsed.kind === "stdout" && options.stdout) {
        writeOrPause(options.stdout, parsed.data, paused);
      } else if (parsed.kind === "stdout") {
        options.onStdout?.(parsed.data);
        stdout.push(parsed.data);
      } else if (parsed.kind === "stderr") {
        options.onStderr?.(parsed.data);
        stderr.push(parsed.data);
      } else if (parsed.kind === "status") {
        status = parsed.status;
      }
    },
  );
  opened.socket = socket;

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      void closed.then(async (error) => (error ? reject(await socketError(target, argv, error)) : resolve()));
      if (options.stdin !== undefined) {
        input = options.stdin instanceof Readable ? options.stdin : chunked(Buffer.from(options.stdin));
        input.on("error", (error) => {
          socket.terminate();
          reject(
            new DrydockError(
              "engine_error",
              `stdin of ${argv[0]} in pod ${target.pod} failed: ${error.message}`,
            ),
          );
        });
        pumpStdin(socket, input);
      }
      timer = setTimeout(() => {
        socket.terminate();
        reject(new CommandTimeoutError(timeoutMs, stdout.value().toString("utf8")));
      }, timeoutMs);
      if (options.signal) {
        onAbort = () => {
          socket.terminate();
          reject(new Error("cancelled"));
        };
        options.signal.addEventListener("abort", onAbort, { once: true });
      }
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    // A source not read to its end stops here rather than waiting on a closed socket.
    input?.pause();
  }
  return finish(target, argv, status, stdout, stderr);
}

/** The result from the status, or drydock's error for a pod that went away or a bad status. */
async function finish(
  target: PodTarget,
  argv: readonly string[],
  status: ExecStatus | undefined,
  stdout: CappedBuffer,
  stderr: CappedBuffer,
): Promise<ExecResult> {
  const result = (exitCode: number): ExecResult => ({
    exitCode,
    stdout: stdout.value(),
    stderr: stderr.value(),
    truncated: stdout.truncated || stderr.truncated,
  });
  if (status === undefined) {
    // No status: the socket ended without the program ending, as when the pod went.
    if (await podGone(target)) throw new BoxGoneError(target.pod);
    return result(-1);
  }
  switch (status.kind) {
    case "exited":
      // A deleted pod's programs are killed: 137 from a box that is no more is its going, not theirs.
      if (status.exitCode > 128 && (await podGone(target))) throw new BoxGoneError(target.pod);
      return result(status.exitCode);
    case "not-started":
      stdout.push(Buffer.from(`${status.message}\r\n`));
      return result(NOT_STARTED_EXIT_CODE);
    case "gone":
      throw new BoxGoneError(target.pod, { cause: new Error(status.message) });
    case "error":
      throw new DrydockError(
        "engine_error",
        `exec ${argv[0]} in pod ${target.pod} failed: ${status.message}`,
      );
  }
}

/** Bytes as a stream of frame-sized chunks. */
function chunked(bytes: Buffer): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += MAX_FRAME_BYTES)
        yield bytes.subarray(at, at + MAX_FRAME_BYTES);
    })(),
  );
}

/**
 * Sends input on the stdin channel, pausing it while the socket's backlog is over the bound and
 * resuming as sends complete; at its end, closes stdin (the program's output still comes back).
 */
function pumpStdin(socket: WebSocket, input: Readable): void {
  const drained = (): void => {
    if (socket.readyState !== CHANNEL_OPEN || !input.isPaused()) return;
    if (socket.bufferedAmount < MAX_BACKLOG_BYTES / 2) input.resume();
  };
  input.on("data", (chunk: Buffer | string) => {
    if (socket.readyState !== CHANNEL_OPEN) return void input.pause();
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let at = 0; at < bytes.length; at += MAX_FRAME_BYTES) {
      socket.send(frame(CHANNEL.stdin, bytes.subarray(at, at + MAX_FRAME_BYTES)), drained);
    }
    if (socket.bufferedAmount > MAX_BACKLOG_BYTES) input.pause();
  });
  input.on("end", () => {
    if (socket.readyState === CHANNEL_OPEN) socket.send(closeStdinFrame());
  });
}
