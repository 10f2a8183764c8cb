/** Views of files too big to load: numbered lines read in parts in the box. */
import type { Box } from "../sandbox/box.js";
import { InvalidArgumentError } from "../util/errors.js";
import { readLines } from "./box-files.js";
import { numberLines } from "./edit/numbered-lines.js";
import { decodeText } from "./edit/text-file.js";
import { DEFAULT_VIEW_MAX_CHARS, DEFAULT_VIEW_MAX_LINES } from "./edit/view-file.js";
import type { EditResult } from "./file-editor.js";

/**
 * A view of a file too big to load whole (see MAX_EDIT_BYTES): only the lines asked for, by default
 * the first 2,000, are read in the box, and the file's lines are counted there.
 */
export async function viewLargeFile(
  box: Box,
  path: string,
  size: number,
  viewRange: readonly number[] | undefined,
  signal?: AbortSignal,
): Promise<EditResult> {
  const range = viewRange ?? [1, DEFAULT_VIEW_MAX_LINES];
  const [start, end] = range;
  if (range.length !== 2 || !Number.isInteger(start) || !Number.isInteger(end)) {
    throw new InvalidArgumentError(
      "view_range",
      "must be two whole numbers [start, end]; end -1 means to the end",
    );
  }
  const first = start as number;
  const last = end as number;
  if (first < 1 || (last !== -1 && last < first)) {
    throw new InvalidArgumentError(
      "view_range",
      `[${first}, ${last}] is not a range of lines; pass [start, end] with 1 <= start <= end`,
    );
  }
  const part = await readLines(box, path, first, last, { maxBytes: DEFAULT_VIEW_MAX_CHARS, signal });
  const total = part.totalLines;
  if (first > total) {
    throw new InvalidArgumentError(
      "view_range",
      `start ${first} is past the last line; ${path} has ${total} lines`,
    );
  }
  let raw = part.data;
  let cutLine = false;
  if (part.truncated) {
    const newline = raw.lastIndexOf(10);
    if (newline === -1) cutLine = true;
    else raw = raw.subarray(0, newline + 1);
  }
  const { text } = decodeText(cutLine ? trimPartialUtf8(raw) : raw, path);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const shown = lines.slice(0, DEFAULT_VIEW_MAX_LINES).map((l) => l.replace(/\r$/, ""));
  const lastShown = first + shown.length - 1;
  const asked = viewRange?.[1] ?? -1;
  const wantedEnd = asked === -1 ? total : Math.min(asked, total);
  const mb = (size / 1024 / 1024).toFixed(1);
  const notes = [
    `${path} is ${mb} MB with ${total} lines; it is too big to load whole, so only the lines asked for are read`,
  ];
  if (cutLine)
    notes.push(
      `line ${first} was cut at ${DEFAULT_VIEW_MAX_CHARS} bytes; read it with bash (cut, fold) instead`,
    );
  if (lastShown < wantedEnd) {
    notes.push(
      `lines ${lastShown + 1}-${wantedEnd} not shown; pass view_range [${lastShown + 1}, ${Math.min(wantedEnd, lastShown + shown.length)}] to see more`,
    );
  }
  return {
    output: `${numberLines(shown, first)}\n[${notes.join("; ")}]`,
    path,
    kind: "file",
    total_lines: total,
    first_line: first,
    last_line: lastShown,
    truncated: true,
  };
}

/** Drops an incomplete UTF-8 sequence at the end of a cut buffer. */
function trimPartialUtf8(bytes: Buffer): Buffer {
  let end = bytes.length;
  let back = 0;
  while (end > 0 && back < 4 && ((bytes[end - 1] as number) & 0xc0) === 0x80) {
    end--;
    back++;
  }
  if (end > 0 && ((bytes[end - 1] as number) & 0x80) !== 0) end--;
  return bytes.subarray(0, end);
}
