import { InvalidArgumentError } from "../../util/errors.js";
import { detectJsonLayout, type JsonLayout } from "./json-layout.js";
import { type JsonScan, scanJson } from "./json-scan.js";

/** A parsed JSON file: its value, its layout, and what the strict scan noticed. */
export interface JsonDocument {
  readonly value: unknown;
  readonly layout: JsonLayout;
  readonly scan: JsonScan;
}

/** Parses a JSON file's text; invalid JSON throws InvalidJsonError with line and column. */
export function parseJsonDocument(text: string): JsonDocument {
  const scan = scanJson(text);
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return { value: JSON.parse(body) as unknown, layout: detectJsonLayout(text), scan };
}

/**
 * Refuses to rewrite a document when rewriting would lose data: duplicate keys (only the last
 * survives a parse) or numbers a JavaScript number cannot hold exactly.
 */
export function assertRewritable(document: JsonDocument): void {
  const duplicate = document.scan.duplicates[0];
  if (duplicate !== undefined) {
    throw new InvalidArgumentError(
      "file_path",
      `the file has the key ${JSON.stringify(duplicate.key)} twice in one object (line ${duplicate.first.line} column ${duplicate.first.column} and line ${duplicate.again.line} column ${duplicate.again.column}); rewriting it would keep only the last. Remove one with file_editor, then retry. Nothing was changed`,
    );
  }
  const inexact = document.scan.inexactNumbers[0];
  if (inexact !== undefined) {
    throw new InvalidArgumentError(
      "file_path",
      `the file has the number ${inexact.literal} (line ${inexact.at.line} column ${inexact.at.column}), which would change when the file is rewritten; edit this file with file_editor replace instead. Nothing was changed`,
    );
  }
}
