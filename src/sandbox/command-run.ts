/**
 * One command on the shell, from the host's side: the two terminals' text fed in, the frame's
 * markers found, stdout, stderr and both merged captured, and the first of its end, the shell's
 * exit, its time limit and its cancel told apart.
 */
import { FrameScanner, readyMarker } from "./frame-scanner.js";
import { CommandOutput, type StreamName } from "./output-capture.js";

/** A promise settled from outside, once; `settled` says whether it was. */
export class Deferred<T> {
  settled = false;
  resolve!: (value: T) => void;
  readonly promise = new Promise<T>((resolve) => {
    this.resolve = (value) => {
      if (this.settled) return;
      this.settled = true;
      resolve(value);
    };
  });
}

export type Outcome =
  | { kind: "end"; exitCode: number }
  | { kind: "exit"; exitCode: number | null }
  | { kind: "timeout" }
  | { kind: "cancel" };

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export class CommandRun {
  readonly output: CommandOutput;
  private readonly out: FrameScanner;
  private readonly err: FrameScanner | undefined;
  /** False once the command's shell is gone: what a new shell prints is not the command's. */
  outOpen = true;
  readonly outEnd = new Deferred<number>();
  readonly errEnd = new Deferred<void>();
  /** The shell is idle again after the command: terminal raw, state saved. */
  readonly ready = new Deferred<void>();
  private afterEnd = "";
  private readonly readyText: string;
  /** The shell exited, with the status its exec reported (null: unknown or closed). */
  readonly exited = new Deferred<number | null>();
  private lastErrAt = 0;

  constructor(
    /** Names the end markers. */
    readonly nonce: string,
    /** Names the start marker on stdout. */
    token: string,
    /** True when stderr has a terminal of its own (it has no start marker there). */
    stderrApart: boolean,
    maxOutputBytes: number,
    private readonly onOutput?: (text: string, stream: StreamName) => void,
  ) {
    this.output = new CommandOutput(maxOutputBytes);
    this.readyText = readyMarker(nonce);
    this.out = new FrameScanner(nonce, token);
    this.err = stderrApart ? new FrameScanner(nonce, null) : undefined;
  }

  get stderrApart(): boolean {
    return this.err !== undefined;
  }

  feedStdout(data: string): void {
    if (!this.outOpen) return;
    if (this.outEnd.settled) return this.feedAfterEnd(data);
    for (const event of this.out.feed(data)) {
      if (event.kind === "output") this.emit("stdout", event.text);
      else {
        this.outEnd.resolve(event.exitCode);
        this.feedAfterEnd(event.rest);
      }
    }
  }

  /** After the end only the ready marker matters; what else comes (background jobs) is dropped. */
  private feedAfterEnd(text: string): void {
    if (this.ready.settled) return;
    const seen = this.afterEnd + text;
    if (seen.includes(this.readyText)) this.ready.resolve();
    else this.afterEnd = seen.slice(-this.readyText.length);
  }

  feedStderr(data: string): void {
    if (!this.err || this.errEnd.settled) return;
    this.lastErrAt = Date.now();
    for (const event of this.err.feed(data)) {
      if (event.kind === "output") this.emit("stderr", event.text);
      else this.errEnd.resolve();
    }
  }

  private emit(stream: StreamName, text: string): void {
    this.output.push(stream, Buffer.from(text, "utf8"));
    this.onOutput?.(text, stream);
  }

  /** The first of: stdout's end marker, the shell's exit, the time limit, the caller's cancel. */
  waitForEnd(timeoutMs: number, signal?: AbortSignal): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => finish({ kind: "timeout" }), timeoutMs);
      const onAbort = () => finish({ kind: "cancel" });
      const finish = (outcome: Outcome): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        // A command that ended just as its time ran out has ended: its end marker wins.
        if (outcome.kind !== "end" && this.outEnd.settled) return;
        resolve(outcome);
      };
      void this.outEnd.promise.then((exitCode) => finish({ kind: "end", exitCode }));
      void this.exited.promise.then((exitCode) => finish({ kind: "exit", exitCode }));
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  /**
   * After stdout's end: waits for stderr's end while stderr keeps arriving, until it has been
   * silent idleMs or its terminal closed; false when the end never came.
   */
  async stderrSettled(
    terminal: { alive: boolean; ended: Promise<void> } | undefined,
    idleMs: number,
  ): Promise<boolean> {
    if (!this.err || !terminal) return true;
    const since = Date.now();
    while (!this.errEnd.settled && terminal.alive) {
      if (Date.now() - Math.max(since, this.lastErrAt) >= idleMs) return false;
      await Promise.race([this.errEnd.promise, terminal.ended, delay(100)]);
    }
    return this.errEnd.settled;
  }
}
