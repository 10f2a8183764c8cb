import { InvalidArgumentError } from "../../util/errors.js";
import { type EditorNames, FILE_EDITOR_NAMES } from "./editor-names.js";
import { type TextEdit, textEdit } from "./text-edit.js";
import { countLines } from "./text-lines.js";

/** How `createFile` treats a file that is already there. */
export interface CreateOptions {
  readonly path: string;
  /** Replace an existing file instead of refusing (default false). */
  readonly overwrite?: boolean;
  /** The calling tool's names, for messages (default file_editor's). */
  readonly names?: EditorNames;
}

/** The content to write for a create, plus whether it replaced an existing file. */
export interface CreatedFile extends TextEdit {
  readonly overwritten: boolean;
}

/**
 * Decides a create: `existing` is the current content, or undefined when no file is there. Refuses
 * to replace a file unless `overwrite` is set, and refuses NUL characters (text files only).
 */
export function createFile(
  existing: string | undefined,
  content: string,
  options: CreateOptions,
): CreatedFile {
  const names = options.names ?? FILE_EDITOR_NAMES;
  if (existing !== undefined && options.overwrite !== true) {
    throw new InvalidArgumentError(
      "path",
      `${options.path} already exists (${countLines(existing)} lines); edit it with ${names.replace} or ${names.insert}, or pass overwrite: true to replace all of it`,
    );
  }
  if (content.includes("\0")) {
    throw new InvalidArgumentError(
      names.fileText,
      "contains NUL characters; this tool writes text files only",
    );
  }
  const lines = countLines(content);
  return { ...textEdit(content, 1, Math.max(1, lines)), overwritten: existing !== undefined };
}
