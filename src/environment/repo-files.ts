/**
 * The files of a repository as an environment build sees them: the working tree as a session
 * would copy it (tracked and present, plus untracked not ignored), or a commit's tree. Only
 * files are read, never `.git`, so the host's git config and credentials never reach a build.
 */
import { createHash } from "node:crypto";
import { lstat, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import tar from "tar-stream";
import { resolveCommit } from "../workspace/snapshot-plan.js";
import { hostGit, openHostRepo, snapshotFileList, type HostRepo } from "../workspace/host-repo.js";

export interface RepoFiles {
  /** The repository's top directory on the host. */
  readonly root: string;
  /** "working tree" or the commit, for messages. */
  readonly describe: string;
  /** Repository-relative paths of every file. */
  list(): Promise<string[]>;
  /** A file's bytes, or undefined when there is no such file. */
  read(path: string): Promise<Buffer | undefined>;
  /** A tar of the files under `prefix` (a directory, "" for all), named below `into`. */
  pack(prefix: string, into: string, pack: tar.Pack): Promise<void>;
}

const inside = (prefix: string) => (path: string) =>
  prefix === "" || path === prefix || path.startsWith(`${prefix}/`);
const strip = (prefix: string, path: string) => (prefix === "" ? path : path.slice(prefix.length + 1));

class WorkingTreeFiles implements RepoFiles {
  readonly describe = "working tree";
  private files: Promise<string[]> | undefined;
  constructor(private readonly repo: HostRepo) {}
  get root(): string {
    return this.repo.root;
  }
  list(): Promise<string[]> {
    return (this.files ??= snapshotFileList(this.repo));
  }
  async read(path: string): Promise<Buffer | undefined> {
    if (!(await this.list()).includes(path)) return undefined;
    return readFile(join(this.repo.root, path)).catch(() => undefined);
  }
  async pack(prefix: string, into: string, pack: tar.Pack): Promise<void> {
    for (const path of (await this.list()).filter(inside(prefix))) {
      const full = join(this.repo.root, path);
      const info = await lstat(full).catch(() => undefined);
      if (!info) continue;
      const name = `${into}${strip(prefix, path)}`;
      if (info.isSymbolicLink()) {
        await entry(pack, { name, type: "symlink", linkname: await readlink(full) });
      } else if (info.isFile()) {
        await entry(pack, { name, mode: info.mode & 0o111 ? 0o755 : 0o644 }, await readFile(full));
      }
    }
  }
}

class CommitFiles implements RepoFiles {
  private files: Promise<string[]> | undefined;
  constructor(
    readonly root: string,
    private readonly commit: string,
  ) {}
  get describe(): string {
    return `commit ${this.commit.slice(0, 12)}`;
  }
  list(): Promise<string[]> {
    return (this.files ??= hostGit(this.root, ["ls-tree", "-r", "-z", "--name-only", this.commit]).then((b) =>
      b.toString("utf8").split("\0").filter(Boolean),
    ));
  }
  async read(path: string): Promise<Buffer | undefined> {
    if (!(await this.list()).includes(path)) return undefined;
    return hostGit(this.root, ["cat-file", "blob", `${this.commit}:${path}`]);
  }
  async pack(prefix: string, into: string, pack: tar.Pack): Promise<void> {
    const listing = (await hostGit(this.root, ["ls-tree", "-r", "-z", "--full-tree", this.commit]))
      .toString("utf8")
      .split("\0")
      .filter(Boolean);
    for (const line of listing) {
      const tab = line.indexOf("\t");
      const [mode, type, object] = line.slice(0, tab).split(" ");
      const path = line.slice(tab + 1);
      if (type !== "blob" || !inside(prefix)(path)) continue;
      const name = `${into}${strip(prefix, path)}`;
      const body = await hostGit(this.root, ["cat-file", "blob", object!]);
      if (mode === "120000") await entry(pack, { name, type: "symlink", linkname: body.toString("utf8") });
      else await entry(pack, { name, mode: mode === "100755" ? 0o755 : 0o644 }, body);
    }
  }
}

function entry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, body ?? "", (error) => (error ? reject(error) : resolve()));
  });
}

/** The files of `repoPath` as a session would copy them (`ref` undefined) or at a commit. */
export async function repoFiles(repoPath: string, ref?: string): Promise<RepoFiles> {
  const repo = await openHostRepo(repoPath);
  if (ref === undefined) return new WorkingTreeFiles(repo);
  return new CommitFiles(repo.root, await resolveCommit(repo, ref));
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
