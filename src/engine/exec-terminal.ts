/**
 * A program run in a box on a terminal of its own, through the engine's exec API (Tty: true, a
 * hijacked stream): the box allocates the terminal, the host reads what is written to it and, when
 * asked, types into it. No docker CLI process and no host-side terminal are involved, so it costs
 * the host one socket.
 */
import type { Duplex } from "node:stream";
import { BoxGoneError, DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { short } from "./box-engine.js";
import type { Engine } from "./engine.js";

const log = logger("engine");
/** After close(): how long written input may take to reach the box before the socket is dropped. */
const CLOSE_GRACE_MS = 2_000;
const DEFAULT_COLS = 120;

export interface TerminalExecOptions {
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  /**
   * Terminal size; default 120 columns, 50 rows. Programs pad to the width they are told (pytest's
   * `====` rules and right-aligned `[100%]`), so a very wide terminal fills replies with spaces;
   * a terminal never inserts line breaks into what a program writes, so 120 cuts nothing.
   */
  cols?: number;
  rows?: number;
  /** Keep the terminal's input open, for write(); default false (nothing is ever typed). */
  input?: boolean;
}

export interface TerminalExec {
  /** Called with each chunk of what the program (or anything else) writes to the terminal. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Types into the terminal (with `input`); bytes reach the box's terminal as they are. */
  write(data: string | Buffer): void;
  /** Resolves when the terminal's stream ends: the program exited, or the box went away. */
  readonly ended: Promise<void>;
  /**
   * Once the stream has ended: the status the program exited with, as the engine recorded it
   * (128 + n for signal n); null when the engine cannot say (the box or the engine went away).
   */
  exitCode(): Promise<number | null>;
  /**
   * Closes the connection: with `input`, after what was written has been sent (a program told to
   * exit gets the words), else at once. A program that does not exit goes on until the box is removed.
   */
  close(): void;
}

/** Starts argv in the box with a terminal as its stdin, stdout and stderr. */
export async function openTerminalExec(
  engine: Engine,
  id: string,
  argv: string[],
  options: TerminalExecOptions = {},
): Promise<TerminalExec> {
  const input = options.input ?? false;
  let stream: Duplex;
  const container = engine.docker.getContainer(id);
  let exec: Awaited<ReturnType<typeof container.exec>>;
  try {
    exec = await container.exec({
      Cmd: await engine.terminalArgv(id, argv, {
        cols: options.cols ?? DEFAULT_COLS,
        rows: options.rows ?? 50,
      }),
      User: options.user,
      WorkingDir: options.workdir,
      Env: options.env ? Object.entries(options.env).map(([k, v]) => `${k}=${v}`) : undefined,
      AttachStdin: input,
      AttachStdout: true,
      AttachStderr: true,
      Tty: true,
    });
    stream = (await exec.start({ hijack: true, stdin: input, Tty: true })) as Duplex;
    engine.trackStream(id, stream);
    // A terminal of 0x0 makes some programs wrap every character; the size is best effort.
    await exec.resize({ h: options.rows ?? 50, w: options.cols ?? DEFAULT_COLS }).catch(() => undefined);
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 404 || status === 409) throw new BoxGoneError(short(id), { cause: error });
    const message = (error as { json?: { message?: string } }).json?.message ?? (error as Error).message;
    throw new DrydockError(
      "engine_error",
      `exec ${argv[0]} on a terminal in ${short(id)} failed: ${message}`,
      {
        cause: error,
      },
    );
  }
  log.debug(`${short(id)}: ${argv[0]} started on a terminal`);
  // A write after the far end closed fails asynchronously: the end is what matters, not the error.
  stream.on("error", () => undefined);
  const ended = new Promise<void>((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
  let exitCode: Promise<number | null> | undefined;
  return {
    onData: (listener) => void stream.on("data", listener),
    write: (data) => {
      if (!input) throw new DrydockError("engine_error", `${argv[0]} in ${short(id)} has no terminal input`);
      if (!stream.destroyed && stream.writable) stream.write(data);
    },
    ended,
    // The engine records the status before it closes the stream, so one look after the end is enough.
    exitCode: () =>
      (exitCode ??= ended.then(async () => {
        try {
          const state = await exec.inspect();
          return state.Running ? null : (state.ExitCode ?? null);
        } catch {
          return null;
        }
      })),
    close: () => {
      if (!input || stream.destroyed) return void stream.destroy();
      stream.end();
      setTimeout(() => stream.destroy(), CLOSE_GRACE_MS).unref();
    },
  };
}
