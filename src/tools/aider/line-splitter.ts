import stripAnsi from "strip-ansi";

/**
 * Turns a stream of output chunks into whole lines (UTF-8 safe across chunk boundaries, ANSI codes
 * and carriage-return redraws removed), so progress can be reported a line at a time.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private partial = "";

  /** Returns the lines completed by this chunk. */
  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop() ?? "";
    return parts.map(clean);
  }

  /** The unfinished last line, if any. */
  flush(): string[] {
    const rest = this.partial + this.decoder.decode();
    this.partial = "";
    return rest === "" ? [] : [clean(rest)];
  }
}

function clean(line: string): string {
  const text = stripAnsi(line).replace(/\r$/, "");
  const redraw = text.lastIndexOf("\r");
  return redraw >= 0 ? text.slice(redraw + 1) : text;
}
