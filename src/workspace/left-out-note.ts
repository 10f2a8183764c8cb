/**
 * What a person is told at each start that left untracked dependency trees out of the box: which
 * directories, how many files and bytes, and how to have them copied. The sizes are taken with
 * lstat while the box receives the rest (a link is counted as a link, never followed), once per
 * tree and file count in a process.
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

/**
 * Bytes of trees sized before, by repository, directory and file count: a server starting many
 * sessions on one repository sizes its `node_modules` once (10,000 lstat calls cost about 200 ms),
 * not at every start. A tree whose file count changed is sized again.
 */
export class TreeSizes {
  private readonly bytes = new Map<string, number>();
  constructor(private readonly maxEntries = 256) {}

  static key(root: string, tree: DependencyTree): string {
    return `${root}\0${tree.dir}\0${tree.files}`;
  }

  get(key: string): number | undefined {
    return this.bytes.get(key);
  }

  set(key: string, bytes: number): void {
    this.bytes.delete(key);
    this.bytes.set(key, bytes);
    // The oldest goes first (a Map keeps insertion order).
    if (this.bytes.size > this.maxEntries) this.bytes.delete(this.bytes.keys().next().value!);
  }
}

const sharedSizes = new TreeSizes();

/**
 * The bytes under each left-out tree, from lstat of its untracked files (a file gone since counts
 * 0), or from `sizes` for a tree sized before with the same file count.
 */
export async function sizeLeftOut(
  root: string,
  leftOut: LeftOut,
  sizes: TreeSizes = sharedSizes,
): Promise<SizedTree[]> {
  const known = new Map(leftOut.trees.map((tree) => [tree.dir, sizes.get(TreeSizes.key(root, tree))]));
  const bytes = new Map(leftOut.trees.map((tree) => [tree.dir, 0]));
  // Trees are the outermost matches, so a path lies under exactly one: the longest prefix that is a tree.
  const dirs = leftOut.trees
    .map((tree) => tree.dir)
    .filter((dir) => known.get(dir) === undefined)
    .sort((a, b) => b.length - a.length);
  const paths = dirs.length === 0 ? [] : leftOut.paths;
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const dir = dirs.find((d) => path.startsWith(d));
      if (dir === undefined) continue;
      const info = await lstat(join(root, path)).catch(() => undefined);
      if (info !== undefined) bytes.set(dir, bytes.get(dir)! + info.size);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, paths.length) }, worker));
  return leftOut.trees.map((tree) => {
    const cached = known.get(tree.dir);
    if (cached !== undefined) return { ...tree, bytes: cached };
    sizes.set(TreeSizes.key(root, tree), bytes.get(tree.dir)!);
    return { ...tree, bytes: bytes.get(tree.dir)! };
  });
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
