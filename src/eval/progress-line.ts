/**
 * The progress line on stderr: done / passed / failed / running and the elapsed time. On a
 * terminal it redraws one line; elsewhere (CI logs) it prints a line when a count changes.
 */
import { terminalText } from "../util/terminal-text.js";

export interface ProgressCounts {
  total: number;
  done: number;
  passed: number;
  failed: number;
  running: number;
}

export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
}

export function formatProgress(c: ProgressCounts, elapsedMs: number, width = 20): string {
  const filled = c.total ? Math.round((c.done / c.total) * width) : width;
  const bar = "█".repeat(filled) + "░".repeat(width - filled);
  return `[eval] ${bar} ${c.done}/${c.total} done · ${c.passed} passed · ${c.failed} failed · ${c.running} running · ${formatElapsed(elapsedMs)}`;
}

export class ProgressLine {
  private last = "";
  private timer: NodeJS.Timeout | undefined;
  private counts: ProgressCounts = { total: 0, done: 0, passed: 0, failed: 0, running: 0 };
  private readonly started = Date.now();
  private stopped = false;
  private updated = false;

  constructor(
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
    private readonly tty = stream.isTTY === true,
  ) {}

  start(): void {
    if (this.tty) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  update(counts: ProgressCounts): void {
    this.updated = true;
    this.counts = counts;
    this.draw();
  }

  /** Writes a message on its own line without garbling the bar, escaped: it may quote a task or a box. */
  note(message: string): void {
    if (this.tty) this.stream.write("\r\x1b[2K");
    this.stream.write(`${terminalText(message)}\n`);
    if (this.tty) this.stream.write(formatProgress(this.counts, Date.now() - this.started));
  }

  /** Draws the last state once more and ends the line; later calls do nothing. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (!this.updated) return;
    if (this.tty) this.stream.write(`\r\x1b[2K${formatProgress(this.counts, Date.now() - this.started)}\n`);
    else this.draw();
  }

  private draw(): void {
    const line = formatProgress(this.counts, Date.now() - this.started);
    if (this.tty) {
      this.stream.write(`\r\x1b[2K${line}`);
      return;
    }
    // In a log, only a finished attempt is news; the time and the running count alone are not.
    const key = `${this.counts.done}/${this.counts.total} ${this.counts.passed} ${this.counts.failed}`;
    if (key === this.last) return;
    this.last = key;
    this.stream.write(`${line}\n`);
  }
}
