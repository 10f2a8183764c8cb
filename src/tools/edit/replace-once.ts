import { InvalidArgumentError } from "../../util/errors.js";
import { type EditorNames, FILE_EDITOR_NAMES } from "./editor-names.js";
import { type TextEdit, textEdit } from "./text-edit.js";
import { assertTextContent } from "./text-file.js";
import { lineNumberAt, spannedLines, toEnding, usesOnlyCrlf } from "./text-lines.js";

/** Counting stops here; a count past it is reported as "more than". */
const MAX_COUNTED_MATCHES = 1_000;
/** How many match lines an error lists. */
const LISTED_MATCH_LINES = 10;

/**
 * Replaces the one occurrence of `oldString` in `text` with `newString`. Zero or several matches
 * throw an error naming the count (and lines) so the caller can add context. In a file whose
 * lines all end in CRLF, "\n" in the strings stands for "\r\n". `$` patterns are not special.
 * Messages use the calling tool's `names`.
 */
export function replaceOnce(
  text: string,
  oldString: string,
  newString: string,
  path = "the file",
  names: EditorNames = FILE_EDITOR_NAMES,
): TextEdit {
  assertTextContent(text, path);
  if (oldString.length === 0) {
    throw new InvalidArgumentError(
      names.oldString,
      `is empty; give the exact text to replace, with enough surrounding lines to match once. To add lines use ${names.insert}; to write a whole file use ${names.create}`,
    );
  }
  if (oldString === newString) {
    throw new InvalidArgumentError(
      names.newString,
      `is the same as ${names.oldString}, so nothing would change`,
    );
  }
  let search = oldString;
  let replacement = newString;
  if (usesOnlyCrlf(text) && !oldString.includes("\r")) {
    search = toEnding(oldString, "\r\n");
    replacement = toEnding(newString, "\r\n");
  }

  const offsets = findOccurrences(text, search);
  if (offsets.length === 0) throw noMatchError(text, oldString, path, names);
  const first = offsets[0] as number;
  if (offsets.length > 1) {
    const count =
      offsets.length >= MAX_COUNTED_MATCHES ? `more than ${MAX_COUNTED_MATCHES - 1}` : String(offsets.length);
    const lines = offsets.slice(0, LISTED_MATCH_LINES).map((offset) => lineNumberAt(text, offset));
    const more = offsets.length > LISTED_MATCH_LINES ? ", ..." : "";
    throw new InvalidArgumentError(
      names.oldString,
      `matches ${count} times in ${path} (starting on lines ${lines.join(", ")}${more}); it must match exactly once. Add surrounding lines to ${names.oldString} so it is unique`,
    );
  }

  const updated = text.slice(0, first) + replacement + text.slice(first + search.length);
  const startLine = lineNumberAt(text, first);
  // The replacement starts mid-line as often as not, so count its lines from where it starts.
  const endLine =
    replacement.length === 0 ? startLine : lineNumberAt(updated, first + replacement.length - 1);
  return textEdit(updated, startLine, Math.max(startLine, endLine));
}

/** Start offsets of every occurrence, overlapping ones included, up to the counting cap. */
function findOccurrences(text: string, search: string): number[] {
  const offsets: number[] = [];
  let at = text.indexOf(search);
  while (at !== -1 && offsets.length < MAX_COUNTED_MATCHES) {
    offsets.push(at);
    at = text.indexOf(search, at + 1);
  }
  return offsets;
}

function noMatchError(
  text: string,
  oldString: string,
  path: string,
  names: EditorNames,
): InvalidArgumentError {
  const hints: string[] = [];
  if (/^\s*\d+\t/m.test(oldString)) {
    hints.push(`${names.oldString} seems to start with line numbers copied from view; leave those out`);
  }
  const near = looseMatchLine(text, oldString);
  if (near !== undefined) {
    hints.push(
      `a match that differs only in whitespace or indentation starts on line ${near}; copy the text exactly as view shows it`,
    );
  }
  if (spannedLines(oldString) > 1 && text.includes("\r\n") && !usesOnlyCrlf(text)) {
    hints.push("the file mixes CRLF and LF line endings; match the endings exactly or replace a single line");
  }
  const why = hints.length > 0 ? ` (${hints.join("; ")})` : "";
  return new InvalidArgumentError(
    names.oldString,
    `matches 0 times in ${path}${why}. View the file and copy the exact text to replace, including whitespace`,
  );
}

/** Bound on line comparisons for the whitespace hint, so a pathological file stays cheap. */
const MAX_HINT_COMPARISONS = 2_000_000;

/** The first line where `oldString` matches once runs of whitespace count as one space. */
function looseMatchLine(text: string, oldString: string): number | undefined {
  const wanted = oldString.split(/\r?\n/).map(squeeze);
  while (wanted.length > 1 && wanted[wanted.length - 1] === "") wanted.pop();
  if (wanted.every((line) => line === "")) return undefined;
  const lines = text.split(/\r?\n/).map(squeeze);
  let comparisons = 0;
  for (let i = 0; i + wanted.length <= lines.length; i++) {
    let j = 0;
    while (j < wanted.length && comparisons++ < MAX_HINT_COMPARISONS) {
      const have = lines[i + j] as string;
      const want = wanted[j] as string;
      // The first and last wanted lines may be fragments of longer lines.
      const ok =
        wanted.length === 1
          ? have.includes(want)
          : j === 0
            ? have.endsWith(want)
            : j === wanted.length - 1
              ? have.startsWith(want)
              : have === want;
      if (!ok) break;
      j++;
    }
    if (j === wanted.length) return i + 1;
    if (comparisons >= MAX_HINT_COMPARISONS) return undefined;
  }
  return undefined;
}

function squeeze(line: string): string {
  return line.replace(/\s+/g, " ").trim();
}
