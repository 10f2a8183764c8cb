/**
 * Large untracked directories that are not ignored (a `node_modules`, a virtualenv, build output):
 * a session copies every such file into its box, so one of them can turn a start of half a second
 * into many seconds. Found from the untracked list copy-in already has, so finding them reads no
 * file. Pure.
 */
import { terminalLine } from "../util/terminal-text.js";

/** A directory holding many untracked, unignored files. */
export interface UntrackedTree {
  /** Repository-relative, with a trailing slash: "node_modules/". */
  dir: string;
  files: number;
}

/** Untracked files in one top-level directory from which copy-in says so. */
export const LARGE_UNTRACKED_FILES = 1_000;

/** The top-level directories of `untracked` (repository-relative paths) holding at least `minFiles`, largest first. */
export function largeUntrackedTrees(
  untracked: readonly string[],
  minFiles = LARGE_UNTRACKED_FILES,
): UntrackedTree[] {
  const counts = new Map<string, number>();
  for (const path of untracked) {
    const slash = path.indexOf("/");
    if (slash < 0) continue;
    const dir = path.slice(0, slash + 1);
    counts.set(dir, (counts.get(dir) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, files]) => files >= minFiles)
    .map(([dir, files]) => ({ dir, files }))
    .sort((a, b) => b.files - a.files || a.dir.localeCompare(b.dir));
}

/**
 * What to tell the person: which directories, how much was copied, and the way out. Directory
 * names come from the repository, so their control characters are escaped (the note reaches a
 * terminal).
 */
export function untrackedTreesNote(
  trees: readonly UntrackedTree[],
  copied: { files: number; bytes: number },
): string {
  const list = trees
    .map((t) => `${terminalLine(t.dir)} (${t.files.toLocaleString("en-US")} files)`)
    .join(", ");
  const mb = (copied.bytes / 1_048_576).toFixed(1);
  const entries = trees.map((t) => terminalLine(t.dir)).join(" ");
  return `every session copies untracked files that are not ignored, and ${list} ${trees.length === 1 ? "is" : "are"} neither tracked nor ignored: this start sent ${copied.files.toLocaleString("en-US")} files (${mb} MiB) from the host. If the box does not need ${trees.length === 1 ? "it" : "them"}, add ${entries} to .gitignore (or to .git/info/exclude, which is not committed) and sessions start without copying ${trees.length === 1 ? "it" : "them"}`;
}
