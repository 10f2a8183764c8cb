/**
 * A session's shell, watched: calls run one at a time, and each answers by its time limit plus
 * the watchdog's grace whatever the shell does. A shell that gives no answer by then is ended and
 * a new one starts in the background; the call that saw it answers at once and says so, and the
 * next call runs in the new shell.
 */
import { CommandOutput, type StreamName } from "../sandbox/output-capture.js";
import type { PtyShell, ShellResult } from "../sandbox/pty-shell.js";
import { DrydockError, describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { SHELL_START_LIMIT_MS, watch } from "./shell-watchdog.js";

const log = logger("shell");

export interface SessionShellSetup {
  /** Starts a new shell like the first (same box, user, environment). */
  start: () => Promise<PtyShell>;
  /** The SIGINT grace the shell's own stop gives a command (part of what the watchdog allows). */
  interruptGraceMs: number;
  /** How long past that the watchdog waits for an answer. */
  graceMs: number;
}

export interface SessionShellRun {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (text: string, stream: StreamName) => void;
}

export class SessionShell {
  private shell: PtyShell;
  /** A replacement being started. */
  private starting: Promise<PtyShell> | undefined;
  /** The current shell stopped answering and was ended: the next call needs a new one. */
  private stale = false;
  private closed = false;
  private calls: Promise<unknown> = Promise.resolve();

  constructor(
    first: PtyShell,
    private readonly setup: SessionShellSetup,
    /** Names the session in log lines. */
    private readonly sessionId: string,
  ) {
    this.shell = first;
  }

  /** The shell calls go to now (the ended one until its replacement has started). */
  get current(): PtyShell {
    return this.shell;
  }

  run(command: string, options: SessionShellRun): Promise<ShellResult> {
    return this.oneAtATime(() => this.runNow(command, options));
  }

  /** A fresh shell (cwd and environment reset), within the same kind of bound. */
  restart(signal?: AbortSignal): Promise<void> {
    return this.oneAtATime(async () => {
      const shell = await this.live(signal);
      const watched = await watch(shell.restart(), {
        limitMs: SHELL_START_LIMIT_MS,
        graceMs: this.setup.graceMs,
        signal,
      });
      if (watched.kind === "silent") {
        this.replace(shell, `gave no answer to a restart in ${Math.round(watched.waitedMs / 1000)} s`);
        await this.live(signal);
      }
    });
  }

  async dispose(): Promise<void> {
    this.closed = true;
    await this.shell.dispose();
    await this.starting?.then((shell) => shell.dispose()).catch(() => undefined);
  }

  private oneAtATime<T>(run: () => Promise<T>): Promise<T> {
    const next = this.calls.then(run, run);
    this.calls = next.catch(() => undefined);
    return next;
  }

  private async runNow(command: string, options: SessionShellRun): Promise<ShellResult> {
    const fresh = this.stale;
    const shell = await this.live(options.signal);
    // What the command printed, kept here too: a shell that stops answering keeps its own copy.
    const seen = new CommandOutput(options.maxOutputBytes);
    const watched = await watch(
      shell.run(command, {
        ...options,
        onOutput: (text, stream) => {
          seen.push(stream, Buffer.from(text, "utf8"));
          options.onOutput?.(text, stream);
        },
      }),
      {
        limitMs: options.timeoutMs,
        graceMs: this.setup.interruptGraceMs + this.setup.graceMs,
        signal: options.signal,
      },
    );
    if (watched.kind === "answer") {
      if (!fresh) return watched.value;
      const note =
        "the shell before this one stopped answering; this command ran in a new shell (working directory and environment were reset)";
      return {
        ...watched.value,
        restarted: true,
        note: watched.value.note ? `${note}; ${watched.value.note}` : note,
      };
    }
    const why = watched.cancelled
      ? `gave no answer ${Math.round((this.setup.interruptGraceMs + this.setup.graceMs) / 1000)} s after the command was cancelled`
      : `gave no answer ${Math.round((watched.waitedMs - options.timeoutMs) / 1000)} s after the command's time limit of ${Math.round(options.timeoutMs / 1000)} s`;
    this.replace(shell, why);
    const texts = seen.texts();
    return {
      output: texts.merged,
      stdout: texts.stdout,
      stderr: texts.stderr,
      exitCode: null,
      timedOut: !watched.cancelled,
      truncated: seen.truncated,
      restarted: true,
      note: `the shell stopped answering: it ${why}. It was ended and a new shell is starting for the next command, in /workspace with a fresh environment (working directory, variables and functions are reset); processes the command started may still be running in the box. The output is what arrived before the shell stopped answering`,
    };
  }

  /**
   * The shell to use: the current one, or the replacement (started now if none is under way). A
   * replacement that fails to start is tried once more: what the stuck shell left behind (its
   * stop, arriving late) can spoil one start.
   */
  private async live(signal?: AbortSignal): Promise<PtyShell> {
    for (let attempt = 1; ; attempt++) {
      if (this.stale && !this.starting) this.startReplacement();
      const starting = this.starting;
      if (!starting) return this.shell;
      try {
        const watched = await watch(starting, { limitMs: SHELL_START_LIMIT_MS, graceMs: 0, signal });
        if (watched.kind === "answer") return watched.value;
        throw new DrydockError(
          "shell_unresponsive",
          watched.cancelled
            ? "cancelled while a new shell was starting; call again"
            : `a new shell did not start within ${SHELL_START_LIMIT_MS / 1000} s; call again, or create a new session if it keeps failing`,
        );
      } catch (error) {
        if (attempt >= 2 || this.closed || signal?.aborted || this.starting) throw error;
      }
    }
  }

  /** Ends a shell that stopped answering and starts its replacement in the background. */
  private replace(stuck: PtyShell, why: string): void {
    if (stuck !== this.shell || this.stale) return;
    log.warn(`session ${this.sessionId}: the shell ${why}; starting a new shell`);
    this.stale = true;
    void stuck.dispose().catch(() => undefined);
    this.startReplacement();
  }

  /** One that fails to start is tried again by the next call. */
  private startReplacement(): void {
    if (this.closed) return;
    const starting = this.setup.start();
    this.starting = starting;
    starting.then(
      (shell) => {
        if (this.starting !== starting || this.closed) return void shell.dispose();
        this.shell = shell;
        this.stale = false;
        this.starting = undefined;
      },
      (error: unknown) => {
        if (this.starting !== starting) return;
        log.warn(`session ${this.sessionId}: a new shell did not start: ${describeError(error)}`);
        this.starting = undefined;
      },
    );
  }
}
