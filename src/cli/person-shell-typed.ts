/**
 * What the person typed, line by line, read from the keystrokes the host sends to the box: the
 * audit log's `person_command` lines are made from these alone, never from what the box prints.
 * Plain typing is read as a terminal's line discipline would: characters in order, Backspace or
 * Delete takes back the last one, Ctrl-U or Ctrl-C drops the line. A line with any other key
 * (arrows, Tab, history, Ctrl-R, a paste) may have been turned into something else by the
 * shell's line editor, so its keystrokes are kept exactly beside the plain reading. Pure.
 */

export interface TypedLine {
  /** The line as plain typing reads it. */
  command: string;
  /** The exact keystrokes, when they held more than plain typing (the command may differ from `command`). */
  keys?: string;
}

/** A line longer than this keeps its first characters (the log caps command text shorter still). */
const MAX_LINE_CHARS = 64 * 1024;
/** A key's escape sequence is never longer than this; a longer one is taken as it stands. */
const MAX_ESCAPE_CHARS = 32;
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

export class TypedLines {
  private line = "";
  private keys = "";
  private edited = false;
  private inPaste = false;
  private afterCr = false;
  private carry = "";

  /** The lines that ended (with Enter) in this chunk of keystrokes. */
  push(chunk: string): TypedLine[] {
    const lines: TypedLine[] = [];
    const data = this.carry + chunk;
    this.carry = "";
    for (let i = 0; i < data.length;) {
      if (data[i] === "\x1b") {
        const length = escapeLength(data, i);
        // A key's sequence split across chunks: wait for the rest.
        if (length === 0) {
          this.carry = data.slice(i);
          break;
        }
        const seq = data.slice(i, i + length);
        if (seq === PASTE_START || seq === PASTE_END) this.inPaste = seq === PASTE_START;
        this.key(seq);
        this.edited = true;
        this.afterCr = false;
        i += length;
        continue;
      }
      const ch = String.fromCodePoint(data.codePointAt(i)!);
      i += ch.length;
      const isEnter = ch === "\r" || ch === "\n";
      if (isEnter && !this.inPaste) {
        // CR LF from a terminal that sends both is one Enter.
        if (ch === "\n" && this.afterCr) {
          this.afterCr = false;
          continue;
        }
        this.afterCr = ch === "\r";
        if (this.keys !== "")
          lines.push(this.edited ? { command: this.line, keys: this.keys } : { command: this.line });
        this.line = "";
        this.keys = "";
        this.edited = false;
        continue;
      }
      this.afterCr = false;
      this.key(ch);
      if (isEnter) this.append("\n");
      else if (ch === "\x7f" || ch === "\b") this.line = Array.from(this.line).slice(0, -1).join("");
      else if (ch === "\x15" || ch === "\x03") this.line = "";
      else if (ch < " " || (ch >= "\x7f" && ch <= "\x9f")) this.edited = true;
      else this.append(ch);
    }
    return lines;
  }

  private key(text: string): void {
    if (this.keys.length < MAX_LINE_CHARS) this.keys += text;
  }

  private append(text: string): void {
    if (this.line.length < MAX_LINE_CHARS) this.line += text;
  }
}

/**
 * The length of the escape sequence at `at` (a key's: CSI `ESC [ … final`, SS3 `ESC O x`, or
 * `ESC x` for Alt-x), or 0 when the data ends before it does.
 */
function escapeLength(data: string, at: number): number {
  const next = data[at + 1];
  if (next === undefined) return 0;
  if (next === "O") return data[at + 2] === undefined ? 0 : 3;
  if (next !== "[") return 2;
  for (let j = at + 2; j < data.length && j < at + MAX_ESCAPE_CHARS; j++) {
    const code = data.charCodeAt(j);
    if (code >= 0x40 && code <= 0x7e) return j - at + 1;
  }
  return data.length - at >= MAX_ESCAPE_CHARS ? MAX_ESCAPE_CHARS : 0;
}
