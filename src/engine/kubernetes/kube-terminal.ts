/**
 * A program on a terminal of its own in a box's Pod, through pods/exec with `tty=true`: the
 * Kubernetes side of exec-terminal.ts, with the same TerminalExec. The terminal's output comes on
 * the stdout channel, typed input goes on stdin, its size on the resize channel, and the exit
 * status on the status channel before the socket closes.
 */
import { DrydockError } from "../../util/errors.js";
import type { TerminalExec, TerminalExecOptions } from "../exec-terminal.js";
import { CHANNEL, closeStdinFrame, frame, resizeFrame, withWorkdirAndEnv } from "./kube-channel.js";
import { NOT_STARTED_EXIT_CODE } from "./kube-exec.js";
import { openExecSocket, podGone, type PodTarget } from "./kube-socket.js";

/** After close(): how long written input may take to reach the box before the socket is dropped. */
const CLOSE_GRACE_MS = 2_000;
const DEFAULT_COLS = 120;
const DEFAULT_ROWS = 50;
/** ws's readyState of an open socket. */
const OPEN = 1;

/**
 * Starts argv in the target's container with a terminal as its stdin, stdout and stderr. argv is
 * run as given: under gVisor pass it through terminalArgv (runtime-terminal.ts) first.
 */
export async function kubeTerminal(
  target: PodTarget,
  argv: string[],
  options: TerminalExecOptions = {},
): Promise<TerminalExec> {
  const input = options.input ?? false;
  const listeners: ((chunk: Buffer) => void)[] = [];
  // What arrives before the first listener is kept for it, as a paused stream would.
  let early: Buffer[] | undefined = [];
  let exitStatus: number | null = null;
  const streams = { stdin: input, tty: true };
  const { socket, closed } = await openExecSocket(
    target,
    withWorkdirAndEnv(argv, options),
    streams,
    (parsed) => {
      if (parsed.kind === "stdout" || parsed.kind === "stderr") {
        const chunk = Buffer.from(parsed.data);
        if (early) early.push(chunk);
        else for (const listener of listeners) listener(chunk);
      } else if (parsed.kind === "status") {
        const status = parsed.status;
        if (status.kind === "exited") exitStatus = status.exitCode;
        else if (status.kind === "not-started") exitStatus = NOT_STARTED_EXIT_CODE;
      }
    },
  );
  // A terminal of 0x0 makes some programs wrap every character: the size goes first.
  socket.send(resizeFrame(options.cols ?? DEFAULT_COLS, options.rows ?? DEFAULT_ROWS));
  // A socket that fails ends the terminal like one that closes: the end is what matters.
  const ended = closed.then(() => undefined);
  let exitCode: Promise<number | null> | undefined;
  let closing = false;

  return {
    onData: (listener) => {
      listeners.push(listener);
      if (early) {
        const kept = early;
        early = undefined;
        for (const chunk of kept) listener(chunk);
      }
    },
    write: (data) => {
      if (!input)
        throw new DrydockError("engine_error", `${argv[0]} in pod ${target.pod} has no terminal input`);
      if (socket.readyState === OPEN && !closing) socket.send(frame(CHANNEL.stdin, data));
    },
    ended,
    // The status comes before the socket closes; a killed program of a deleted pod has none to tell.
    exitCode: () =>
      (exitCode ??= ended.then(async () => {
        if (exitStatus === null || exitStatus <= 128) return exitStatus;
        return (await podGone(target)) ? null : exitStatus;
      })),
    close: () => {
      if (!input || socket.readyState !== OPEN) return void socket.terminate();
      closing = true;
      socket.send(closeStdinFrame());
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    },
  };
}
