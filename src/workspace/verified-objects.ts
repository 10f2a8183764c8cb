/**
 * A repository's objects read so that what drydock uses is what their names stand for: each
 * object `git cat-file --batch` hands over is hashed here (its type, size and bytes, as git names
 * objects) and refused unless the hash is the name asked for. A loose object or a pack entry whose
 * bytes were written under another object's name, a replace ref, a graft or an alternate store
 * that answers for a name with other bytes: none of them can make a name stand for other content.
 * Trees are read from their verified bytes here too (not listed by `git ls-tree`, which would read
 * them again, unverified), so a commit id fixes every path and byte that comes out.
 *
 * Reading the tree format ourselves is the point: the bytes are authenticated by their hash, and
 * the format is git's fixed binary one (`<octal mode> <name>\0<raw id>`), with no option or
 * configuration that changes how it reads.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash, type Hash } from "node:crypto";
import { DrydockError } from "../util/errors.js";
import { ByteReader } from "./byte-reader.js";
import { hostGitEnv, repoOverrides } from "./host-git.js";
import { hostGit } from "./host-repo.js";
import { requireOwnObjects } from "./object-stores.js";

const commonDirs = new Map<string, Promise<string>>();

/** The repository's common git directory (where its objects are), asked of git once per top directory. */
function commonDirOf(root: string): Promise<string> {
  let known = commonDirs.get(root);
  if (!known) {
    known = hostGit(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"]).then((out) =>
      out.toString("utf8").trim(),
    );
    commonDirs.set(root, known);
    known.catch(() => commonDirs.delete(root));
  }
  return known;
}

/** More files than this in one commit is refused (a few trees naming each other many times can list billions). */
export const MAX_TREE_ENTRIES = 5_000_000;

/** A commit or tree object larger than these is refused before its bytes are read (one held whole in memory). */
export const MAX_COMMIT_BYTES = 16 * 1024 * 1024;
export const MAX_TREE_OBJECT_BYTES = 64 * 1024 * 1024;

/** A file of a tree: blob or symbolic link (submodule links are left out). */
export interface VerifiedEntry {
  /** "100644", "100755" or "120000". */
  mode: string;
  oid: string;
  /** Slash-separated path from the top of the tree. */
  path: string;
}

export interface VerifiedTree {
  /** The commit's root tree. */
  tree: string;
  /** The committer time, in seconds since the epoch (0 when the commit has none). */
  committedS: number;
  /** Every blob and link, every level, in git's order (as `git ls-tree -r` lists them). */
  entries: VerifiedEntry[];
}

/** The object was not there, or its bytes were not the ones its name stands for. */
export class ObjectIntegrityError extends DrydockError {
  constructor(message: string) {
    super("git_object_integrity", message);
    this.name = "ObjectIntegrityError";
  }
}

function hashFor(oid: string): Hash {
  if (oid.length === 40) return createHash("sha1");
  if (oid.length === 64) return createHash("sha256");
  throw new ObjectIntegrityError(`${JSON.stringify(oid)} is not an object id`);
}

/** One object's header from `cat-file --batch`: its type and size, or an error naming what is missing. */
export interface ObjectHeader {
  type: string;
  size: number;
}

/**
 * A `git cat-file --batch` of the repository at `root`, run the hardened way, whose objects are
 * verified as they are read. Objects are answered in the order asked.
 */
