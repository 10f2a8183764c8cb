/**
 * File access for tools, inside a box and confined to /workspace. Each operation is one run of a
 * small bash script (`box-file-scripts`) that takes the path as a positional argument: it resolves
 * symlinks in the box (`realpath -m`), refuses anything whose real path leaves /workspace, checks
 * the kind of file and then reads or writes, so a check and its use are one round trip. Scripts
 * ride the box's channel (`box-channel`): no exec through the engine per operation.
 */
import type { Box } from "../sandbox/box.js";
import { boxSh } from "../sandbox/box-channel.js";
import {
  EXIT,
  LINES_SCRIPT,
  LIST_SCRIPT,
  READ_MANY_SCRIPT,
  READ_SCRIPT,
  REMOVE_SCRIPT,
  STAT_SCRIPT,
  WRITE_SCRIPT,
} from "./box-file-scripts.js";
import { resolveWorkspacePath } from "../sandbox/workspace-path.js";
import { type DirectoryEntry, parseFindListing } from "./edit/directory-listing.js";
import {
  CommandExitError,
  InvalidArgumentError,
  NotFoundError,
  PathOutsideWorkspaceError,
} from "../util/errors.js";

/** Most bytes a read returns unless told otherwise (8 MiB). */
export const DEFAULT_MAX_READ_BYTES = 8 * 1024 * 1024;
const FILE_OP_TIMEOUT_MS = 60_000;

export interface FileOpOptions {
  /** The argument name errors point at (default "path"). */
  field?: string;
  signal?: AbortSignal;
}

export interface ReadOptions extends FileOpOptions {
  /** Read at most this many bytes (default 8 MiB); a bigger file comes back cut, `truncated` set. */
  maxBytes?: number;
}

export interface FileRead {
  /** The real path in the box, symlinks resolved. */
  path: string;
  /** The file's size in bytes, which may be more than `data` holds. */
  size: number;
  data: Buffer;
  truncated: boolean;
}

export interface LinesRead {
  path: string;
  size: number;
  /** Lines in the whole file, a last line without a newline counted. */
  totalLines: number;
  /** The bytes of the requested lines, at most `maxBytes`. */
  data: Buffer;
  truncated: boolean;
}

export type PathKind = "file" | "directory" | "other" | "missing";

export interface PathStat {
  path: string;
  kind: PathKind;
  size: number;
}

/** The path names a directory where a file was wanted; a view lists it instead. */
export class IsDirectoryError extends InvalidArgumentError {
  override name = "IsDirectoryError";
  constructor(
    field: string,
    readonly path: string,
  ) {
    super(field, `${path} is a directory, not a file; view it to list what it holds`);
  }
}

/** Reads a regular file under /workspace; at most `maxBytes` of it (default 8 MiB). */
export async function readFile(box: Box, path: string, options: ReadOptions = {}): Promise<FileRead> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  const out = await run(box, READ_SCRIPT, path, [String(maxBytes)], options, maxBytes + 8192);
  const { fields, rest } = splitFields(out, 2);
  const size = Number(fields[1]);
  return { path: fields[0] ?? "", size, data: rest, truncated: size > rest.length };
}

/**
 * Reads lines `start`..`end` (1-based, inclusive; end -1 for the rest) of a file under /workspace
 * without loading the rest of it, at most `maxBytes` of them, and counts the file's lines.
 */
export async function readLines(
  box: Box,
  path: string,
  start: number,
  end: number,
  options: ReadOptions = {},
): Promise<LinesRead> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  const args = [String(start), end === -1 ? "$" : String(end), String(maxBytes)];
  const out = await run(box, LINES_SCRIPT, path, args, options, maxBytes + 8192);
  const { fields, rest } = splitFields(out, 3);
  return {
    path: fields[0] ?? "",
    size: Number(fields[1]),
    totalLines: Number(fields[2]),
    data: rest,
    truncated: rest.length >= maxBytes,
  };
}

/** What a path under /workspace is once symlinks are resolved; "missing" when nothing is there. */
export async function statPath(box: Box, path: string, options: FileOpOptions = {}): Promise<PathStat> {
  const out = await run(box, STAT_SCRIPT, path, [], options, 8192);
  const { fields, rest } = splitFields(out, 2);
  return { path: fields[0] ?? "", kind: fields[1] as PathKind, size: Number(rest.toString("utf8")) };
}

export interface WriteOptions extends FileOpOptions {
  /** Create missing parent directories (default false: a missing parent is an error). */
  createDirs?: boolean;
  /** Octal mode such as "755"; an existing file otherwise keeps its mode, a new one gets 644. */
  mode?: string;
}

/** Writes a regular file under /workspace, replacing it whole; returns the real path written. */
export async function writeFile(
  box: Box,
  path: string,
  data: Buffer | Uint8Array | string,
  options: WriteOptions = {},
): Promise<string> {
  if (options.mode !== undefined && !/^[0-7]{3,4}$/.test(options.mode)) {
    throw new InvalidArgumentError("mode", `${options.mode} is not an octal file mode such as 644 or 755`);
  }
  const stdin = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
  const args = [options.createDirs ? "1" : "0", options.mode ?? "", String(stdin.length)];
  const out = await run(box, WRITE_SCRIPT, path, args, options, 8192, stdin);
  return out.toString("utf8");
}

/** Deletes a regular file under /workspace (used to undo a create); returns the real path. */
export async function removeFile(box: Box, path: string, options: FileOpOptions = {}): Promise<string> {
  return (await run(box, REMOVE_SCRIPT, path, [], options, 8192)).toString("utf8");
}

