/**
 * File access for tools, inside a box and confined to /workspace. Each operation is one exec of a
 * small bash script that takes the path as a positional argument: it resolves symlinks in the box
 * (`realpath -m`), refuses anything whose real path leaves /workspace, checks the kind of file and
 * then reads or writes, so a check and its use are one round trip.
 */
import type { Box } from "../sandbox/box.js";
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

// Exit codes the scripts use to say why they refused; anything else is an unexpected failure.
const UNRESOLVABLE = 90;
const OUTSIDE = 91;
const MISSING = 92;
const DIRECTORY = 93;
const SPECIAL = 94;
const UNREADABLE = 95;
const NO_PARENT = 96;
const NOT_DIRECTORY = 97;

/** Resolves "$1" into $p and refuses a real path outside /workspace. */
const RESOLVE = `
set -u
p=$(realpath -m -- "$1" 2>&1) || { printf '%s' "$p" >&2; exit ${UNRESOLVABLE}; }
case "$p" in /workspace|/workspace/*) ;; *) printf '%s' "$p" >&2; exit ${OUTSIDE} ;; esac
`;

/** Requires $p to be a readable regular file. */
const REQUIRE_FILE = `
[ -e "$p" ] || exit ${MISSING}
[ -d "$p" ] && exit ${DIRECTORY}
[ -f "$p" ] || exit ${SPECIAL}
[ -r "$p" ] || exit ${UNREADABLE}
size=$(stat -c %s -- "$p")
`;

const READ_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
printf '%s\\0%s\\0' "$p" "$size"
head -c "$2" -- "$p"
`;

const LINES_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
total=$(wc -l < "$p")
[ "$size" -gt 0 ] && [ -n "$(tail -c 1 -- "$p" | tr -d '\\0')" ] && total=$((total + 1))
printf '%s\\0%s\\0%s\\0' "$p" "$size" "$total"
if [ "$3" = "$" ]; then sed -n "$2,\\$p" -- "$p"; else sed -n "$2,$3p;$3q" -- "$p"; fi | head -c "$4"
`;

const STAT_SCRIPT = `${RESOLVE}
if [ -f "$p" ]; then k=file; elif [ -d "$p" ]; then k=directory; elif [ -e "$p" ]; then k=other; else k=missing; fi
s=0; [ "$k" = missing ] || s=$(stat -c %s -- "$p")
printf '%s\\0%s\\0%s' "$p" "$k" "$s"
`;

// Writes through a temporary file in the same directory and renames it into place, so a failed
// write leaves the old content whole; an existing file keeps its mode.
const WRITE_SCRIPT = `${RESOLVE}
[ -d "$p" ] && exit ${DIRECTORY}
[ -e "$p" ] && [ ! -f "$p" ] && exit ${SPECIAL}
d=$(dirname -- "$p")
if [ "$2" = 1 ] && [ ! -e "$d" ]; then mkdir -p -- "$d" || exit 1; fi
[ -d "$d" ] || { printf '%s' "$d" >&2; exit ${NO_PARENT}; }
t=$(mktemp -- "$d/.drydock-write-XXXXXX") || exit 1
trap 'rm -f -- "$t"' EXIT
cat > "$t" || exit 1
if [ -e "$p" ]; then chmod --reference="$p" -- "$t"; else chmod 644 -- "$t"; fi
if [ -n "$3" ]; then chmod -- "$3" "$t" || exit 1; fi
mv -f -- "$t" "$p" || exit 1
trap - EXIT
printf '%s' "$p"
`;

const REMOVE_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
rm -f -- "$p" && printf '%s' "$p"
`;

// For each path: status, real path and byte count, NUL-terminated, then that many bytes. A copy
// is taken first so the count is exact even if the file changes meanwhile.
const READ_MANY_SCRIPT = `
set -u
max=$1; shift
t=$(mktemp) || exit 1
trap 'rm -f -- "$t"' EXIT
for f; do
  p=$(realpath -m -- "$f" 2>/dev/null) || p=$f
  case "$p" in /workspace|/workspace/*) ;; *) printf 'outside\\0%s\\0%s\\0' "$p" 0; continue ;; esac
  if [ ! -f "$p" ] || [ ! -r "$p" ]; then printf 'unreadable\\0%s\\0%s\\0' "$p" 0; continue; fi
  head -c "$max" -- "$p" > "$t" || { printf 'unreadable\\0%s\\0%s\\0' "$p" 0; continue; }
  printf 'ok\\0%s\\0%s\\0' "$p" "$(stat -c %s -- "$t")"
  cat -- "$t"
done
`;

const LIST_SCRIPT = `${RESOLVE}
[ -e "$p" ] || exit ${MISSING}
[ -d "$p" ] || exit ${NOT_DIRECTORY}
printf '%s\\0' "$p"
find "$p" -mindepth 1 -maxdepth "$2" -name '.*' -prune -o -printf '%y\\t%P\\0'
`;

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
  const args = [options.createDirs ? "1" : "0", options.mode ?? ""];
  const stdin = typeof data === "string" ? data : Buffer.from(data);
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
  const result = await box.sh(READ_MANY_SCRIPT, [String(maxBytes), ...absolute], {
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
  const result = await box.sh(script, [absolute, ...args], {
    stdin,
    timeoutMs: FILE_OP_TIMEOUT_MS,
    maxOutputBytes,
    signal: options.signal,
  });
  if (result.exitCode !== 0) throw refusal(result.exitCode, result.stderr.toString("utf8"), path, field);
  return { stdout: result.stdout, truncated: result.truncated };
}

function refusal(exitCode: number, detail: string, path: string, field: string): Error {
  switch (exitCode) {
    case OUTSIDE:
      return new PathOutsideWorkspaceError(
        path,
        `it resolves (through a symlink) to ${detail}, outside /workspace`,
      );
    case UNRESOLVABLE:
      return new InvalidArgumentError(field, `${path} cannot be resolved in the box: ${detail.trim()}`);
    case MISSING:
      return new NotFoundError(
        `${path} does not exist in /workspace; list a directory with file_editor view to find the right path`,
      );
    case DIRECTORY:
      return new IsDirectoryError(field, path);
    case NOT_DIRECTORY:
      return new InvalidArgumentError(field, `${path} is a file, not a directory`);
    case SPECIAL:
      return new InvalidArgumentError(
        field,
        `${path} is not a regular file (a device, fifo or socket); text tools refuse it, use bash to inspect it`,
      );
    case UNREADABLE:
      return new InvalidArgumentError(
        field,
        `${path} is not readable by the box user; check it with bash (ls -l)`,
      );
    case NO_PARENT:
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
