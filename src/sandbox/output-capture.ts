/**
 * Collects a command's output within a byte budget: the head and the tail are kept, the middle is
 * counted and replaced by a marker saying how much was cut. Memory stays bounded whatever the
 * command prints.
 */
import stripAnsi from "strip-ansi";

export class OutputCapture {
  private head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  private dropped = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(readonly maxBytes: number) {
    this.headCap = Math.floor(maxBytes / 2);
    this.tailCap = maxBytes - this.headCap;
  }

  get totalBytes(): number {
    return this.headSize + this.tailSize + this.dropped;
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.headSize < this.headCap) {
      const take = rest.subarray(0, this.headCap - this.headSize);
      this.head.push(take);
      this.headSize += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailSize += rest.length;
    while (this.tailSize > this.tailCap) {
      const first = this.tail[0]!;
      const excess = this.tailSize - this.tailCap;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailSize -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailSize -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The text a caller sees: terminal control sequences removed, line ends normalised. */
  text(): string {
    const head = cleanTerminalText(Buffer.concat(this.head).toString("utf8"));
    if (!this.truncated) return head + cleanTerminalText(Buffer.concat(this.tail).toString("utf8"));
    const tail = cleanTerminalText(Buffer.concat(this.tail).toString("utf8"));
    return `${head}\n[... ${this.dropped} bytes of output cut (kept: ${this.maxBytes} bytes, head and tail); to see more, run it again with a larger max_output_bytes, or redirect it to a file and view parts of it ...]\n${tail}`;
  }
}

/** Anything cleanTerminalText could change: C0 controls but tab and newline (ESC, CR among them), DEL, C1 controls (CSI, OSC…). */
const NEEDS_CLEANING = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Removes ANSI escape sequences and other control characters except newline and tab. */
export function cleanTerminalText(text: string): string {
  // Most output is plain: one scan instead of five passes over a megabyte.
  if (!NEEDS_CLEANING.test(text)) return text;
  return (
    stripAnsi(text)
      .replace(/\r\n/g, "\n")
      // A lone carriage return redraws the line (progress bars): keep what was drawn last.
      .replace(/^.*\r(?!$)/gm, "")
      .replace(/\r/g, "")
      .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "")
  );
}

export type StreamName = "stdout" | "stderr";

/**
 * A command's output three ways, each capped on its own: stdout, stderr, and both merged in the
 * order their chunks arrived.
 */
export class CommandOutput {
  readonly stdout: OutputCapture;
  readonly stderr: OutputCapture;
  readonly merged: OutputCapture;

  constructor(maxBytes: number) {
    this.stdout = new OutputCapture(maxBytes);
    this.stderr = new OutputCapture(maxBytes);
    this.merged = new OutputCapture(maxBytes);
  }

  push(stream: StreamName, chunk: Buffer): void {
    this[stream].push(chunk);
    this.merged.push(chunk);
  }

  get truncated(): boolean {
    return this.stdout.truncated || this.stderr.truncated || this.merged.truncated;
  }

  /** The three texts. With nothing on stderr the merged bytes are stdout's, under the same cap: cleaned once. */
  texts(): { stdout: string; stderr: string; merged: string } {
    const stdout = this.stdout.text();
    if (this.stderr.totalBytes === 0) return { stdout, stderr: "", merged: stdout };
    return { stdout, stderr: this.stderr.text(), merged: this.merged.text() };
  }
}
