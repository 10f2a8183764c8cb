/**
 * Records the host repository's working state as a commit object, so a session that started from
 * uncommitted changes has a real commit on the host for its branch to sit on. Only objects are
 * written: no ref, no change to the user's index or working tree.
 */
import { copyFile, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { commitIdentityEnv, runHostGit, withTempIndex } from "./host-git.js";

const log = logger("workspace");

/** The message of every snapshot commit: how a branch apply knows a base is one (apply-diff.ts). */
export const SNAPSHOT_MESSAGE = "drydock: snapshot of the working tree";

export interface SnapshotCommitOptions {
  /** Commit message for the snapshot. Default SNAPSHOT_MESSAGE. */
  message?: string;
  /**
   * Directories whose untracked files stay out of the commit, as copy-in left them out of the box
   * (untracked dependency trees, "node_modules/"): the commit then holds the box's base tree.
   * Tracked files in them are recorded as always.
   */
  leaveOut?: readonly string[];
}

/**
 * Returns the id of a commit holding HEAD plus uncommitted tracked changes and untracked files that
 * are not ignored; when there are no such changes, HEAD itself. Writes no ref.
 */
export async function snapshotCommit(repoPath: string, options: SnapshotCommitOptions = {}): Promise<string> {
  const top = await runHostGit(repoPath, ["rev-parse", "--show-toplevel"], { okExitCodes: [0, 128] }).catch(
    () => undefined,
  );
  if (!top || top.exitCode !== 0) {
    throw new InvalidArgumentError("repoPath", `${repoPath} is not a git repository with a working tree`);
  }
  const root = top.stdout.trim();
  // Asked at once: HEAD (empty before the first commit) and its tree, and where the index is.
  const [heads, indexPath] = await Promise.all([
    runHostGit(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { okExitCodes: [0, 1] }).then(
      async (found) => {
        const head = found.stdout.trim();
        if (!head) return { head, headTree: "" };
        return { head, headTree: (await runHostGit(root, ["rev-parse", `${head}^{tree}`])).stdout.trim() };
      },
    ),
    runHostGit(root, ["rev-parse", "--git-path", "index"]).then((r) => r.stdout.trim()),
  ]);
  const { head, headTree } = heads;
  const realIndex = isAbsolute(indexPath) ? indexPath : join(root, indexPath);

  // Only needed for a new commit; looked up beside the index work.
  const identity = commitIdentityEnv(root);
  identity.catch(() => undefined);
  const tree = await withTempIndex(async (env) => {
    // Starting from a copy of the user's index keeps files they force-added and lets git trust its
    // stat data instead of hashing every file again.
    if (await stat(realIndex).catch(() => undefined)) await copyFile(realIndex, env.GIT_INDEX_FILE);
    else if (head) await runHostGit(root, ["read-tree", head], { env });
    const leaveOut = (options.leaveOut ?? []).map((dir) => dir.replace(/\/$/, ""));
    // (literal: a directory's name is never read as a glob.)
    const excluded = leaveOut.map((dir) => `:(exclude,literal)${dir}`);
    await runHostGit(root, ["add", "--all", "--", ".", ...excluded], { env });
    if (leaveOut.length > 0) {
      // The tracked files in them, changed or deleted, are recorded as any other.
      await runHostGit(root, ["add", "--update", "--", ...leaveOut.map((dir) => `:(literal)${dir}`)], {
        env,
      });
    }
    return (await runHostGit(root, ["write-tree"], { env })).stdout.trim();
  });

  if (head && headTree === tree) return head;
  const message = options.message ?? SNAPSHOT_MESSAGE;
  const args = ["commit-tree", tree, ...(head ? ["-p", head] : []), "-F", "-"];
  const commit = (await runHostGit(root, args, { input: message, env: await identity })).stdout.trim();
  log.info(`recorded uncommitted changes in ${root} as ${commit.slice(0, 12)} (no ref written)`);
  return commit;
}
