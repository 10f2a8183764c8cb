/**
 * Packs the host-side files of a snapshot into a tar stream, with no temp files: working-tree files
 * (symlinks as links, never followed; opened with O_NOFOLLOW), and the parts of `.git` the box
 * needs (objects, refs, HEAD, index) with a fresh config, so no remote URL, credential, hook or
 * include of the host's reaches the box. Small files are read a few dozen ahead of the entry being
 * written, so thousands of them do not cost a round trip each.
 */
import { constants } from "node:fs";
import { lstat, open, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import { logger } from "../util/log.js";
import type { HostRepo } from "./host-repo.js";

const log = logger("snapshot");
const UID = 1000;
/** Files up to this size are read whole, ahead of time; bigger ones are streamed in turn. */
const SMALL_FILE_BYTES = 1024 * 1024;
const READ_AHEAD = 32;

export interface SnapshotStats {
  files: number;
  bytes: number;
  skipped: string[];
  /** The names of `.git/objects` files sent (a prefill records them: a delta sends only new ones). */
  objects: string[];
}

/** Patterns for files drydock itself makes in /workspace, which are never part of a diff. */
export const DRYDOCK_EXCLUDES =
  "# drydock's own temporary files\n.drydock-write-*\n" +
  // What running a project's tests leaves behind is never the agent's change.
  "# bytecode and test caches that running the tests leaves\n__pycache__/\n*.py[co]\n.pytest_cache/\n";

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

interface Job {
  name: string;
  /** Absent for a directory entry. */
  absolute?: string;
}

type Loaded =
  | { kind: "dir" }
  | { kind: "gone" }
  | { kind: "other" }
  | { kind: "symlink"; target: string; mtime: Date }
  | { kind: "file"; data: Buffer; mode: number; mtime: Date }
  | { kind: "large"; absolute: string; size: number; mode: number; mtime: Date };

const fileMode = (mode: number) => (mode & 0o111 ? 0o755 : 0o644);

async function load(job: Job): Promise<Loaded> {
  if (job.absolute === undefined) return { kind: "dir" };
  let info;
  try {
    info = await lstat(job.absolute);
  } catch (error) {
    // A file removed between listing and reading is not part of the snapshot.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "gone" };
    throw error;
  }
  if (info.isSymbolicLink())
    return { kind: "symlink", target: await readlink(job.absolute), mtime: info.mtime };
  // Submodule checkouts, sockets, devices: not part of a snapshot.
  if (!info.isFile()) return { kind: "other" };
  const mode = fileMode(info.mode);
  if (info.size > SMALL_FILE_BYTES) {
    return { kind: "large", absolute: job.absolute, size: info.size, mode, mtime: info.mtime };
  }
  let handle;
  try {
    handle = await open(job.absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    // Replaced by a link or removed since lstat: not what was listed; leave it out.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOENT") return { kind: "gone" };
    throw error;
  }
  try {
    return { kind: "file", data: await handle.readFile(), mode, mtime: info.mtime };
  } finally {
    await handle.close();
  }
}

/**
 * A regular file's bytes, read as `load` reads one (never through a link, never a FIFO or
 * device); undefined for anything else, for a missing file and past `maxBytes`.
 */
export async function readRegularFile(absolute: string, maxBytes: number): Promise<Buffer | undefined> {
  const loaded = await load({ name: absolute, absolute }).catch(() => undefined);
  if (loaded?.kind === "file") return loaded.data.length > maxBytes ? undefined : loaded.data;
  if (loaded?.kind !== "large" || loaded.size > maxBytes) return undefined;
  const handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const data = await handle.readFile();
    return data.length > maxBytes ? undefined : data;
  } finally {
    await handle.close();
  }
}

function entry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, data?: Buffer): Promise<void> {
  // The callback comes once the entry is in the stream: waiting for it is the back-pressure.
  return new Promise((resolve, reject) => {
    const done = (e?: Error | null) => (e ? reject(e) : resolve());
    if (data === undefined) pack.entry(header, done);
    else pack.entry(header, data, done);
  });
}

async function write(pack: tar.Pack, name: string, loaded: Loaded, stats: SnapshotStats): Promise<void> {
  const common = { name, uid: UID, gid: UID };
  switch (loaded.kind) {
    case "dir":
      return entry(pack, { ...common, type: "directory", mode: 0o755 });
    case "gone":
      return;
    case "other":
      stats.skipped.push(name);
      return;
    case "symlink":
      await entry(pack, {
        ...common,
        mtime: loaded.mtime,
        type: "symlink",
        linkname: loaded.target,
        mode: 0o777,
      });
      break;
    case "file":
      await entry(pack, { ...common, mtime: loaded.mtime, type: "file", mode: loaded.mode }, loaded.data);
      stats.bytes += loaded.data.length;
      break;
    case "large": {
      const handle = await open(loaded.absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const sink = pack.entry({
          ...common,
          mtime: loaded.mtime,
          type: "file",
          mode: loaded.mode,
          size: loaded.size,
        });
        await pipeline(handle.createReadStream({ start: 0, end: loaded.size - 1, autoClose: false }), sink);
      } finally {
        await handle.close();
      }
      stats.bytes += loaded.size;
      break;
    }
  }
  stats.files++;
}

/** Writes the jobs' entries in order, reading small files ahead. */
async function packJobs(pack: tar.Pack, jobs: Job[], stats: SnapshotStats): Promise<void> {
  const ahead: Array<Promise<Loaded>> = [];
  let next = 0;
  for (const job of jobs) {
    while (next < jobs.length && ahead.length < READ_AHEAD) {
      const loading = load(jobs[next++]!);
      loading.catch(() => undefined);
      ahead.push(loading);
    }
    await write(pack, job.name, await ahead.shift()!, stats);
  }
}

