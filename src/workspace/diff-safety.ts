/**
 * The rules a diff from the box must pass before anything touches the host repository. The box
 * may be compromised, so the diff is treated as hostile: every path it names must stay inside
 * the repository and away from `.git`, and nothing may be written or read through a symlink.
 *
 * Symlinks: by default a diff may not create or change a symlink (mode 120000); deleting one is
 * fine, and symlinks the diff does not touch stay as they are. With `allowSymlinks` a diff may
 * create or change symlinks whose target is relative and stays inside the repository. Writing
 * or reading a path that goes through a symlink is refused always, whether the diff made the
 * symlink or the repository already had it. Gitlinks (submodules, mode 160000) are refused always.
 *
 * Ignore rules: a diff that removes or weakens a `.gitignore` (deletes or renames it, removes a
 * pattern, adds a `!` exception) is named by `ignoreRuleChanges`, because on the host it would
 * make files that were ignored visible to git, and to the next session's copy (a `.env`, say).
 * `.git/info/exclude` can never be in a diff: every path inside `.git` is refused.
 */
import { posix } from "node:path";
import { UnsafeDiffError } from "../util/errors.js";
import { diffBytes, parseGitDiff, type FileChange } from "./parse-git-diff.js";

/** 20 MiB: far above any reviewable change, far below what could exhaust the host. */
export const DEFAULT_MAX_DIFF_BYTES = 20 * 1024 * 1024;

export interface DiffSafetyOptions {
  /** Refuse diffs larger than this many bytes. Default 20 MiB. */
  maxBytes?: number;
  /** Let the diff create or change symlinks that point inside the repository. Default false. */
  allowSymlinks?: boolean;
}

const SYMLINK = "120000";
const GITLINK = "160000";
const FILE_MODES = new Set(["100644", "100755", SYMLINK]);
/** Code points HFS+ ignores when comparing names, so `.g\u200cit` is `.git` there. */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;
/** Files git itself refuses to hold as symlinks (it reads them through the worktree). */
const NO_SYMLINK_NAMES = new Set([".gitmodules", ".gitattributes", ".gitignore", ".mailmap"]);

/** A change that removes or weakens ignore rules, and how. */
export interface IgnoreRuleChange {
  path: string;
  /** What it does, for a message: "deleted", "renamed to x", "removes 2 pattern(s)", "adds the exception !.env". */
  how: string;
}

/**
 * The changes that remove or weaken ignore rules: a `.gitignore` (any directory, any case)
 * deleted, renamed away, binary, or edited so that a pattern line goes or a `!` exception comes
 * (also in a new `.gitignore`, whose exception may undo a parent's rule). `diff` is the text the
 * changes were parsed from; adding patterns and editing comments are not weakening.
 */
export function ignoreRuleChanges(diff: string | Uint8Array, changes: FileChange[]): IgnoreRuleChange[] {
  const lines = (typeof diff === "string" ? diff : Buffer.from(diff).toString("utf8")).split("\n");
  const out: IgnoreRuleChange[] = [];
  changes.forEach((change, i) => {
    const was = change.oldPath ?? change.path;
    const wasIgnoreFile = change.status !== "added" && isIgnoreFile(was);
    if (change.status === "deleted" && isIgnoreFile(change.path)) {
      out.push({ path: change.path, how: "deleted" });
      return;
    }
    if (change.status === "renamed" && wasIgnoreFile && !isIgnoreFile(change.path)) {
      out.push({ path: was, how: `renamed to ${show(change.path)}` });
      return;
    }
    if (!isIgnoreFile(change.path)) return;
    if (change.binary) {
      out.push({ path: change.path, how: "changed as binary content that cannot be checked" });
      return;
    }
    // The section's lines: from its header to the next section's.
    const section = lines.slice(change.line, changes[i + 1] ? changes[i + 1]!.line - 1 : undefined);
    const body = section.filter((l) => !l.startsWith("+++ ") && !l.startsWith("--- "));
    const removed = body.filter((l) => l.startsWith("-") && isPattern(l.slice(1)));
    const exceptions = body.filter((l) => l.startsWith("+") && l.slice(1).trimStart().startsWith("!"));
    const hows = [
      removed.length
        ? `removes ${removed.length} pattern(s): ${removed
            .slice(0, 3)
            .map((l) => l.slice(1))
            .join(", ")}`
        : "",
      exceptions.length
        ? `adds the exception(s) ${exceptions
            .slice(0, 3)
            .map((l) => l.slice(1).trim())
            .join(", ")}`
        : "",
    ].filter(Boolean);
    if (hows.length) out.push({ path: change.path, how: hows.join("; ") });
  });
  return out;
}

