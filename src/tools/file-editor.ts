/**
 * The file editor behind file_editor and str_replace_based_edit_tool: the pure edit operations of
 * `edit/` applied to files in a session's box through `box-files`, with an undo history per
 * session kept on the host.
 */
import { createHash } from "node:crypto";
import type { Session } from "../session/session.js";
import { InvalidArgumentError, LimitExceededError, NotFoundError } from "../util/errors.js";
import { IsDirectoryError, listDir, readFile, removeFile, statPath, writeFile } from "./box-files.js";
import { createFile } from "./edit/create-file.js";
import { formatDirectoryListing } from "./edit/directory-listing.js";
import { EditHistory } from "./edit/edit-history.js";
import { type EditorNames, FILE_EDITOR_NAMES } from "./edit/editor-names.js";
import { insertAt } from "./edit/insert-at.js";
import { replaceOnce } from "./edit/replace-once.js";
import type { TextEdit } from "./edit/text-edit.js";
import { decodeText, encodeText, type TextEncoding } from "./edit/text-file.js";
import { viewFile } from "./edit/view-file.js";
import { viewLargeFile } from "./large-file-view.js";

/** Files bigger than this are viewed in parts (by view_range) and not edited here (8 MiB). */
export const MAX_EDIT_BYTES = 8 * 1024 * 1024;

export type EditOperation = "view" | "create" | "replace" | "insert" | "undo";

/** One editor request, in file_editor's terms (str_replace_based_edit_tool maps its names to these). */
export interface EditRequest {
  operation: EditOperation;
  path: string;
  content?: string;
  old_string?: string;
  new_string?: string;
  line_number?: number;
  view_range?: number[];
  overwrite?: boolean;
  /** What the calling tool names the parameters, for messages (default file_editor's). */
  names?: EditorNames;
}

export interface EditResult {
  output: string;
  /** The real path in the box, symlinks resolved. */
  path: string;
  kind: "file" | "directory";
  total_lines?: number;
  first_line?: number;
  last_line?: number;
  truncated?: boolean;
  /** Edits of this file that undo can still revert. */
  undo_steps?: number;
  /** Set for a file that is not UTF-8: "latin1", each byte one character, kept on write. */
  encoding?: "latin1";
}

interface EditorState {
  history: EditHistory;
  /**
   * A hash of the bytes this editor last wrote to each file, to notice changes made some other
   * way, and the encoding it wrote them in (undo writes back in the same).
   */
  written: Map<string, { hash: string; encoding: TextEncoding }>;
}

const states = new WeakMap<Session, EditorState>();

function stateOf(session: Session): EditorState {
  let state = states.get(session);
  if (state === undefined) {
    state = { history: new EditHistory(), written: new Map() };
    states.set(session, state);
  }
  return state;
}

/** Runs one editor operation in the session's box. */
export async function runEdit(
  session: Session,
  request: EditRequest,
  signal?: AbortSignal,
): Promise<EditResult> {
  const names = request.names ?? FILE_EDITOR_NAMES;
  switch (request.operation) {
    case "view":
      return view(session, request, signal);
    case "create":
      return create(session, request, required(request, "content"), signal);
    case "replace":
      return edit(session, request.path, names, names.newString, signal, (text, path) =>
        replaceOnce(text, required(request, "old_string"), required(request, "new_string"), path, names),
      );
    case "insert": {
      const line = required(request, "line_number");
      const content = required(request, "content");
      return edit(session, request.path, names, names.insertText, signal, (text, path) =>
        insertAt(text, line, content, path, names),
      );
    }
    case "undo":
      return undo(session, request.path, signal);
  }
}

function required<K extends "content" | "old_string" | "new_string" | "line_number">(
  request: EditRequest,
  field: K,
): NonNullable<EditRequest[K]> {
  const value = request[field];
  if (value === undefined || value === null) {
    const names = request.names ?? FILE_EDITOR_NAMES;
    const name = {
      content: request.operation === "create" ? names.fileText : names.insertText,
      old_string: names.oldString,
      new_string: names.newString,
      line_number: names.lineNumber,
    }[field];
    const hint = field === "new_string" ? '; pass "" to delete the matched text' : "";
    throw new InvalidArgumentError(
      name,
      `is required for the ${names[request.operation as "create" | "replace" | "insert"]} ${names.operation}${hint}`,
    );
  }
  return value as NonNullable<EditRequest[K]>;
}

async function view(session: Session, request: EditRequest, signal?: AbortSignal): Promise<EditResult> {
  let read;
  try {
    read = await readFile(session.box, request.path, { maxBytes: MAX_EDIT_BYTES, signal });
  } catch (error) {
    if (!(error instanceof IsDirectoryError)) throw error;
    if (request.view_range !== undefined) {
      throw new InvalidArgumentError(
        "view_range",
        `${request.path} is a directory; view_range applies to files only`,
      );
    }
    const listing = await listDir(session.box, request.path, 2, { signal });
    let output = formatDirectoryListing(listing.path, listing.entries, { maxDepth: 2 });
    if (listing.truncated) output += "\n[the listing was cut short; view a subdirectory to see more]";
    return { output, path: listing.path, kind: "directory", truncated: listing.truncated };
  }
  if (read.truncated) return viewLargeFile(session.box, read.path, read.size, request.view_range, signal);
  const { text, encoding } = decodeText(read.data, read.path);
  const shown = viewFile(text, read.path, request.view_range);
  return {
    output: shown.text,
    path: read.path,
    kind: "file",
    total_lines: shown.totalLines,
    first_line: shown.firstLine,
    last_line: shown.lastLine,
    truncated: shown.truncated,
    ...latin1(encoding),
  };
}

