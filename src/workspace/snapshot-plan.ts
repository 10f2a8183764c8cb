/**
 * What a snapshot of a host repository is made of: a commit's tree, taken from git's object store
 * (or the snapshot cache), and the working-tree files that differ from it, read from the host. A
 * clean checkout sends no working-tree file at all; a session on a ref sends only the ref's tree.
 */
import { lstat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";
import { parseClientRef, refCandidates, REF_FORMS } from "./client-ref.js";
import { hostGit, openHostRepo, snapshotFileList, type HostRepo } from "./host-repo.js";
import { knownLayout, rememberLayout, treeStatus, type TreeStatus } from "./repo-status.js";
import { splitDependencyTrees, type DependencyTree } from "./dependency-trees.js";

export interface SnapshotPlan {
  repo: HostRepo;
  /** The commit whose tree the snapshot starts from; undefined for a repository with no commit. */
  commit?: string;
  /** Set for a session on a ref: the box's HEAD is detached at this commit. */
  detach?: string;
  /** Working-tree paths to send from the host's files: changed since the commit, or untracked. */
  files: string[];
  /** Paths of the commit's tree not to send from it (changed or deleted in the working tree). */
  skip: Set<string>;
  /** Of `files`, those git does not track (and does not ignore); known only when the repository has a commit. */
  untracked?: string[];
  /** The untracked dependency trees left out (dependency-trees.ts), with the paths under them. */
  leftOut?: LeftOut;
}

/** Untracked dependency trees not copied into the box. */
export interface LeftOut {
  trees: DependencyTree[];
  /** The untracked files under them, repository-relative. */
  paths: string[];
}

export interface PlanOptions {
  /** Copy untracked dependency trees too (dependency-trees.ts). Default false: they are left out. */
  includeUntrackedDependencies?: boolean;
}

/**
 * The untracked paths to send, and the dependency trees left out of them (none when asked to
 * include them, or when there are none).
 */
function untrackedToSend(untracked: string[], options: PlanOptions): { send: string[]; leftOut?: LeftOut } {
  if (options.includeUntrackedDependencies) return { send: untracked };
  const split = splitDependencyTrees(untracked);
  if (split.trees.length === 0) return { send: untracked };
  return { send: split.kept, leftOut: { trees: split.trees, paths: split.leftOut } };
}

const split = (b: Buffer): string[] => b.toString("utf8").split("\0").filter(Boolean);

/**
 * The commit `ref` names in the repository, or an InvalidArgumentError (field `ref`) saying why not.
 * `ref` follows client-ref.ts's grammar; a name is looked up as exactly the refs it may stand for
 * (a branch, then a tag, then a remote-tracking branch), an id as an object, and a name that is
 * both is refused rather than guessed. Replace refs and grafts play no part (host-git.ts).
 */
export async function resolveCommit(repo: HostRepo, ref: string): Promise<string> {
  const parsed = parseClientRef(ref);
  const noCommit = () =>
    new InvalidArgumentError("ref", `${JSON.stringify(ref)} names no commit in ${repo.root}; ${REF_FORMS}`);
  const peel = async (oid: string): Promise<string> => {
    try {
      return (await hostGit(repo.root, ["rev-parse", "--verify", "-q", `${oid}^{commit}`]))
        .toString("utf8")
        .trim();
    } catch {
      throw noCommit();
    }
  };
  if (parsed.kind === "head") {
    if (repo.head === null) throw noCommit();
    return peel("HEAD");
  }
  const name = parsed.kind === "name" ? parsed.name : parsed.alsoName;
  const candidates = refCandidates(name);
  const listed = (
    await hostGit(repo.root, ["for-each-ref", "--format=%(refname)%00%(objectname)", "--", ...candidates])
  )
    .toString("utf8")
    .split("\n")
    .map((line) => line.split("\0"))
    .filter(([full]) => full !== undefined && candidates.includes(full));
  const byName = candidates.map((c) => listed.find(([full]) => full === c)?.[1]).find(Boolean);
  if (parsed.kind === "name") {
    if (!byName) throw noCommit();
    return peel(byName);
  }
  if (byName) {
    throw new InvalidArgumentError(
      "ref",
      `${JSON.stringify(ref)} is both a branch or tag name and a commit id in ${repo.root}; give refs/heads/${ref} (or refs/tags/${ref}) for the name, or the full commit id`,
    );
  }
  if (parsed.hex.length === 40 || parsed.hex.length === 64) return peel(parsed.hex);
  // An abbreviated id is looked up among objects only (git's own lookup would try ref names and
  // files in .git first): every object with the prefix, of which exactly one may be a commit.
  const matches = (
    await hostGit(repo.root, ["rev-parse", `--disambiguate=${parsed.hex}`]).catch(() => Buffer.alloc(0))
  )
    .toString("utf8")
    .split("\n")
    .filter((line) => /^[0-9a-f]{40}$|^[0-9a-f]{64}$/.test(line));
  const commits = (
    await Promise.all(
      matches.map((oid) =>
        peel(oid).then(
          (c) => (c === oid ? c : undefined),
          () => undefined,
        ),
      ),
    )
  ).filter((c): c is string => c !== undefined);
  if (commits.length === 1) return commits[0]!;
  if (commits.length > 1) {
    throw new InvalidArgumentError(
      "ref",
      `${JSON.stringify(ref)} is the start of ${commits.length} commit ids in ${repo.root}; give more of the id`,
    );
  }
  throw noCommit();
}

/** Works out what to send for a snapshot of the repository at `repoPath` (its working tree, or `ref`). */
export async function planSnapshot(
  repoPath: string,
  ref?: string,
  options: PlanOptions = {},
): Promise<SnapshotPlan> {
  if (ref === undefined) {
    const known = await knownStatus(repoPath);
    if (known !== undefined && known.status.head !== null) {
      return workingTreePlan(
        known.repo,
        known.status.head,
        known.status.changed,
        known.status.untracked,
        options,
      );
    }
  }
  const repo = await openRepo(repoPath);
  if (ref !== undefined) {
    const commit = await resolveCommit(repo, ref);
    return { repo, commit, detach: commit, files: [], skip: new Set() };
  }
  if (repo.head === null) return noCommitPlan(repo, options);
  // Tracked paths whose working-tree state differs from HEAD (edited, deleted, staged as new), and
  // untracked files that are not ignored. git compares by the index's stat data: clean files are
  // not read.
  const [changed, untracked] = await Promise.all([
    hostGit(repo.root, [
      "diff-index",
      "-z",
      "--name-only",
      "--no-renames",
      "--ignore-submodules=all",
      repo.head,
      "--",
    ]),
    hostGit(repo.root, ["ls-files", "-z", "--others", "--exclude-standard"]),
  ]);
  return workingTreePlan(repo, repo.head, split(changed), split(untracked), options);
}

/**
 * A snapshot of the working tree at `commit`: the changed and untracked paths sent from the host,
 * untracked dependency trees left out unless asked for.
 */
function workingTreePlan(
  repo: HostRepo,
  commit: string,
  changed: string[],
  untracked: string[],
  options: PlanOptions,
): SnapshotPlan {
  const { send, leftOut } = untrackedToSend(untracked, options);
  const files = [...new Set([...changed, ...send])];
  return { repo, commit, files, skip: new Set(files), untracked: send, ...(leftOut ? { leftOut } : {}) };
}

/**
 * A repository with no commit yet: every file is sent, from the index and untracked, but the
 * untracked dependency trees (asked for apart: no other repository pays the git process).
 */
async function noCommitPlan(repo: HostRepo, options: PlanOptions): Promise<SnapshotPlan> {
  const [all, others] = await Promise.all([
    snapshotFileList(repo),
    options.includeUntrackedDependencies
      ? Promise.resolve(Buffer.alloc(0))
      : hostGit(repo.root, ["ls-files", "-z", "--others", "--exclude-standard"]),
  ]);
  const { leftOut } = untrackedToSend(split(others), options);
  if (leftOut === undefined) return { repo, files: all, skip: new Set() };
  const gone = new Set(leftOut.paths);
  return { repo, files: all.filter((path) => !gone.has(path)), skip: new Set(), leftOut };
}

/** The absolute path a repository path names (the key its layout is kept under). */
function absolutePath(repoPath: string): string {
  return isAbsolute(repoPath) ? repoPath : resolve(repoPath);
}

/**
 * What a box prefilled with `base`'s tree still needs to hold the working tree as it is now: the
 * paths that differ from `base` (committed since, or changed in the working tree) and untracked
 * files, to send; of those, the ones gone from the host (or now a directory), to delete first.
 * Undefined when the repository no longer has `base` (the box is then emptied and filled whole).
 */
export async function planDelta(
  repoPath: string,
  base: string,
  options: PlanOptions = {},
): Promise<DeltaPlan | undefined> {
  // The base is known before the repository is opened, so the two listings start beside the
  // questions openHostRepo asks (one git start's wait, not two, at every warm start). They are
  // kept only when run at the repository's top (ls-files names paths from where it runs).
  const absolute = absolutePath(repoPath);
  const known = await knownStatus(absolute);
  if (known !== undefined && known.status.head === base) {
    return finishDelta(known.repo, known.status.changed, known.status.untracked, options);
  }
  const early = deltaListings(absolute, base);
  early.catch(() => undefined);
  const repo = known?.repo ?? (await openRepo(repoPath));
  if (repo.head === null) return undefined;
  let changed: Buffer, untracked: Buffer;
  try {
    [changed, untracked] = repo.root === absolute ? await early : await deltaListings(repo.root, base);
  } catch (error) {
    // diff-index fails when `base` is gone (asked only then: each git process costs a start).
    const has = await hostGit(repo.root, ["cat-file", "-e", `${base}^{commit}`]).then(
      () => true,
      () => false,
    );
    if (!has) return undefined;
    throw error;
  }
  return finishDelta(repo, split(changed), split(untracked), options);
}

export interface DeltaPlan {
  repo: HostRepo;
  files: string[];
  deletes: string[];
  /** The untracked paths sent. */
  untracked: string[];
  leftOut?: LeftOut;
}

/** The delta from the paths that differ from the base and the untracked files: those gone from the host are deleted, not sent. */
async function finishDelta(
  repo: HostRepo,
  changed: string[],
  untracked: string[],
  options: PlanOptions,
): Promise<DeltaPlan> {
  // The prefilled box holds the commit's tree only: a left-out untracked file was never in it.
  const { send: others, leftOut } = untrackedToSend(untracked, options);
  const paths = [...new Set([...changed, ...others])];
  const deletes: string[] = [];
  await Promise.all(
    paths.map(async (path) => {
      const info = await lstat(join(repo.root, path)).catch(() => undefined);
      if (info === undefined || info.isDirectory()) deletes.push(path);
    }),
  );
  const gone = new Set(deletes);
  return {
    repo,
    files: paths.filter((p) => !gone.has(p)),
    deletes: deletes.sort(),
    untracked: others,
    ...(leftOut ? { leftOut } : {}),
  };
}

/** Opens the repository, remembering its layout for the next snapshot of it (knownStatus). */
async function openRepo(repoPath: string): Promise<HostRepo> {
  const repo = await openHostRepo(repoPath);
  rememberLayout(absolutePath(repoPath), repo);
  return repo;
}

/**
 * For a repository opened before (its layout known and its `.git` the same): HEAD and what
 * changed, from one git. Undefined when the layout is not known or status fails (the caller then
 * asks as for a repository never seen).
 */
async function knownStatus(repoPath: string): Promise<{ repo: HostRepo; status: TreeStatus } | undefined> {
  const layout = knownLayout(absolutePath(repoPath));
  if (layout === undefined) return undefined;
  const status = await treeStatus(layout.root).catch(() => undefined);
  if (status === undefined) return undefined;
  return { repo: { ...layout, head: status.head }, status };
}

/** The tracked paths that differ from `base`, and the untracked ones not ignored, both NUL-separated. */
function deltaListings(cwd: string, base: string): Promise<[Buffer, Buffer]> {
  return Promise.all([
    hostGit(cwd, ["diff-index", "-z", "--name-only", "--no-renames", "--ignore-submodules=all", base, "--"]),
    hostGit(cwd, ["ls-files", "-z", "--others", "--exclude-standard"]),
  ]);
}
