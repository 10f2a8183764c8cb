/**
 * A persistent bash in a box, driven through a real terminal: node-pty runs `docker exec -it`.
 * Commands are framed with per-command nonces so their end and exit code are known exactly;
 * each command's stdin is /dev/null so a program waiting for input cannot swallow the next
 * command. cwd and environment persist between commands. A command past its limit is
 * interrupted (SIGINT, then SIGKILL of everything it started); if the shell still does not come
 * back, or exits, a new shell is started and the result says so.
 */
import { randomBytes } from "node:crypto";
import * as pty from "node-pty";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { FrameScanner, RS, startMarker } from "./frame-scanner.js";
import { OutputCapture } from "./output-capture.js";

const log = logger("shell");

export interface ShellOptions {
  /** The docker CLI (or a compatible one) that runs `exec -it`. */
  dockerPath: string;
  containerId: string;
  user: string;
  workdir: string;
  env: Record<string, string>;
  /**
   * Signals every process the current command started (everything in the shell's session but
   * the shell). The terminal is raw, so no typed byte can raise a signal: interrupts go this way.
   */
  signalCommandProcesses: (shellPid: number, signal: "INT" | "KILL") => Promise<void>;
  startTimeoutMs?: number;
}

export interface RunOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (text: string) => void;
}

export interface ShellResult {
  output: string;
  /** null when the command did not finish (timed out and killed, or the shell died). */
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  /** True when this call ended with a new shell: cwd and environment were reset. */
  restarted: boolean;
  /** What happened, for a caller or a model: set when the result is not a plain finish. */
  note?: string;
}

interface Pending {
  scanner: FrameScanner;
  capture: OutputCapture;
  onOutput?: (text: string) => void;
  done: (exitCode: number | null, why?: "exit") => void;
}

const GRACE_MS = 2_000;

export class PtyShell {
  private term: pty.IPty | undefined;
  private shellPid = 0;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  private restarts = 0;

  private constructor(private readonly options: ShellOptions) {}

  static async start(options: ShellOptions): Promise<PtyShell> {
    const shell = new PtyShell(options);
    await shell.spawn();
    return shell;
  }

  get pid(): number {
    return this.shellPid;
  }

  get restartCount(): number {
    return this.restarts;
  }

