/**
 * Turns a command's output, as it streams, into whole cleaned lines for progress notifications.
 * A line is reported only once it is complete, with terminal control sequences removed, so text
 * the host must redact (a key the box prints) is whole and plain when the redactor sees it, however
 * the box splits or decorates it. A line that never ends is cut at `maxLineChars` and the rest of it
 * is dropped, so memory stays bounded whatever the command prints.
 */
import { cleanTerminalText } from "../sandbox/output-capture.js";

export class ProgressLines {
  private partial = "";
  /** True while dropping the rest of a line that went past the cap. */
  private dropping = false;

  constructor(private readonly maxLineChars = 500) {}

  /** The complete, non-blank lines this chunk finishes, each cleaned and cut to the cap. */
  push(text: string): string[] {
    const out: string[] = [];
    const parts = text.split("\n");
    const last = parts.pop() ?? "";
    for (const part of parts) {
      if (!this.dropping) this.emit(this.partial + part, out);
      this.partial = "";
      this.dropping = false;
    }
    if (!this.dropping) {
      this.partial += last;
      // Kept whole up to four times the cap so escape sequences and redraws can still be cleaned.
      if (this.partial.length > this.maxLineChars * 4) {
        this.emit(this.partial, out);
        this.partial = "";
        this.dropping = true;
      }
    }
    return out;
  }

  /** The last line, if the output did not end with a newline. */
  flush(): string[] {
    const out: string[] = [];
    if (!this.dropping) this.emit(this.partial, out);
    this.partial = "";
    this.dropping = false;
    return out;
  }

  private emit(line: string, out: string[]): void {
    const clean = cleanTerminalText(line);
    if (clean.trim()) out.push(clean.slice(0, this.maxLineChars));
  }
}