/**
 * Reads several regular files under /workspace in one exec, each cut at `maxBytes` (default
 * 1 MiB). Files that cannot be read (outside, missing, not regular) are absent from the map.
 */
export async function readFiles(
  box: Box,
  paths: readonly string[],
  options: ReadOptions = {},
): Promise<Map<string, Buffer>> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const absolute = paths.map((p) => resolveWorkspacePath(p, options.field ?? "path"));
  const files = new Map<string, Buffer>();
  if (absolute.length === 0) return files;
  const result = await boxSh(box, READ_MANY_SCRIPT, [String(maxBytes), ...absolute], {
    timeoutMs: FILE_OP_TIMEOUT_MS,
    maxOutputBytes: absolute.length * (maxBytes + 8192),
    signal: options.signal,
  });
  if (result.exitCode !== 0) {
    throw new CommandExitError(result.exitCode, result.stderr.toString("utf8"), "reading files in the box");
  }
  const out = result.stdout;
  let at = 0;
  for (const requested of absolute) {
    const { fields, next } = headerAt(out, at, 3);
    if (fields === undefined) break;
    const [status, , count] = fields;
    const end = next + Number(count);
    if (status === "ok" && end <= out.length) files.set(requested, out.subarray(next, end));
    at = status === "ok" ? end : next;
  }
  return files;
}

function headerAt(out: Buffer, start: number, count: number): { fields?: string[]; next: number } {
  const fields: string[] = [];
  let at = start;
  for (let i = 0; i < count; i++) {
    const end = out.indexOf(0, at);
    if (end === -1) return { next: at };
    fields.push(out.subarray(at, end).toString("utf8"));
    at = end + 1;
  }
  return { fields, next: at };
}

export interface DirListing {
  path: string;
  entries: DirectoryEntry[];
  /** True when the listing was cut at its output cap. */
  truncated: boolean;
}

/** Lists a directory under /workspace `depth` levels deep (default 2), hidden entries skipped. */
export async function listDir(
  box: Box,
  path: string,
  depth = 2,
  options: FileOpOptions & { maxBytes?: number } = {},
): Promise<DirListing> {
  const cap = options.maxBytes ?? 4 * 1024 * 1024;
  const result = await exec(box, LIST_SCRIPT, path, [String(depth)], options, cap);
  const out = result.stdout;
  const end = out.indexOf(0);
  let body = out.subarray(end + 1).toString("utf8");
  // A record cut at the cap is dropped rather than listed under a wrong name.
  if (result.truncated) body = body.slice(0, body.lastIndexOf("\0") + 1);
  return {
    path: out.subarray(0, end).toString("utf8"),
    entries: parseFindListing(body),
    truncated: result.truncated,
  };
}

async function run(
  box: Box,
  script: string,
  path: string,
  args: string[],
  options: FileOpOptions,
  maxOutputBytes: number,
  stdin?: Buffer | string,
): Promise<Buffer> {
  return (await exec(box, script, path, args, options, maxOutputBytes, stdin)).stdout;
}

async function exec(
  box: Box,
  script: string,
  path: string,
  args: string[],
  options: FileOpOptions,
  maxOutputBytes: number,
  stdin?: Buffer | string,
): Promise<{ stdout: Buffer; truncated: boolean }> {
  const field = options.field ?? "path";
  const absolute = resolveWorkspacePath(path, field);
  const result = await boxSh(box, script, [absolute, ...args], {
    stdin,
    timeoutMs: FILE_OP_TIMEOUT_MS,
    maxOutputBytes,
    signal: options.signal,
  });
  if (result.exitCode !== 0) throw refusal(result.exitCode, result.stderr.toString("utf8"), path, field);
  return { stdout: result.stdout, truncated: result.truncated };
}

/** The error a box file script's refusal (an EXIT code) stands for, naming `field`. */
export function refusal(exitCode: number, detail: string, path: string, field: string): Error {
  switch (exitCode) {
    case EXIT.OUTSIDE:
      return new PathOutsideWorkspaceError(
        path,
        `it resolves (through a symlink) to ${detail}, outside /workspace`,
      );
    case EXIT.UNRESOLVABLE:
      return new InvalidArgumentError(field, `${path} cannot be resolved in the box: ${detail.trim()}`);
    case EXIT.MISSING:
      return new NotFoundError(
        `${path} does not exist in /workspace; list a directory with file_editor view to find the right path`,
      );
    case EXIT.DIRECTORY:
      return new IsDirectoryError(field, path);
    case EXIT.NOT_DIRECTORY:
      return new InvalidArgumentError(field, `${path} is a file, not a directory`);
    case EXIT.SPECIAL:
      return new InvalidArgumentError(
        field,
        `${path} is not a regular file (a device, fifo or socket); text tools refuse it, use bash to inspect it`,
      );
    case EXIT.UNREADABLE:
      return new InvalidArgumentError(
        field,
        `${path} is not readable by the box user; check it with bash (ls -l)`,
      );
    case EXIT.NO_PARENT:
      return new NotFoundError(
        `the directory ${detail} for ${path} does not exist; create it first (file_editor create makes missing parents)`,
      );
    default:
      return new CommandExitError(exitCode, detail, `file access to ${path}`);
  }
}

/** Splits `count` NUL-terminated header fields off the front of a reply; the rest is the body. */
function splitFields(out: Buffer, count: number): { fields: string[]; rest: Buffer } {
  const { fields, next } = headerAt(out, 0, count);
  if (fields === undefined) {
    throw new CommandExitError(0, out.subarray(0, 200).toString("utf8"), "reading the box's file reply");
  }
  return { fields, rest: out.subarray(next) };
}
