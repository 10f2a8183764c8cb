/**
 * A commit's tree as tar entries, read from the host repository's object store (one
 * `git cat-file --batch` for its trees, one for its blobs, every object verified against its
 * name), not from the working tree: no file is opened per entry, and what comes out is exactly the
 * committed bytes (no filters, no attributes). Submodule links are left out, as a snapshot of the
 * working tree leaves out submodule checkouts.
 */
import { DrydockError } from "../util/errors.js";
import { encodeTarHeader, tarPadding } from "./tar-entry.js";
import {
  ObjectIntegrityError,
  VerifiedObjects,
  verifiedCommitTree,
  type VerifiedEntry,
} from "./verified-objects.js";

export const SNAPSHOT_UID = 1000;

/** A piece of the archive: the bytes of one entry (in one or more pieces) for one path. */
export interface TarPiece {
  path: string;
  bytes: Buffer;
  /** True on the last piece of an entry. */
  end: boolean;
}

/** Blobs and symlinks of a commit's tree, every level, in git's order, every object verified. */
export async function listCommitTree(root: string, commit: string): Promise<VerifiedEntry[]> {
  return (await verifiedCommitTree(root, commit)).entries;
}

/**
 * Yields the tar bytes of every blob and symlink in `commit`'s tree (no end-of-archive blocks),
 * owned by the box user, dated with the commit's committer time. Every object is verified against
 * its name (verified-objects.ts): an entry's last piece comes only once its bytes are known to be
 * its blob's, and a mismatch ends the archive with an error.
 */
export async function* commitTreeTar(root: string, commit: string): AsyncGenerator<TarPiece> {
  const { entries, committedS: mtimeS } = await verifiedCommitTree(root, commit);
  const objects = await VerifiedObjects.open(root);
  objects.ask(
    entries.map((e) => e.oid),
    true,
  );
  try {
    for (const entry of entries) {
      const header = await objects.header(entry.oid);
      if (header.type !== "blob") {
        throw new ObjectIntegrityError(
          `${entry.path} names object ${entry.oid}, a ${header.type}, not a blob`,
        );
      }
      const size = header.size;
      const common = { path: entry.path, mtimeS, uid: SNAPSHOT_UID, gid: SNAPSHOT_UID };
      if (entry.mode === "120000") {
        const target = (await objects.body(entry.oid, header)).toString("utf8");
        const bytes = encodeTarHeader({ ...common, type: "symlink", mode: 0o777, size: 0, linkname: target });
        yield { path: entry.path, bytes, end: true };
      } else {
        const mode = entry.mode === "100755" ? 0o755 : 0o644;
        yield {
          path: entry.path,
          bytes: encodeTarHeader({ ...common, type: "file", mode, size }),
          end: false,
        };
        for await (const part of objects.stream(entry.oid, header)) {
          yield { path: entry.path, bytes: part, end: false };
        }
        yield { path: entry.path, bytes: tarPadding(size), end: true };
      }
    }
  } catch (error) {
    objects.kill();
    if (error instanceof DrydockError) throw error;
    throw new DrydockError("git_failed", `reading ${commit} from ${root}: ${(error as Error).message}`);
  }
  const code = await objects.exited;
  if (code !== 0) throw new DrydockError("git_failed", `git cat-file in ${root} failed (exit ${code})`);
}
