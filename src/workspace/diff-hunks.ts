/**
 * The body of a file section in a git diff: text hunks, counted line by line from their headers
 * as git counts them, and binary patch blocks. Also the error every part of the parser throws.
 */
import { UnsafeDiffError } from "../util/errors.js";

export type Lines = readonly string[];

export interface HunkCounts {
  insertions: number;
  deletions: number;
  context: number;
  /** Text of the new side's lines (context and added). */
  newLines: string[];
  hunks: number;
  /** The last hunk starts at the first line of the old file. */
  wholeFile: boolean;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const BINARY_DATA = /^[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+$/;

/** Reads the hunk whose header is at `start`, adding to `counts`; returns the index of the line after it. */
export function parseHunk(lines: Lines, start: number, counts: HunkCounts): number {
  const m = HUNK.exec(lines[start] ?? "");
  if (!m) throw malformedDiff(start, lines, "bad hunk header");
  let oldLeft = m[2] === undefined ? 1 : Number(m[2]);
  let newLeft = m[4] === undefined ? 1 : Number(m[4]);
  counts.wholeFile = Number(m[1]) <= 1;
  if (oldLeft === 0 && newLeft === 0) throw malformedDiff(start, lines, "an empty hunk");
  let i = start + 1;
  while (oldLeft > 0 || newLeft > 0) {
    if (i >= lines.length) throw malformedDiff(i - 1, lines, "the diff ends inside a hunk");
    const line = lines[i] ?? "";
    const c = line[0];
    // git reads an empty line inside a hunk as an empty context line.
    if (c === " " || c === undefined) {
      oldLeft--;
      newLeft--;
      counts.newLines.push(line.slice(1));
      counts.context++;
    } else if (c === "-") {
      oldLeft--;
      counts.deletions++;
    } else if (c === "+") {
      newLeft--;
      counts.insertions++;
      counts.newLines.push(line.slice(1));
    } else if (c !== "\\") {
      throw malformedDiff(i, lines, "a line inside a hunk must start with space, +, - or \\");
    }
    if (oldLeft < 0 || newLeft < 0)
      throw malformedDiff(i, lines, "the hunk holds more lines than its header says");
    i++;
  }
  while (lines[i]?.startsWith("\\")) i++;
  return i;
}

/** Reads one `literal`/`delta` block and the blank line that ends it; returns the index after it. */
export function parseBinaryBlock(lines: Lines, start: number): number {
  if (!/^(literal|delta) \d+$/.test(lines[start] ?? ""))
    throw malformedDiff(start, lines, "expected `literal N` or `delta N`");
  let i = start + 1;
  if (!BINARY_DATA.test(lines[i] ?? "")) throw malformedDiff(i, lines, "a binary patch without data");
  while (BINARY_DATA.test(lines[i] ?? "")) i++;
  if (i < lines.length) {
    if (lines[i] !== "") throw malformedDiff(i, lines, "bad binary patch data");
    i++;
  }
  return i;
}

/** The error for line `i` (0-based) of a diff that git would not have written. */
export function malformedDiff(i: number, lines: Lines, why: string): UnsafeDiffError {
  const text = lines[i];
  const excerpt =
    text === undefined
      ? ""
      : `: ${JSON.stringify(Buffer.from(text.slice(0, 120), "latin1").toString("utf8"))}`;
  return new UnsafeDiffError(`line ${i + 1} is not a well-formed git diff (${why})${excerpt}`);
}

export function throwMalformedDiff(i: number, lines: Lines, why: string): never {
  throw malformedDiff(i, lines, why);
}
