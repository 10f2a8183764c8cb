/**
 * Packs a snapshot of a host repository into a tar stream, file by file, with no temp files:
 * the working-tree files a snapshot holds (symlinks as links, never followed), and the parts of
 * `.git` the box needs (objects, refs, HEAD, index) with a fresh config, so no remote URL,
 * credential, hook or include of the host's reaches the box.
 */
import { createReadStream } from "node:fs";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import { logger } from "../util/log.js";
import type { HostRepo } from "./host-repo.js";

const log = logger("snapshot");
const UID = 1000;

export interface SnapshotStats {
  files: number;
  bytes: number;
  skipped: string[];
}

export function boxGitConfig(objectFormat: string): string {
  const sha256 = objectFormat === "sha256";
  return [
    "[core]",
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    "\tfilemode = true",
    "\tbare = false",
    "\tlogallrefupdates = true",
    ...(sha256 ? ["[extensions]", "\tobjectformat = sha256"] : []),
    "[user]",
    "\tname = drydock agent",
    "\temail = agent@drydock.invalid",
    "[advice]",
    "\tdetachedHead = false",
    "",
  ].join("\n");
}

async function addFile(pack: tar.Pack, name: string, absolute: string, stats: SnapshotStats): Promise<void> {
  const info = await lstat(absolute);
  const common = { name, uid: UID, gid: UID, mtime: info.mtime };
  if (info.isSymbolicLink()) {
    pack.entry({ ...common, type: "symlink", linkname: await readlink(absolute), mode: 0o777 });
  } else if (info.isFile()) {
    const entry = pack.entry({
      ...common,
      type: "file",
      size: info.size,
      mode: info.mode & 0o111 ? 0o755 : 0o644,
    });
    await pipeline(createReadStream(absolute), entry);
    stats.bytes += info.size;
  } else {
    // Submodule checkouts, sockets, devices: not part of a snapshot.
    stats.skipped.push(name);
    return;
  }
  stats.files++;
}

async function addTree(pack: tar.Pack, name: string, absolute: string, stats: SnapshotStats): Promise<void> {
  let entries;
  try {
    entries = await readdir(absolute, { withFileTypes: true });
  } catch {
    return;
  }
  pack.entry({ name, type: "directory", uid: UID, gid: UID, mode: 0o755 });
  for (const e of entries) {
    const childName = `${name}/${e.name}`;
    const child = join(absolute, e.name);
    // Alternates name host paths: meaningless in the box, and a map of the host's disk.
    if (childName === ".git/objects/info/alternates") continue;
    if (e.isDirectory()) await addTree(pack, childName, child, stats);
    else if (e.isFile()) await addFile(pack, childName, child, stats);
  }
}

/** Writes the snapshot into `pack` and finalizes it; resolves with what was packed. */
export async function packSnapshot(repo: HostRepo, files: string[], pack: tar.Pack): Promise<SnapshotStats> {
  const stats: SnapshotStats = { files: 0, bytes: 0, skipped: [] };
  try {
    for (const path of files) {
      try {
        await addFile(pack, path, join(repo.root, path), stats);
      } catch (error) {
        // A file removed between listing and reading is not part of the snapshot.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    pack.entry({ name: ".git", type: "directory", uid: UID, gid: UID, mode: 0o755 });
    await addTree(pack, ".git/objects", join(repo.commonDir, "objects"), stats);
    await addTree(pack, ".git/refs", join(repo.commonDir, "refs"), stats);
    for (const [name, dir] of [
      ["packed-refs", repo.commonDir],
      ["shallow", repo.commonDir],
      ["HEAD", repo.gitDir],
      ["index", repo.gitDir],
    ] as const) {
      try {
        await addFile(pack, `.git/${name}`, join(dir, name), stats);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    try {
      const exclude = await readFile(join(repo.commonDir, "info", "exclude"));
      pack.entry({ name: ".git/info", type: "directory", uid: UID, gid: UID, mode: 0o755 });
      pack.entry({ name: ".git/info/exclude", uid: UID, gid: UID, mode: 0o644 }, exclude);
    } catch {
      // No exclude file: nothing to carry.
    }
    pack.entry({ name: ".git/config", uid: UID, gid: UID, mode: 0o644 }, boxGitConfig(repo.objectFormat));
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    throw error;
  }
  if (stats.skipped.length) log.debug(`skipped ${stats.skipped.length} entries that are not files or links`);
  return stats;
}
