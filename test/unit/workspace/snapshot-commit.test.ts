import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyDiff } from "../../../src/workspace/apply-diff.js";
import { snapshotCommit } from "../../../src/workspace/snapshot-commit.js";
import {
  boxDiff,
  git,
  hostState,
  isolateGitConfig,
  makeRepo,
  Scratch,
  writeFiles,
} from "./host-repo-fixture.js";

beforeAll(isolateGitConfig);

describe("snapshotCommit", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  function dirtyRepo(): string {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), {
      "README.md": "hello\n",
      "gone.txt": "soon deleted\n",
      ".gitignore": "node_modules/\n*.log\n",
    });
    writeFiles(repo, {
      "README.md": "edited, not committed\n",
      "staged.txt": "staged only\n",
      "untracked dir/new file.txt": "untracked\n",
      "node_modules/dep/index.js": "ignored\n",
      "debug.log": "ignored\n",
      "forced.log": "ignored but force-added\n",
    });
    git(repo, "add", "staged.txt");
    git(repo, "add", "-f", "forced.log");
    git(repo, "rm", "-q", "--cached", "gone.txt");
    return repo;
  }

  it("leaves out the untracked files of the directories named, as they are named, and records tracked ones in them", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), {
      "README.md": "hello\n",
      "node_modules/patched/index.js": "tracked\n",
      "node_modules/removed.js": "tracked, deleted later\n",
    });
    writeFiles(repo, {
      "node_modules/patched/index.js": "edited\n",
      "node_modules/dep/index.js": "untracked\n",
      "we*rd/node_modules/x.js": "untracked, under a name with a glob character\n",
      "weXrd/node_modules/y.js": "what the glob would also match: kept\n",
      "src/new.ts": "untracked, kept\n",
    });
    rmSync(join(repo, "node_modules", "removed.js"));
    const commit = await snapshotCommit(repo, { leaveOut: ["node_modules/", "we*rd/node_modules/"] });
    const files = git(repo, "ls-tree", "-r", "--name-only", commit).trim().split("\n").sort();
    expect(files).toEqual([
      "README.md",
      "node_modules/patched/index.js",
      "src/new.ts",
      "weXrd/node_modules/y.js",
    ]);
    expect(git(repo, "show", `${commit}:node_modules/patched/index.js`)).toBe("edited\n");
  });

  it("records HEAD plus uncommitted and untracked files, writing no ref and touching nothing", async () => {
    const repo = dirtyRepo();
    const before = hostState(repo);
    const commit = await snapshotCommit(repo);
    expect(hostState(repo)).toEqual(before);
    expect(git(repo, "rev-parse", `${commit}^`).trim()).toBe(before.head);
    expect(git(repo, "for-each-ref", "--contains", commit)).toBe("");
    const files = git(repo, "ls-tree", "-r", "--name-only", commit).trim().split("\n").sort();
    expect(files).toEqual([
      ".gitignore",
      "README.md",
      "forced.log",
      "gone.txt",
      "staged.txt",
      "untracked dir/new file.txt",
    ]);
    expect(git(repo, "show", `${commit}:README.md`)).toBe("edited, not committed\n");
  });

  it("follows the working tree for a file deleted from it", async () => {
    const repo = dirtyRepo();
    rmSync(join(repo, "gone.txt"));
    const commit = await snapshotCommit(repo);
    expect(git(repo, "ls-tree", "-r", "--name-only", commit)).not.toMatch(/gone\.txt/);
  });

  it("returns HEAD when nothing is uncommitted", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    expect(await snapshotCommit(repo)).toBe(git(repo, "rev-parse", "HEAD").trim());
  });

  it("works in a repository with no commit yet", async () => {
    scratch = new Scratch();
    const repo = join(scratch.root, "fresh");
    mkdirSync(repo);
    git(repo, "init", "-q");
    writeFileSync(join(repo, "first.txt"), "first\n");
    const commit = await snapshotCommit(repo);
    expect(git(repo, "ls-tree", "-r", "--name-only", commit).trim()).toBe("first.txt");
    expect(git(repo, "rev-list", "--count", commit).trim()).toBe("1");
  });

  it("gives a dirty session's branch the user's commit under the snapshot as its parent", async () => {
    const repo = dirtyRepo();
    const head = git(repo, "rev-parse", "HEAD").trim();
    const snapshot = await snapshotCommit(repo);
    const box = join(scratch.root, "box");
    git(repo, "worktree", "add", "-q", "--detach", box, snapshot);
    writeFiles(box, { "agent.txt": "made in the box\n" });
    const diff = boxDiff(box, snapshot);
    const before = hostState(repo);
    const result = await applyDiff(repo, diff, { branch: "drydock/dirty", baseCommit: snapshot });
    expect(git(repo, "rev-parse", "drydock/dirty^").trim()).toBe(head);
    expect(git(repo, "diff", "--name-status", head, "drydock/dirty").trim()).toBe("A\tagent.txt");
    expect(hostState(repo)).toEqual({ ...before, refs: expect.any(String) });
    expect(result.files.map((f) => f.path)).toEqual(["agent.txt"]);
    git(repo, "worktree", "remove", "--force", box);
  });

  it("runs no fsmonitor or hook from the repository's configuration", async () => {
    const repo = dirtyRepo();
    const marker = join(scratch.root, "ran");
    const script = join(scratch.root, "monitor.sh");
    writeFileSync(script, `#!/bin/sh\necho ran >> "${marker}"\n`, { mode: 0o755 });
    git(repo, "config", "core.fsmonitor", script);
    git(repo, "-c", "core.fsmonitor=false", "config", "core.hooksPath", scratch.root);
    writeFileSync(join(scratch.root, "post-index-change"), `#!/bin/sh\necho hook >> "${marker}"\n`, {
      mode: 0o755,
    });
    git(repo, "add", "-A", "--dry-run");
    expect(readFileSync(marker, "utf8")).toMatch(/ran/);
    writeFileSync(marker, "");
    await snapshotCommit(repo);
    expect(readFileSync(marker, "utf8")).toBe("");
  });
});
