/**
 * A per-(repository, commit) cache of a commit's tree as tar entries, on the host in drydock's
 * state directory (mode 0700). The first session on a commit writes it while streaming; later
 * sessions on the same commit stream it back with one sequential read and take from the
 * repository only what differs from the commit. Entries are written by the host from git's object
 * store only, never from anything a box wrote, and are immutable (a commit's tree never changes).
 * The least recently used entries are removed past a size limit (DRYDOCK_SNAPSHOT_CACHE_MB,
 * default 1024; 0 turns the cache off).
 */
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { logger } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import { commitTreeTar } from "./commit-tree-tar.js";

const log = logger("snapshot-cache");
const READ_CHUNK = 1024 * 1024;
const FORMAT = 1;

interface CacheIndex {
  v: number;
  paths: string[];
  /** Bytes of each entry in the tar file, in order. */
  sizes: number[];
}

export function defaultCacheBytes(): number {
  const mb = Number(process.env.DRYDOCK_SNAPSHOT_CACHE_MB ?? 1024);
  return Number.isFinite(mb) && mb > 0 ? mb * 1024 * 1024 : 0;
}

/** Byte ranges [start, end) of the entries whose path is not in `skip`, adjacent ones merged. */
export function keptRanges(index: { paths: string[]; sizes: number[] }, skip: ReadonlySet<string>) {
  const ranges: Array<[number, number]> = [];
  let offset = 0;
  index.paths.forEach((path, i) => {
    const size = index.sizes[i]!;
    if (!skip.has(path)) {
      const last = ranges[ranges.length - 1];
      if (last && last[1] === offset) last[1] = offset + size;
      else ranges.push([offset, offset + size]);
    }
    offset += size;
  });
  return ranges;
}

export class SnapshotCache {
  constructor(
    readonly dir: string = join(stateDir(), "cache", "snapshots"),
    readonly maxBytes: number = defaultCacheBytes(),
  ) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  private paths(repoRoot: string, commit: string): { dir: string; tar: string; index: string } {
    const repoKey = createHash("sha256").update(repoRoot).digest("hex").slice(0, 16);
    const dir = join(this.dir, repoKey);
    return { dir, tar: join(dir, `${commit}.tar`), index: join(dir, `${commit}.json`) };
  }

  /**
   * Yields a commit's tree as tar bytes without the entries in `skip`: from the cache when it has
   * the commit, else from the repository, writing the cache on the way. `hit` tells which.
   */
  async *tree(
    repoRoot: string,
    commit: string,
    skip: ReadonlySet<string>,
    onSource: (hit: boolean) => void = () => undefined,
  ): AsyncGenerator<Buffer> {
    const cached = this.enabled ? await this.lookup(repoRoot, commit) : undefined;
    onSource(cached !== undefined);
    if (cached) {
      yield* this.readCached(cached.tar, cached.index, skip);
      return;
    }
    const writer = this.enabled ? new CacheWriter(this.paths(repoRoot, commit), this.maxBytes) : undefined;
    try {
      for await (const piece of commitTreeTar(repoRoot, commit)) {
        if (writer) await writer.add(piece.path, piece.bytes, piece.end);
        if (!skip.has(piece.path)) yield piece.bytes;
      }
    } catch (error) {
      await writer?.abort();
      throw error;
    }
    if (writer && (await writer.commit())) await this.evict();
  }

  private async lookup(repoRoot: string, commit: string) {
    const p = this.paths(repoRoot, commit);
    try {
      const index = JSON.parse(await readFile(p.index, "utf8")) as CacheIndex;
      const size = (await stat(p.tar)).size;
      if (index.v !== FORMAT || size !== index.sizes.reduce((a, b) => a + b, 0)) return undefined;
      const now = new Date();
      await utimes(p.tar, now, now).catch(() => undefined);
      return { tar: p.tar, index };
    } catch {
      return undefined;
    }
  }

