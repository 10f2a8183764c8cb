/** A line ending as it appears in a file; a lone "\r" stays part of the line. */
export type LineEnding = "\n" | "\r\n";

/** A text split into lines, each with the ending that followed it ("" for a last line with none). */
export interface TextLines {
  readonly lines: string[];
  readonly endings: string[];
}

/** Splits text into lines without losing how each one ended; "" has no lines, "a\n" has one. */
export function splitLines(text: string): TextLines {
  const lines: string[] = [];
  const endings: string[] = [];
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) {
      lines.push(text.slice(start));
      endings.push("");
      break;
    }
    const crlf = newline > start && text.charCodeAt(newline - 1) === 13;
    lines.push(text.slice(start, crlf ? newline - 1 : newline));
    endings.push(crlf ? "\r\n" : "\n");
    start = newline + 1;
  }
  return { lines, endings };
}

/** How many lines the text has, counted as `splitLines` does. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let count = 0;
  let at = text.indexOf("\n");
  while (at !== -1) {
    count++;
    at = text.indexOf("\n", at + 1);
  }
  return text.endsWith("\n") ? count : count + 1;
}

/** The 1-based line holding the character at `offset`. */
export function lineNumberAt(text: string, offset: number): number {
  let line = 1;
  let at = text.indexOf("\n");
  while (at !== -1 && at < offset) {
    line++;
    at = text.indexOf("\n", at + 1);
  }
  return line;
}

/** The ending most lines use: CRLF when at least as many lines end in CRLF as in a bare LF. */
export function dominantEnding(text: string): LineEnding {
  let crlf = 0;
  let lf = 0;
  let at = text.indexOf("\n");
  while (at !== -1) {
    if (at > 0 && text.charCodeAt(at - 1) === 13) crlf++;
    else lf++;
    at = text.indexOf("\n", at + 1);
  }
  return crlf > 0 && crlf >= lf ? "\r\n" : "\n";
}

/** True when every newline in the text is part of a CRLF (and there is at least one). */
export function usesOnlyCrlf(text: string): boolean {
  let at = text.indexOf("\n");
  if (at === -1) return false;
  while (at !== -1) {
    if (at === 0 || text.charCodeAt(at - 1) !== 13) return false;
    at = text.indexOf("\n", at + 1);
  }
  return true;
}

/** Rewrites bare LFs in `content` to `ending`, so text typed with "\n" fits a CRLF file. */
export function toEnding(content: string, ending: LineEnding): string {
  return ending === "\r\n" ? content.replace(/(?<!\r)\n/g, "\r\n") : content;
}

/** How many lines `content` spans once inserted at the start of a line (at least 1 when non-empty). */
export function spannedLines(content: string): number {
  if (content.length === 0) return 0;
  return countLines(content);
}
