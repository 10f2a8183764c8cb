import { InvalidArgumentError } from "../../util/errors.js";
import { numberLines } from "./numbered-lines.js";
import { assertTextContent } from "./text-file.js";
import { countLines } from "./text-lines.js";

/** Caps on one view, so a huge file cannot flood the caller; defaults 2,000 lines and 256 KiB. */
export interface ViewLimits {
  readonly maxLines?: number;
  readonly maxChars?: number;
}

export const DEFAULT_VIEW_MAX_LINES = 2_000;
export const DEFAULT_VIEW_MAX_CHARS = 256 * 1024;

/** A numbered view of part of a file and what it covers. */
export interface FileView {
  /** Numbered lines (`cat -n` style), followed by a bracketed note when something was left out. */
  readonly text: string;
  readonly totalLines: number;
  /** First and last line shown (1-based); 0 and 0 for an empty file. */
  readonly firstLine: number;
  readonly lastLine: number;
  readonly truncated: boolean;
}

/**
 * Renders `text` with line numbers. `viewRange` is [start, end], 1-based and inclusive; end -1
 * means to the end of the file. Output past the limits is cut and the note says how to see more.
 */
export function viewFile(
  text: string,
  path: string,
  viewRange?: readonly number[],
  limits: ViewLimits = {},
): FileView {
  assertTextContent(text, path);
  const maxLines = limits.maxLines ?? DEFAULT_VIEW_MAX_LINES;
  const maxChars = limits.maxChars ?? DEFAULT_VIEW_MAX_CHARS;
  const total = countLines(text);
  if (total === 0) {
    if (viewRange !== undefined) {
      throw new InvalidArgumentError(
        "view_range",
        `${path} is empty, so there are no lines to show; view it without view_range`,
      );
    }
    return { text: `[${path} is empty]`, totalLines: 0, firstLine: 0, lastLine: 0, truncated: false };
  }
  const [start, end] = resolveRange(viewRange, total, path);

  // Walk the text rather than split it: a view of a 50 MB file touches only the lines it shows.
  const shown: string[] = [];
  let chars = 0;
  let cutLine = false;
  let cutLength = 0;
  let offset = offsetOfLine(text, start);
  for (let n = start; n <= end && shown.length < maxLines; n++) {
    const newline = text.indexOf("\n", offset);
    const stop = newline === -1 ? text.length : newline;
    const crlf = newline !== -1 && stop > offset && text.charCodeAt(stop - 1) === 13;
    const line = text.slice(offset, crlf ? stop - 1 : stop);
    offset = stop + 1;
    const room = maxChars - chars;
    if (line.length + 1 > room) {
      // A single line longer than the whole budget (minified code) is still shown, cut short.
      if (shown.length === 0) {
        shown.push(line.slice(0, Math.max(0, room)));
        cutLine = true;
        cutLength = line.length;
      }
      break;
    }
    shown.push(line);
    chars += line.length + 1;
  }
  const lastLine = start + shown.length - 1;
  const notes: string[] = [];
  if (cutLine) {
    notes.push(
      `line ${start} is ${cutLength} characters long and was cut at ${maxChars}; read it with bash (cut, fold) instead`,
    );
  }
  if (lastLine < end) {
    const next = lastLine + 1;
    const nextEnd = Math.min(end, next + Math.max(shown.length, 1) - 1);
    notes.push(
      `lines ${next}-${end} of ${total} not shown: a view shows at most ${maxLines} lines or ${maxChars} characters. Pass view_range [${next}, ${nextEnd}] to see more`,
    );
  }
  const body = numberLines(shown, start);
  return {
    text: notes.length > 0 ? `${body}\n[${notes.join("; ")}]` : body,
    totalLines: total,
    firstLine: start,
    lastLine,
    truncated: notes.length > 0,
  };
}

function resolveRange(
  viewRange: readonly number[] | undefined,
  total: number,
  path: string,
): [number, number] {
  if (viewRange === undefined) return [1, total];
  const hint = `${path} has ${total} line${total === 1 ? "" : "s"}; pass [start, end] with 1 <= start <= end <= ${total}, or end -1 for the rest of the file`;
  if (viewRange.length !== 2 || !viewRange.every((n) => Number.isInteger(n))) {
    throw new InvalidArgumentError("view_range", `must be two whole numbers [start, end]; ${hint}`);
  }
  const [start, end] = viewRange as [number, number];
  if (start < 1 || start > total) {
    throw new InvalidArgumentError("view_range", `start ${start} is out of range; ${hint}`);
  }
  if (end === -1) return [start, total];
  if (end < start)
    throw new InvalidArgumentError("view_range", `end ${end} is before start ${start}; ${hint}`);
  if (end > total) throw new InvalidArgumentError("view_range", `end ${end} is past the last line; ${hint}`);
  return [start, end];
}

/** The offset where 1-based line `line` starts. */
function offsetOfLine(text: string, line: number): number {
  let offset = 0;
  for (let n = 1; n < line; n++) offset = text.indexOf("\n", offset) + 1;
  return offset;
}
