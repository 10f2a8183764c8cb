import { InvalidArgumentError } from "../../util/errors.js";
import { type EditorNames, FILE_EDITOR_NAMES } from "./editor-names.js";
import { type TextEdit, textEdit } from "./text-edit.js";
import { assertTextContent } from "./text-file.js";
import { countLines, dominantEnding, spannedLines, toEnding } from "./text-lines.js";

/**
 * Inserts `content` after line `lineNumber` (0 = at the top, the line count = at the end). The
 * content takes the file's line ending; a file without a final newline keeps going without one.
 */
export function insertAt(
  text: string,
  lineNumber: number,
  content: string,
  path = "the file",
  names: EditorNames = FILE_EDITOR_NAMES,
): TextEdit {
  assertTextContent(text, path);
  const total = countLines(text);
  if (!Number.isInteger(lineNumber) || lineNumber < 0 || lineNumber > total) {
    throw new InvalidArgumentError(
      names.lineNumber,
      `${lineNumber} is out of range: ${path} has ${total} line${total === 1 ? "" : "s"}, so pass 0 (insert at the top) to ${total} (insert after the last line)`,
    );
  }
  if (content.length === 0) {
    throw new InvalidArgumentError(
      names.insertText,
      'is empty, so there is nothing to insert; pass "\\n" to insert a blank line',
    );
  }
  const eol = dominantEnding(text);
  let lines = toEnding(content, eol);
  if (!lines.endsWith("\n")) lines += eol;

  const offset = offsetAfterLine(text, lineNumber);
  let updated: string;
  if (lineNumber === total && total > 0 && !text.endsWith("\n")) {
    // Appending after an unterminated last line: end that line, and leave the new last line as
    // unterminated as the old one was.
    updated = text + eol + lines.slice(0, lines.length - (lines.endsWith("\r\n") ? 2 : 1));
  } else {
    updated = text.slice(0, offset) + lines + text.slice(offset);
  }
  return textEdit(updated, lineNumber + 1, lineNumber + spannedLines(lines));
}

/** The offset just past line `lineNumber`'s ending (0 for line 0). */
function offsetAfterLine(text: string, lineNumber: number): number {
  let offset = 0;
  for (let n = 0; n < lineNumber; n++) {
    const newline = text.indexOf("\n", offset);
    if (newline === -1) return text.length;
    offset = newline + 1;
  }
  return offset;
}
