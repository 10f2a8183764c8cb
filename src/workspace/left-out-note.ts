/**
 * What a person is told at each start that left untracked dependency trees out of the box: which
 * directories, how many files and bytes, and how to have them copied. The sizes are taken with
 * lstat while the box receives the rest (a link is counted as a link, never followed).
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { terminalLine } from "../util/terminal-text.js";
import type { DependencyTree } from "./dependency-trees.js";
import type { LeftOut } from "./snapshot-plan.js";

/** A left-out tree with the bytes of its untracked files. */
export interface SizedTree extends DependencyTree {
  bytes: number;
}

/** How many lstat calls run at once: enough to hide their latency, few enough to leave the copy-in its reads. */
const AT_ONCE = 64;

/** The bytes under each left-out tree, from lstat of its untracked files (a file gone since counts 0). */
export async function sizeLeftOut(root: string, leftOut: LeftOut): Promise<SizedTree[]> {
  const bytes = new Map(leftOut.trees.map((tree) => [tree.dir, 0]));
  // Trees are the outermost matches, so a path lies under exactly one: the longest prefix that is a tree.
  const dirs = leftOut.trees.map((tree) => tree.dir).sort((a, b) => b.length - a.length);
  let next = 0;
  const worker = async () => {
    while (next < leftOut.paths.length) {
      const path = leftOut.paths[next++]!;
      const info = await lstat(join(root, path)).catch(() => undefined);
      const dir = dirs.find((d) => path.startsWith(d));
      if (info !== undefined && dir !== undefined) bytes.set(dir, bytes.get(dir)! + info.size);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, leftOut.paths.length) }, worker));
  return leftOut.trees.map((tree) => ({ ...tree, bytes: bytes.get(tree.dir)! }));
}

function size(bytes: number): string {
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

/** How many trees are named one by one; the rest are summed. */
const NAMED = 5;

/**
 * The note: the trees (names escaped for a terminal, at most NAMED of them, largest first), their
 * files and bytes, and the options that copy them in. Pure.
 */
export function leftOutNote(trees: readonly SizedTree[]): string {
  const sorted = [...trees].sort((a, b) => b.files - a.files || (a.dir < b.dir ? -1 : 1));
  const named = sorted
    .slice(0, NAMED)
    .map((t) => `${terminalLine(t.dir)} (${t.files.toLocaleString("en-US")} files, ${size(t.bytes)})`);
  const rest = sorted.slice(NAMED);
  if (rest.length > 0) {
    const files = rest.reduce((n, t) => n + t.files, 0);
    const bytes = rest.reduce((n, t) => n + t.bytes, 0);
    named.push(`${rest.length} more (${files.toLocaleString("en-US")} files, ${size(bytes)})`);
  }
  const one = trees.length === 1;
  return `${one ? "an untracked dependency tree" : "untracked dependency trees"} (neither tracked nor ignored) left out of the box: ${named.join(", ")}. Install ${one ? "it" : "them"} in the box if it needs ${one ? "it" : "them"}, or copy ${one ? "it" : "them"} in: start with --include-untracked-dependencies (the library's includeUntrackedDependencies: true)`;
}
