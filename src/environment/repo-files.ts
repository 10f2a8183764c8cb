/**
 * The files of a repository as an environment build sees them: the working tree as a session
 * would copy it (tracked and present, plus untracked not ignored), or a commit's tree. Only
 * files are read, never `.git`, so the host's git config and credentials never reach a build.
 *
 * Nothing here follows a link on the host: a committed link named `environment.yaml` that points
 * at `~/.aws/credentials` would otherwise put the host's file into the build. Files drydock reads
 * itself (the definition, the Dockerfile, key files) must be regular files within the size limits
 * below; a link, FIFO or device is refused by name before it is opened, and the open itself
 * (O_NOFOLLOW | O_NONBLOCK, then fstat) cannot follow a link or wait on a FIFO swapped in after.
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readlink, realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import tar from "tar-stream";
import { EnvironmentFileError } from "../util/errors.js";
import { resolveCommit } from "../workspace/snapshot-plan.js";
import { hostGit, openHostRepo, snapshotFileList, type HostRepo } from "../workspace/host-repo.js";
import {
  VerifiedObjects,
  verifiedCommitTree,
  type VerifiedEntry,
  type VerifiedTree,
} from "../workspace/verified-objects.js";

/** The definition, devcontainer.json and Dockerfile: text a person wrote. */
export const DEFINITION_MAX_BYTES = 256 * 1024;
/** Key files (lock files can be large, but not unbounded). */
export const KEY_FILE_MAX_BYTES = 64 * 1024 * 1024;

export interface RepoFiles {
  /** The repository's top directory on the host. */
  readonly root: string;
  /** "working tree" or the commit, for messages. */
  readonly describe: string;
  /**
   * The repository's identity: its real top directory and the identity of its `.git` (device,
   * inode, birth time), so a repository deleted and cloned again at the same path is another one.
   * Hashed to 32 hex digits; environment images carry it as a label.
   */
  readonly repoId: string;
  /**
   * What fixes every byte a build reads, for the cache key: `tree <id>` of a commit's root tree,
   * read from verified objects; `repository <identity>` for the working tree (see
   * `environment-plan.ts` for why).
   */
  readonly source: string;
  /** Repository-relative paths of every file. */
  list(): Promise<string[]>;
  /**
   * A regular file's bytes, or undefined when there is no such file. A link, a FIFO, a device or
   * a file over `maxBytes` is refused with an EnvironmentFileError naming it.
   */
  read(path: string, maxBytes?: number): Promise<Buffer | undefined>;
  /** A key file's digest: a regular file's content, or a link's target text (never followed). */
  keyDigest(path: string): Promise<string | undefined>;
  /** A tar of the files under `prefix` (a directory, "" for all), named below `into`. */
  pack(prefix: string, into: string, pack: tar.Pack): Promise<void>;
}

const inside = (prefix: string) => (path: string) =>
  prefix === "" || path === prefix || path.startsWith(`${prefix}/`);
const strip = (prefix: string, path: string) => (prefix === "" ? path : path.slice(prefix.length + 1));

const FIX = "commit it as a regular file in the repository (drydock never follows links on the host)";

function tooLarge(path: string, size: number, maxBytes: number): EnvironmentFileError {
  return new EnvironmentFileError(
    path,
    `is ${size} bytes, over the limit of ${maxBytes} bytes for a file drydock reads to plan a build`,
    "make it smaller, or leave it out of key_files",
  );
}

function notRegular(path: string, what: string): EnvironmentFileError {
  return new EnvironmentFileError(path, `is ${what}, not a regular file`, FIX);
}

/** What a non-regular file is, in words (the message never says what it points at). */
function kindOf(info: {
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isDirectory(): boolean;
  isSocket(): boolean;
}): string {
  if (info.isSymbolicLink()) return "a symbolic link";
  if (info.isFIFO()) return "a FIFO";
  if (info.isDirectory()) return "a directory";
  if (info.isSocket()) return "a socket";
  return "a device or other special file";
}

