/**
 * A persistent bash in a box, driven through a real terminal: an exec with a TTY attached through
 * the engine API (no docker CLI process, no host-side terminal: one socket per shell).
 * Commands are framed with per-command nonces so their end and exit code are known exactly;
 * each command's stdin is /dev/null so a program waiting for input cannot swallow the next
 * command, and its stderr goes to a second terminal in the box, so stdout and stderr come apart
 * while both stay terminals. cwd and environment persist between commands.
 *
 * A command past its limit, or cancelled, is stopped as a whole: the rest of a command list runs
 * in the shell itself, so the only sure stop ends that shell with everything the command started
 * (SIGINT first, SIGKILL after a short grace), and a new shell is given the state the old one had
 * before the command. A command that ends the shell itself (exit, exec, kill $$) gets the same.
 */
import { randomBytes } from "node:crypto";
import type { BoxEngine } from "../engine/box-engine.js";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import type { StopReport, StopRequest } from "./command-stop.js";
import { CommandRun, delay } from "./command-run.js";
import { RS, startMarker } from "./frame-scanner.js";
import type { StreamName } from "./output-capture.js";
import { framed, nextStateTag, restoreState, shellInit, type RestoreOutcome } from "./shell-frame.js";
import { afterRestartNote, stoppedNote } from "./shell-notes.js";
import { ShellTerminal } from "./shell-terminal.js";
import type { StderrTerminal } from "./stderr-terminal.js";

const log = logger("shell");

/** The persistent shell's argv: a script argument (/dev/stdin) keeps bash non-interactive. */
export const PTY_SHELL_ARGV: readonly string[] = ["bash", "--noprofile", "--norc", "/dev/stdin"];

export interface ShellOptions {
  /** The engine the shell's exec is attached through. */
  engine: BoxEngine;
  containerId: string;
  user: string;
  workdir: string;
  env: Record<string, string>;
  /**
   * Where the frame saves the shell's state before each command (a path in the box), for a new
   * shell to be given; without it a new shell starts fresh.
   */
  stateFile?: string;
  /** Opens the terminal commands' stderr goes to; without it stderr shares stdout's terminal. */
  openStderrTerminal?: () => Promise<StderrTerminal>;
  /** Stops a command as a whole (see command-stop.ts); resolves once nothing of it is left. */
  stopCommand: (request: StopRequest) => Promise<StopReport>;
  startTimeoutMs?: number;
  /** How long a command that handles SIGINT gets to finish after its time is up; default 1_000. */
  interruptGraceMs?: number;
}

export interface RunOptions {
  timeoutMs: number;
  /** The cap of each of stdout, stderr and output (head and tail kept). */
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (text: string, stream: StreamName) => void;
}

export interface ShellResult {
  /** stdout and stderr together, in the order their chunks reached drydock. */
  output: string;
  stdout: string;
  stderr: string;
  /**
   * The command's exit status, or the status the shell exited with when the command ended it;
   * null when the command was stopped (timed out or cancelled).
   */
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  /** True when this call ended with a new shell; `note` says what state it was given. */
  restarted: boolean;
  /** What happened, for a caller or a model: set when the result is not a plain finish. */
  note?: string;
}

const DEFAULT_GRACE_MS = 1_000;
/** After stdout's end: how long stderr may stay silent before its end is given up on. */
const STDERR_IDLE_MS = 2_000;
/** After a stop: how long the flush markers may take to arrive. */
const FLUSH_MS = 3_000;
const RESTORE_TIMEOUT_MS = 10_000;
/** Before a command: how long the previous frame's work after its answer may take. */
const READY_WAIT_MS = 5_000;

const randomHex = () => randomBytes(8).toString("hex");
/** Typed into a shell that is let go: an idle one exits instead of waiting until its box is removed. */
const EXIT_NOW = "builtin exit 0\n";

export class PtyShell {
  private term: ShellTerminal | undefined;
  private shellPid = 0;
  private ttyPath = "";
  /** Names the state the shell saved last (after its last command, or at its start). */
  private stateTag: string | undefined;
  private stderr: StderrTerminal | undefined;
  /** The last command: running, or answered and finishing its frame's work. */
  private pending: CommandRun | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  private restarts = 0;

  private constructor(private readonly options: ShellOptions) {}

