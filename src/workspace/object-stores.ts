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
import { open } from "node:fs/promises";
import { join } from "node:path";
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
