/**
 * Where git may read a repository's objects from: its own store only. An alternates file
 * (`objects/info/alternates`) naming another directory on the host would let a repository's trees
 * name blobs of any other repository this account can read, and drydock would copy them into that
 * repository's box or build. git has no switch to ignore alternates, so the file is read here,
 * before any object is, and a repository whose store names any other is refused, wherever the
 * entry points: git resolves an entry against the store's path as it names it (lexically, through
 * any link in that path), and a check of where an entry leads could only agree with git for the
 * spellings it thought of. A clone made with `--shared` or `--reference` is used once
 * `git repack -a -d` has copied the objects in and the file is removed.
 */
import { constants } from "node:fs";
import { lstat, open, readdir, readFile, realpath } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";

const MAX_FILE_BYTES = 64 * 1024;

/** The alternates file of an object directory, or undefined when it has none; never through a link. */
async function readAlternates(objectsDir: string): Promise<string | undefined> {
  const path = join(objectsDir, "info", "alternates");
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw refusal(
      objectsDir,
      `its ${path} cannot be read as a file (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refusal(objectsDir, `its ${path} is not a regular file`);
    if (info.size > MAX_FILE_BYTES) throw refusal(objectsDir, `its ${path} is over ${MAX_FILE_BYTES} bytes`);
    return (await handle.readFile()).toString("utf8");
  } finally {
    await handle.close();
  }
}

function refusal(where: string, why: string): InvalidArgumentError {
  return new InvalidArgumentError(
    "repo",
    `the repository of ${where} borrows objects from outside itself: ${why}; drydock reads objects only from the repository's own store: run \`git repack -a -d\` there and remove objects/info/alternates`,
  );
}

/** Refuses (InvalidArgumentError, field `repo`) a repository whose object store, in `commonDir`, names any other. */
export async function requireOwnObjects(commonDir: string): Promise<void> {
  const objectsDir = join(commonDir, "objects");
  const text = await readAlternates(objectsDir);
  if (text === undefined) return;
  const named = text.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));
  if (named.length > 0)
    throw refusal(commonDir, `its objects/info/alternates names ${JSON.stringify(named[0])}`);
}

/**
 * Refuses (InvalidArgumentError, field `repo`) a working tree whose git directory is not its own:
 * a `.git` file, a `commondir` file, or links at `objects`, `refs`, `packed-refs`, a loose-object
 * directory or a pack, that point git at another repository's store. Its own is `<root>/.git`, a
 * linked worktree's common directory (git's own back-link, `<gitDir>/gitdir`, names `<root>/.git`,
 * which another repository cannot be made to hold), or a submodule's directory in the `.git/modules`
 * of a repository that holds `root`.
 */
export async function requireOwnGitDir(root: string, gitDir: string, commonDir: string): Promise<void> {
  const refuse = (why: string) =>
    new InvalidArgumentError(
      "repo",
      `the repository at ${root} reads its objects or refs from somewhere that is not its own (${why}); drydock copies only a repository's own store: clone it afresh (\`git clone\`) and give that path`,
    );
  if ((await lstat(join(root, ".git")).catch(() => undefined))?.isSymbolicLink()) {
    throw refuse(".git is a link");
  }
  const real = (p: string) => realpath(p).catch(() => p);
  const [realRoot, realGit, realCommon, dotGit] = await Promise.all([
    real(root),
    real(gitDir),
    real(commonDir),
    real(join(root, ".git")),
  ]);
  const own = realCommon === dotGit && realGit === dotGit;
  const worktree =
    !own &&
    dirname(realGit) === join(realCommon, "worktrees") &&
    (await readFile(join(realGit, "gitdir"), "utf8").then(
      async (text) => (await real(text.trim())) === dotGit,
      () => false,
    ));
  const submodule =
    !own &&
    !worktree &&
    realGit === realCommon &&
    ancestors(realRoot).some((dir) => realCommon.startsWith(join(dir, ".git", "modules") + sep));
  if (!own && !worktree && !submodule) throw refuse(`its git directory is ${realGit}`);
  for (const name of ["objects", "refs", "packed-refs", join("objects", "pack"), join("objects", "info")]) {
    const info = await lstat(join(realCommon, name)).catch(() => undefined);
    if (info?.isSymbolicLink()) throw refuse(`${name} is a link`);
  }
  for (const dir of [join(realCommon, "objects"), join(realCommon, "objects", "pack")]) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const linked = entries.find((e) => e.isSymbolicLink());
    if (linked) throw refuse(`${join(dir, linked.name)} is a link`);
  }
}

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) out.push(d);
  return out;
}