function isIgnoreFile(path: string): boolean {
  return (path.split("/").at(-1) ?? "").replace(HFS_IGNORABLE, "").toLowerCase() === ".gitignore";
}

/** A line of a .gitignore that is a rule: not blank, not a comment. */
function isPattern(line: string): boolean {
  const text = line.trim();
  return text !== "" && !text.startsWith("#");
}

/**
 * Parses the diff and refuses it (throws `UnsafeDiffError`) if it is too large, malformed, or
 * breaks any rule above; returns the file changes it holds.
 */
export function assertDiffIsSafe(diff: string | Uint8Array, options: DiffSafetyOptions = {}): FileChange[] {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DIFF_BYTES;
  const size = typeof diff === "string" ? Buffer.byteLength(diff, "utf8") : diff.byteLength;
  if (size > maxBytes) {
    throw new UnsafeDiffError(
      `the diff is ${formatMB(size)} (${size} bytes), over the ${formatMB(maxBytes)} cap; ` +
        `if a change this large is expected, raise the maxBytes option`,
    );
  }
  const changes = parseGitDiff(typeof diff === "string" ? diff : diffBytes(diff));
  for (const change of changes) {
    for (const path of pathsOf(change)) assertSafeRepoPath(path);
    for (const mode of [change.oldMode, change.newMode]) {
      if (mode === GITLINK) {
        throw new UnsafeDiffError(
          `${show(change.path)} is a submodule (gitlink); drydock does not apply submodule changes`,
        );
      }
      if (mode !== undefined && !FILE_MODES.has(mode))
        throw new UnsafeDiffError(`${show(change.path)} has the unknown mode ${mode}`);
    }
  }
  assertEachPathOnce(changes);
  const symlinks = changes.filter(isSymlinkWrite).map((c) => c.path);
  assertNothingThrough(changes, (prefix) => symlinks.some((s) => foldKey(s) === foldKey(prefix)));
  for (const change of changes.filter(isSymlinkWrite)) assertSymlinkAllowed(change, options);
  return changes;
}

/** How the repository looked before the diff: the mode of a path, or undefined when it does not exist. */
export type ModeLookup = (path: string) => string | undefined;

/**
 * The checks that need the host repository: no path of the diff may go through a symlink or a
 * submodule the repository already has, and a file the diff renames, copies or edits without
 * naming its mode must not turn out to be a symlink or gitlink.
 */
export function assertChangesFitBase(
  changes: FileChange[],
  modeOf: ModeLookup,
  options: DiffSafetyOptions = {},
): void {
  const removed = new Set(
    changes.flatMap((c) =>
      c.status === "deleted" ? [c.path] : c.status === "renamed" && c.oldPath ? [c.oldPath] : [],
    ),
  );
  assertNothingThrough(changes, (prefix) => {
    const mode = modeOf(prefix);
    if (mode === GITLINK)
      throw new UnsafeDiffError(
        `${show(prefix)} is a submodule or nested repository; the diff may not write inside it`,
      );
    return mode === SYMLINK && !removed.has(prefix);
  });
  for (const change of changes) {
    if (change.status === "added") continue;
    const before = change.oldPath ?? change.path;
    const mode = modeOf(before);
    if (mode === undefined) continue;
    if (mode === GITLINK) {
      throw new UnsafeDiffError(
        `${show(before)} is a submodule (gitlink); drydock does not apply submodule changes`,
      );
    }
    if (change.oldMode !== undefined && (change.oldMode === SYMLINK) !== (mode === SYMLINK)) {
      throw new UnsafeDiffError(
        `the diff gives ${show(before)} the mode ${change.oldMode}, but the repository has ${mode}`,
      );
    }
    const after = change.status === "deleted" ? undefined : (change.newMode ?? mode);
    if (after === SYMLINK) assertSymlinkAllowed({ ...change, newMode: SYMLINK }, options);
  }
}

/** Every path and parent directory the diff names, for looking up their modes on the host. */
export function pathsToCheck(changes: FileChange[]): string[] {
  const out = new Set<string>();
  for (const path of changes.flatMap(pathsOf)) {
    const parts = path.split("/");
    for (let n = 1; n <= parts.length; n++) out.add(parts.slice(0, n).join("/"));
  }
  return [...out];
}

