/**
 * Where a task's repository comes from: a host path as it is, or a git URL cloned once per run
 * into the results directory (so every task on that repository shares one clone). The box never
 * sees the URL or the network; the clone is copied in like any host repository.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";

const run = promisify(execFile);
const log = logger("eval");

/** URLs git can clone (`https://`, `ssh://`, `git://`, `file://`) and scp-like `user@host:path`. */
export function isGitUrl(repo: string): boolean {
  return /^(https?|ssh|git|file):\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}

export class RepoSources {
  private readonly clones = new Map<string, Promise<string>>();

  /** @param dir where clones are kept (`<out>/.repos`). */
  constructor(private readonly dir: string) {}

  /** A host path for the task's repository; a URL is cloned on first use. */
  resolve(repo: string): Promise<string> {
    if (!isGitUrl(repo)) return Promise.resolve(repo);
    let pending = this.clones.get(repo);
    if (!pending) {
      pending = this.clone(repo);
      this.clones.set(repo, pending);
      pending.catch(() => this.clones.delete(repo));
    }
    return pending;
  }

  private async clone(url: string): Promise<string> {
    const target = join(this.dir, createHash("sha256").update(url).digest("hex").slice(0, 16));
    // A clone finished by an earlier (resumed) run is reused as it is.
    if (existsSync(join(target, ".git"))) return target;
    await mkdir(this.dir, { recursive: true });
    const partial = `${target}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    log.info(`cloning ${url}`);
    try {
      await run("git", ["-c", "core.hooksPath=/dev/null", "clone", "--quiet", "--", url, partial], {
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
        timeout: 600_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      await rm(partial, { recursive: true, force: true });
      const stderr = String((error as { stderr?: string }).stderr ?? "")
        .trim()
        .split("\n")[0];
      throw new DrydockError(
        "clone_failed",
        `cannot clone ${url}: ${stderr || (error as Error).message}; the URL must be reachable from this host (the box never is online)`,
      );
    }
    await rename(partial, target);
    return target;
  }
}
