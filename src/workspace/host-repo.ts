/**
 * Read-only questions about the user's repository on the host, asked of git run the one hardened
 * way (host-git.ts), and only ever in the user's own repository.
 */
import { execFile } from "node:child_process";
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { DrydockError, InvalidArgumentError } from "../util/errors.js";
import { HOST_GIT_TIMEOUT_MS, hostGitEnv, repoOverrides } from "./host-git.js";
import { requireOwnGitDir, requireOwnObjects } from "./object-stores.js";

const run = promisify(execFile);

/** Runs git in a host repository with the same hardening as `runHostGit`; returns stdout as bytes. */
export async function hostGit(repo: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<Buffer> {
  try {
    const { stdout } = await run("git", ["-C", repo, ...args], {
      encoding: "buffer",
      maxBuffer,
      // A repository's content can make git wait forever (an ignore file that is a FIFO).
      timeout: HOST_GIT_TIMEOUT_MS,
      killSignal: "SIGKILL",
      env: hostGitEnv({}, await repoOverrides(repo)),
    });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString("utf8").trim() ?? "";
    throw new DrydockError(
      "git_failed",
      `git ${args[0]} in ${repo} failed: ${stderr || (error as Error).message}`,
    );
  }
}

export interface HostRepo {
  /** The top of the working tree. */
  root: string;
  /** This working tree's git dir (differs from commonDir in a linked worktree). */
  gitDir: string;
  commonDir: string;
  /** null for a repository with no commit yet. */
  head: string | null;
  objectFormat: string;
}

/** Resolves a path to the repository that holds it, with a clear error when it is not one. */
export async function openHostRepo(path: string, field = "repo"): Promise<HostRepo> {
  const absolute = isAbsolute(path) ? path : resolve(path);
  try {
    if (!(await stat(absolute)).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new InvalidArgumentError(
      field,
      `${absolute} is not a directory; give the path of a git repository`,
    );
  }
  // Every session start asks this: one git process, not five one after another. With --verify -q
  // last, git prints the four layout lines and HEAD's commit, or (exit 1) the four alone when
  // there is no commit yet.
  const layout = await revParseLayout(absolute);
  const lines = layout?.lines;
  if (lines === undefined || lines.length < 4 || !lines[0] || !lines[1] || !lines[2] || !lines[3]) {
    // Not a repository, or a git too old for one of the questions: ask one at a time, as that says which.
    return openHostRepoSlowly(absolute, field);
  }
  const head = layout!.born ? lines[4]?.trim() || null : null;
  const commonDir = isAbsolute(lines[2]) ? lines[2] : join(absolute, lines[2]);
  const [root, realCommonDir] = await Promise.all([realpath(lines[0]), realpath(commonDir)]);
  await requireInsideWorkTree(absolute, root, field);
  await requireOwnGitDir(root, lines[1], realCommonDir);
  await requireOwnObjects(realCommonDir);
  return {
    root,
    gitDir: lines[1],
    commonDir: realCommonDir,
    head,
    objectFormat: lines[3],
  };
}

/**
 * The path named must be in the working tree git reports: a repository whose configuration moves
 * its working tree elsewhere (`core.worktree`, or a `.git` file naming another repository that
 * does) would have drydock copy another directory's files into the box.
 */
async function requireInsideWorkTree(absolute: string, root: string, field: string): Promise<void> {
  const named = await realpath(absolute);
  if (named === root || named.startsWith(root.endsWith(sep) ? root : root + sep)) return;
  throw new InvalidArgumentError(
    field,
    `${absolute} is a repository whose working tree git puts at ${root} (core.worktree or a .git file naming another repository); drydock copies only the directory it is given: remove core.worktree from its configuration (\`git config --unset core.worktree\`) or give the working tree's own path`,
  );
}

/** The top, the git dirs and the object format, and HEAD's commit unless there is none yet. */
export async function revParseLayout(
  absolute: string,
): Promise<{ lines: string[]; born: boolean } | undefined> {
  const args = [
    "-C",
    absolute,
    "rev-parse",
    "--show-toplevel",
    "--absolute-git-dir",
    "--git-common-dir",
    "--show-object-format",
    "--verify",
    "-q",
    "HEAD",
  ];
  try {
    const env = hostGitEnv({}, await repoOverrides(absolute));
    const { stdout } = await run("git", args, { encoding: "buffer", maxBuffer: 1 << 20, env });
    return { lines: stdout.toString("utf8").split("\n"), born: true };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: Buffer };
    if (failed.code === 1 && Buffer.isBuffer(failed.stdout)) {
      return { lines: failed.stdout.toString("utf8").split("\n"), born: false };
    }
    return undefined;
  }
}

async function openHostRepoSlowly(absolute: string, field: string): Promise<HostRepo> {
  let root: string;
  try {
    root = (await hostGit(absolute, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
  } catch {
    throw new InvalidArgumentError(
      field,
      `${absolute} is not inside a git repository (or it has no working tree); run \`git init\` there or give another path`,
    );
  }
  root = await realpath(root);
  await requireInsideWorkTree(absolute, root, field);
  const dirs = (await hostGit(root, ["rev-parse", "--absolute-git-dir", "--git-common-dir"]))
    .toString("utf8")
    .trim()
    .split("\n");
  const gitDir = dirs[0]!;
  const commonDir = isAbsolute(dirs[1]!) ? dirs[1]! : join(root, dirs[1]!);
  let head: string | null = null;
  try {
    head = (await hostGit(root, ["rev-parse", "--verify", "-q", "HEAD"])).toString("utf8").trim() || null;
  } catch {
    head = null;
  }
  let objectFormat = "sha1";
  try {
    objectFormat =
      (await hostGit(root, ["rev-parse", "--show-object-format"])).toString("utf8").trim() || "sha1";
  } catch {
    // Older git: sha1 is the only format it knows.
  }
  const realCommonDir = await realpath(commonDir);
  await requireOwnGitDir(root, gitDir, realCommonDir);
  await requireOwnObjects(realCommonDir);
  return { root, gitDir, commonDir: realCommonDir, head, objectFormat };
}

/** Paths (relative, NUL-safe) of the files a snapshot holds: tracked and present, plus untracked not ignored. */
export async function snapshotFileList(repo: HostRepo): Promise<string[]> {
  const split = (b: Buffer) => b.toString("utf8").split("\0").filter(Boolean);
  const listed = split(
    await hostGit(repo.root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]),
  );
  const deleted = new Set(split(await hostGit(repo.root, ["ls-files", "-z", "--deleted"])));
  return [...new Set(listed)].filter((p) => !deleted.has(p));
}