class WorkingTreeFiles implements RepoFiles {
  readonly describe = "working tree";
  private files: Promise<string[]> | undefined;
  /** Directories (relative) known to be real directories below the root, not links. */
  private readonly realDirs = new Map<string, Promise<boolean>>();
  constructor(
    private readonly repo: HostRepo,
    readonly repoId: string,
  ) {}
  get root(): string {
    return this.repo.root;
  }
  get source(): string {
    return `repository ${this.repoId}`;
  }
  list(): Promise<string[]> {
    return (this.files ??= snapshotFileList(this.repo));
  }

  /** Whether a file's directory is itself inside the root, reached through no link. */
  private dirIsReal(path: string): Promise<boolean> {
    const dir = dirname(path);
    if (dir === ".") return Promise.resolve(true);
    let known = this.realDirs.get(dir);
    if (!known) {
      known = realpath(join(this.repo.root, dir)).then(
        (real) => real === join(this.repo.root, dir),
        () => false,
      );
      this.realDirs.set(dir, known);
    }
    return known;
  }

  /** Opens a regular file without following a link or blocking on a FIFO; undefined when absent. */
  private async openRegular(path: string, maxBytes: number) {
    const full = join(this.repo.root, path);
    const info = await lstat(full).catch(() => undefined);
    if (!info) return undefined;
    if (!(await this.dirIsReal(path))) {
      throw new EnvironmentFileError(
        path,
        "lies below a symbolic link (one of its directories is a link)",
        FIX,
      );
    }
    if (!info.isFile()) throw notRegular(path, kindOf(info));
    if (info.size > maxBytes) throw tooLarge(path, info.size, maxBytes);
    const handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
      () => {
        throw new EnvironmentFileError(path, "could not be opened as a regular file", FIX);
      },
    );
    try {
      const now = await handle.stat();
      if (!now.isFile() || now.ino !== info.ino || now.dev !== info.dev) {
        throw new EnvironmentFileError(path, "changed while drydock read it", "run the command again");
      }
      // Reads at most one byte past the limit: a file that grows while read is still bounded.
      const buffer = Buffer.alloc(Math.min(now.size, maxBytes) + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      if (length > maxBytes) throw tooLarge(path, length, maxBytes);
      return { bytes: buffer.subarray(0, length), mode: now.mode };
    } finally {
      await handle.close();
    }
  }

  async read(path: string, maxBytes = DEFINITION_MAX_BYTES): Promise<Buffer | undefined> {
    if (!(await this.list()).includes(path)) return undefined;
    return (await this.openRegular(path, maxBytes))?.bytes;
  }

  async keyDigest(path: string): Promise<string | undefined> {
    const full = join(this.repo.root, path);
    const info = await lstat(full).catch(() => undefined);
    if (!info) return undefined;
    // A link is keyed by its target's text, as git stores it: the build gets the link itself.
    if (info.isSymbolicLink() && (await this.dirIsReal(path))) return linkDigest(await readlink(full));
    const file = await this.openRegular(path, KEY_FILE_MAX_BYTES);
    return file && sha256(file.bytes);
  }

  async pack(prefix: string, into: string, pack: tar.Pack): Promise<void> {
    for (const path of (await this.list()).filter(inside(prefix))) {
      const full = join(this.repo.root, path);
      const info = await lstat(full).catch(() => undefined);
      // Files below a linked directory are not the repository's: git lists none, and none are sent.
      if (!info || !(await this.dirIsReal(path))) continue;
      const name = `${into}${strip(prefix, path)}`;
      if (info.isSymbolicLink()) {
        await entry(pack, { name, type: "symlink", linkname: await readlink(full) });
      } else if (info.isFile()) {
        const file = await this.openRegular(path, Number.MAX_SAFE_INTEGER);
        if (file) await entry(pack, { name, mode: file.mode & 0o111 ? 0o755 : 0o644 }, file.bytes);
      }
    }
  }
}

/**
 * A commit's files, read from objects verified against their names (verified-objects.ts): its key
 * is the root tree read that way, which is exactly what a build gets, whatever a replace ref, a
 * graft or a misnamed object would have made git show for the commit's id.
 */
