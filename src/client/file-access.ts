import { realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** The verdict on one path: its absolute form when usable, or why not. */
export type FileCheck = { ok: true; absolutePath: string } | { ok: false; reason: string };

/**
 * Decides which paths may go into the bridge's file context (the IDL's FileAccessManager). Give
 * your own to apply other rules; the default is {@link RepoFileAccess}.
 */
export interface FileAccess {
  /** Checks `path` (absolute, or relative to the repository) and returns its absolute form if it may be used. */
  check(path: string): Promise<FileCheck>;
}

/** True when `child` (a resolved path) is `root` itself or lies beneath it. */
function isWithin(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The default FileAccess: a path is kept when it names an existing regular file inside the
 * repository once every symlink is resolved, and not inside `.git`. Kept paths are returned
 * resolved (real paths), so a link cannot later be re-pointed outside.
 */
export class RepoFileAccess implements FileAccess {
  private root: Promise<string> | undefined;

  /** @param repoPath the repository's root directory (defaults to the current directory). */
  constructor(readonly repoPath: string = process.cwd()) {}

  /** Accepts `path` only if it is an existing regular file inside the repository, symlinks resolved. */
  async check(path: string): Promise<FileCheck> {
    if (typeof path !== "string" || path.trim() === "") return { ok: false, reason: "not a path" };
    let root: string;
    try {
      root = await this.realRoot();
    } catch {
      return { ok: false, reason: `the repository ${this.repoPath} does not exist` };
    }
    const lexical = isAbsolute(path) ? resolve(path) : resolve(this.repoPath, path);
    // A lexical escape is refused even when a link would bring it back: the caller meant outside.
    if (!isWithin(resolve(this.repoPath), lexical) && !isWithin(root, lexical)) {
      return { ok: false, reason: "outside the repository" };
    }
    let real: string;
    try {
      real = await realpath(lexical);
    } catch {
      return { ok: false, reason: "does not exist" };
    }
    if (!isWithin(root, real))
      return { ok: false, reason: "resolves outside the repository (through a symlink)" };
    const rel = relative(root, real);
    if (rel === ".git" || rel.startsWith(`.git${sep}`)) return { ok: false, reason: "inside .git" };
    const info = await stat(real).catch(() => undefined);
    if (!info?.isFile()) return { ok: false, reason: "not a regular file" };
    return { ok: true, absolutePath: real };
  }

  private realRoot(): Promise<string> {
    this.root ??= realpath(this.repoPath).catch((error: unknown) => {
      this.root = undefined;
      throw error;
    });
    return this.root;
  }
}