export class VerifiedObjects {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly reader: ByteReader;
  private stderr = "";
  readonly exited: Promise<number>;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    this.reader = new ByteReader(child.stdout);
    child.stderr.on("data", (d: Buffer) => (this.stderr += d.toString("utf8")));
    child.stdin.on("error", () => undefined);
    this.exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)));
  }

  /** Opens the store of the repository at `root`, refusing one that borrows objects from outside itself. */
  static async open(root: string): Promise<VerifiedObjects> {
    await requireOwnObjects(await commonDirOf(root));
    const env = hostGitEnv({}, await repoOverrides(root));
    return new VerifiedObjects(spawn("git", ["cat-file", "--batch"], { cwd: root, env, stdio: "pipe" }));
  }

  /** Asks for objects; their answers are read, in this order, with `header` and `body`/`stream`. */
  ask(oids: readonly string[], last = false): void {
    const text = oids.map((oid) => `${oid}\n`).join("");
    if (last) this.child.stdin.end(text);
    else this.child.stdin.write(text);
  }

  /** No more questions. */
  end(): void {
    this.child.stdin.end();
  }

  kill(): void {
    this.child.kill();
  }

  /** The next answer's header; an error when git says the object is missing. */
  async header(wanted: string): Promise<ObjectHeader> {
    let line: string;
    try {
      line = await this.reader.line();
    } catch {
      throw new ObjectIntegrityError(
        `git stopped before object ${wanted}${this.stderr.trim() ? `: ${this.stderr.trim()}` : ""}`,
      );
    }
    const [oid, type, size] = line.split(" ");
    if (oid !== wanted || type === undefined || size === undefined || !/^\d+$/.test(size)) {
      throw new ObjectIntegrityError(`object ${wanted} is missing from the repository (${line})`);
    }
    return { type, size: Number(size) };
  }

  /** The bytes of the object whose header was just read, verified against `oid` once all are seen. */
  async *stream(oid: string, header: ObjectHeader): AsyncGenerator<Buffer> {
    const hash = hashFor(oid).update(`${header.type} ${header.size}\0`);
    for await (const part of this.reader.take(header.size)) {
      hash.update(part);
      yield part;
    }
    await this.reader.skip(1);
    if (hash.digest("hex") !== oid) {
      throw new ObjectIntegrityError(
        `object ${oid} in the repository holds bytes that are not that object's (its name and content differ); the repository is damaged or was made to mislead: run \`git fsck\` in it`,
      );
    }
  }

  /** The whole verified object after its header. */
  async body(oid: string, header: ObjectHeader): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.stream(oid, header)) parts.push(part);
    return Buffer.concat(parts);
  }

  /** Skips the object whose header was just read (its bytes are not used). */
  async skip(header: ObjectHeader): Promise<void> {
    await this.reader.skip(header.size + 1);
  }

  /** One object, whole and verified, of the expected type, refused past `maxBytes` before it is read. */
  async read(oid: string, type: string, maxBytes = MAX_TREE_OBJECT_BYTES): Promise<Buffer> {
    this.ask([oid]);
    const header = await this.header(oid);
    if (header.size > maxBytes) {
      throw new ObjectIntegrityError(
        `object ${oid} is ${header.size} bytes, more than a ${type} drydock reads (${maxBytes})`,
      );
    }
    const bytes = await this.body(oid, header);
    if (header.type !== type)
      throw new ObjectIntegrityError(`object ${oid} is a ${header.type}, not a ${type}`);
    return bytes;
  }
}

/** Names git itself refuses to check out, or that would leave the directory they are in. */
function badName(name: string): boolean {
  return name === "" || name === "." || name === ".." || name.includes("/") || name.toLowerCase() === ".git";
}

/** The entries of one verified tree object: `<octal mode> <name>\0<raw id>`, repeated. */
export function parseTree(
  bytes: Buffer,
  idBytes: number,
  where: string,
): Array<{ kind: "tree" | "blob" | "link" | "gitlink"; mode: string; name: string; oid: string }> {
  const out: Array<{ kind: "tree" | "blob" | "link" | "gitlink"; mode: string; name: string; oid: string }> =
    [];
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const nul = space < 0 ? -1 : bytes.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > bytes.length) {
      throw new ObjectIntegrityError(`tree ${where} is malformed`);
    }
    const modeText = bytes.subarray(at, space).toString("latin1");
    const name = bytes.subarray(space + 1, nul).toString("utf8");
    const oid = bytes.subarray(nul + 1, nul + 1 + idBytes).toString("hex");
    at = nul + 1 + idBytes;
    if (!/^[0-7]{1,7}$/.test(modeText))
      throw new ObjectIntegrityError(`tree ${where} has an entry with mode ${JSON.stringify(modeText)}`);
    if (badName(name)) {
      throw new ObjectIntegrityError(
        `tree ${where} has an entry named ${JSON.stringify(name)}, which git itself would not check out`,
      );
    }
    const mode = parseInt(modeText, 8);
    const type = mode & 0o170000;
    if (type === 0o040000) out.push({ kind: "tree", mode: "040000", name, oid });
    else if (type === 0o100000)
      out.push({ kind: "blob", mode: mode & 0o111 ? "100755" : "100644", name, oid });
    else if (type === 0o120000) out.push({ kind: "link", mode: "120000", name, oid });
    else if (type === 0o160000) out.push({ kind: "gitlink", mode: "160000", name, oid });
    else
      throw new ObjectIntegrityError(
        `tree ${where} has an entry ${JSON.stringify(name)} of unknown mode ${modeText}`,
      );
  }
  return out;
}

