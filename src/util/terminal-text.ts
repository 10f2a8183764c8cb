/**
 * Text that an agent or a repository wrote, made safe to print on a person's terminal: every
 * character a terminal would act on instead of showing is written as a visible escape. Pure.
 *
 * Escaped: C0 controls but newline and tab (ESC starts CSI/OSC sequences: screen clears, title
 * changes, OSC 52 clipboard writes; a lone CR draws a fake line over the real one; BEL rings),
 * DEL, the C1 controls U+0080-U+009F (U+009B is a one-character CSI on many terminals), and the
 * bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, U+061C, U+200E, U+200F),
 * which reorder what a person sees ("Trojan Source"). strip-ansi is not used: it removes only
 * well-formed sequences and leaves lone controls and bidi characters, and a person should see
 * that something was there.
 */

const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ONE_LINE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.codePointAt(0)!;
  if (ch === "\n") return "\\n";
  if (ch === "\t") return "\\t";
  if (ch === "\r") return "\\r";
  if (ch === "\x1b") return "\\e";
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control and bidi character escaped; newlines and tabs are kept. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** `text` on one line: as `terminalText`, and newlines and tabs escaped too (table cells, progress lines). */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE_ONE_LINE, visible);
}

/** Whether `text` holds anything `terminalText` would escape. */
export function hasTerminalControls(text: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(text);
  UNSAFE.lastIndex = 0;
  return found;
}

/** What JSON.stringify leaves raw that a terminal acts on: DEL, C1 controls, bidi characters. */
const UNSAFE_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `value` as JSON text fit for a terminal: JSON.stringify escapes C0 controls, and this escapes
 * the rest `terminalText` would (`\u009b`, `\u202e`), so a program parsing it reads the same value.
 * Those characters occur only inside strings, where `\uXXXX` is their JSON escape.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    UNSAFE_IN_JSON,
    (ch) => `\\u${ch.codePointAt(0)!.toString(16).padStart(4, "0")}`,
  );
}