  /** Runs one command; commands on one shell run one at a time, in call order. */
  run(command: string, options: RunOptions): Promise<ShellResult> {
    const next = this.queue.then(() => this.runNow(command, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Replaces the shell with a fresh one (cwd and environment reset). */
  restart(): Promise<void> {
    const next = this.queue.then(() => this.respawn("restart requested"));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.kill();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  private async runNow(command: string, options: RunOptions): Promise<ShellResult> {
    if (this.disposed) throw new DrydockError("shell_closed", "the shell of this session is closed");
    let restarted = false;
    if (!this.term) {
      await this.respawn("the previous shell had exited");
      restarted = true;
    }
    const nonce = randomBytes(8).toString("hex");
    const capture = new OutputCapture(options.maxOutputBytes);
    let timedOut = false;
    let note: string | undefined;

    const finished = new Promise<{ exitCode: number | null; exited: boolean }>((resolve) => {
      this.pending = {
        scanner: new FrameScanner(nonce),
        capture,
        onOutput: options.onOutput,
        done: (exitCode, why) => resolve({ exitCode, exited: why === "exit" }),
      };
    });
    this.term!.write(framed(command, nonce));

    const waitFor = (ms: number) =>
      Promise.race([finished, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);

    let outcome = await new Promise<{ exitCode: number | null; exited: boolean } | "timeout" | "cancel">(
      (resolve) => {
        const timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
        const onAbort = () => resolve("cancel");
        options.signal?.addEventListener("abort", onAbort, { once: true });
        if (options.signal?.aborted) onAbort();
        void finished.then((r) => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", onAbort);
          resolve(r);
        });
      },
    );

    if (outcome === "timeout" || outcome === "cancel") {
      timedOut = outcome === "timeout";
      const what = timedOut ? `timed out after ${Math.round(options.timeoutMs / 1000)} s` : "was cancelled";
      await this.options.signalCommandProcesses(this.shellPid, "INT").catch(() => undefined);
      let after = await waitFor(GRACE_MS);
      if (after) {
        note = `the command ${what} and was interrupted (SIGINT)`;
      } else {
        await this.options.signalCommandProcesses(this.shellPid, "KILL").catch(() => undefined);
        after = await waitFor(GRACE_MS);
        if (after) note = `the command ${what}; it ignored SIGINT and was killed (SIGKILL)`;
      }
      if (after && !after.exited) {
        outcome = { exitCode: null, exited: false };
      } else {
        await this.respawn(`the command ${what} and the shell did not recover`);
        restarted = true;
        note = `the command ${what}; the shell did not recover and was restarted (cwd and environment were reset)`;
        outcome = { exitCode: null, exited: true };
      }
    } else if (outcome.exited) {
      restarted = true;
      await this.respawn("the shell exited");
      note =
        "the shell exited during this command (exit, exec or a signal); a new shell was started (cwd and environment were reset)";
    }
    this.pending = undefined;
    return {
      output: capture.text(),
      exitCode: timedOut ? null : outcome.exitCode,
      timedOut,
      truncated: capture.truncated,
      restarted,
      note,
    };
  }

  private onData(data: string): void {
    const pending = this.pending;
    if (!pending) return;
    for (const event of pending.scanner.feed(data)) {
      if (event.kind === "output") {
        pending.capture.push(Buffer.from(event.text, "utf8"));
        pending.onOutput?.(event.text);
      } else {
        pending.done(event.exitCode);
      }
    }
  }

  private async respawn(why: string): Promise<void> {
    log.info(`${this.options.containerId.slice(0, 12)}: starting a new shell (${why})`);
    // The command being answered is over: what the new shell prints while it starts is not its output.
    this.pending = undefined;
    this.kill();
    this.restarts++;
    await this.spawn();
  }

  private kill(): void {
    const term = this.term;
    this.term = undefined;
    if (term) {
      try {
        term.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }

  private async spawn(): Promise<void> {
    const o = this.options;
    const envArgs = Object.entries({ TERM: "dumb", PS1: "", PS2: "", ...o.env }).flatMap(([k, v]) => [
      "-e",
      `${k}=${v}`,
    ]);
    // A script argument (/dev/stdin) keeps bash non-interactive: no prompt, no job-control chatter.
    const args = ["exec", "-it", "-u", o.user, "-w", o.workdir, ...envArgs, o.containerId];
    args.push("bash", "--noprofile", "--norc", "/dev/stdin");
    const term = pty.spawn(o.dockerPath, args, {
      name: "dumb",
      cols: 500,
      rows: 50,
      env: process.env as Record<string, string>,
    });
    this.term = term;
    const nonce = randomBytes(8).toString("hex");
    const ready = startMarker(nonce);
    let seen = "";
    const started = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new DrydockError("shell_start_failed", `the shell did not start: ${seen.slice(-500)}`)),
        o.startTimeoutMs ?? 20_000,
      );
      const sub = term.onData((data) => {
        seen += data;
        const at = seen.indexOf(ready);
        if (at < 0) return;
        const rest = seen.slice(at + ready.length);
        const end = rest.indexOf(RS);
        if (end < 0) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(Number(rest.slice(0, end)));
      });
      term.onExit(({ exitCode }) => {
        clearTimeout(timer);
        reject(
          new DrydockError(
            "shell_start_failed",
            `the shell exited at start (${exitCode}): ${seen.slice(-500)}`,
          ),
        );
      });
    });
    term.onData((data) => {
      if (this.term === term) this.onData(data);
    });
    term.onExit(() => {
      if (this.term !== term) return;
      this.term = undefined;
      this.pending?.done(null, "exit");
    });
    // Raw and silent: bytes typed reach bash verbatim (no line-length limit, no signal keys, no
    // echo). SIGINT is trapped, not ignored, so the commands bash runs keep the default action.
    term.write(
      `stty raw -echo 2>/dev/null; trap ':' INT; printf '${ready.replace(/\x1e/g, "\\036")}%s\\036' $$\n`,
    );
    this.shellPid = await started;
  }
}

/**
 * The text typed for one command: the command is read verbatim into a variable through a
 * here-document whose delimiter holds the nonce, then evaluated with stdin from /dev/null. The
 * end marker carries the command's exit status; the terminal is set raw again before it.
 */
export function framed(command: string, nonce: string): string {
  const delimiter = `__DRYDOCK_${nonce}__`;
  return (
    `IFS= read -r -d '' __drydock_cmd <<'${delimiter}'\n${command}\n${delimiter}\n` +
    `printf '\\036DDS${nonce}\\036'; eval "$__drydock_cmd" </dev/null; __drydock_rc=$?; ` +
    // A command may have changed the terminal (stty sane, a full-screen program): set it back.
    `stty raw -echo 2>/dev/null; printf '\\036DDE${nonce}:%d\\036' $__drydock_rc\n`
  );
}
