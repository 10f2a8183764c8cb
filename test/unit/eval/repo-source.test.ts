import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isGitUrl, RepoSources } from "../../../src/eval/repo-source.js";
import { git, tempRepo } from "../../helpers/repos.js";

const cleanup: Array<() => void> = [];
afterEach(() => cleanup.splice(0).forEach((f) => f()));

describe("isGitUrl", () => {
  it("tells URLs from host paths", () => {
    for (const url of [
      "https://github.com/a/b.git",
      "ssh://git@host/x",
      "git@github.com:a/b.git",
      "file:///srv/r",
    ]) {
      expect(isGitUrl(url), url).toBe(true);
    }
    for (const path of ["/srv/repo", "repos/app", "./x", "C:\\repo", "host:path"])
      expect(isGitUrl(path), path).toBe(false);
  });
});

describe("RepoSources", () => {
  it("clones a URL once and gives host paths back unchanged", async () => {
    const origin = tempRepo({ "a.txt": "from origin\n" });
    const out = mkdtempSync(join(tmpdir(), "drydock-clones-"));
    cleanup.push(
      () => origin[Symbol.dispose](),
      () => rmSync(out, { recursive: true, force: true }),
    );
    const sources = new RepoSources(out);
    const url = `file://${origin.path}`;
    const [first, second] = await Promise.all([sources.resolve(url), sources.resolve(url)]);
    expect(first).toBe(second);
    expect(existsSync(join(first, "a.txt"))).toBe(true);
    expect(git(first, "rev-parse", "HEAD")).toBe(git(origin.path, "rev-parse", "HEAD"));
    // A later run (resume) reuses the clone.
    expect(await new RepoSources(out).resolve(url)).toBe(first);
    expect(await sources.resolve("/some/path")).toBe("/some/path");
  });

  it("names the URL and the fix when a clone fails", async () => {
    const out = mkdtempSync(join(tmpdir(), "drydock-clones-"));
    cleanup.push(() => rmSync(out, { recursive: true, force: true }));
    await expect(new RepoSources(out).resolve("file:///nonexistent/repo.git")).rejects.toThrow(
      /cannot clone file:\/\/\/nonexistent\/repo\.git: .*reachable from this host/,
    );
  });
});