/** The files under a directory of the host's `.git`, as jobs (directories first). */
async function treeJobs(name: string, absolute: string, jobs: Job[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(absolute, { withFileTypes: true });
  } catch {
    return;
  }
  jobs.push({ name });
  for (const e of entries) {
    const childName = `${name}/${e.name}`;
    // Alternates name host paths: meaningless in the box, and a map of the host's disk.
    if (childName === ".git/objects/info/alternates") continue;
    if (e.isDirectory()) await treeJobs(childName, join(absolute, e.name), jobs);
    else if (e.isFile()) jobs.push({ name: childName, absolute: join(absolute, e.name) });
  }
}

/**
 * Files of `.git/objects` named by their content, which git never rewrites: loose objects and pack
 * files. Others there (info/commit-graph, info/packs, multi-pack-index) change under one name.
 */
const IMMUTABLE_OBJECT_FILE =
  /^\.git\/objects\/(?:[0-9a-f]{2}\/[0-9a-f]{38,62}|pack\/pack-[0-9a-f]{40,64}\.(?:pack|idx|rev|bitmap|mtimes))$/;

export interface PackOptions {
  /** Content for `.git/HEAD` instead of the host's (a detached commit for a session on a ref). */
  head?: string;
  /** Leave out the host's `.git/index` (the box builds one, or has it). */
  withoutIndex?: boolean;
  /** The bytes to send as `.git/index`, read by the caller (who must know what was sent). */
  index?: Buffer;
  /**
   * `.git/objects` files the box has already (by name: object and pack files never change once
   * written): they are not sent again.
   */
  knownObjects?: ReadonlySet<string>;
  /** Send no object and no ref, only what makes `.git` a repository (a fork's objects come from its source). */
  withoutObjects?: boolean;
  /**
   * More lines for the box's `.git/info/exclude`: the untracked dependency trees left out of the
   * snapshot, so what the agent installs there stays out of the box's base and its diff.
   */
  excludes?: readonly string[];
}

/** Writes working-tree `files` and the repository's `.git` into `pack` and finalizes it. */
export async function packSnapshot(
  repo: HostRepo,
  files: string[],
  pack: tar.Pack,
  options: PackOptions = {},
): Promise<SnapshotStats> {
  const stats: SnapshotStats = { files: 0, bytes: 0, skipped: [], objects: [] };
  try {
    await packJobs(
      pack,
      files.map((path) => ({ name: path, absolute: join(repo.root, path) })),
      stats,
    );
    const git: Job[] = [{ name: ".git" }];
    if (options.withoutObjects) {
      // Empty, as git init leaves them: a ref naming an object the box lacks would be a lie.
      git.push({ name: ".git/objects" }, { name: ".git/refs" });
    } else {
      const objects: Job[] = [];
      await treeJobs(".git/objects", join(repo.commonDir, "objects"), objects);
      for (const job of objects) {
        const immutable = job.absolute !== undefined && IMMUTABLE_OBJECT_FILE.test(job.name);
        if (immutable && options.knownObjects?.has(job.name)) continue;
        git.push(job);
        if (immutable) stats.objects.push(job.name);
      }
      await treeJobs(".git/refs", join(repo.commonDir, "refs"), git);
      // Where the box writes its base (refs/drydock/base) as a file, without a process to make it.
      git.push({ name: ".git/refs/drydock" });
      git.push({ name: ".git/packed-refs", absolute: join(repo.commonDir, "packed-refs") });
    }
    git.push({ name: ".git/shallow", absolute: join(repo.commonDir, "shallow") });
    if (options.head === undefined) git.push({ name: ".git/HEAD", absolute: join(repo.gitDir, "HEAD") });
    if (!options.withoutIndex && options.index === undefined) {
      git.push({ name: ".git/index", absolute: join(repo.gitDir, "index") });
    }
    await packJobs(pack, git, stats);
    const own = { uid: UID, gid: UID, mode: 0o644 };
    if (!options.withoutIndex && options.index !== undefined) {
      await entry(pack, { ...own, name: ".git/index" }, options.index);
      stats.files++;
      stats.bytes += options.index.length;
    }
    if (options.head !== undefined)
      await entry(pack, { ...own, name: ".git/HEAD" }, Buffer.from(options.head));
    // The host's excludes, plus drydock's own temporary files (the file tools write through a
    // temporary file and rename it), so a diff taken mid-write never sees them.
    const hostExclude = await readFile(join(repo.commonDir, "info", "exclude")).catch(() => Buffer.alloc(0));
    const leftOut = options.excludes?.length
      ? `# untracked dependency trees the host did not send\n${options.excludes.join("\n")}\n`
      : "";
    const exclude = Buffer.concat([
      hostExclude,
      Buffer.from(
        `${hostExclude.length && !hostExclude.toString().endsWith("\n") ? "\n" : ""}${DRYDOCK_EXCLUDES}${leftOut}`,
      ),
    ]);
    await entry(pack, { ...own, name: ".git/info", type: "directory", mode: 0o755 });
    await entry(pack, { ...own, name: ".git/info/exclude" }, exclude);
    await entry(pack, { ...own, name: ".git/config" }, Buffer.from(boxGitConfig(repo.objectFormat)));
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    throw error;
  }
  if (stats.skipped.length) log.debug(`skipped ${stats.skipped.length} entries that are not files or links`);
  return stats;
}
