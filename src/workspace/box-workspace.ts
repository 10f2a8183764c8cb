/**
 * The repository inside a box: copy in a snapshot of the host repository, record it as the base,
 * and take out the diff of everything that changed since. The diff is built with a private index
 * so the agent's own index, commits and branches in the box never change what comes out.
 */
import { join } from "node:path";
import tar from "tar-stream";
import type { Box } from "../sandbox/box.js";
import { boxSh, openBoxChannel } from "../sandbox/box-channel.js";
import { CommandExitError, describeError, LimitExceededError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { reportProgress } from "../util/progress-scope.js";
import { DEFAULT_MAX_DIFF_BYTES } from "./diff-safety.js";
import { hostGit, openHostRepo, type HostRepo } from "./host-repo.js";
import { SnapshotCache } from "./snapshot-cache.js";
import { planDelta, planSnapshot, type LeftOut } from "./snapshot-plan.js";
import { terminalLine } from "../util/terminal-text.js";
import { ADD_CHANGES } from "./changed-paths.js";
import { BASE_REF, DIFF_INDEX, SnapshotReceiver } from "./snapshot-receiver.js";
import { snapshotCommit } from "./snapshot-commit.js";
import { knownIndex } from "./repo-status.js";
import { packSnapshot, readRegularFile, type SnapshotStats } from "./snapshot-tar.js";
import { largeUntrackedTrees, untrackedTreesNote } from "./untracked-trees.js";
import { excludeLine, type DependencyTree } from "./dependency-trees.js";
import { leftOutNote, sizeLeftOut, type SizedTree } from "./left-out-note.js";

export { BASE_REF } from "./snapshot-receiver.js";

const log = logger("workspace");

export interface CopyInResult {
  repo: HostRepo;
  /** The commit in the box that the diff is taken against. */
  baseCommit: string;
  /** True when the snapshot held changes not committed on the host. */
  dirty: boolean;
  /** Files sent from the host's working tree and `.git` (the commit's tree comes from git or the cache). */
  stats: SnapshotStats;
  /** Whether the commit's tree came from the snapshot cache (undefined: no commit to start from). */
  cacheHit?: boolean;
  /**
   * For a fork's box (`readyForkBox`): the commits it holds with all they reach, so a fork need not
   * send them; undefined: ask the box.
   */
  holds?: string[];
  /**
   * Started when the host sent working-tree files (the snapshot is then most likely dirty): the
   * host's commit of its working state (`snapshotCommit`), made while the box took the copy.
   */
  hostSnapshot?: Promise<string>;
  /** The untracked dependency trees not copied in (and kept out of the host's snapshot commit). */
  leftOut?: DependencyTree[];
}

/**
 * The host commit a dirty snapshot needs, started now so that it is made beside the copy-in rather
 * than after it; undefined when nothing differs from the commit (the box then says not dirty).
 */
function hostSnapshotBeside(
  root: string,
  changedPaths: number,
  leftOut: readonly DependencyTree[] | undefined,
): Promise<string> | undefined {
  if (changedPaths === 0) return undefined;
  const commit = snapshotCommit(root, { leaveOut: leftOut?.map((tree) => tree.dir) });
  // Unused when the box finds the tree clean after all (a file rewritten with the same bytes).
  commit.catch(() => undefined);
  return commit;
}

/** A box that holds a commit's tree ahead of any session (see `prefillBox`). */
export interface Prefilled {
  /** The host repository's top directory. */
  repoRoot: string;
  commit: string;
  /** The `.git/objects` files the box has. */
  objects: ReadonlySet<string>;
}

export interface CopyInOptions {
  /** A commit-ish to start from instead of the working tree as it is now. */
  ref?: string;
  /** A receiver already waiting in the box (a warm box has one); default: one is started now. */
  receiver?: SnapshotReceiver;
  /** Default: the per-user cache in drydock's state directory. */
  cache?: SnapshotCache;
  /**
   * The box was prefilled: a snapshot of that repository's working tree sends only what differs
   * from the prefilled commit; any other snapshot (a ref, another repository) empties it first.
   */
  prefilled?: Prefilled;
  /**
   * Copy untracked dependency trees (`node_modules`, a virtualenv; dependency-trees.ts) too.
   * Default false: they are left out, and the person is told which, with their sizes.
   */
  includeUntrackedDependencies?: boolean;
}

let sharedCache: SnapshotCache | undefined;

/** Joins small pieces (a tar header, a short file) into writes of about 64 KiB: one syscall, not thousands. */
async function* coalesce(source: AsyncIterable<Buffer>, bytes = 64 * 1024): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let size = 0;
  for await (const piece of source) {
    parts.push(piece);
    size += piece.length;
    if (size >= bytes) {
      yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(parts, size);
}

/**
 * Streams a snapshot of the host repository into /workspace and records the base commit: the
 * commit's tree from git's object store (or the snapshot cache), then the working-tree files that
 * differ from it, then `.git`. Nothing is written to a temp file.
 */
export async function copyIn(box: Box, repoPath: string, options: CopyInOptions = {}): Promise<CopyInResult> {
  const receiver = options.receiver ?? SnapshotReceiver.open(box);
  const { prefilled } = options;
  const planOptions = { includeUntrackedDependencies: options.includeUntrackedDependencies };
  let plan;
  try {
    if (prefilled !== undefined && options.ref === undefined) {
      const delta = await planDelta(repoPath, prefilled.commit, planOptions);
      if (delta !== undefined && delta.repo.root === prefilled.repoRoot) {
        return await copyDelta(box, receiver, delta, prefilled);
      }
    }
    plan = await planSnapshot(repoPath, options.ref, planOptions);
  } catch (error) {
    receiver.close();
    throw error;
  }
  const cache = options.cache ?? (sharedCache ??= new SnapshotCache());
  const pack = tar.pack();
  const packing = packSnapshot(plan.repo, plan.files, pack, {
    head: plan.detach === undefined ? undefined : `${plan.detach}\n`,
    withoutIndex: plan.detach !== undefined,
    excludes: plan.leftOut?.trees.map((tree) => excludeLine(tree.dir)),
  });
  packing.catch(() => undefined);
  const leftOut = plan.leftOut?.trees;
  const hostSnapshot =
    plan.detach === undefined ? hostSnapshotBeside(plan.repo.root, plan.files.length, leftOut) : undefined;
  const sizing = sizeBeside(plan.repo.root, plan.leftOut);
  let cacheHit: boolean | undefined;
  async function* stream(): AsyncGenerator<Buffer> {
    if (plan!.commit !== undefined) {
      yield* cache.tree(plan!.repo.root, plan!.commit, plan!.skip, (hit) => (cacheHit = hit));
    }
    for await (const chunk of pack) yield chunk as Buffer;
  }
  const received = await receiver.receive(new Date().toISOString(), plan.detach, coalesce(stream()), {
    mode: prefilled === undefined ? "full" : "wipe",
  });
  failedCopy(box, received);
  const stats = await packing;
  noteLargeUntrackedTrees(plan.repo.root, plan.untracked ?? [], stats);
  tellLeftOut(plan.repo.root, await sizing);
  const [baseCommit, dirty] = received.stdout.toString("utf8").trim().split(" ");
  log.debug(
    `box ${box.shortId}: tree of ${plan.commit?.slice(0, 12) ?? "(none)"} ${cacheHit ? "from the cache" : "from git"}, ${stats.files} files and ${stats.bytes} bytes from the host; base ${baseCommit!.slice(0, 12)}`,
  );
  return {
    repo: plan.repo,
    baseCommit: baseCommit!,
    dirty: dirty === "1",
    stats,
    cacheHit,
    hostSnapshot,
    ...(leftOut ? { leftOut } : {}),
  };
}

/** Throws why a copy-in failed, when it did: a full workspace in words, else git's or tar's reason. */
function failedCopy(box: Box, received: { exitCode: number; stderr: Buffer }): void {
  if (received.exitCode === 0) return;
  const stderr = received.stderr.toString("utf8");
  if (/No space left on device/.test(stderr)) {
    throw new LimitExceededError(
      `the repository does not fit in the box's /workspace (${box.limits.workspaceMB} MiB); add large generated files to .gitignore, or start the session from a ref`,
    );
  }
  throw new CommandExitError(received.exitCode, stderr, "copying the repository into the box");
}

/** A host index larger than this (a tree of over a million files) is sent as a file, unhashed. */
const SMALL_INDEX_READ_BYTES = 64 * 1024 * 1024;

/** Into a prefilled box: the paths gone since its commit, then only what differs from it. */
async function copyDelta(
  box: Box,
  receiver: SnapshotReceiver,
  delta: NonNullable<Awaited<ReturnType<typeof planDelta>>>,
  prefilled: Prefilled,
): Promise<CopyInResult> {
  // The host's index, read once: sent as read, or (known to list the prefilled commit's tree) not
  // sent at all.
  const index = await readRegularFile(join(delta.repo.gitDir, "index"), SMALL_INDEX_READ_BYTES);
  const known = index && knownIndex(delta.repo.root, prefilled.commit, index);
  const indexKept = known?.listsCommit === true;
  const pack = tar.pack();
  const packing = packSnapshot(delta.repo, delta.files, pack, {
    knownObjects: prefilled.objects,
    // (An index not read here, a large or odd one, is packed from its file as any other.)
    ...(indexKept ? { withoutIndex: true } : index !== undefined ? { index } : {}),
    excludes: delta.leftOut?.trees.map((tree) => excludeLine(tree.dir)),
  });
  packing.catch(() => undefined);
  const leftOut = delta.leftOut?.trees;
  const hostSnapshot = hostSnapshotBeside(
    delta.repo.root,
    delta.files.length + delta.deletes.length,
    leftOut,
  );
  const sizing = sizeBeside(delta.repo.root, delta.leftOut);
  async function* stream(): AsyncGenerator<Buffer> {
    for await (const chunk of pack) yield chunk as Buffer;
  }
  const received = await receiver.receive(new Date().toISOString(), undefined, coalesce(stream()), {
    mode: "delta",
    deletes: delta.deletes,
    sent: delta.files,
    indexKept,
  });
  failedCopy(box, received);
  const stats = await packing;
  noteLargeUntrackedTrees(delta.repo.root, delta.untracked, stats);
  tellLeftOut(delta.repo.root, await sizing);
  const [baseCommit, dirty, fresh] = received.stdout.toString("utf8").trim().split(" ");
  if (known !== undefined && !indexKept && fresh === "1") known.remember();
  log.debug(
    `box ${box.shortId}: prefilled with ${prefilled.commit.slice(0, 12)}; ${stats.files} files and ${stats.bytes} bytes from the host, ${delta.deletes.length} deleted; base ${baseCommit!.slice(0, 12)}`,
  );
  return {
    repo: delta.repo,
    baseCommit: baseCommit!,
    dirty: dirty === "1",
    stats,
    cacheHit: true,
    hostSnapshot,
    ...(leftOut ? { leftOut } : {}),
  };
}

/**
 * Fills a box ahead of any session with the repository's current commit (its tree, from the
 * snapshot cache, and `.git`), through a receiver of its own: the box's private index is built
 * with this box's stat data, so the session that takes the box later sends only what differs
 * and git hashes only that. Undefined for a repository with no commit.
 */
export async function prefillBox(
  box: Box,
  repoPath: string,
  receiver: SnapshotReceiver,
  cache: SnapshotCache = (sharedCache ??= new SnapshotCache()),
): Promise<Prefilled | undefined> {
  let plan;
  try {
    plan = await planSnapshot(repoPath);
  } catch (error) {
    receiver.close();
    throw error;
  }
  const commit = plan.commit;
  if (commit === undefined) {
    receiver.close();
    return undefined;
  }
  const pack = tar.pack();
  const packing = packSnapshot(plan.repo, [], pack, { withoutIndex: true });
  packing.catch(() => undefined);
  async function* stream(): AsyncGenerator<Buffer> {
    yield* cache.tree(plan!.repo.root, commit!, new Set(), () => undefined);
    for await (const chunk of pack) yield chunk as Buffer;
  }
  const received = await receiver.receive(new Date().toISOString(), commit, coalesce(stream()), {
    mode: "prefill",
  });
  failedCopy(box, received);
  const stats = await packing;
  // The watch of /workspace and the tree writer's tree start here, while the box waits in the
  // pool: the session that takes it then brings the diff's index up to date over what its copy-in
  // changed, not every file, and its first checkpoint starts from this tree. Best effort: a box
  // whose channel does not answer starts both when its session does, as any box.
  try {
    if (await openBoxChannel(box)) await startDiffWatch(box, undefined, { readAll: true });
  } catch (error) {
    log.debug(`box ${box.shortId}: the watch did not start with the prefill: ${describeError(error)}`);
  }
  return { repoRoot: plan.repo.root, commit, objects: new Set(stats.objects) };
}

/** Up to this many bytes of git objects, a fork's box takes the repository's history from its source. */
export const FORK_HISTORY_FROM_SOURCE_BYTES = 64 * 1024 * 1024;

/** Bytes of the host repository's object store, loose and packed (`git count-objects`). */
async function objectBytes(repo: HostRepo): Promise<number> {
  const out = (await hostGit(repo.root, ["count-objects", "-v"])).toString("utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, "m").exec(out)?.[1] ?? NaN);
  const total = (kib("size") + kib("size-pack")) * 1024;
  if (!Number.isFinite(total)) throw new Error("git count-objects gave no sizes");
  return total;
}

/**
 * Readies a box for a fork of a session on `repoPath`, whose files and git state all come from
 * the source's checkpoint afterwards (box-checkpoint.ts, importCheckpoint): a box prefilled with
 * that repository is used as it is (the import then writes only what differs from its commit);
 * any other gets the repository's `.git` alone, never its files, so the host reads no working
 * tree and the box hashes nothing. The base commit and dirtiness it returns are the fork's to set.
 */
export async function readyForkBox(
  box: Box,
  repoOrPath: HostRepo | string,
  receiver: SnapshotReceiver,
  prefilled?: Prefilled,
  /** Up to this many bytes of history come from the source (default FORK_HISTORY_FROM_SOURCE_BYTES). */
  historyFromSourceBytes = FORK_HISTORY_FROM_SOURCE_BYTES,
): Promise<CopyInResult> {
  let repo: HostRepo;
  try {
    repo = typeof repoOrPath === "string" ? await openHostRepo(repoOrPath) : repoOrPath;
  } catch (error) {
    receiver.close();
    throw error;
  }
  const none: SnapshotStats = { files: 0, bytes: 0, skipped: [], objects: [] };
  if (prefilled !== undefined && prefilled.repoRoot === repo.root) {
    receiver.close();
    return { repo, baseCommit: prefilled.commit, dirty: false, stats: none, holds: [prefilled.commit] };
  }
  // A small history comes whole from the source's box, in one pack, cheaper than the host's loose
  // objects one file each; a large one from the host, as a session's does (a pack that size would
  // pass through the host's memory).
  const withoutObjects = await objectBytes(repo).then(
    (bytes) => bytes <= historyFromSourceBytes,
    () => false,
  );
  const pack = tar.pack();
  const packing = packSnapshot(repo, [], pack, { withoutIndex: true, withoutObjects });
  packing.catch(() => undefined);
  async function* stream(): AsyncGenerator<Buffer> {
    for await (const chunk of pack) yield chunk as Buffer;
  }
  const received = await receiver.receive(new Date().toISOString(), undefined, coalesce(stream()), {
    mode: "git",
  });
  failedCopy(box, received);
  const stats = await packing;
  log.debug(
    `box ${box.shortId}: .git of ${repo.root} for a fork (${withoutObjects ? "its objects from the source" : "objects too"}), ${stats.files} files from the host`,
  );
  return { repo, baseCommit: "", dirty: false, stats, holds: withoutObjects ? [] : undefined };
}

/** The left-out trees' sizes, taken while the box receives the rest; never rejects (unknown sizes are 0). */
function sizeBeside(root: string, leftOut: LeftOut | undefined): Promise<SizedTree[]> | undefined {
  if (leftOut === undefined) return undefined;
  return sizeLeftOut(root, leftOut).catch(() => leftOut.trees.map((tree) => ({ ...tree, bytes: 0 })));
}

/** Tells the person, at every start that left some out, which untracked dependency trees the box lacks. */
function tellLeftOut(root: string, sized: SizedTree[] | undefined): void {
  if (sized === undefined) return;
  const note = `${terminalLine(root)}: ${leftOutNote(sized)}`;
  log.warn(note);
  reportProgress(note);
}

/** Repositories already told about their large untracked trees, once per process: not at every session. */
const toldAboutTrees = new Set<string>();

function noteLargeUntrackedTrees(
  root: string,
  untracked: string[],
  copied: { files: number; bytes: number },
): void {
  const trees = largeUntrackedTrees(untracked);
  if (trees.length === 0 || toldAboutTrees.has(root)) return;
  toldAboutTrees.add(root);
  const note = `${root}: ${untrackedTreesNote(trees, copied)}`;
  log.warn(note);
  reportProgress(note);
}

const DIFF = `
set -e
cd /workspace
export GIT_INDEX_FILE=${DIFF_INDEX}
${ADD_CHANGES}
# git's complaints (a full disk, an unreadable file) are the reason a diff fails: keep them.
# (last-stat: the stat of what the diff just before it took, the index as that diff left it.)
if [ -f "$GIT_INDEX_FILE" ]; then
  [ "$1" = last-stat ] || add_changes
else
  git read-tree ${BASE_REF}; add_changes whole
fi
# The box's git config must not change the diff's format (prefixes, external drivers, colour).
FLAGS="--no-ext-diff --no-textconv --no-color --src-prefix=a/ --dst-prefix=b/"
case "$1" in
  stat | last-stat) git diff $FLAGS --cached --stat=200 ${BASE_REF} ;;
  names) git diff $FLAGS --cached --name-status -z -M ${BASE_REF} ;;
  index) ;;
  *) git diff $FLAGS --cached --binary --full-index -M ${BASE_REF} ;;
esac
`;

export interface DiffOptions {
  maxBytes?: number;
  signal?: AbortSignal;
  /** What the box agent does beside the script (BoxShOptions.fast). */
  fast?: Record<string, string | boolean>;
}

async function runDiff(
  box: Box,
  kind: "patch" | "stat" | "names" | "last-stat" | "index",
  options: DiffOptions,
): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DIFF_BYTES;
  const result = await boxSh(box, DIFF, [kind], {
    maxOutputBytes: maxBytes,
    signal: options.signal,
    // (last-stat brings the index up to date with nothing: the changes are left to the next diff.)
    // Every other diff starts the box's watch if it does not run yet.
    changes: kind === "last-stat" ? false : "start",
    ...(options.fast ? { fast: options.fast } : {}),
  });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "taking the diff out of the box",
    );
  }
  if (result.truncated) {
    throw new LimitExceededError(
      `the diff is larger than ${maxBytes} bytes; remove generated or large files in the box (or add them to .gitignore) and try again`,
    );
  }
  return result.stdout;
}

