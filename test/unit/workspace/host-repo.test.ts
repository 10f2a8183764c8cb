/**
 * openHostRepo on real temp repositories: what it says of a repository from its top, from a
 * subdirectory, from a linked worktree and before its first commit, and the error for a path that
 * is not in one.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openHostRepo, revParseLayout } from "../../../src/workspace/host-repo.js";
import { git, isolateGitConfig, makeRepo, Scratch } from "./host-repo-fixture.js";

describe("openHostRepo", () => {
  let scratch: Scratch;
  beforeAll(() => isolateGitConfig());
  afterEach(() => scratch.dispose());

  it("names the top, the git dirs, HEAD and the object format, from the top or a subdirectory", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "src/a.txt": "a\n" });
    const top = realpathSync(dir);
    const head = git(dir, "rev-parse", "HEAD").trim();
    const expected = {
      root: top,
      gitDir: join(top, ".git"),
      commonDir: join(top, ".git"),
      head,
      objectFormat: "sha1",
    };
    expect(await openHostRepo(dir)).toEqual(expected);
    expect(await openHostRepo(join(dir, "src"))).toEqual(expected);
  });

  it("in a linked worktree: its own git dir, the main repository's common dir", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const linked = join(scratch.root, "linked");
    git(dir, "worktree", "add", "-q", "-b", "side", linked);
    const repo = await openHostRepo(join(linked));
    expect(repo.root).toBe(realpathSync(linked));
    expect(repo.commonDir).toBe(realpathSync(join(dir, ".git")));
    expect(repo.gitDir).toBe(join(realpathSync(join(dir, ".git")), "worktrees", "linked"));
    expect(repo.head).toBe(git(dir, "rev-parse", "HEAD").trim());
  });

  it("before the first commit: HEAD is null, the layout as for any repository", async () => {
    scratch = new Scratch();
    const dir = join(scratch.root, "empty");
    mkdirSync(dir);
    git(dir, "init", "-q");
    const top = realpathSync(dir);
    expect(await openHostRepo(dir)).toEqual({
      root: top,
      gitDir: join(top, ".git"),
      commonDir: join(top, ".git"),
      head: null,
      objectFormat: "sha1",
    });
  });

  it("one git answers both the layout and HEAD, with or without a first commit", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const born = await revParseLayout(dir);
    expect(born?.born).toBe(true);
    expect(born?.lines.slice(0, 5)).toEqual([
      realpathSync(dir),
      join(realpathSync(dir), ".git"),
      ".git",
      "sha1",
      git(dir, "rev-parse", "HEAD").trim(),
    ]);
    const empty = join(scratch.root, "empty");
    mkdirSync(empty);
    git(empty, "init", "-q");
    const unborn = await revParseLayout(empty);
    expect(unborn?.born).toBe(false);
    expect(unborn?.lines.filter(Boolean)).toHaveLength(4);
    // Not a repository: no answer, and openHostRepo asks one question at a time to say why.
    const plain = join(scratch.root, "plain");
    mkdirSync(plain);
    expect(await revParseLayout(plain)).toBeUndefined();
  });

  it("files named HEAD or like options beside it change nothing", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { HEAD: "a file\n", "--verify": "x\n", "-q": "y\n" });
    expect((await openHostRepo(dir)).head).toBe(git(dir, "rev-parse", "HEAD").trim());
  });

  it("a directory outside any repository: an error naming the field and the fix", async () => {
    scratch = new Scratch();
    const dir = join(scratch.root, "plain");
    mkdirSync(dir);
    await expect(openHostRepo(dir, "repo")).rejects.toThrow(/is not inside a git repository.*git init/);
  });
});
