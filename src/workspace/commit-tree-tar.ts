/**
 * A commit's tree as tar entries, read from the host repository's object store (`git ls-tree` and
 * one `git cat-file --batch`), not from the working tree: no file is opened per entry, and what
 * comes out is exactly the committed bytes (no filters, no attributes). Submodule links are left
 * out, as a snapshot of the working tree leaves out submodule checkouts.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Readable } from "node:stream";
import { DrydockError } from "../util/errors.js";
import { HOST_GIT_CONFIG, hostGitEnv, runHostGit } from "./host-git.js";
import { encodeTarHeader, tarPadding } from "./tar-entry.js";

export const SNAPSHOT_UID = 1000;

/** A piece of the archive: the bytes of one entry (in one or more pieces) for one path. */
export interface TarPiece {
  path: string;
  bytes: Buffer;
  /** True on the last piece of an entry. */
  end: boolean;
}

interface TreeEntry {
  mode: string;
  oid: string;
  path: string;
}

/** Blobs and symlinks of a commit's tree, every level, in git's order. */
export async function listCommitTree(root: string, commit: string): Promise<TreeEntry[]> {
  const out = await runHostGit(root, ["ls-tree", "-r", "-z", "--full-tree", commit]);
  const entries: TreeEntry[] = [];
  for (const line of out.stdout.split("\0")) {
    if (!line) continue;
    const tab = line.indexOf("\t");
    const [mode, type, oid] = line.slice(0, tab).split(" ");
    if (type !== "blob" || !mode || !oid) continue;
    entries.push({ mode, oid, path: line.slice(tab + 1) });
  }
  return entries;
}

/** Reads lines and counted bytes from a stream, one pull at a time. */
class ByteReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(stream: Readable) {
    this.chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async fill(): Promise<boolean> {
    const next = await this.chunks.next();
    if (next.done) return false;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, next.value]) : next.value;
    return true;
  }

  async line(): Promise<string> {
    for (;;) {
      const at = this.buffer.indexOf(10);
      if (at >= 0) {
        const line = this.buffer.subarray(0, at).toString("utf8");
        this.buffer = this.buffer.subarray(at + 1);
        return line;
      }
      if (!(await this.fill())) throw new Error("git cat-file ended early");
    }
  }

  /** Yields exactly `size` bytes, as they arrive. */
  async *take(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill())) throw new Error("git cat-file ended early");
      const part = this.buffer.subarray(0, Math.min(left, this.buffer.length));
      this.buffer = this.buffer.subarray(part.length);
      left -= part.length;
      yield part;
    }
  }

  async skip(size: number): Promise<void> {
    for await (const part of this.take(size)) void part;
  }

  async all(size: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.take(size)) parts.push(part);
    return Buffer.concat(parts);
  }
}

function catFile(root: string): ChildProcessWithoutNullStreams {
  return spawn("git", [...HOST_GIT_CONFIG, "cat-file", "--batch"], {
    cwd: root,
    env: hostGitEnv(),
    stdio: "pipe",
  });
}

/** Reads one object header of `cat-file --batch` output: its size, or a clear error when missing. */
async function objectSize(reader: ByteReader, wanted: string): Promise<number> {
  const header = await reader.line();
  const [, type, size] = header.split(" ");
  if (type === undefined || size === undefined) {
    throw new DrydockError("git_failed", `object ${wanted} is missing from the repository (${header})`);
  }
  return Number(size);
}

/**
 * Yields the tar bytes of every blob and symlink in `commit`'s tree (no end-of-archive blocks),
 * owned by the box user, dated with the commit's committer time.
 */
export async function* commitTreeTar(root: string, commit: string): AsyncGenerator<TarPiece> {
  const entries = await listCommitTree(root, commit);
  const child = catFile(root);
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  child.stdin.on("error", () => undefined);
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)));
  child.stdin.end([commit, ...entries.map((e) => e.oid)].join("\n") + "\n");
  const reader = new ByteReader(child.stdout);
  try {
    const commitText = (await reader.all(await objectSize(reader, commit))).toString("utf8");
    await reader.skip(1);
    const committed = /^committer .* (\d+) [+-]\d{4}$/m.exec(commitText);
    const mtimeS = committed ? Number(committed[1]) : 0;
    for (const entry of entries) {
      const size = await objectSize(reader, entry.oid);
      const common = { path: entry.path, mtimeS, uid: SNAPSHOT_UID, gid: SNAPSHOT_UID };
      if (entry.mode === "120000") {
        const target = (await reader.all(size)).toString("utf8");
        const bytes = encodeTarHeader({ ...common, type: "symlink", mode: 0o777, size: 0, linkname: target });
        yield { path: entry.path, bytes, end: true };
      } else {
        const mode = entry.mode === "100755" ? 0o755 : 0o644;
        const header = encodeTarHeader({ ...common, type: "file", mode, size });
        if (size === 0) {
          yield { path: entry.path, bytes: header, end: true };
        } else {
          yield { path: entry.path, bytes: header, end: false };
          let left = size;
          for await (const part of reader.take(size)) {
            left -= part.length;
            yield { path: entry.path, bytes: part, end: false };
          }
          if (left !== 0) throw new Error(`short read of ${entry.path}`);
          yield { path: entry.path, bytes: tarPadding(size), end: true };
        }
      }
      await reader.skip(1);
    }
  } catch (error) {
    child.kill();
    if (error instanceof DrydockError) throw error;
    throw new DrydockError(
      "git_failed",
      `reading ${commit} from ${root}: ${(error as Error).message} ${stderr}`,
    );
  }
  const code = await exited;
  if (code !== 0) throw new DrydockError("git_failed", `git cat-file in ${root} failed: ${stderr.trim()}`);
}
