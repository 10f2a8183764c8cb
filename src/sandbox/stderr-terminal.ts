/**
 * The second terminal of a box's shell: commands run with their stderr on it, so stdout and
 * stderr come apart while both stay terminals (isatty is true for each, as programs expect). A
 * small holder keeps the terminal open; what anything writes to it reaches the host as data.
 */
import type { TerminalExec } from "../engine/exec-terminal.js";
import { DrydockError } from "../util/errors.js";

/**
 * The holder: a raw terminal (no newline translation, no echo), its path printed once, then a
 * read that never returns, since nothing is ever sent to the terminal. No child process: the
 * holder is the bash that started it, so `pkill sleep` and the like leave it alone.
 */
export const STDERR_HOLDER = [
  "bash",
  "--noprofile",
  "--norc",
  "-c",
  "stty raw -echo 2>/dev/null; tty; read -r _",
];

export class StderrTerminal {
  private listener: ((text: string) => void) | undefined;
  private open = true;

  private constructor(
    private readonly exec: TerminalExec,
    /** The terminal's device in the box, e.g. /dev/pts/1: where the frame sends a command's stderr. */
    readonly path: string,
  ) {
    void exec.ended.then(() => {
      this.open = false;
    });
  }

  /** Starts the holder and learns its terminal's path; fails after timeoutMs (default 20 s). */
  static async open(start: () => Promise<TerminalExec>, timeoutMs = 20_000): Promise<StderrTerminal> {
    const exec = await start();
    let seen = "";
    let terminal: StderrTerminal | undefined;
    const decoder = new TextDecoder();
    return new Promise<StderrTerminal>((resolve, reject) => {
      const fail = (why: string) => {
        exec.close();
        reject(new DrydockError("shell_start_failed", `the shell's stderr terminal did not start: ${why}`));
      };
      const timer = setTimeout(
        () => fail(`no answer in ${timeoutMs / 1000} s (${seen.slice(-200)})`),
        timeoutMs,
      );
      void exec.ended.then(() => {
        clearTimeout(timer);
        if (!terminal) fail(`the holder exited (${seen.slice(-200)})`);
      });
      exec.onData((chunk) => {
        const text = decoder.decode(chunk, { stream: true });
        if (terminal) {
          terminal.listener?.(text);
          return;
        }
        seen += text;
        const end = seen.indexOf("\n");
        if (end < 0) return;
        const path = seen.slice(0, end).replace(/\r$/, "");
        clearTimeout(timer);
        if (!/^\/dev\/pts\/\d+$/.test(path)) return fail(`it is not on a terminal (${path.slice(0, 200)})`);
        // Anything after the path predates every command: dropped, like text before a frame.
        terminal = new StderrTerminal(exec, path);
        resolve(terminal);
      });
    });
  }

  /** True until the holder's terminal closes (the holder was killed, or the box went away). */
  get alive(): boolean {
    return this.open;
  }

  get ended(): Promise<void> {
    return this.exec.ended;
  }

  /** Receives everything written to the terminal from now on (one listener: the shell's). */
  onData(listener: (text: string) => void): void {
    this.listener = listener;
  }

  close(): void {
    this.open = false;
    this.exec.close();
  }
}
