/**
 * Where git may read a repository's objects from: its own store, and alternates only inside the
 * repository. An alternates file (`objects/info/alternates`) naming another directory on the
 * host would let a repository's trees name blobs of any other repository this account can read,
 * and drydock would copy them into that repository's box or build. git has no switch to ignore
 * alternates, so the file is read here, before any object is, and a repository with one that
 * leaves it is refused.
 */
import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";

/** git's own limit on alternates naming alternates. */
const MAX_DEPTH = 5;
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

const inside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * Refuses (InvalidArgumentError, field `repo`) a repository whose object store, at `commonDir`,
 * names an alternate outside `root` and `commonDir` (or one drydock cannot read plainly: quoted,
 * a link's name for the file, too many levels).
 */
export async function requireOwnObjects(root: string, commonDir: string): Promise<void> {
  const realRoot = await realpath(root);
  const realCommon = await realpath(commonDir);
  const visit = async (objectsDir: string, depth: number): Promise<void> => {
    const text = await readAlternates(objectsDir);
    if (text === undefined) return;
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      if (line.startsWith('"'))
        throw refusal(commonDir, `it names a quoted alternate ${JSON.stringify(line)}`);
      if (depth >= MAX_DEPTH) throw refusal(commonDir, "its alternates name alternates too many levels deep");
      const named = isAbsolute(line) ? line : resolve(objectsDir, line);
      const real = await realpath(named).catch(() => undefined);
      // A missing directory lends nothing (git only warns about it).
      if (real === undefined) continue;
      if (!inside(real, realRoot) && !inside(real, realCommon)) {
        throw refusal(commonDir, `it names ${JSON.stringify(line)}`);
      }
      await visit(real, depth + 1);
    }
  };
  await visit(join(realCommon, "objects"), 0);
}