  static async start(options: ShellOptions): Promise<PtyShell> {
    const shell = new PtyShell(options);
    try {
      await Promise.all([shell.spawn(), shell.openStderr()]);
    } catch (error) {
      await shell.dispose();
      throw error;
    }
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
    const next = this.queue.then(() => this.respawn("restart requested").then(() => undefined));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.kill();
    this.stderr?.close();
    // A command still running ends now, with the shell_closed error.
    this.pending?.exited.resolve(null);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  private async runNow(command: string, options: RunOptions): Promise<ShellResult> {
    if (this.disposed) throw new DrydockError("shell_closed", "the shell of this session is closed");
    const notes: string[] = [];
    let restarted = false;
    if (!this.term) {
      await this.respawn("the previous shell had exited");
      restarted = true;
      notes.push(
        "the shell had exited since the last command (something it left running ended it); a new shell was started (working directory and environment were reset)",
      );
    }
    // The previous command's frame finishes after its answer (terminal reset, state saved): the
    // next one is typed once it has, so never into a terminal that is not raw yet.
    const previous = this.pending;
    if (previous && !previous.ready.settled) {
      await Promise.race([previous.ready.promise, delay(READY_WAIT_MS)]);
    }
    if (this.options.openStderrTerminal && !this.stderr?.alive) {
      try {
        await this.openStderr();
      } catch (error) {
        this.stderr = undefined;
        notes.push(
          `stderr could not be kept apart for this command (${(error as Error).message}): it is in stdout`,
        );
      }
    }
    const nonce = randomHex();
    // The token names the state the frame saves after the command: the other slot than the state
    // from before it, which must survive the command whatever it does.
    const token = nextStateTag(this.stateTag, randomHex());
    const stderrPath = this.stderr?.path;
    const pending = new CommandRun(
      nonce,
      token,
      stderrPath !== undefined,
      options.maxOutputBytes,
      options.onOutput,
    );
    this.pending = pending;
    this.term!.write(framed(command, { nonce, token, stderrPath }));

    const outcome = await pending.waitForEnd(options.timeoutMs, options.signal);
    let exitCode: number | null = null;
    if (outcome.kind === "end") {
      exitCode = outcome.exitCode;
      // The frame saves the state after the end marker: the next command's "before".
      this.stateTag = token;
      if (!(await pending.stderrSettled(this.stderr, STDERR_IDLE_MS))) {
        notes.push(
          `the end of stderr did not arrive (its terminal closed, or it stayed silent ${STDERR_IDLE_MS / 1000} s after stdout ended): stderr may be incomplete`,
        );
      }
    } else if (outcome.kind === "exit") {
      exitCode = outcome.exitCode;
      restarted = true;
      const restored = await this.respawn("the shell exited", this.stateTag);
      notes.push(
        `the shell exited${exitCode === null ? "" : ` with status ${exitCode}`} during this command (exit, exec, a signal, or a failure under set -e); ${afterRestartNote(restored)}`,
      );
    } else {
      const what =
        outcome.kind === "timeout"
          ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
          : "was cancelled";
      const stopped = await this.stop(pending, token);
      restarted = true;
      const restored = await this.respawn(`the command ${what}`, this.stateTag);
      notes.push(`${stoppedNote(what, stopped, this.graceMs)}. ${capitalised(afterRestartNote(restored))}`);
    }
    const { output } = pending;
    const texts = output.texts();
    return {
      output: texts.merged,
      stdout: texts.stdout,
      stderr: texts.stderr,
      exitCode,
      timedOut: outcome.kind === "timeout",
      truncated: output.truncated,
      restarted,
      note: notes.length ? notes.join("; ") : undefined,
    };
  }

  private get graceMs(): number {
    return this.options.interruptGraceMs ?? DEFAULT_GRACE_MS;
  }

  /**
   * Ends the command, its shell and everything it started; then waits for the flush markers, so
   * the output holds everything the command wrote before it was stopped.
   */
  private async stop(pending: CommandRun, token: string): Promise<StopReport | Error> {
    const terminals = [this.ttyPath, this.stderr?.alive ? this.stderr.path : ""].filter(Boolean);
    let report: StopReport | Error;
    try {
      report = await this.options.stopCommand({
        shellPid: this.shellPid,
        token,
        graceMs: this.graceMs,
        flushMarker: `${RS}DDE${pending.nonce}:0${RS}`,
        terminals,
      });
    } catch (error) {
      log.warn(
        `${this.options.containerId.slice(0, 12)}: stopping a command failed: ${(error as Error).message}`,
      );
      return error as Error;
    }
    const flushed = [
      pending.outEnd.promise,
      ...(pending.stderrApart && this.stderr?.alive ? [pending.errEnd.promise] : []),
    ];
    await Promise.race([Promise.all(flushed), delay(FLUSH_MS)]);
    return report;
  }

  /**
   * A new shell in place of the current one; with a token, it is given the state saved before
   * that command. Says what state the new shell has.
   */
  private async respawn(why: string, restoreTag?: string): Promise<RestoreOutcome | "fresh"> {
    log.info(`${this.options.containerId.slice(0, 12)}: starting a new shell (${why})`);
    // What the new shell prints is not the command's output (its stderr may still arrive), and
    // the new shell is idle once started.
    if (this.pending) {
      this.pending.outOpen = false;
      this.pending.ready.resolve();
    }
    this.kill();
    if (this.disposed) throw new DrydockError("shell_closed", "the shell of this session is closed");
    this.restarts++;
    const restore = this.options.stateFile !== undefined && restoreTag !== undefined;
    // A shell that is to be given the saved state must not save its own over it first.
    await this.spawn(!restore);
    if (!restore) return "fresh";
    const marker = `${RS}DDR${randomHex()}`;
    this.term!.write(restoreState(this.options.stateFile!, restoreTag, this.options.workdir, marker));
    let outcome: RestoreOutcome;
    try {
      outcome = (await this.term!.watchFor(
        marker,
        RESTORE_TIMEOUT_MS,
        "restoring the shell's state",
      )) as RestoreOutcome;
    } catch (error) {
      log.warn(
        `${this.options.containerId.slice(0, 12)}: ${(error as Error).message}; starting a fresh shell`,
      );
      this.kill();
      await this.spawn(true);
      return "no-state";
    }
    if (outcome === "no-state") {
      // A fresh shell after all: its state is the one to come back to.
      this.stateTag = nextStateTag(undefined, randomHex());
      this.term!.write(`__drydock_t=${this.stateTag}; builtin eval "$__drydock_save"\n`);
    }
    return outcome;
  }

  private kill(): void {
    const term = this.term;
    this.term = undefined;
    // An idle shell exits when told (restart); one a stop ended needs nothing, and one that is
    // stuck ends with its box.
    term?.close(EXIT_NOW);
  }

  private async openStderr(): Promise<void> {
    if (!this.options.openStderrTerminal) return;
    const terminal = await this.options.openStderrTerminal();
    this.stderr?.close();
    this.stderr = terminal;
    terminal.onData((text) => {
      if (this.stderr === terminal) this.pending?.feedStderr(text);
    });
  }

  /** Starts a shell; with saveState, its first state is saved (and named) as it starts. */
  private async spawn(saveState = true): Promise<void> {
    const o = this.options;
    // A script argument (/dev/stdin) keeps bash non-interactive: no prompt, no job-control chatter.
    const exec = await o.engine.openTerminal(o.containerId, [...PTY_SHELL_ARGV], {
      user: o.user,
      workdir: o.workdir,
      env: { TERM: "dumb", PS1: "", PS2: "", ...o.env },
      input: true,
    });
    const term = new ShellTerminal(exec);
    if (this.disposed) {
      term.close(EXIT_NOW);
      throw new DrydockError("shell_closed", "the shell of this session is closed");
    }
    this.term = term;
    const ready = startMarker(randomHex());
    const started = term.watchFor(ready, o.startTimeoutMs ?? 20_000, "the shell did not start");
    term.onData((data) => {
      if (this.term === term) this.pending?.feedStdout(data);
    });
    term.onExit((exitCode) => {
      if (this.term !== term) return;
      this.term = undefined;
      this.pending?.exited.resolve(exitCode);
    });
    const tag = saveState && o.stateFile !== undefined ? nextStateTag(undefined, randomHex()) : undefined;
    term.write(shellInit(ready, o.stateFile, tag));
    const answer = await started;
    if (tag !== undefined) this.stateTag = tag;
    const at = answer.indexOf(":");
    this.shellPid = Number(answer.slice(0, at));
    this.ttyPath = answer.slice(at + 1);
  }
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
