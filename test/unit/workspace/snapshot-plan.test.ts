/**
 * planDelta on real temp repositories: what a box prefilled with a commit still needs (paths to
 * send, paths to delete first), and undefined once the repository no longer has that commit.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { planDelta } from "../../../src/workspace/snapshot-plan.js";
import { git, isolateGitConfig, makeRepo, Scratch } from "./host-repo-fixture.js";

describe("planDelta", () => {
  let scratch: Scratch;
  beforeAll(() => isolateGitConfig());
  afterEach(() => scratch.dispose());

  it("sends what differs from the commit and deletes first what is gone", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const base = git(dir, "rev-parse", "HEAD").trim();
    writeFileSync(join(dir, "a.txt"), "edited\n");
    rmSync(join(dir, "b.txt"));
    rmSync(join(dir, "c.txt"));
    mkdirSync(join(dir, "c.txt"));
    writeFileSync(join(dir, "c.txt", "inside.txt"), "now a directory\n");
    writeFileSync(join(dir, "new.txt"), "new\n");
    const delta = await planDelta(dir, base);
    expect(delta?.files.sort()).toEqual(["a.txt", "c.txt/inside.txt", "new.txt"]);
    expect(delta?.deletes).toEqual(["b.txt", "c.txt"]);
    expect(delta?.untracked.sort()).toEqual(["c.txt/inside.txt", "new.txt"]);
  });

  it("a clean tree at the commit: nothing to send", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const delta = await planDelta(dir, git(dir, "rev-parse", "HEAD").trim());
    expect(delta).toMatchObject({ files: [], deletes: [], untracked: [] });
  });

  it("undefined when the repository no longer has the commit", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    expect(await planDelta(dir, "0123456789abcdef0123456789abcdef01234567")).toBeUndefined();
  });
});
