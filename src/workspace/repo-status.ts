/**
 * What changed in a host repository's working tree, from one git: `git status` gives HEAD's
 * commit, the tracked paths that differ from it and the untracked files, where a session start
 * otherwise asks three (the layout, the tracked changes, the untracked files). Starting a process
 * from the server costs several milliseconds of its main thread (the fork copies its page tables),
 * so each one saved is time every session start waits.
 *
 * The repository's layout (its top, git directories, object format) is kept from the last time it
 * was opened, for as long as its `.git` is the same directory or file: a repository made anew at
 * the same path has a new `.git`, and is opened again.
 */
import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { hostGit, type HostRepo } from "./host-repo.js";

type Layout = Omit<HostRepo, "head">;

const layouts = new Map<string, { layout: Layout; mark: string }>();

/** Who `.git` is: a directory by its inode; a `.git` file (a linked worktree) by its contents' size and time too. */
function gitMark(root: string): string | undefined {
  try {
    const info = lstatSync(join(root, ".git"));
    if (info.isDirectory()) return `d ${info.dev} ${info.ino}`;
    if (info.isFile()) return `f ${info.dev} ${info.ino} ${info.size} ${info.mtimeMs} ${info.ctimeMs}`;
  } catch {
    // Gone: opened again, which says what is wrong.
  }
  return undefined;
}

/** Remembers the layout of the repository opened for `path` (an absolute path). */
export function rememberLayout(path: string, repo: HostRepo): void {
  const mark = gitMark(repo.root);
  if (mark === undefined) return;
  const { head: _head, ...layout } = repo;
  layouts.set(path, { layout, mark });
}

/** The layout last opened for `path`, while its `.git` is the same; undefined otherwise. */
export function knownLayout(path: string): Layout | undefined {
  const known = layouts.get(path);
  if (known === undefined) return undefined;
  if (gitMark(known.layout.root) === known.mark) return known.layout;
  layouts.delete(path);
  return undefined;
}

export interface TreeStatus {
  /** HEAD's commit; null before the first commit. */
  head: string | null;
  /** Tracked paths whose index or working-tree state differs from HEAD (and unmerged ones). */
  changed: string[];
  /** Untracked files git does not ignore. */
  untracked: string[];
}

/**
 * One `git status` of the working tree at `root`, in porcelain v2 (a format git keeps stable for
 * scripts), NUL-separated, every untracked file named, no rename pairing.
 */
export async function treeStatus(root: string): Promise<TreeStatus> {
  const out = await hostGit(root, [
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--untracked-files=all",
    "--no-renames",
    // A submodule's state would be asked of a git run inside it, under its own configuration.
    "--ignore-submodules=all",
    // Counting commits ahead of the upstream can take long in a large history, and is not asked.
    "--no-ahead-behind",
  ]);
  return parseTreeStatus(out);
}

/** Fields before the path: "1 XY sub mH mI mW hH hI path", "u XY sub m1 m2 m3 mW h1 h2 h3 path". */
const FIELDS_BEFORE_PATH: Record<string, number> = { "1": 8, u: 10 };

export function parseTreeStatus(out: Buffer): TreeStatus {
  let head: string | null | undefined;
  const changed: string[] = [];
  const untracked: string[] = [];
  for (const record of out.toString("utf8").split("\0")) {
    if (record === "") continue;
    const kind = record.slice(0, 2);
    if (kind === "# ") {
      const oid = /^# branch\.oid (\S+)$/.exec(record)?.[1];
      if (oid !== undefined) head = oid === "(initial)" ? null : oid;
    } else if (kind === "? ") {
      untracked.push(record.slice(2));
    } else {
      const fields = FIELDS_BEFORE_PATH[record[0]!];
      if (fields === undefined || record[1] !== " ")
        throw new Error(`git status printed ${JSON.stringify(record.slice(0, 40))}`);
      let at = 0;
      for (let i = 0; i < fields && at >= 0; i++) at = record.indexOf(" ", at + 1);
      if (at < 0) throw new Error(`git status printed ${JSON.stringify(record.slice(0, 40))}`);
      changed.push(record.slice(at + 1));
    }
  }
  if (head === undefined) throw new Error("git status named no commit for HEAD");
  return { head, changed, untracked };
}

/**
 * Host indexes (by repository, prefilled commit and the index file's sha256) that a prefilled box
 * found to list that commit's tree exactly, entries, stages and flags: the next warm start with
 * the same bytes sends no index, and the box keeps the one its prefill made (no listing compared,
 * no copy). Learned from a box's answer, never assumed; bounded.
 */
const listingCommit = new Set<string>();
const MAX_KNOWN_INDEXES = 64;

/** What is known of the host's index `bytes` against `commit`, and how to remember that a box found it lists it. */
export function knownIndex(
  root: string,
  commit: string,
  bytes: Buffer,
): { listsCommit: boolean; remember: () => void } {
  const key = `${root}\0${commit}\0${createHash("sha256").update(bytes).digest("hex")}`;
  return {
    listsCommit: listingCommit.has(key),
    remember: () => {
      if (listingCommit.size >= MAX_KNOWN_INDEXES) listingCommit.delete(listingCommit.values().next().value!);
      listingCommit.add(key);
    },
  };
}
