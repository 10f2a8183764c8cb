/**
 * Applies a diff taken out of a box to the user's repository on the host. The diff passes every
 * check in diff-safety.ts before git sees it. Branch mode (the default) builds a commit on a new
 * branch with a private index, so the user's working tree, index and HEAD never change; worktree
 * mode checks the whole diff first and then applies it to the working tree, or changes nothing.
 * A diff that removes or weakens ignore rules gets a warning; in worktree mode it is refused
 * unless `allowIgnoreChanges` (the files it would un-ignore sit right there, for the next copy).
 *
 * A session that started from uncommitted changes sits on a snapshot commit of them (untracked
 * files, a `node_modules` say, included). Its branch holds only what the user committed plus the
 * session's change: the diff goes onto the snapshot's parent with git's three-way apply, and a
 * change that cannot stand without the uncommitted state is refused with the files named.
 */
import { lstat, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import {
  ApplyConflictError,
  CommandExitError,
  InvalidArgumentError,
  UnsafeDiffError,
} from "../util/errors.js";
import { logger } from "../util/log.js";
import {
  assertChangesFitBase,
  assertDiffIsSafe,
  ignoreRuleChanges,
  pathsToCheck,
  type IgnoreRuleChange,
  type DiffSafetyOptions,
} from "./diff-safety.js";
import { commitIdentityEnv, runHostGit, withTempIndex } from "./host-git.js";
import { SNAPSHOT_MESSAGE } from "./snapshot-commit.js";
import { diffBytes, type FileChange, type FileStatus } from "./parse-git-diff.js";

const log = logger("workspace");

export type ApplyMode = "branch" | "worktree";

export interface ApplyDiffOptions extends DiffSafetyOptions {
  /** "branch" (default): a commit on a new branch, working tree untouched; "worktree": into the working tree. */
  mode?: ApplyMode;
  /** Branch mode: the branch to create, e.g. `drydock/<session>`. Required. */
  branch?: string;
  /** Branch mode: the commit the session started from (see `snapshotCommit`). Required. */
  baseCommit?: string;
  /** Branch mode: the commit message. Default "drydock: changes for <branch>". */
  message?: string;
  /** Branch mode: move the branch if it already exists instead of refusing. Default false. */
  replaceBranch?: boolean;
  /**
   * Branch mode, for a session that started from uncommitted work: build on the snapshot of that
   * work (a commit of its own, below the change) instead of the user's last commit. Default false.
   */
  includeUncommitted?: boolean;
  /**
   * Worktree mode: apply a diff that removes or weakens ignore rules (a `.gitignore` deleted,
   * a pattern removed, a `!` exception added) instead of refusing it. Default false.
   */
  allowIgnoreChanges?: boolean;
}

export interface AppliedFile {
  path: string;
  status: FileStatus;
  oldPath?: string;
}

export interface DiffStat {
  filesChanged: number;
  insertions: number;
  deletions: number;
}

export interface ApplyResult {
  mode: ApplyMode;
  /** Branch mode: the branch created, its new commit, and the commit it sits on. */
  branch?: string;
  commit?: string;
  baseCommit?: string;
  files: AppliedFile[];
  stat: DiffStat;
  /** What a person should look at before trusting the result (ignore rules removed or weakened); absent when nothing. */
  warnings?: string[];
}

const APPLY = ["-c", "apply.ignoreWhitespace=no", "apply", "--binary", "-p1", "--whitespace=nowarn"];

/** Applies `diff` (from `git diff --binary --full-index -M <base>` in a box) to the repository at `repoPath`. */
export async function applyDiff(
  repoPath: string,
  diff: string | Uint8Array,
  options: ApplyDiffOptions = {},
): Promise<ApplyResult> {
  const mode = options.mode ?? "branch";
  if (mode !== "branch" && mode !== "worktree") {
    throw new InvalidArgumentError("mode", `must be "branch" or "worktree", not ${JSON.stringify(mode)}`);
  }
  const bytes = diffBytes(diff);
  const changes = assertDiffIsSafe(bytes, options);
  const repo = await locateRepo(repoPath);
  const ignoreChanges = ignoreRuleChanges(bytes, changes);
  const result: ApplyResult = {
    mode,
    files: changes.map(appliedFile),
    stat: statOf(changes),
    ...(ignoreChanges.length ? { warnings: [ignoreWarning(ignoreChanges)] } : {}),
  };
  if (mode === "branch") {
    const target = await prepareBranch(repo.cwd, options);
    if (changes.length === 0) return { ...result, baseCommit: target.base };
    assertChangesFitBase(changes, await treeModes(repo.cwd, target.base, pathsToCheck(changes)), options);
    const committed = options.includeUncommitted ? undefined : await committedBase(repo.cwd, target.base);
    const onto = committed === undefined ? target : { ...target, base: committed };
    const commit = await commitOnBranch(repo.cwd, bytes, changes, onto, options, committed !== undefined);
    log.info(
      `applied ${changes.length} file(s) as ${commit.slice(0, 12)} on ${target.branch} in ${repo.cwd}`,
    );
    const left = committed === undefined ? [] : [leftOutNote(committed)];
    const warnings = [...(result.warnings ?? []), ...left];
    return {
      ...result,
      branch: target.branch,
      commit,
      baseCommit: onto.base,
      ...(warnings.length ? { warnings } : {}),
    };
  }
  if (repo.bare) {
    throw new InvalidArgumentError(
      "mode",
      `${repoPath} is a bare repository with no working tree; use mode "branch"`,
    );
  }
  if (changes.length === 0) return result;
  if (ignoreChanges.length && !options.allowIgnoreChanges) {
    throw new UnsafeDiffError(
      `it removes or weakens ignore rules (${ignoreList(ignoreChanges)}); in the working tree, files those rules ignored (a .env, say) would be seen by git and copied into the next session. ` +
        "Apply it to a branch to review it, or allow ignore-rule changes (allow_ignore_changes in session_apply, --allow-ignore-changes on the command line) if you mean it",
    );
  }
  assertChangesFitBase(changes, await worktreeModes(repo.cwd, pathsToCheck(changes)), options);
  await runApply(repo.cwd, [...APPLY, "--check", "-"], bytes, changes);
  await runApply(repo.cwd, [...APPLY, "-"], bytes, changes);
  log.info(`applied ${changes.length} file(s) to the working tree of ${repo.cwd}`);
  return result;
}

interface BranchTarget {
  branch: string;
  ref: string;
  base: string;
  /** The branch's current commit when it exists and may be replaced; "" to require that it does not. */
  expectedOld: string;
}

async function prepareBranch(cwd: string, options: ApplyDiffOptions): Promise<BranchTarget> {
  const branch = options.branch;
  if (!branch) throw new InvalidArgumentError("branch", "is required in branch mode, e.g. drydock/<session>");
  const ref = `refs/heads/${branch}`;
  const valid = await runHostGit(cwd, ["check-ref-format", ref], { okExitCodes: [0, 1] });
  if (branch.startsWith("-") || valid.exitCode !== 0) {
    throw new InvalidArgumentError("branch", `${JSON.stringify(branch)} is not a valid branch name`);
  }
  const baseCommit = options.baseCommit;
  if (!baseCommit) {
    throw new InvalidArgumentError(
      "baseCommit",
      "is required in branch mode: the commit the session started from",
    );
  }
  const found = baseCommit.startsWith("-")
    ? undefined
    : (
        await runHostGit(cwd, ["rev-parse", "--verify", "--quiet", `${baseCommit}^{commit}`], {
          okExitCodes: [0, 1, 128],
        })
      ).stdout.trim();
  if (!found) {
    throw new InvalidArgumentError(
      "baseCommit",
      `${JSON.stringify(baseCommit)} is not a commit in ${cwd}; a snapshot with uncommitted changes must be recorded on the host with snapshotCommit first`,
    );
  }
  const existing = (
    await runHostGit(cwd, ["rev-parse", "--verify", "--quiet", ref], { okExitCodes: [0, 1] })
  ).stdout.trim();
  if (existing && !options.replaceBranch) throw branchExists(branch, cwd);
  return { branch, ref, base: found, expectedOld: existing };
}

/**
 * The user's own commit under a snapshot commit (snapshot-commit.ts): its only parent. Undefined
 * when `base` is not a snapshot, or is one of a repository with no commit yet.
 */
async function committedBase(cwd: string, base: string): Promise<string | undefined> {
  const shown = await runHostGit(cwd, ["show", "-s", "--format=%P%x00%B", base]);
  const [parents = "", message = ""] = shown.stdout.split("\0");
  const parentIds = parents.trim().split(" ").filter(Boolean);
  if (parentIds.length !== 1 || message.trim() !== SNAPSHOT_MESSAGE) return undefined;
  return parentIds[0];
}

function leftOutNote(committed: string): string {
  return `the branch sits on your last commit ${committed.slice(0, 12)}: the uncommitted changes and untracked files the session started from are not in it, only the session's change (mode "worktree" applies the change where they are)`;
}

async function commitOnBranch(
  cwd: string,
  bytes: Buffer,
  changes: FileChange[],
  target: BranchTarget,
  options: ApplyDiffOptions,
  ontoCommitted = false,
): Promise<string> {
  const tree = await withTempIndex(async (env) => {
    await runHostGit(cwd, ["read-tree", target.base], { env });
    if (!ontoCommitted) await runApply(cwd, [...APPLY, "--cached", "-"], bytes, changes, env);
    else await applyOntoCommitted(cwd, target.base, bytes, changes, env);
    return (await runHostGit(cwd, ["write-tree"], { env })).stdout.trim();
  });
  const message = options.message ?? `drydock: changes for ${target.branch}`;
  const identity = await commitIdentityEnv(cwd);
  const commit = (
    await runHostGit(cwd, ["commit-tree", tree, "-p", target.base, "-F", "-"], {
      input: message,
      env: identity,
    })
  ).stdout.trim();
  // The expected old value makes the update fail, not overwrite, if the branch appeared meanwhile.
  const updated = await runHostGit(
    cwd,
    ["update-ref", "-m", "drydock: apply", target.ref, commit, target.expectedOld],
    { okExitCodes: [0, 1, 128] },
  );
  if (updated.exitCode !== 0) {
    if (/already exists/.test(updated.stderr)) throw branchExists(target.branch, cwd);
    throw new InvalidArgumentError(
      "branch",
      `cannot create ${target.branch} in ${cwd}: ${updated.stderr.trim()}`,
    );
  }
  return commit;
}

async function runApply(
  cwd: string,
  args: string[],
  bytes: Buffer,
  changes: FileChange[],
  env?: Record<string, string>,
): Promise<void> {
  try {
    await runHostGit(cwd, args, { input: bytes, ...(env ? { env } : {}) });
  } catch (error) {
    if (!(error instanceof CommandExitError)) throw error;
    const files = conflictingFiles(error.output, changes);
    throw new ApplyConflictError(files, error.output.trim().split("\n").slice(0, 20).join("\n"));
  }
}

/**
 * The diff, made against a snapshot, onto the user's commit under it: git's three-way apply takes
 * the snapshot's blobs (on the host since the snapshot was recorded) as the merge base, so lines
 * the user had changed without committing stay out. A file the change needs in its uncommitted
 * state (edited where the user had edited, or untracked on the host) is a refusal naming it.
 */
async function applyOntoCommitted(
  cwd: string,
  committed: string,
  bytes: Buffer,
  changes: FileChange[],
  env: Record<string, string>,
): Promise<void> {
  // A file the session deleted that the user never committed is absent from the branch already.
  const deleted = changes.filter((c) => c.status === "deleted").map((c) => c.path);
  const modes = await treeModes(cwd, committed, deleted);
  const skip = deleted
    .filter((path) => modes(path) === undefined)
    .map((path) => `--exclude=${literalPattern(path)}`);
  try {
    await runHostGit(cwd, [...APPLY, "--cached", "--3way", ...skip, "-"], { input: bytes, env });
  } catch (error) {
    if (!(error instanceof CommandExitError)) throw error;
    const files = conflictingFiles(error.output, changes);
    throw new ApplyConflictError(
      files,
      `The session started from uncommitted changes, and a branch holds only what you committed plus the session's change, which here needs files in the state you had not committed. Commit them and apply again, or apply with mode "worktree". git said: ${error.output.trim().split("\n").slice(0, 10).join("\n")}`,
    );
  }
}

/** A path as a git apply --exclude pattern that matches it alone: wildcards escaped. */
function literalPattern(path: string): string {
  return path.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/** The files git apply names in its complaints, limited to paths the diff holds. */
export function conflictingFiles(stderr: string, changes: FileChange[]): string[] {
  const known = new Set(changes.flatMap((c) => (c.oldPath ? [c.oldPath, c.path] : [c.path])));
  const found = new Set<string>();
  const patterns = [
    /^error: patch failed: (.+):\d+$/,
    /^error: (.+): (?:patch does not apply|already exists in (?:working directory|index)|does not exist in index|does not match index|wrong type|No such file or directory)$/,
    /^(?:error: )?Applied patch to '(.+)' with conflicts\.$/,
    /^U (.+)$/,
    /^error: affected file '(.+)' is beyond a symbolic link$/,
  ];
  for (const line of stderr.split("\n")) {
    for (const re of patterns) {
      const name = re.exec(line)?.[1];
      if (name !== undefined && known.has(name)) found.add(name);
    }
  }
  return [...found];
}

async function locateRepo(repoPath: string): Promise<{ cwd: string; bare: boolean }> {
  const notRepo = (): InvalidArgumentError =>
    new InvalidArgumentError(
      "repoPath",
      `${repoPath} is not a git repository; give the path of the repository the session came from`,
    );
  if (!(await stat(repoPath).catch(() => undefined))?.isDirectory()) throw notRepo();
  const bare = await runHostGit(repoPath, ["rev-parse", "--is-bare-repository"], { okExitCodes: [0, 128] });
  if (bare.exitCode !== 0) throw notRepo();
  if (bare.stdout.trim() === "true") return { cwd: repoPath, bare: true };
  const top = await runHostGit(repoPath, ["rev-parse", "--show-toplevel"], { okExitCodes: [0, 128] });
  if (top.exitCode !== 0) throw notRepo();
  return { cwd: top.stdout.trim(), bare: false };
}

/** Modes of `paths` in a commit's tree, looked up in batches (literal paths, never patterns). */
async function treeModes(
  cwd: string,
  commit: string,
  paths: string[],
): Promise<(path: string) => string | undefined> {
  const modes = new Map<string, string>();
  for (let i = 0; i < paths.length; i += 200) {
    const chunk = paths.slice(i, i + 200);
    const out = await runHostGit(cwd, [
      "--literal-pathspecs",
      "ls-tree",
      "-z",
      "--full-tree",
      commit,
      "--",
      ...chunk,
    ]);
    for (const record of out.stdout.split("\0")) {
      const m = /^(\d{6}) \S+ \S+\t(.+)$/s.exec(record);
      if (m?.[1] && m[2]) modes.set(m[2], m[1]);
    }
  }
  return (path) => modes.get(path);
}

/** Modes of `paths` in the working tree, found with lstat; a walk stops at anything not a plain directory. */
async function worktreeModes(root: string, paths: string[]): Promise<(path: string) => string | undefined> {
  const modes = new Map<string, string | undefined>();
  const modeAt = async (path: string): Promise<string | undefined> => {
    if (modes.has(path)) return modes.get(path);
    const parent = posix.dirname(path);
    let mode: string | undefined;
    if (parent === "." || (await modeAt(parent)) === "040000") {
      const st = await lstat(join(root, path)).catch(() => undefined);
      if (st?.isSymbolicLink()) mode = "120000";
      else if (st?.isDirectory())
        mode = (await lstat(join(root, path, ".git")).catch(() => undefined)) ? "160000" : "040000";
      else if (st?.isFile()) mode = st.mode & 0o111 ? "100755" : "100644";
      else if (st) mode = "000000";
    }
    modes.set(path, mode);
    return mode;
  };
  for (const path of paths) await modeAt(path);
  return (path) => modes.get(path);
}

function ignoreList(changes: IgnoreRuleChange[]): string {
  return changes.map((c) => `${c.path} ${c.how}`).join("; ");
}

function ignoreWarning(changes: IgnoreRuleChange[]): string {
  return `the diff removes or weakens ignore rules (${ignoreList(changes)}): files they ignored become visible to git and to the next session's copy`;
}

function branchExists(branch: string, cwd: string): InvalidArgumentError {
  return new InvalidArgumentError(
    "branch",
    `${branch} already exists in ${cwd}; choose another branch name, or move it (replace_branch in session_apply, --replace-branch on the command line, replaceBranch in the library)`,
  );
}

function appliedFile(change: FileChange): AppliedFile {
  return change.oldPath === undefined
    ? { path: change.path, status: change.status }
    : { path: change.path, status: change.status, oldPath: change.oldPath };
}

function statOf(changes: FileChange[]): DiffStat {
  return {
    filesChanged: changes.length,
    insertions: changes.reduce((n, c) => n + c.insertions, 0),
    deletions: changes.reduce((n, c) => n + c.deletions, 0),
  };
}