class CommitFiles implements RepoFiles {
  private readonly byPath: Map<string, VerifiedEntry>;
  constructor(
    readonly root: string,
    private readonly commit: string,
    private readonly tree: VerifiedTree,
    readonly repoId: string,
  ) {
    this.byPath = new Map(tree.entries.map((e) => [e.path, e]));
  }
  get describe(): string {
    return `commit ${this.commit.slice(0, 12)}`;
  }
  get source(): string {
    return `tree ${this.tree.tree}`;
  }
  async list(): Promise<string[]> {
    return [...this.byPath.keys()];
  }
  private async blob(path: string, maxBytes: number, links: "refuse" | "digest") {
    const found = this.byPath.get(path);
    if (!found) {
      // A submodule is left out of the entries; say so rather than "missing".
      if (await this.isSubmodule(path)) throw notRegular(path, "a submodule");
      return undefined;
    }
    if (found.mode === "120000" && links === "refuse") throw notRegular(path, "a symbolic link");
    const objects = await VerifiedObjects.open(this.root);
    try {
      objects.ask([found.oid], true);
      const header = await objects.header(found.oid);
      if (found.mode !== "120000" && header.size > maxBytes) throw tooLarge(path, header.size, maxBytes);
      const bytes = await objects.body(found.oid, header);
      return { link: found.mode === "120000", bytes };
    } finally {
      objects.kill();
    }
  }
  private async isSubmodule(path: string): Promise<boolean> {
    const listing = await hostGit(this.root, [
      "ls-tree",
      "-z",
      "--full-tree",
      this.tree.tree,
      "--",
      path,
    ]).catch(() => Buffer.alloc(0));
    return listing.toString("utf8").startsWith("160000 ");
  }
  async read(path: string, maxBytes = DEFINITION_MAX_BYTES): Promise<Buffer | undefined> {
    return (await this.blob(path, maxBytes, "refuse"))?.bytes;
  }
  async keyDigest(path: string): Promise<string | undefined> {
    const found = await this.blob(path, KEY_FILE_MAX_BYTES, "digest");
    if (!found) return undefined;
    return found.link ? linkDigest(found.bytes.toString("utf8")) : sha256(found.bytes);
  }
  async pack(prefix: string, into: string, pack: tar.Pack): Promise<void> {
    const wanted = this.tree.entries.filter((e) => inside(prefix)(e.path));
    const objects = await VerifiedObjects.open(this.root);
    try {
      objects.ask(
        wanted.map((e) => e.oid),
        true,
      );
      for (const { path, mode, oid } of wanted) {
        const body = await objects.body(oid, await objects.header(oid));
        const name = `${into}${strip(prefix, path)}`;
        if (mode === "120000") await entry(pack, { name, type: "symlink", linkname: body.toString("utf8") });
        else await entry(pack, { name, mode: mode === "100755" ? 0o755 : 0o644 }, body);
      }
    } finally {
      objects.kill();
    }
  }
}

function entry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, body ?? "", (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * The identity of a repository on this host: its real top directory, and the device, inode and
 * birth time of its `.git`, which a `rm -rf` and a new clone at the same path do not keep.
 */
export async function repositoryId(repo: HostRepo): Promise<string> {
  const info = await lstat(join(repo.root, ".git"), { bigint: true });
  const parts = [repo.root, info.dev, info.ino, info.birthtimeNs].map(String);
  return createHash("sha256").update(parts.join("\0")).digest("hex").slice(0, 32);
}

/** The files of `repoPath` as a session would copy them (`ref` undefined) or at a commit. */
export async function repoFiles(repoPath: string, ref?: string): Promise<RepoFiles> {
  const repo = await openHostRepo(repoPath);
  const id = await repositoryId(repo);
  if (ref === undefined) return new WorkingTreeFiles(repo, id);
  const commit = await resolveCommit(repo, ref);
  return new CommitFiles(repo.root, commit, await verifiedCommitTree(repo.root, commit), id);
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function linkDigest(target: string): string {
  return sha256(Buffer.from(`link\0${target}`));
}