/** The root tree and committer time of a verified commit object. */
export function parseCommit(bytes: Buffer, oid: string): { tree: string; committedS: number } {
  const text = bytes.toString("utf8");
  const tree = /^tree ([0-9a-f]{40}|[0-9a-f]{64})\n/.exec(text)?.[1];
  if (!tree || tree.length !== oid.length) throw new ObjectIntegrityError(`commit ${oid} names no tree`);
  const headers = text.slice(0, text.indexOf("\n\n") < 0 ? text.length : text.indexOf("\n\n"));
  const committed = /^committer .* (\d+) [+-]\d{4}$/m.exec(headers);
  return { tree, committedS: committed ? Number(committed[1]) : 0 };
}

/**
 * The files of `commit` in the repository at `root`, every object on the way verified: one
 * `cat-file --batch`, asked a level of trees at a time.
 */
export async function verifiedCommitTree(root: string, commit: string): Promise<VerifiedTree> {
  const objects = await VerifiedObjects.open(root);
  try {
    const { tree, committedS } = parseCommit(await objects.read(commit, "commit", MAX_COMMIT_BYTES), commit);
    const idBytes = commit.length / 2;
    const children = new Map<string, ReturnType<typeof parseTree>>();
    let level = [tree];
    const seen = new Set<string>();
    while (level.length > 0) {
      const wanted = level.filter((oid) => !seen.has(oid));
      wanted.forEach((oid) => seen.add(oid));
      objects.ask(wanted);
      const next: string[] = [];
      for (const oid of wanted) {
        const header = await objects.header(oid);
        if (header.size > MAX_TREE_OBJECT_BYTES) {
          throw new ObjectIntegrityError(
            `tree ${oid} is ${header.size} bytes, more than drydock reads (${MAX_TREE_OBJECT_BYTES})`,
          );
        }
        const bytes = await objects.body(oid, header);
        if (header.type !== "tree")
          throw new ObjectIntegrityError(`object ${oid} is a ${header.type}, not a tree`);
        const entries = parseTree(bytes, idBytes, oid);
        children.set(oid, entries);
        for (const e of entries) if (e.kind === "tree" && !seen.has(e.oid)) next.push(e.oid);
      }
      level = [...new Set(next)];
    }
    objects.end();
    // How many paths each tree stands for, counted once per tree id from the leaves up, before any
    // walk: a few trees naming one subtree twice, level after level, stand for more paths than
    // memory holds (2^40 from 42 objects), and walking them would never end.
    const paths = new Map<string, number>();
    const pathsOf = (oid: string, depth: number): number => {
      const known = paths.get(oid);
      if (known !== undefined) return known;
      if (depth > 4096) throw new ObjectIntegrityError(`tree ${tree} is nested too deeply`);
      let n = 0;
      for (const e of children.get(oid)!) n += e.kind === "tree" ? 1 + pathsOf(e.oid, depth + 1) : 1;
      const capped = Math.min(n, MAX_TREE_ENTRIES + 1);
      paths.set(oid, capped);
      return capped;
    };
    if (pathsOf(tree, 0) > MAX_TREE_ENTRIES) {
      throw new ObjectIntegrityError(`commit ${commit} holds more than ${MAX_TREE_ENTRIES} paths`);
    }
    const entries: VerifiedEntry[] = [];
    const walk = (oid: string, prefix: string, depth: number) => {
      if (depth > 4096) throw new ObjectIntegrityError(`tree ${tree} is nested too deeply`);
      for (const e of children.get(oid)!) {
        const path = `${prefix}${e.name}`;
        if (e.kind === "tree") walk(e.oid, `${path}/`, depth + 1);
        else if (e.kind !== "gitlink") entries.push({ mode: e.mode, oid: e.oid, path });
        // A tree that names one subtree many times, level after level, lists more paths than any
        // checkout could hold.
        if (entries.length > MAX_TREE_ENTRIES) {
          throw new ObjectIntegrityError(`commit ${commit} holds more than ${MAX_TREE_ENTRIES} files`);
        }
      }
    };
    walk(tree, "", 0);
    return { tree, committedS, entries };
  } finally {
    objects.kill();
  }
}