  private async *readCached(
    file: string,
    index: CacheIndex,
    skip: ReadonlySet<string>,
  ): AsyncGenerator<Buffer> {
    // One open handle: an eviction that removes the file meanwhile does not cut the read short.
    const handle = await open(file, "r");
    try {
      for (const [start, end] of keptRanges(index, skip)) {
        for (let at = start; at < end;) {
          const length = Math.min(READ_CHUNK, end - at);
          const { bytesRead, buffer } = await handle.read(Buffer.alloc(length), 0, length, at);
          if (bytesRead !== length)
            throw new Error(`the snapshot cache file ${file} is shorter than its index`);
          at += bytesRead;
          yield buffer;
        }
      }
    } finally {
      await handle.close();
    }
  }

  /** Removes the least recently used entries until the cache fits its limit. */
  async evict(): Promise<void> {
    const files: Array<{ tar: string; size: number; used: number }> = [];
    for (const repoDir of await readdir(this.dir).catch(() => [] as string[])) {
      for (const name of await readdir(join(this.dir, repoDir)).catch(() => [] as string[])) {
        const path = join(this.dir, repoDir, name);
        if (name.endsWith(".tmp")) {
          // Left by a process that died while writing; a live writer finishes within minutes.
          const info = await stat(path).catch(() => undefined);
          if (info && Date.now() - info.mtimeMs > 3_600_000) await rm(path, { force: true });
          continue;
        }
        if (!name.endsWith(".tar")) continue;
        const tar = path;
        const info = await stat(tar).catch(() => undefined);
        if (info) files.push({ tar, size: info.size, used: info.mtimeMs });
      }
    }
    let total = files.reduce((a, f) => a + f.size, 0);
    for (const f of files.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      await rm(f.tar.replace(/\.tar$/, ".json"), { force: true });
      await rm(f.tar, { force: true });
      total -= f.size;
      log.debug(`evicted ${f.tar}`);
    }
  }
}

/** Writes one cache entry beside its final name, then renames it into place. */
class CacheWriter {
  private stream: WriteStream | undefined;
  private readonly temp = `.${randomBytes(6).toString("hex")}.tmp`;
  private readonly index: CacheIndex = { v: FORMAT, paths: [], sizes: [] };
  private current = 0;
  private total = 0;
  private failed = false;

  constructor(
    private readonly target: { dir: string; tar: string; index: string },
    private readonly maxBytes: number,
  ) {}

  async add(path: string, bytes: Buffer, end: boolean): Promise<void> {
    if (this.failed) return;
    try {
      if (!this.stream) {
        await mkdir(this.target.dir, { recursive: true, mode: 0o700 });
        this.stream = createWriteStream(this.target.tar + this.temp, { mode: 0o600 });
        this.stream.on("error", () => (this.failed = true));
      }
      this.current += bytes.length;
      this.total += bytes.length;
      if (end) {
        this.index.paths.push(path);
        this.index.sizes.push(this.current);
        this.current = 0;
      }
      // A tree bigger than a quarter of the cache would only push everything else out.
      if (this.total > this.maxBytes / 4) throw new Error("tree too large to cache");
      if (!this.stream.write(bytes)) await new Promise<void>((r) => this.stream!.once("drain", () => r()));
    } catch (error) {
      log.debug(`not caching ${this.target.tar}: ${(error as Error).message}`);
      await this.abort();
    }
  }

  /** Makes the entry visible; false when it was not written. */
  async commit(): Promise<boolean> {
    const stream = this.stream;
    if (this.failed || !stream) return false;
    try {
      await new Promise<void>((resolve, reject) =>
        stream.end((e?: Error | null) => (e ? reject(e) : resolve())),
      );
      if (this.failed) throw new Error("write failed");
      await rename(this.target.tar + this.temp, this.target.tar);
      await writeFile(this.target.index + this.temp, JSON.stringify(this.index), { mode: 0o600 });
      await rename(this.target.index + this.temp, this.target.index);
      return true;
    } catch (error) {
      log.debug(`not caching ${this.target.tar}: ${(error as Error).message}`);
      await this.abort();
      return false;
    }
  }

  async abort(): Promise<void> {
    this.failed = true;
    this.stream?.destroy();
    await rm(this.target.tar + this.temp, { force: true });
    await rm(this.target.index + this.temp, { force: true });
  }
}
