import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  });
}

export interface TempRepo extends Disposable {
  path: string;
  write(rel: string, content: string | Buffer): void;
  commit(message?: string): string;
}

/** A temporary git repository with the given files committed; removed on dispose. */
export function tempRepo(files: Record<string, string | Buffer> = { "README.md": "hello\n" }): TempRepo {
  const path = mkdtempSync(join(tmpdir(), "drydock-repo-"));
  git(path, "init", "-q", "-b", "main");
  const write = (rel: string, content: string | Buffer) => {
    mkdirSync(dirname(join(path, rel)), { recursive: true });
    writeFileSync(join(path, rel), content);
  };
  for (const [rel, content] of Object.entries(files)) write(rel, content);
  const commit = (message = "commit") => {
    git(path, "add", "-A");
    git(path, "commit", "-q", "--allow-empty", "-m", message);
    return git(path, "rev-parse", "HEAD").trim();
  };
  commit("initial");
  return {
    path,
    write,
    commit,
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}

export function symlink(repo: TempRepo, target: string, rel: string): void {
  symlinkSync(target, join(repo.path, rel));
}