/**
 * Starts the box's watch of /workspace and brings the diff's index up to date once, diffing
 * nothing: a session does it as soon as it is ready, in its turn with its other diffs, so that its
 * first diff or checkpoint already follows the change, not the repository (watch.py). The box
 * agent's tree writer then reads the tree of that index in the background ("prime": tree.py), so
 * that the session's first checkpoint writes what changed since, as its later ones do.
 */
export async function startDiffWatch(
  box: Box,
  signal?: AbortSignal,
  options: { readAll?: boolean } = {},
): Promise<void> {
  await runDiff(box, "index", {
    signal,
    fast: { op: "prime", index: DIFF_INDEX, baseRef: BASE_REF, readAll: options.readAll === true },
  });
}

/** The unified diff (binary-safe) of everything changed in /workspace since the base. */
/** As bytes: a file in another encoding must reach the host unchanged. */
export function diffOut(box: Box, options: DiffOptions = {}): Promise<Buffer> {
  return runDiff(box, "patch", options);
}

export async function diffStat(box: Box, options: DiffOptions = {}): Promise<string> {
  return (await runDiff(box, "stat", options)).toString("utf8");
}

/**
 * The stat of the diff taken just before (diffOut, in the same turn of the session's diffs): of
 * the box's private index as that diff left it, so the two describe the same changes even when
 * files change in between, and the working tree is not looked at a second time (at 10,000 files,
 * `git add -A` alone is about 30 ms). Without that index (removed in between), as diffStat.
 */
export async function lastDiffStat(box: Box, options: DiffOptions = {}): Promise<string> {
  return (await runDiff(box, "last-stat", options)).toString("utf8");
}
