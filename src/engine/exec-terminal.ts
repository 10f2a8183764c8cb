/**
 * A program run in a box on a terminal of its own, through the engine's exec API (Tty: true, a
 * hijacked stream): the box allocates the terminal, the host reads what is written to it. No
 * docker CLI process and no host-side terminal are involved, so it costs the host one socket.
 */
import type { Duplex } from "node:stream";
import { BoxGoneError, DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { short, type Engine } from "./engine.js";

const log = logger("engine");

export interface TerminalExecOptions {
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  /** Terminal size; default 500 columns, 50 rows. */
  cols?: number;
  rows?: number;
}

export interface TerminalExec {
  /** Called with each chunk of what the program (or anything else) writes to the terminal. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Resolves when the terminal's stream ends: the program exited, or the box went away. */
  readonly ended: Promise<void>;
  /** Drops the connection (the program in the box goes on until the box is removed). */
  close(): void;
}

/** Starts argv in the box with a terminal as its stdin, stdout and stderr; nothing is sent to it. */
export async function openTerminalExec(
  engine: Engine,
  id: string,
  argv: string[],
  options: TerminalExecOptions = {},
): Promise<TerminalExec> {
  let stream: Duplex;
  const container = engine.docker.getContainer(id);
  try {
    const exec = await container.exec({
      Cmd: argv,
      User: options.user,
      WorkingDir: options.workdir,
      Env: options.env ? Object.entries(options.env).map(([k, v]) => `${k}=${v}`) : undefined,
      AttachStdin: false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: true,
    });
    stream = (await exec.start({ hijack: true, stdin: false, Tty: true })) as Duplex;
    // A terminal of 0x0 makes some programs wrap every character; the size is best effort.
    await exec.resize({ h: options.rows ?? 50, w: options.cols ?? 500 }).catch(() => undefined);
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
  const ended = new Promise<void>((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
  return {
    onData: (listener) => void stream.on("data", listener),
    ended,
    close: () => stream.destroy(),
  };
}