function latin1(encoding: TextEncoding): { encoding?: "latin1" } {
  return encoding === "latin1" ? { encoding } : {};
}

interface ReadForEdit {
  path: string;
  text: string;
  encoding: TextEncoding;
  bytes: Uint8Array;
}

/** Reads a file for editing; undefined when it does not exist. */
async function readForEdit(
  session: Session,
  path: string,
  signal?: AbortSignal,
): Promise<ReadForEdit | undefined> {
  let read;
  try {
    read = await readFile(session.box, path, { maxBytes: MAX_EDIT_BYTES, signal });
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  if (read.truncated) {
    throw new LimitExceededError(
      `${read.path} is ${(read.size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_EDIT_BYTES / 1024 / 1024} MB this editor loads; view it in parts with view_range and edit it with bash (sed, patch) instead`,
    );
  }
  return { path: read.path, bytes: read.data, ...decodeText(read.data, read.path) };
}

async function create(
  session: Session,
  request: EditRequest,
  content: string,
  signal?: AbortSignal,
): Promise<EditResult> {
  if (request.path.endsWith("/")) {
    // "dir/" names a directory; writing a file called "dir" instead would surprise.
    throw new InvalidArgumentError(
      "path",
      `${JSON.stringify(request.path)} ends with a slash, so it names a directory; give the file's path (directories are made as needed)`,
    );
  }
  const existing = await readForEdit(session, request.path, signal);
  const made = createFile(existing?.text, content, {
    path: existing?.path ?? request.path,
    overwrite: request.overwrite,
    names: request.names,
  });
  const names = request.names ?? FILE_EDITOR_NAMES;
  // An overwritten file keeps its encoding; a new one is UTF-8.
  const encoding = existing?.encoding ?? "utf8";
  const bytes = encodeText(made.text, encoding, existing?.path ?? request.path, names.fileText);
  const written = await writeFile(session.box, request.path, bytes, { createDirs: true, signal });
  const steps = record(session, written, existing, bytes, encoding);
  const verb = made.overwritten ? "Overwrote" : "Created";
  const result = editResult(written, `${verb} ${written} (${plural(countOf(made), "line")}).`, made, steps);
  return { ...result, ...latin1(encoding) };
}

async function edit(
  session: Session,
  path: string,
  names: EditorNames,
  field: string,
  signal: AbortSignal | undefined,
  change: (text: string, path: string) => TextEdit,
): Promise<EditResult> {
  const current = await readForEdit(session, path, signal);
  if (current === undefined) {
    throw new NotFoundError(
      `${path} does not exist in /workspace; create it with the ${names.create} ${names.operation}, or view a directory to find the right path`,
    );
  }
  const changed = change(current.text, current.path);
  const bytes = encodeText(changed.text, current.encoding, current.path, field);
  const written = await writeFile(session.box, current.path, bytes, { signal });
  const steps = record(session, written, current, bytes, current.encoding);
  return { ...editResult(written, `Edited ${written}.`, changed, steps), ...latin1(current.encoding) };
}

async function undo(session: Session, path: string, signal?: AbortSignal): Promise<EditResult> {
  const { history, written } = stateOf(session);
  const current = await readForEdit(session, path, signal);
  const real = current?.path ?? (await statPath(session.box, path, { signal })).path;
  if (history.depth(real) === 0) history.pop(real); // throws the "nothing to undo" error
  const last = written.get(real);
  if (current === undefined || last === undefined || last.hash !== hash(current.bytes)) {
    history.clear(real);
    written.delete(real);
    throw new InvalidArgumentError(
      "path",
      `${real} was changed (or removed) by something other than this editor since its last edit here, so undo would discard that work; its undo history is cleared. View it and edit it directly`,
    );
  }
  const before = history.pop(real);
  if (before === null) {
    await removeFile(session.box, real, { signal });
    written.delete(real);
    return {
      output: `Undid the creation of ${real}: the file is removed.`,
      path: real,
      kind: "file",
      undo_steps: history.depth(real),
    };
  }
  const bytes = encodeText(before, last.encoding, real, "path");
  await writeFile(session.box, real, bytes, { signal });
  written.set(real, { hash: hash(bytes), encoding: last.encoding });
  const shown = viewFile(before, real, undefined, { maxLines: 40 });
  return {
    output: `Undid the last edit of ${real}; it now starts:\n${shown.text}`,
    path: real,
    kind: "file",
    total_lines: shown.totalLines,
    undo_steps: history.depth(real),
  };
}

/**
 * Records an edit for undo (`before` the text the file held, `after` the bytes written); history
 * made stale by another writer is dropped first.
 */
function record(
  session: Session,
  path: string,
  before: ReadForEdit | undefined,
  after: Uint8Array,
  encoding: TextEncoding,
): number {
  const { history, written } = stateOf(session);
  const last = written.get(path);
  if (last === undefined || before === undefined || last.hash !== hash(before.bytes)) history.clear(path);
  history.push(path, before?.text ?? null);
  written.set(path, { hash: hash(after), encoding });
  return history.depth(path);
}

function editResult(path: string, message: string, change: TextEdit, steps: number): EditResult {
  return {
    output: `${message} Lines ${change.startLine}-${change.endLine} now read (with context):\n${change.snippet}\nReview the change; undo reverts it.`,
    path,
    kind: "file",
    first_line: change.startLine,
    last_line: change.endLine,
    undo_steps: steps,
  };
}

function countOf(edit: TextEdit): number {
  return edit.text.length === 0 ? 0 : edit.endLine;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function hash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