/** Throws `UnsafeDiffError` unless `path` is a plain relative path inside the repository and outside `.git`. */
export function assertSafeRepoPath(path: string): void {
  const refuse = (why: string): never => {
    throw new UnsafeDiffError(`the path ${show(path)} ${why}`);
  };
  if (path === "") refuse("is empty");
  if (/[\x00-\x1f\x7f]/.test(path)) refuse("holds a control character");
  if (path.startsWith("/") || path.startsWith("\\")) refuse("is absolute");
  // `c:` or `c:x` is drive-relative on Windows: it would land wherever that drive's cwd is.
  if (/^[A-Za-z]:/.test(path)) refuse("starts with a drive letter");
  // A backslash separates directories on Windows: treat it as one so `..\x` and `.git\x` are caught too.
  for (const part of path.split(/[\\/]/)) {
    if (part === "") refuse("has an empty component (`//` or a trailing slash)");
    if (part === "." || part === "..") refuse("has a `.` or `..` component and could leave the repository");
    if (isGitDirName(part)) refuse("is inside a `.git` directory");
  }
}

/** `.git` in any case, with the spellings other file systems treat as `.git` (`.git.`, `git~1`, HFS+ ignorables). */
export function isGitDirName(part: string): boolean {
  const name = part
    .replace(HFS_IGNORABLE, "")
    .toLowerCase()
    .replace(/[. ]+$/u, "");
  return name === ".git" || name === "git~1";
}

function isSymlinkWrite(change: FileChange): boolean {
  return change.status !== "deleted" && change.newMode === SYMLINK;
}

function assertSymlinkAllowed(change: FileChange, options: DiffSafetyOptions): void {
  const where = show(change.path);
  if (!options.allowSymlinks) {
    throw new UnsafeDiffError(
      `the diff creates or changes the symlink ${where}; symlinks from a box are refused (one could ` +
        `point anywhere on the host); remove it in the box and apply again, and make the link on the host if you mean it`,
    );
  }
  const name = change.path.split("/").at(-1)?.toLowerCase() ?? "";
  if (NO_SYMLINK_NAMES.has(name)) throw new UnsafeDiffError(`${where} may not be a symlink`);
  const target = change.singleNewLine;
  if (change.binary || target === undefined) {
    throw new UnsafeDiffError(
      `cannot read the target of the symlink ${where} from the diff, so it cannot be checked`,
    );
  }
  const resolved = posix.normalize(posix.join(posix.dirname(change.path), target));
  const bad = target === "" || /[\x00-\x1f\x7f\\]/.test(target) || posix.isAbsolute(target);
  if (bad || resolved === ".." || resolved.startsWith("../") || resolved.split("/").some(isGitDirName)) {
    throw new UnsafeDiffError(
      `the symlink ${where} points to ${JSON.stringify(target)}, outside the repository or into .git`,
    );
  }
}

function assertNothingThrough(changes: FileChange[], isLink: (prefix: string) => boolean): void {
  for (const change of changes) {
    for (const path of pathsOf(change)) {
      const parts = path.split("/");
      for (let n = 1; n < parts.length; n++) {
        const prefix = parts.slice(0, n).join("/");
        if (isLink(prefix))
          throw new UnsafeDiffError(
            `${show(path)} goes through the symlink ${show(prefix)}; nothing may be written or read beyond a symlink`,
          );
      }
    }
  }
}

/** A path may be written by one file section only (a type change is a deletion then an addition). */
function assertEachPathOnce(changes: FileChange[]): void {
  const written = new Map<string, FileChange>();
  const removed = new Set<string>();
  for (const change of changes) {
    const key = foldKey(change.path);
    if (change.status === "deleted") {
      if (removed.has(key) || written.has(key))
        throw new UnsafeDiffError(`${show(change.path)} is deleted twice or after it was written`);
      removed.add(key);
      continue;
    }
    const earlier = written.get(key);
    if (earlier)
      throw new UnsafeDiffError(
        `${show(change.path)} is written by two file sections (lines ${earlier.line} and ${change.line})`,
      );
    written.set(key, change);
    if (change.status === "renamed" && change.oldPath !== undefined) removed.add(foldKey(change.oldPath));
  }
}

function pathsOf(change: FileChange): string[] {
  return change.oldPath === undefined ? [change.path] : [change.oldPath, change.path];
}

/** Names that may be one file on a case-insensitive or normalising file system compare equal. */
function foldKey(path: string): string {
  return path.normalize("NFC").replace(HFS_IGNORABLE, "").toLowerCase();
}

function formatMB(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function show(path: string): string {
  return JSON.stringify(path);
}
