/**
 * Temp git repositories for the apply tests: a "host" repository and a "box" clone in which
 * changes are made and taken out exactly as the box does (`git diff --binary --full-index -M`).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

/** Keeps the machine's own git configuration out of the tests (and out of the code under test). */
export function isolateGitConfig(): void {
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  delete process.env.GIT_AUTHOR_NAME;
  delete process.env.GIT_AUTHOR_EMAIL;
  delete process.env.GIT_COMMITTER_NAME;
  delete process.env.GIT_COMMITTER_EMAIL;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export function gitBytes(cwd: string, ...args: string[]): Buffer {
  return execFileSync("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 * 1024 * 1024 });
}

export type Entry = string | Buffer | { symlink: string } | { exec: string };

export class Scratch {
  readonly root = mkdtempSync(join(tmpdir(), "drydock-apply-"));
  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Creates a repository at `dir` holding `files`, committed once, with a local identity. */
export function makeRepo(dir: string, files: Record<string, Entry>): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "-c", "init.defaultBranch=main", "init", "-q");
  git(dir, "config", "user.name", "Host User");
  git(dir, "config", "user.email", "host@example.com");
  writeFiles(dir, files);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "initial");
  return dir;
}

export function writeFiles(dir: string, files: Record<string, Entry>): void {
  for (const [rel, entry] of Object.entries(files)) {
    const full = join(dir, rel);
    mkdirSync(dirname(full), { recursive: true });
    rmSync(full, { force: true });
    if (typeof entry === "string" || Buffer.isBuffer(entry)) writeFileSync(full, entry);
    else if ("symlink" in entry) symlinkSync(entry.symlink, full);
    else writeFileSync(full, entry.exec, { mode: 0o755 });
  }
}

/** A clone of `host` at `dir`: the box's copy of the repository. */
export function cloneBox(host: string, dir: string): string {
  git(host, "clone", "-q", host, dir);
  git(dir, "config", "user.name", "Box");
  git(dir, "config", "user.email", "box@example.com");
  return dir;
}

/** What the box hands out: every change since `base`, staged with a private index. */
export function boxDiff(box: string, base = "HEAD"): Buffer {
  git(box, "add", "-A");
  return gitBytes(box, "diff", "--cached", "--binary", "--full-index", "-M", base);
}

/** The tree the box's changes make, for comparing with what the host applied. */
export function boxTree(box: string): string {
  git(box, "add", "-A");
  return git(box, "write-tree").trim();
}

/** Everything on the host the apply could touch: working tree files, index, HEAD, refs, status. */
export function hostState(repo: string): Record<string, string> {
  const state: Record<string, string> = {
    head: git(repo, "rev-parse", "HEAD").trim(),
    symbolicHead: git(repo, "symbolic-ref", "-q", "HEAD").trim(),
    refs: git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
    status: execFileSync("git", ["status", "--porcelain=v1", "-z", "--untracked-files=all"], {
      cwd: repo,
      encoding: "utf8",
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
    }),
    index: hash(readFileSync(join(repo, ".git", "index"))),
  };
  walk(repo, repo, state);
  return state;
}

function walk(root: string, dir: string, state: Record<string, string>): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const rel = relative(root, full);
    if (rel === ".git") continue;
    const st = lstatSync(full);
    if (st.isSymbolicLink()) state[`file:${rel}`] = `link ${readlinkSync(full)}`;
    else if (st.isDirectory()) walk(root, full, state);
    else state[`file:${rel}`] = `${(st.mode & 0o777).toString(8)} ${hash(readFileSync(full))}`;
  }
}

export function hash(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
